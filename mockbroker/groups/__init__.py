"""Group coordination, sans-I/O: classic and KIP-848 consumer groups and the committed-offsets store.

``MockCluster.groups`` is the cluster's ``GroupCoordinator``; the wire handlers
(mockbroker/handlers/{join_group,sync_group,heartbeat,leave_group,offset_commit,offset_fetch,
offset_delete,describe_groups,list_groups,delete_groups}.py) check, delegate to it and shape the
answer per version. The rules are Kafka's (kafka-group-semantics §2-§9); the event log schema is
docs/events.md. KIP-848 consumer groups (§10) are ``MockCluster.groups.consumer``
(mockbroker.groups.consumer_coordinator; state in mockbroker.groups.consumer), served by
handlers/consumer_group_heartbeat.py and consumer_group_describe.py.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mockbroker.config.groups import GroupConfig
    from mockbroker.groups.classic import ClassicGroup, ClassicGroupMember, ClassicGroupState
    from mockbroker.groups.consumer import ConsumerGroup, ConsumerGroupMember, ConsumerGroupState, MemberState
    from mockbroker.groups.consumer_coordinator import ConsumerGroupCoordinator
    from mockbroker.groups.coordinator import GroupCoordinator
    from mockbroker.groups.offsets import OffsetAndMetadata, OffsetStore
    from mockbroker.groups.parked import Parked, wait

# The names below are imported on first use (PEP 562), not with the package: a broker process
# that has not yet seen a group request does not pay for the coordinators and the assignors
# (a third of a cold start). name -> submodule.
_EXPORTS = {
    "ClassicGroup": "classic",
    "ClassicGroupMember": "classic",
    "ClassicGroupState": "classic",
    "ConsumerGroup": "consumer",
    "ConsumerGroupCoordinator": "consumer_coordinator",
    "ConsumerGroupMember": "consumer",
    "ConsumerGroupState": "consumer",
    "GroupConfig": "mockbroker.config.groups",
    "GroupCoordinator": "coordinator",
    "MemberState": "consumer",
    "OffsetAndMetadata": "offsets",
    "OffsetStore": "offsets",
    "Parked": "parked",
    "wait": "parked",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module if "." in module else f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


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
