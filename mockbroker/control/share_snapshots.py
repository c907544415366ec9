"""The control API's snapshots of KIP-932 share groups: members and their assignments, and each
share partition's delivery state (the share-partition start offset and the in-flight records with
their state, delivery count, holder and acquisition-lock deadline), as plain, frozen data."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from mockbroker.control.errors import ControlError, NotFound


@dataclass(frozen=True, slots=True)
class InFlightRecordSnapshot:
    """One record past the SPSO (SharePartition's InFlightState)."""

    offset: int
    state: str  # RecordState: Available, Acquired, Acknowledged, Archived
    delivery_count: int
    member_id: str | None  # who holds it while Acquired
    lock_deadline_ms: int | None  # when its acquisition lock expires (cluster clock), while Acquired


@dataclass(frozen=True, slots=True)
class SharePartitionSnapshot:
    """A share group's delivery state of one topic partition."""

    topic: str
    partition: int
    start_offset: int  # the share-partition start offset (SPSO)
    next_fetch_offset: int  # the first offset never acquired
    in_flight: tuple[InFlightRecordSnapshot, ...]

    def record(self, offset: int) -> InFlightRecordSnapshot | None:
        return next((r for r in self.in_flight if r.offset == offset), None)

    def acquired(self) -> tuple[InFlightRecordSnapshot, ...]:
        return tuple(r for r in self.in_flight if r.state == "Acquired")


@dataclass(frozen=True, slots=True)
class ShareMemberSnapshot:
    """A share group member (ShareGroupMember): partitions by topic name."""

    member_id: str
    rack_id: str | None
    client_id: str
    client_host: str
    member_epoch: int
    previous_member_epoch: int
    subscribed_topic_names: tuple[str, ...]
    assigned: dict[str, tuple[int, ...]]  # what it holds now (a share group has no revocation phase)
    target: dict[str, tuple[int, ...]]  # what the target assignment gives it

    def partitions(self, topic: str) -> tuple[int, ...]:
        return self.assigned.get(topic, ())


@dataclass(frozen=True, slots=True)
class ShareGroupSnapshot:
    """A KIP-932 share group (``type`` "share"): epochs, the simple assignor's assignment (a
    partition may go to several members), and the share state of every partition it fetched."""

    group_id: str
    state: str  # Empty, Stable, Dead (ShareGroup.ShareGroupState)
    group_epoch: int
    assignment_epoch: int
    assignor: str
    subscribed_topics: dict[str, int]  # topic -> partition count
    members: tuple[ShareMemberSnapshot, ...]
    partitions: tuple[SharePartitionSnapshot, ...]
    protocol_type: str = "share"
    type: str = "share"
    # The group's configs (KIP-848 GroupConfig): the overrides set on its GROUP config resource;
    # keys not listed take the broker's group.* settings (DescribeConfigs shows every key).
    configs: dict[str, str] = field(default_factory=dict)

    @property
    def generation_id(self) -> int:
        """The group epoch, as for a consumer group."""
        return self.group_epoch

    def member(self, *, client_id: str | None = None, member_id: str | None = None) -> ShareMemberSnapshot:
        """The one member matching; ControlError (NotFound for none) otherwise."""
        found = [
            m for m in self.members
            if (member_id is None or m.member_id == member_id) and (client_id is None or m.client_id == client_id)
        ]  # fmt: skip
        if len(found) != 1:
            raise (NotFound if not found else ControlError)(
                f"{len(found)} members of {self.group_id} match member_id={member_id} client_id={client_id}; "
                f"members: {[(m.member_id, m.client_id) for m in self.members]}"
            )
        return found[0]

    def assignment(self, topic: str) -> dict[str, tuple[int, ...]]:
        """member id -> the partitions of ``topic`` it is assigned."""
        return {m.member_id: m.partitions(topic) for m in self.members}

    def partition(self, topic: str, partition: int) -> SharePartitionSnapshot | None:
        """The share state of one partition; None before the group first fetched it."""
        return next((p for p in self.partitions if p.topic == topic and p.partition == partition), None)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def share_group_snapshot(data: Mapping[str, Any], partitions: Iterable[Mapping[str, Any]]) -> ShareGroupSnapshot:
    """From ShareGroupCoordinator.snapshot's and SharePartitionManager.snapshot's plain data."""

    def by_topic(parts: Mapping[str, Iterable[int]]) -> dict[str, tuple[int, ...]]:
        return {topic: tuple(sorted(ps)) for topic, ps in parts.items()}

    return ShareGroupSnapshot(
        group_id=data["group_id"], state=data["state"], group_epoch=data["group_epoch"],
        assignment_epoch=data["assignment_epoch"], assignor=data["assignor"],
        subscribed_topics=dict(data["subscribed_topics"]),
        members=tuple(
            ShareMemberSnapshot(
                member_id=m["member_id"], rack_id=m["rack_id"], client_id=m["client_id"], client_host=m["client_host"],
                member_epoch=m["member_epoch"], previous_member_epoch=m["previous_member_epoch"],
                subscribed_topic_names=tuple(m["subscribed_topic_names"]), assigned=by_topic(m["assigned"]),
                target=by_topic(m["target"]),
            )
            for m in data["members"]
        ),
        partitions=tuple(
            SharePartitionSnapshot(
                topic=p["topic"], partition=p["partition"], start_offset=p["start_offset"],
                next_fetch_offset=p["next_fetch_offset"],
                in_flight=tuple(InFlightRecordSnapshot(**r) for r in p["in_flight"]),
            )
            for p in partitions
        ),
    )  # fmt: skip
