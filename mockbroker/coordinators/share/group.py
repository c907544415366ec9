"""A KIP-932 share group and its members, as Kafka's ShareGroup and ShareGroupMember keep them.

A share group has no reconciliation phase: partitions are shared, never revoked first, so a member
takes its target assignment (and the target's epoch) in the heartbeat that finds it
(ShareGroupAssignmentBuilder). Its states are Empty and Stable (ShareGroup.ShareGroupState; Dead
once removed), recomputed from the members by ``ShareGroupCoordinator.update_state``.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass, field

from mockbroker.timers import Timer

GROUP_TYPE_SHARE = "share"  # Group.GroupType.SHARE; also the protocol type ListGroups shows
SIMPLE_ASSIGNOR_NAME = "simple"  # SimpleAssignor.name(): the default of group.share.assignors

TopicIdPartition = tuple[uuid.UUID, int]


class ShareGroupState(enum.Enum):
    """ShareGroup.ShareGroupState; the values are the names on the wire."""

    EMPTY = "Empty"
    STABLE = "Stable"
    DEAD = "Dead"


@dataclass(slots=True)
class ShareGroupMember:
    """ShareGroupMember: who the member is, what it subscribes to and what it holds."""

    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = 0
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    assigned: frozenset[TopicIdPartition] = frozenset()
    # The session timer last armed for this member (re-armed on every heartbeat).
    session_timer: Timer | None = None


@dataclass(slots=True)
class ShareGroup:
    """ShareGroup: its epochs, members, subscription metadata and target assignment."""

    group_id: str
    state: ShareGroupState = ShareGroupState.EMPTY
    # Kafka 4.3's ModernGroup starts a new group at group and assignment epoch 1, so its first
    # member's join bumps it to 2 (as for consumer groups).
    group_epoch: int = 1
    assignment_epoch: int = 1
    members: dict[str, ShareGroupMember] = field(default_factory=dict)
    # Subscribed topic name -> (topic id, partition count), as last computed (bumps the group epoch
    # when it changes: a topic created, deleted or given more partitions).
    subscription_metadata: dict[str, tuple[uuid.UUID, int]] = field(default_factory=dict)
    target_assignment: dict[str, frozenset[TopicIdPartition]] = field(default_factory=dict)

    @property
    def protocol_type(self) -> str:
        return GROUP_TYPE_SHARE

    def is_empty(self) -> bool:
        return not self.members

    def subscribed_topic_names(self) -> set[str]:
        return {name for m in self.members.values() for name in m.subscribed_topic_names}
