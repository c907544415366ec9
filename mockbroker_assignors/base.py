"""The assignor protocols: client-side (classic groups) and server-side (KIP-848 groups)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from mockbroker_assignors.types import (
    ClusterMetadata,
    GroupAssignment,
    GroupSpec,
    GroupSubscription,
    RebalanceProtocol,
    TargetAssignment,
)


@runtime_checkable
class Assignor(Protocol):
    """A classic-protocol assignor, as the group leader runs it (ConsumerPartitionAssignor).

    ``name`` is the protocol name members offer in JoinGroup (e.g. "range"); ``assign`` maps every
    member id of ``subscriptions`` to its assignment, and must be deterministic."""

    name: str
    supported_protocols: tuple[RebalanceProtocol, ...]

    def assign(self, cluster: ClusterMetadata, subscriptions: GroupSubscription) -> GroupAssignment: ...


@runtime_checkable
class ServerAssignor(Protocol):
    """A KIP-848 server-side assignor (ConsumerGroupPartitionAssignor): the coordinator computes
    the target assignment of a consumer group with it."""

    name: str

    def assign(self, group: GroupSpec, cluster: ClusterMetadata) -> TargetAssignment: ...
