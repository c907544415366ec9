"""The classic group coordinator, sans-I/O: JoinGroup, SyncGroup, Heartbeat, LeaveGroup, static
membership (KIP-345), the join/sync/session timers, and a classic group's side of the offset and
admin APIs.

Follows Kafka's GroupMetadataManager (the 4.x group coordinator) rule by rule, as
kafka-group-semantics §2-§7 and its Appendix describe them; the method names are Kafka's in
snake_case, so the Java source can be read side by side. Inputs are the request's fields and
``now_ms``; outputs are response values, or a ``Parked`` response that a later request or a timer
completes (a JoinGroup parked until the join phase completes, a SyncGroup until the leader syncs).
Nothing here reads a clock, touches a socket or waits: timers are armed on the cluster's
``Timers`` (``CoordinatorServices.schedule``) with deadlines in clock milliseconds and call back
with the time they fired.

The rules are split by API, one mixin per module over a shared core (classic/base.py: state, the
door ``_transition``, timers, the rebalance machinery): join.py (JoinGroup, static membership),
sync.py (SyncGroup), heartbeat.py (Heartbeat, control expiry and rebalance), leave.py
(LeaveGroup), admin.py (offsets and admin APIs). Every change of group state goes through the one
door, ``_transition``, checked against the table in ``mockbroker.coordinators.classic.group`` and
recorded in the event log with its reason (docs/events.md).

Requests for a group id that is a consumer group never reach this class: the router
(mockbroker.coordinators.router) sends them to the migration package, except the hot Heartbeat,
which this class answers for classic groups and hands on through ``heartbeat_other_kind``.

Deliberate differences from Kafka, all invisible to clients on the wire:
- The coordinator is always active: COORDINATOR_NOT_AVAILABLE appears only for a Dead group.
- Where Kafka iterates a HashMap (leader succession, the leader's member list, protocol vote ties)
  insertion order decides, so runs repeat exactly.
- A deleted group is removed at once (after a recorded transition to Dead), as in Kafka 4.x.
"""

from __future__ import annotations

from typing import Any

from mockbroker.coordinators.classic.admin import OffsetAndAdminRules
from mockbroker.coordinators.classic.base import HeartbeatToOtherKind, heartbeat_key
from mockbroker.coordinators.classic.group import EMPTY, STABLE, ClassicGroup
from mockbroker.coordinators.classic.heartbeat import HeartbeatRules
from mockbroker.coordinators.classic.join import JoinGroupRules, join_rebalance_timeout_ms
from mockbroker.coordinators.classic.leave import LeaveGroupRules
from mockbroker.coordinators.classic.sync import SyncGroupRules
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.join_group import JoinGroupResponse
from mockbroker_protocol.messages.sync_group import SyncGroupResponse

__all__ = ["ClassicGroupCoordinator", "HeartbeatToOtherKind", "join_rebalance_timeout_ms"]


class ClassicGroupCoordinator(JoinGroupRules, SyncGroupRules, HeartbeatRules, LeaveGroupRules, OffsetAndAdminRules):
    """Owns every classic group of the cluster (``groups``): the rules of every classic API, and
    what the migration package asks of classic groups."""

    # -- for the migration package (§10.8) -----------------------------------------------------------

    def is_empty_group(self, group_id: str) -> bool:
        """True for an Empty classic group (a consumer group may replace it, §10.1)."""
        group = self.groups.get(group_id)
        return group is not None and group.state is EMPTY

    def remove_empty_group(self, group_id: str, now_ms: int, reason: str) -> None:
        """An empty classic group replaced by a consumer group; its offsets stay (§10.1)."""
        self._delete(self.groups[group_id], now_ms, reason)

    def remove_classic_group_for_upgrade(self, group: ClassicGroup, now_ms: int) -> None:
        """convertToConsumerGroup's classic side (§10.8): parked JoinGroups and SyncGroups are
        told REBALANCE_IN_PROGRESS, every timer goes, and the group goes (its offsets stay)."""
        for member in list(group.members.values()):
            group.complete_join(member, JoinGroupResponse(error_code=ErrorCode.REBALANCE_IN_PROGRESS, member_id=member.member_id))
            group.complete_sync(member, SyncGroupResponse(error_code=ErrorCode.REBALANCE_IN_PROGRESS))
        for member_id in [*group.members, *group.pending_join_members]:
            self.timers.cancel(heartbeat_key(group.group_id, member_id))
        self._delete(group, now_ms, "converted to a consumer group (online upgrade)")

    def add_classic_group_for_downgrade(self, group: ClassicGroup, now_ms: int, reason: str, details: dict[str, Any]) -> None:
        """convertToClassicGroup's classic side (§10.8): the group, built Stable at generation =
        the consumer group's epoch, arms every member's session, then rebalances at once."""
        group.state, group.state_timestamp_ms = STABLE, now_ms
        self.groups[group.group_id] = group
        self._record("group.created", group, now_ms, reason=reason, state=group.state.value)
        self._record("group.downgraded", group, now_ms, reason=reason, protocol_name=group.protocol_name, **details)
        for member in group.members.values():
            self._reschedule_classic_group_member_heartbeat(group, member, now_ms)
        self._prepare_rebalance(group, now_ms, reason)


