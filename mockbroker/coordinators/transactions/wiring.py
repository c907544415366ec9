"""Making the transaction coordinator from a cluster's parts (``MockCluster.transactions``).

The cluster is read through ``TransactionHost``, the few things the coordinator needs of it, so
this package imports nothing above it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from mockbroker.config.cluster import ClusterConfig
from mockbroker.coordinators.router import GroupCoordinator
from mockbroker.coordinators.services import CoordinatorServices
from mockbroker.coordinators.transactions.coordinator import TransactionConfig, TransactionCoordinator
from mockbroker.coordinators.transactions.markers import LogMarkerWriter, Topic
from mockbroker.events import EventLog
from mockbroker.timers import Timers

# mockbroker.model.OFFSETS_TOPIC (Topic.GROUP_METADATA_TOPIC_NAME); the package does not import the model.
OFFSETS_TOPIC = "__consumer_offsets"


class _Node(Protocol):
    @property
    def node_id(self) -> int: ...


class _ProducerIds(Protocol):
    def generate_producer_id(self) -> int: ...


class TransactionHost(Protocol):
    """What the transaction coordinator needs of the cluster."""

    @property
    def config(self) -> ClusterConfig: ...

    @property
    def timers(self) -> Timers: ...

    @property
    def events(self) -> EventLog: ...

    @property
    def topics(self) -> Mapping[str, Topic]: ...

    @property
    def groups(self) -> GroupCoordinator: ...

    @property
    def producer_ids(self) -> _ProducerIds: ...

    def transaction_coordinator_for(self, transactional_id: str) -> _Node: ...

    def record_internal_error(self, exc: BaseException) -> None: ...


def make_transaction_coordinator(host: TransactionHost) -> TransactionCoordinator:
    config = host.config

    def broker_of(transactional_id: str) -> int:
        # TransactionStateManager.partitionFor's leader, or where the control API moved it.
        return host.transaction_coordinator_for(transactional_id).node_id

    services = CoordinatorServices(
        config.group_config(),
        host.timers,
        host.events,
        broker_of=broker_of,
        on_internal_error=host.record_internal_error,
    )
    markers = LogMarkerWriter(
        host.topics, OFFSETS_TOPIC, lambda now_ms, pid, commit: host.groups.complete_transaction(now_ms, pid, commit)
    )
    return TransactionCoordinator(
        TransactionConfig(
            config.transaction_max_timeout_ms, config.transaction_marker_delay_ms, config.transactional_id_expiration_ms
        ),
        services,
        markers,
        generate_producer_id=host.producer_ids.generate_producer_id,
        broker_of=broker_of,
    )
