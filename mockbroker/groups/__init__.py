"""Group coordination, sans-I/O: classic and KIP-848 consumer groups and the committed-offsets store.

``MockCluster.groups`` is the cluster's ``GroupCoordinator``; the wire handlers
(mockbroker/handlers/{join_group,sync_group,heartbeat,leave_group,offset_commit,offset_fetch,
offset_delete,describe_groups,list_groups,delete_groups}.py) check, delegate to it and shape the
answer per version. The rules are Kafka's (kafka-group-semantics §2-§9); the event log schema is
docs/events.md. KIP-848 consumer groups (§10) are ``MockCluster.groups.consumer``
(mockbroker.groups.consumer_coordinator; state in mockbroker.groups.consumer), served by
handlers/consumer_group_heartbeat.py and consumer_group_describe.py.
"""

from mockbroker.groups.classic import ClassicGroup, ClassicGroupMember, ClassicGroupState
from mockbroker.groups.config import GroupConfig
from mockbroker.groups.consumer import ConsumerGroup, ConsumerGroupMember, ConsumerGroupState, MemberState
from mockbroker.groups.consumer_coordinator import ConsumerGroupCoordinator
from mockbroker.groups.coordinator import GroupCoordinator
from mockbroker.groups.offsets import OffsetAndMetadata, OffsetStore
from mockbroker.groups.parked import Parked, wait

__all__ = [
    "ClassicGroup",
    "ClassicGroupMember",
    "ClassicGroupState",
    "ConsumerGroup",
    "ConsumerGroupCoordinator",
    "ConsumerGroupMember",
    "ConsumerGroupState",
    "GroupConfig",
    "GroupCoordinator",
    "MemberState",
    "OffsetAndMetadata",
    "OffsetStore",
    "Parked",
    "wait",
]
