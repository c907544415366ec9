"""Pure group-coordinator tests: a MockCluster that is never started, on a ManualClock.

``Harness`` wraps ``cluster.groups`` with short request builders, so a test reads like arithmetic
on now_ms: join at t, advance the session timeout, check the expiry. Timers fire inside
``advance`` (a zero-delay timer, such as the mock's initial rebalance delay of 0, fires on
``advance(0)``). Member ids are deterministic: client id (or instance id) plus "-uuid-N".
"""

from __future__ import annotations

import itertools
from typing import Any

from mockbroker import MockCluster
from mockbroker.clock import ManualClock
from mockbroker.coordinators.classic.group import ClassicGroup
from mockbroker.coordinators.parked import Parked
from mockbroker.coordinators.router import GroupCoordinator
from mockbroker.events import Event
from mockbroker_protocol.consumer_protocol import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    TopicPartition,
    encode_assignment,
    encode_subscription,
)
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.join_group import (
    JoinGroupRequest,
    JoinGroupRequestProtocol,
    JoinGroupResponse,
)
from mockbroker_protocol.messages.leave_group import MemberIdentity, MemberResponse
from mockbroker_protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
    OffsetCommitResponseTopic,
)
from mockbroker_protocol.messages.sync_group import (
    SyncGroupRequest,
    SyncGroupRequestAssignment,
    SyncGroupResponse,
)

SESSION = 10_000
REBALANCE = 60_000


def subscription(*topics: str) -> bytes:
    return encode_subscription(ConsumerProtocolSubscription(topics=list(topics)), 0)


def assignment(**partitions: list[int]) -> bytes:
    return encode_assignment(
        ConsumerProtocolAssignment(assigned_partitions=[TopicPartition(t, p) for t, p in partitions.items()]), 0
    )


RANGE = (("range", subscription("t")),)
GROUPS_PROTOCOL = "<the group's protocol>"


class Harness:
    def __init__(self, **settings: Any) -> None:
        self.clock = ManualClock()
        settings.setdefault("brokers", 1)
        self.cluster = MockCluster(clock=self.clock, **settings)
        self.groups: GroupCoordinator = self.cluster.groups
        counter = itertools.count(1)
        self.groups.classic.new_uuid = lambda: f"uuid-{next(counter)}"
        self.groups.start(self.now)
        self.start_ms = self.now

    # -- time -----------------------------------------------------------------------------------

    @property
    def now(self) -> int:
        return self.clock.now_ms()

    @property
    def elapsed(self) -> int:
        return self.now - self.start_ms

    def advance(self, ms: int) -> None:
        """Move time forward by ``ms``, stopping at every timer deadline on the way, so each timer
        fires with now_ms equal to its deadline (ManualClock.advance alone fires everything due
        with the final time, and timers re-armed from inside a callback would drift)."""
        target = self.now + ms
        for _ in range(1_000_000):
            due = self.cluster.timers.next_deadline()
            if due is None or due > target:
                break
            self.clock.advance(max(due - self.now, 0))
        else:  # pragma: no cover - a timer re-arming itself at the same instant forever
            raise AssertionError("timers keep firing at the same instant")
        self.clock.advance(target - self.now)
        if self.cluster.internal_errors:  # a timer callback failed: the cluster kept it, the test must not
            raise self.cluster.internal_errors[0]

    # -- looking ----------------------------------------------------------------------------------

    def group(self, group_id: str = "g") -> ClassicGroup:
        return self.groups.groups[group_id]

    def state(self, group_id: str = "g") -> str:
        group = self.groups.groups.get(group_id)
        return "(none)" if group is None else group.state.value

    def events(self, type: str | None = None, group_id: str | None = None) -> list[Event]:
        return self.cluster.events.filter(type=type, group_id=group_id)

    def transitions(self, group_id: str = "g") -> list[tuple[str, str]]:
        return [(e.details["from_state"], e.details["to_state"]) for e in self.events("group.transition", group_id)]

    # -- requests -----------------------------------------------------------------------------------

    def join(
        self,
        group_id: str = "g",
        member_id: str = "",
        *,
        version: int = 9,
        session: int = SESSION,
        rebalance: int = REBALANCE,
        protocols: tuple[tuple[str, bytes], ...] = RANGE,
        instance: str | None = None,
        client_id: str = "client",
        protocol_type: str = "consumer",
        reason: str | None = None,
    ) -> JoinGroupResponse | Parked[JoinGroupResponse]:
        request = JoinGroupRequest(
            group_id=group_id,
            session_timeout_ms=session,
            rebalance_timeout_ms=rebalance,
            member_id=member_id,
            group_instance_id=instance,
            protocol_type=protocol_type,
            protocols=[JoinGroupRequestProtocol(name, metadata) for name, metadata in protocols],
            reason=reason,
        )
        return self.groups.join_group(self.now, request, api_version=version, client_id=client_id, client_host="/127.0.0.1")

    def join_new(self, group_id: str = "g", **kwargs: Any) -> Parked[JoinGroupResponse]:
        """A dynamic member's first join: MEMBER_ID_REQUIRED, then the rejoin, which parks."""
        first = self.join(group_id, **kwargs)
        assert isinstance(first, JoinGroupResponse) and first.error_code == ErrorCode.MEMBER_ID_REQUIRED, first
        second = self.join(group_id, first.member_id, **kwargs)
        assert isinstance(second, Parked), second
        return second

    def sync(
        self,
        group_id: str,
        member_id: str,
        generation_id: int,
        assignments: dict[str, bytes] | None = None,
        *,
        version: int = 5,
        instance: str | None = None,
        protocol_type: str | None = GROUPS_PROTOCOL,
        protocol_name: str | None = GROUPS_PROTOCOL,
    ) -> SyncGroupResponse | Parked[SyncGroupResponse]:
        group = self.groups.groups.get(group_id)
        if protocol_type == GROUPS_PROTOCOL:  # the group's protocol type, whatever it is
            protocol_type = "consumer" if group is None or group.protocol_type is None else group.protocol_type
        if protocol_name == GROUPS_PROTOCOL:  # the group's selected protocol, whatever it is
            protocol_name = "range" if group is None or group.protocol_name is None else group.protocol_name
        request = SyncGroupRequest(
            group_id=group_id,
            generation_id=generation_id,
            member_id=member_id,
            group_instance_id=instance,
            protocol_type=protocol_type if version >= 5 else None,
            protocol_name=protocol_name if version >= 5 else None,
            assignments=[SyncGroupRequestAssignment(m, a) for m, a in (assignments or {}).items()],
        )
        return self.groups.sync_group(self.now, request, api_version=version)

    def heartbeat(self, group_id: str, member_id: str, generation_id: int, instance: str | None = None) -> ErrorCode:
        return self.groups.heartbeat(self.now, group_id, member_id, generation_id, instance)

    def leave(
        self, group_id: str, *identities: str | tuple[str, str | None]
    ) -> tuple[ErrorCode, list[MemberResponse]]:
        members = [
            MemberIdentity(i, None) if isinstance(i, str) else MemberIdentity(i[0], i[1]) for i in identities
        ]
        return self.groups.leave_group(self.now, group_id, members)

    def commit(
        self,
        group_id: str,
        offsets: dict[tuple[str, int], int],
        *,
        generation: int = -1,
        member_id: str = "",
        instance: str | None = None,
        version: int = 9,
        retention: int = -1,
        metadata: str | None = "",
    ) -> list[OffsetCommitResponseTopic]:
        by_topic: dict[str, list[OffsetCommitRequestPartition]] = {}
        for (topic, partition), offset in offsets.items():
            by_topic.setdefault(topic, []).append(
                OffsetCommitRequestPartition(partition, offset, committed_metadata=metadata)
            )
        request = OffsetCommitRequest(
            group_id=group_id,
            generation_id_or_member_epoch=generation,
            member_id=member_id,
            group_instance_id=instance,
            retention_time_ms=retention,
            topics=[OffsetCommitRequestTopic(t, partitions=p) for t, p in by_topic.items()],
        )
        return self.groups.commit_offsets(self.now, request, api_version=version)

    def committed(self, group_id: str = "g") -> dict[tuple[str, int], int]:
        return {
            (topic, partition): o.committed_offset
            for topic, parts in self.groups.offsets.group_offsets(group_id).items()
            for partition, o in parts.items()
        }

    # -- whole scenarios ----------------------------------------------------------------------------

    def stable_group(self, group_id: str = "g", members: int = 2, **kwargs: Any) -> list[str]:
        """Form a Stable group of dynamic members; returns their ids, the leader first."""
        parked = [self.join_new(group_id, client_id=f"c{i}", **kwargs) for i in range(members)]
        self.advance(0)  # the initial rebalance delay (0 here)
        responses = [p.result() for p in parked]
        assert all(r.error_code == ErrorCode.NONE for r in responses), responses
        leader = responses[0].leader
        ids = [leader] + [r.member_id for r in responses if r.member_id != leader]
        generation = responses[0].generation_id
        follower_syncs = [self.sync(group_id, m, generation) for m in ids[1:]]
        leader_sync = self.sync(group_id, leader, generation, {m: assignment(t=[i]) for i, m in enumerate(ids)})
        for s in [leader_sync, *follower_syncs]:
            answered = s.result() if isinstance(s, Parked) else s
            assert answered.error_code == ErrorCode.NONE, answered
        assert self.state(group_id) == "Stable"
        return ids


def answered(result: Any) -> Any:
    """The response of an answered request, parked or not."""
    if isinstance(result, Parked):
        return result.result()
    return result


def error(result: Any) -> ErrorCode:
    return ErrorCode(answered(result).error_code)
