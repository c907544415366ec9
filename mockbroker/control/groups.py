"""Control over groups: list and describe them, read their committed offsets, wait for a state,
expire a member's session, force a rebalance."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from mockbroker.config.group_configs import validate_group_configs
from mockbroker.control.base import DEFAULT_WAIT_S, ControlBase
from mockbroker.control.errors import ControlError, NotFound
from mockbroker.control.snapshots import (
    AnyGroupSnapshot,
    ConsumerGroupSnapshot,
    GroupListing,
    StreamsGroupSnapshot,
    only_match,
)
from mockbroker.coordinators.classic.group import GROUP_TYPE_CLASSIC, ClassicGroupState
from mockbroker.coordinators.consumer.group import GROUP_TYPE_CONSUMER, ConsumerGroupState
from mockbroker.coordinators.share.group import GROUP_TYPE_SHARE, ShareGroupState
from mockbroker.coordinators.streams.group import GROUP_TYPE_STREAMS, StreamsGroupState

# What wait_for_group accepts as a state: Kafka's names for classic and consumer groups.
_GROUP_STATES = (
    frozenset(s.value for s in ClassicGroupState) | frozenset(s.value for s in ConsumerGroupState)
    | frozenset(s.value for s in StreamsGroupState) | frozenset(s.value for s in ShareGroupState)
)
_GROUP_TYPES = (GROUP_TYPE_CLASSIC, GROUP_TYPE_CONSUMER, GROUP_TYPE_STREAMS, GROUP_TYPE_SHARE)



class GroupControl(ControlBase):
    """Classic and KIP-848 consumer groups, through their coordinators' own paths."""

    async def groups(self) -> dict[str, GroupListing]:
        """Every group, classic and KIP-848 consumer groups alike: {group id: its listing}, by
        group id (iterating it gives the ids)."""
        coordinator = self.cluster.groups
        listed = [GroupListing(g.group_id, GROUP_TYPE_CLASSIC, g.state.value, g.protocol_type) for g in coordinator.groups.values()]
        listed += [GroupListing(g.group_id, GROUP_TYPE_CONSUMER, g.state.value, g.protocol_type) for g in coordinator.consumer.groups.values()]
        listed += [GroupListing(g.group_id, GROUP_TYPE_STREAMS, g.state.value, g.protocol_type) for g in coordinator.streams.groups.values()]
        listed += [GroupListing(g.group_id, GROUP_TYPE_SHARE, g.state.value, g.protocol_type) for g in coordinator.share.groups.values()]
        return {g.group_id: g for g in sorted(listed, key=lambda g: g.group_id)}

    async def describe_group(self, group_id: str) -> AnyGroupSnapshot | None:
        """The coordinator's view of a group: a ``GroupSnapshot`` for a classic group, a
        ``ConsumerGroupSnapshot`` for a KIP-848 consumer group, a ``StreamsGroupSnapshot`` for a
        KIP-1071 streams group, a ``ShareGroupSnapshot`` for a KIP-932 share group (``.type``
        tells which), None when there is no such group."""
        return self._snapshot(group_id)

    async def group_configs(self, group_id: str) -> dict[str, str]:
        """A group id's configs (KIP-848 GroupConfig) as set on its GROUP config resource; the keys
        not listed take the broker's group.* settings. The group need not exist."""
        return dict(self.cluster.groups.services.group_configs.get(group_id, {}))

    async def alter_group_configs(self, group_id: str, changes: dict[str, str | None]) -> dict[str, str]:
        """Change a group id's configs as IncrementalAlterConfigs would (a value sets the key, None
        deletes it), checked as Kafka checks them (GroupConfig.validate against the broker's
        group.* bounds: ControlError with Kafka's message). Returns the group's configs after."""
        services = self.cluster.groups.services
        overrides = dict(services.group_configs.get(group_id, {}))
        for name, value in changes.items():
            if value is None:
                overrides.pop(name, None)
            else:
                overrides[name] = value
        error = validate_group_configs(overrides, services.config)
        if error is not None:
            raise ControlError(error.message)
        services.set_group_configs(group_id, overrides)
        return dict(overrides)

    async def committed_offsets(self, group_id: str, topic: str | None = None) -> dict[str, dict[int, int]]:
        """{topic: {partition: committed offset}} of a group (only ``topic`` when given)."""
        return self._committed(group_id, topic)

    async def coordinator(self, group_id: str) -> int:
        return self.cluster.coordinator_for(group_id).node_id

    async def wait_for_group(
        self,
        group_id: str,
        state: str | None = "Stable",
        members: int | None = None,
        *,
        generation_at_least: int | None = None,
        reconciled: bool = False,
        group_type: str | None = None,
        where: Callable[[Any], bool] | None = None,
        timeout: float = DEFAULT_WAIT_S,
    ) -> AnyGroupSnapshot:
        """Wait (wall clock, at most ``timeout`` seconds) until the group is in ``state`` (a
        classic state, or a consumer group's: Empty, Assigning, Reconciling, Stable) with exactly
        ``members`` members (any number for None), at ``generation_at_least`` (the group epoch of
        a consumer group), of ``group_type`` ("classic"/"consumer") when given, with every member
        of a consumer group reconciled to its target when ``reconciled``, and ``where(snapshot)``
        holds; return that snapshot. WaitTimeout says what it last saw; ControlError when
        ``reconciled`` is asked of a classic group."""
        if state is not None and state not in _GROUP_STATES:
            raise ValueError(f"unknown group state {state!r}; states are {', '.join(sorted(_GROUP_STATES))}")
        if group_type is not None and group_type not in _GROUP_TYPES:
            raise ValueError(f"unknown group type {group_type!r}; use one of {', '.join(_GROUP_TYPES)}")

        def check() -> AnyGroupSnapshot | None:
            view = self._snapshot(group_id)
            if view is None or (group_type is not None and view.type != group_type):
                return None
            if reconciled and not isinstance(view, (ConsumerGroupSnapshot, StreamsGroupSnapshot)):
                raise ControlError(f"group {group_id} is a {view.type} group; reconciled=True is for consumer and streams groups")
            if state is not None and view.state != state:
                return None
            if members is not None and len(view.members) != members:
                return None
            if generation_at_least is not None and view.generation_id < generation_at_least:
                return None
            if reconciled and not (isinstance(view, (ConsumerGroupSnapshot, StreamsGroupSnapshot)) and view.reconciled):
                return None
            if where is not None and not where(view):
                return None
            return view

        wanted = (
            f"{group_type or 'group'} {group_id} {state or 'in any state'}"
            + (f" with {members} members" if members is not None else "")
            + (" with every member reconciled to its target" if reconciled else "")
        )  # fmt: skip
        return await self._wait(check, wanted, lambda: repr(self._snapshot(group_id)), timeout)

    async def wait_for_commit(
        self, group_id: str, topic: str, partition: int | None = None, offset: int | None = None, *, timeout: float = DEFAULT_WAIT_S
    ) -> dict[int, int]:
        """Wait until the group has committed an offset for ``topic`` (for ``partition`` only,
        when given; at least ``offset``, when given); return {partition: offset} for the topic."""

        def check() -> dict[int, int] | None:
            committed = self._committed(group_id, topic).get(topic, {})
            if partition is not None:
                got = committed.get(partition)
                if got is None or (offset is not None and got < offset):
                    return None
                return committed
            if not committed or (offset is not None and not all(o >= offset for o in committed.values())):
                return None
            return committed

        where = f"-{partition}" if partition is not None else ""
        wanted = f"group {group_id} to commit {topic}{where}" + (f" at offset >= {offset}" if offset is not None else "")
        return await self._wait(check, wanted, lambda: repr(self._committed(group_id, topic)), timeout)


    async def expire_session(
        self, group_id: str, member_id: str | None = None, *, instance_id: str | None = None, client_id: str | None = None
    ) -> str:
        """Expire one member's session now, as if its session timeout had passed without a
        heartbeat, through the coordinator's own expiry path (same events, same consequences).
        A classic group rebalances without it; ControlError while it is parked in
        JoinGroup/SyncGroup, where Kafka cannot expire it either. A consumer group member is
        fenced (its next heartbeat gets UNKNOWN_MEMBER_ID, and it rejoins with epoch 0) and the
        group epoch is bumped; so is a streams group member (KIP-1071), and a share group member
        (KIP-932: its acquired records are released too). Returns its member id."""
        coordinator, now = self.cluster.groups, self.cluster.clock.now_ms()
        if group_id in coordinator.share.groups:
            return self._expire_share_session(group_id, member_id, client_id)
        classic = coordinator.groups.get(group_id)
        streams = coordinator.streams.groups.get(group_id)
        if classic is not None:
            candidates = [(m.member_id, m.member_id, m.group_instance_id, m.client_id) for m in classic.members.values()]
        elif streams is not None:
            candidates = [(m.member_id, m.member_id, None, m.client_id) for m in streams.members.values()]
        else:
            consumer = self._consumer_group(group_id)
            candidates = [(m.member_id, m.member_id, m.instance_id, m.client_id) for m in consumer.members.values()]
        found = only_match(group_id, candidates, member_id, instance_id, client_id)
        # Recorded once the coordinator accepts and before the expiry's own events: the log reads
        # cause then effect, and a refused call leaves no event.
        def cause() -> None:
            self._record("control.session_expired", group_id=group_id, reason=f"session of member {found} expired now", member_id=found)

        try:
            if classic is not None:
                coordinator.expire_member_session(group_id, found, now, cause)
            elif streams is not None:
                coordinator.streams.expire_member_session(group_id, found, now, cause)
            else:
                coordinator.consumer.expire_member_session(group_id, found, now, cause)
        except ValueError as exc:
            raise ControlError(str(exc)) from None
        return found

    async def force_rebalance(self, group_id: str, reason: str = "forced by the test (control.force_rebalance)") -> str:
        """Make a group rebalance now; returns its new state. A classic group (Stable or
        CompletingRebalance) goes to PreparingRebalance, as a new member or a metadata change
        would: heartbeats answer REBALANCE_IN_PROGRESS and members rejoin. A consumer group
        (any state but Empty) gets its group epoch bumped and a new target assignment computed,
        as a change of the subscribed topics' metadata would: it is Reconciling until every
        member has reconciled to the new epoch at its next heartbeat (docs/control.md). A streams
        group likewise (a new target for a new group epoch)."""
        coordinator, now = self.cluster.groups, self.cluster.clock.now_ms()
        classic = coordinator.groups.get(group_id)
        streams = coordinator.streams.groups.get(group_id)
        consumer = None if classic is not None or streams is not None else self._consumer_group(group_id)
        def cause() -> None:  # as in expire_session: only once accepted, before the effects
            self._record("control.rebalance_forced", group_id=group_id, reason=reason)

        try:
            if classic is not None:
                coordinator.force_rebalance(group_id, now, reason, cause)
                return str(classic.state.value)
            if streams is not None:
                coordinator.streams.force_rebalance(group_id, now, reason, cause)
                return str(streams.state.value)
            failed = coordinator.consumer.force_rebalance(group_id, now, reason, cause)
        except ValueError as exc:
            raise ControlError(str(exc)) from None
        assert consumer is not None
        if failed is not None:
            raise ControlError(f"consumer group {group_id} is {consumer.state.value}: {failed}")
        return str(consumer.state.value)

    def _expire_share_session(self, group_id: str, member_id: str | None, client_id: str | None) -> str:
        """expire_session for a share group: the coordinator's session-timeout fencing."""
        share = self.cluster.groups.share
        candidates = [(m.member_id, m.member_id, None, m.client_id) for m in share.groups[group_id].members.values()]
        found = only_match(group_id, candidates, member_id, None, client_id)
        self._record("control.session_expired", group_id=group_id, reason=f"session of member {found} expired now", member_id=found)
        share.expire_member_session(group_id, found, self.cluster.clock.now_ms())
        return found

    async def expire_acquisition_lock(
        self, group_id: str, topic: str, partition: int, offsets: Iterable[int] | None = None
    ) -> list[int]:
        """Expire now the acquisition locks of a share group's records on one partition (``offsets``;
        every Acquired record when None), as if group.share.record.lock.duration.ms had passed:
        each becomes Available for redelivery, or Archived once its delivery count reached
        group.share.delivery.count.limit (KIP-932). Returns the offsets released; NotFound for an
        unknown group, topic or partition, ControlError before the group first fetched it."""
        if group_id not in self.cluster.groups.share.groups:
            raise NotFound(f"no share group {group_id!r}; share groups are {sorted(self.cluster.groups.share.groups)}")
        topic_id = self._topic(topic).topic_id
        self._partition(topic, partition)
        wanted = None if offsets is None else sorted(set(offsets))

        def cause() -> None:
            which = "every acquired record" if wanted is None else f"offsets {wanted}"
            self._record("control.acquisition_lock_expired", group_id=group_id, topic=topic, partition=partition,
                         offsets=wanted, reason=f"acquisition lock of {which} of {topic}-{partition} expired now")  # fmt: skip

        try:
            return self.cluster.groups.share_partitions.expire_locks(
                group_id, topic_id, partition, wanted, self.cluster.clock.now_ms(), cause
            )
        except ValueError as exc:
            raise ControlError(str(exc)) from None
