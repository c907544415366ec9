"""The old home of group coordination, kept as a thin shim: the code is in ``mockbroker.coordinators``.

``from mockbroker.groups import Parked, GroupConfig, ...`` keeps working for the names this
package exported before the move; new code imports from the modules named below.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mockbroker.config.groups import GroupConfig
    from mockbroker.coordinators.classic.group import ClassicGroup, ClassicGroupMember, ClassicGroupState
    from mockbroker.coordinators.consumer.coordinator import ConsumerGroupCoordinator
    from mockbroker.coordinators.consumer.group import (
        ConsumerGroup,
        ConsumerGroupMember,
        ConsumerGroupState,
        MemberState,
    )
    from mockbroker.coordinators.offsets.store import OffsetAndMetadata, OffsetStore
    from mockbroker.coordinators.parked import Parked, wait
    from mockbroker.coordinators.router import GroupCoordinator

# name -> module, imported on first use (PEP 562) as before the move.
_EXPORTS = {
    "ClassicGroup": "mockbroker.coordinators.classic.group",
    "ClassicGroupMember": "mockbroker.coordinators.classic.group",
    "ClassicGroupState": "mockbroker.coordinators.classic.group",
    "ConsumerGroup": "mockbroker.coordinators.consumer.group",
    "ConsumerGroupCoordinator": "mockbroker.coordinators.consumer.coordinator",
    "ConsumerGroupMember": "mockbroker.coordinators.consumer.group",
    "ConsumerGroupState": "mockbroker.coordinators.consumer.group",
    "GroupConfig": "mockbroker.config.groups",
    "GroupCoordinator": "mockbroker.coordinators.router",
    "MemberState": "mockbroker.coordinators.consumer.group",
    "OffsetAndMetadata": "mockbroker.coordinators.offsets.store",
    "OffsetStore": "mockbroker.coordinators.offsets.store",
    "Parked": "mockbroker.coordinators.parked",
    "wait": "mockbroker.coordinators.parked",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
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
