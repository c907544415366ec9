"""ListGroups and DeleteGroups for the group kinds whose coordinators own their groups outright
(consumer, streams and share groups): the one implementation their coordinators share.

Each kind lists its groups under its own type and protocol type (GroupCoordinatorService.listGroups
with the type filter, §8.6) and deletes a group only when it is Empty (NON_EMPTY_GROUP otherwise,
GroupMetadataManager.validateDeleteGroup, §10.7). What deleting takes with it is the kind's own:
``delete_empty_group``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import ClassVar, Generic, Protocol, TypeVar

from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.list_groups import ListedGroup


class ListableGroup(Protocol):
    """What listing and deleting read of a group."""

    @property
    def group_id(self) -> str: ...

    @property
    def protocol_type(self) -> str: ...

    @property
    def state(self) -> enum.Enum: ...


G = TypeVar("G", bound=ListableGroup)


class GroupAdmin(Generic[G]):
    """Mixed into a coordinator holding ``groups``; ``GROUP_TYPE`` is its kind's name (Group.GroupType)."""

    GROUP_TYPE: ClassVar[str]
    groups: dict[str, G]

    def list_groups(self, states: set[str], types: set[str], include: Callable[[str], bool] | None) -> list[ListedGroup]:
        """ListGroups entries of this kind's groups (type and protocol type the kind's name)."""
        if types and self.GROUP_TYPE not in types:
            return []
        return [
            ListedGroup(group.group_id, group.protocol_type, group.state.value, self.GROUP_TYPE)
            for group in self.groups.values()
            if (include is None or include(group.group_id)) and (not states or group.state.value.lower() in states)
        ]

    def delete_group(self, now_ms: int, group_id: str) -> ErrorCode:
        """DeleteGroups for one of this kind's groups: only when Empty."""
        group = self.groups[group_id]
        if not self.is_deletable(group):
            return ErrorCode.NON_EMPTY_GROUP
        self.delete_empty_group(group, now_ms)
        return ErrorCode.NONE

    def is_deletable(self, group: G) -> bool:
        """Whether the group is Empty (the kind's own test)."""
        raise NotImplementedError

    def delete_empty_group(self, group: G, now_ms: int) -> None:
        """The group goes, with what the kind deletes with it."""
        raise NotImplementedError
