"""The control and introspection API: one model, many front ends (docs/control.md).

``cluster.control`` is a ``Control``: async methods that run on the cluster's own event loop and
are the only way the pytest fixture (mockbroker.testing's sync and async facades), the HTTP admin
API and the CLI change or read a running cluster. Faults are built on the one request hook
(``intercept``, mockbroker/intercept.py) or change the cluster's model directly (brokers down,
leaders and coordinators moved), always recording a ``control.*`` event with a reason.

Every method is ``async`` even where it does not wait, so front ends treat them alike; none of
them may be called from another thread (the facades in mockbroker.testing hop onto the loop).
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from mockbroker.coordinators.classic.group import GROUP_TYPE_CLASSIC, ClassicGroupState
from mockbroker.coordinators.consumer.group import GROUP_TYPE_CONSUMER, ConsumerGroupState
from mockbroker.events import Event
from mockbroker.faults import ErrorQueues
from mockbroker.intercept import (
    CLOSE,
    DROP,
    Delay,
    Intercepted,
    InterceptFn,
    Interceptor,
    RequestHooks,
    RequestRecord,
    api_key_of,
)
from mockbroker_protocol.consumer_protocol import decode_assignment, decode_subscription
from mockbroker_protocol.errors import DecodeError, ErrorCode
from mockbroker_protocol.hashing import murmur2, to_positive
from mockbroker_protocol.records import Compression, SimpleRecord, build_batch, decode_batch
from mockbroker_protocol.registry import APIS

if TYPE_CHECKING:
    from mockbroker.cluster import MockCluster
    from mockbroker.coordinators.classic.group import ClassicGroup, ClassicGroupMember
    from mockbroker.coordinators.consumer.group import ConsumerGroup
    from mockbroker.model import Partition, Topic

T = TypeVar("T")

DEFAULT_WAIT_S = 30.0
CONTROL_CLIENT_ID = "mockbroker-control"
NO_LEADER = -1
# Produce is appended as a v11 request would be (zstd allowed from v7, KIP-110).
_PRODUCE_VERSION = 11
# What wait_for_group accepts as a state: Kafka's names for classic and consumer groups.
_GROUP_STATES = frozenset(s.value for s in ClassicGroupState) | frozenset(s.value for s in ConsumerGroupState)


class ControlError(Exception):
    """A control call that cannot be done as asked (unknown group, broker, topic ...)."""


class NotFound(ControlError, LookupError):
    """The broker, topic, partition, group or member named does not exist (HTTP: 404)."""


def _only_match(
    group_id: str, candidates: Sequence[tuple[T, str, str | None, str]],
    member_id: str | None, instance_id: str | None, client_id: str | None,
) -> T:  # fmt: skip
    """The one item of (item, member id, instance id, client id) candidates matching every given
    id; ControlError naming the members when none or several match."""
    found = [
        item for item, m, i, c in candidates
        if (member_id is None or m == member_id) and (instance_id is None or i == instance_id)
        and (client_id is None or c == client_id)
    ]  # fmt: skip
    if len(found) != 1:
        raise (NotFound if not found else ControlError)(
            f"{len(found)} members of {group_id} match member_id={member_id} instance_id={instance_id} "
            f"client_id={client_id}; members: {[(m, c) for _, m, _, c in candidates]}"
        )
    return found[0]


class WaitTimeout(ControlError, TimeoutError):
    """A wait_for_* helper gave up; the message says what it waited for and what it last saw."""


class ProduceError(ControlError):
    def __init__(self, code: ErrorCode, message: str | None) -> None:
        super().__init__(f"{code.name}: {message or 'the append was refused'}")
        self.code = code


# -- snapshots (plain data, safe to hand to another thread) ----------------------------------------


@dataclass(frozen=True, slots=True)
class MemberSnapshot:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocols: tuple[str, ...]  # the member's protocol names, in its order of preference
    # The consumer protocol, decoded (None when the group is not a "consumer" group or undecodable):
    subscription: tuple[str, ...] | None  # subscribed topics
    owned_partitions: dict[str, tuple[int, ...]] | None  # what the member said it owns (v1+)
    assignment: dict[str, tuple[int, ...]] | None  # what the leader assigned it, by topic
    raw_assignment: bytes = field(repr=False, default=b"")
    awaiting_join: bool = False
    awaiting_sync: bool = False

    def partitions(self, topic: str) -> tuple[int, ...]:
        """The partitions of ``topic`` in this member's assignment (empty when none)."""
        return (self.assignment or {}).get(topic, ())


@dataclass(frozen=True, slots=True)
class GroupSnapshot:
    group_id: str
    state: str  # Kafka's names: Empty, PreparingRebalance, CompletingRebalance, Stable, Dead
    generation_id: int
    protocol_type: str | None
    protocol_name: str | None
    leader_id: str | None
    members: tuple[MemberSnapshot, ...]
    type: str = "classic"

    def member(self, *, client_id: str | None = None, instance_id: str | None = None, member_id: str | None = None) -> MemberSnapshot:
        """The one member matching; ControlError when none or several match."""
        candidates = [(m, m.member_id, m.group_instance_id, m.client_id) for m in self.members]
        return _only_match(self.group_id, candidates, member_id, instance_id, client_id)

    def assignment(self, topic: str) -> dict[str, tuple[int, ...]]:
        """member id -> its partitions of ``topic``."""
        return {m.member_id: m.partitions(topic) for m in self.members}

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        for m in out["members"]:
            m.pop("raw_assignment", None)
        return out


@dataclass(frozen=True, slots=True)
class ConsumerMemberSnapshot:
    """A KIP-848 consumer group member as its coordinator sees it (partitions by topic name)."""

    member_id: str
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    member_epoch: int  # -2: a static member's temporary leave
    previous_member_epoch: int
    state: str  # MemberState: STABLE, UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    server_assignor: str | None  # the assignor it asked for (ServerAssignor)
    rebalance_timeout_ms: int
    assigned: dict[str, tuple[int, ...]]  # what it owns now
    pending_revocation: dict[str, tuple[int, ...]]  # what it must give up before it moves on
    target: dict[str, tuple[int, ...]]  # what the target assignment gives it

    def partitions(self, topic: str) -> tuple[int, ...]:
        """The partitions of ``topic`` this member owns now (empty when none)."""
        return self.assigned.get(topic, ())

    def target_partitions(self, topic: str) -> tuple[int, ...]:
        return self.target.get(topic, ())


@dataclass(frozen=True, slots=True)
class ConsumerGroupSnapshot:
    """A KIP-848 consumer group (``type`` "consumer"): epochs instead of a generation, the
    broker's assignor instead of a leader, and each member's current and target partitions."""

    group_id: str
    state: str  # Empty, Assigning, Reconciling, Stable, Dead (ConsumerGroupState)
    group_epoch: int
    assignment_epoch: int  # the group epoch the target assignment was computed for
    assignor: str  # the assignor of the target assignment (or the one that would be used)
    subscribed_topics: dict[str, int]  # topic -> partition count, for every subscribed topic that exists
    members: tuple[ConsumerMemberSnapshot, ...]
    protocol_type: str = "consumer"
    type: str = "consumer"

    @property
    def generation_id(self) -> int:
        """The group epoch: what ``wait_for_group(generation_at_least=...)`` and the event log's
        ``generation_id`` mean for a consumer group."""
        return self.group_epoch

    @property
    def reconciled(self) -> bool:
        """Every member is STABLE at the assignment epoch and owns exactly its target, and the
        target is computed for the current group epoch: what Stable means for a group with
        members, checked member by member."""
        return self.group_epoch == self.assignment_epoch and all(
            m.state == "STABLE" and m.member_epoch == self.assignment_epoch and m.assigned == m.target and not m.pending_revocation
            for m in self.members
        )

    def member(self, *, client_id: str | None = None, instance_id: str | None = None, member_id: str | None = None) -> ConsumerMemberSnapshot:
        """The one member matching; ControlError when none or several match."""
        candidates = [(m, m.member_id, m.instance_id, m.client_id) for m in self.members]
        return _only_match(self.group_id, candidates, member_id, instance_id, client_id)

    def assignment(self, topic: str) -> dict[str, tuple[int, ...]]:
        """member id -> the partitions of ``topic`` it owns now."""
        return {m.member_id: m.partitions(topic) for m in self.members}

    def target_assignment(self, topic: str) -> dict[str, tuple[int, ...]]:
        """member id -> the partitions of ``topic`` the target assignment gives it."""
        return {m.member_id: m.target_partitions(topic) for m in self.members}

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


AnyGroupSnapshot = GroupSnapshot | ConsumerGroupSnapshot


@dataclass(frozen=True, slots=True)
class GroupListing:
    """One group as ``groups()`` lists it (ListGroups' fields)."""

    group_id: str
    type: str  # "classic" or "consumer"
    state: str
    protocol_type: str | None


@dataclass(frozen=True, slots=True)
class PartitionSnapshot:
    index: int
    leader_id: int  # -1: no live replica
    leader_epoch: int
    replica_ids: tuple[int, ...]
    isr_ids: tuple[int, ...]
    log_start_offset: int
    log_end_offset: int


@dataclass(frozen=True, slots=True)
class TopicSnapshot:
    name: str
    topic_id: str
    is_internal: bool
    replication_factor: int
    configs: dict[str, str]
    partitions: tuple[PartitionSnapshot, ...]

    def leaders(self) -> dict[int, int]:
        return {p.index: p.leader_id for p in self.partitions}


@dataclass(frozen=True, slots=True)
class ConsumedRecord:
    """A record read back from a partition's log, decoded."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    leader_epoch: int = -1
    compression: str = "none"


@dataclass(frozen=True, slots=True)
class BrokerSnapshot:
    node_id: int
    host: str  # where its listener binds
    port: int
    advertised_host: str  # what Metadata tells clients
    advertised_port: int
    rack: str | None
    up: bool  # False after broker_down


@dataclass(frozen=True, slots=True)
class ClusterSnapshot:
    cluster_id: str
    controller_id: int
    brokers: tuple[BrokerSnapshot, ...]
    manual_clock: bool
    now_ms: int


@dataclass(frozen=True, slots=True)
class FaultsSnapshot:
    """What is in force: pushed errors not yet used, interceptors (latency, disconnects, drops,
    your own), brokers down, coordinators moved, API versions capped below the configuration."""

    pending_errors: dict[str, list[str]]
    interceptors: tuple[Interceptor, ...]
    brokers_down: tuple[int, ...]
    coordinator_moves: dict[str, int]
    api_version_caps: dict[str, int | None]  # API name -> cap (None: capped, then reset to none)


RecordLike = bytes | str | None | tuple[Any, Any] | Mapping[str, Any] | SimpleRecord


# -- the control object ---------------------------------------------------------------------------


class Control:
    """Everything a test (or the HTTP API, or the CLI) may do to a running cluster."""

    def __init__(self, cluster: MockCluster) -> None:
        self.cluster = cluster
        self.hooks = RequestHooks(cluster)
        self.errors = ErrorQueues(cluster)
        self._original_caps = dict(cluster.version_caps)
        self._round_robin = itertools.count()

    # -- time -------------------------------------------------------------------------------------

    async def now_ms(self) -> int:
        return self.cluster.clock.now_ms()

    async def advance(self, ms: int) -> int:
        """Move a ManualClock forward by ``ms``, firing every timer that falls due (session
        expiry, rebalance and join timeouts, retention, fetch long-polls) at its own deadline.
        Returns the new time. TypeError for a cluster on real time."""
        advance = getattr(self.cluster.clock, "advance", None)
        if not self.cluster.clock.manual or advance is None:
            raise TypeError("advance() needs a cluster built with clock=ManualClock()")
        result: int = advance(ms)
        return result

    # -- the hook ---------------------------------------------------------------------------------

    async def intercept(self, api: int | str | None, fn: InterceptFn, broker: int | None = None, keep: bool = False) -> Interceptor:
        """Show ``fn`` the next request of ``api`` (every API for None) on ``broker`` (any for
        None), or every one with ``keep=True``; see mockbroker/intercept.py for what it may answer."""
        return self.hooks.add(None if api is None else api_key_of(api), fn, broker, keep)

    async def clear_faults(self) -> None:
        """Remove every interceptor and pushed error, and restore the configured API versions."""
        self.errors.clear()
        self.hooks.clear()
        await self.reset_api_versions()

    async def enable_request_log(self, enabled: bool = True) -> None:
        self.hooks.enable_log(enabled)

    async def requests(
        self,
        api: int | str | None = None,
        *,
        broker: int | None = None,
        client_id: str | None = None,
        error: int | str | None = None,
        outcome: str | None = None,
        since_seq: int = 0,
    ) -> list[RequestRecord]:
        """The request log (enable_request_log; the pytest fixture turns it on), filtered."""
        return self.hooks.log.filter(api, broker=broker, client_id=client_id, error=error, outcome=outcome, since_seq=since_seq)

    async def events(self, type: str | None = None, group_id: str | None = None, since_seq: int = 0) -> list[Event]:
        """The event log (docs/events.md): ``type`` exact, or a prefix ending in "." ("member.")."""
        return self.cluster.events.filter(type=type, group_id=group_id, since_seq=since_seq)

    async def last_event_seq(self) -> int:
        events = list(self.cluster.events)
        return events[-1].seq if events else 0

    # -- faults on the hook ---------------------------------------------------------------------------

    async def push_errors(
        self, api: int | str, *errors: int | str | ErrorCode, broker: int | None = None,
        topic: str | None = None, partition: int | None = None,
    ) -> None:  # fmt: skip
        """The next len(errors) requests of ``api`` fail with these codes, one each, in order:
        cluster level, or ``broker=`` level, or ``topic=``/``partition=`` level (that partition's
        entry only). Precedence and placement: mockbroker/faults.py."""
        if not errors:
            raise ValueError("push_errors needs at least one error code")
        self.errors.push(api, errors, broker=broker, topic=topic, partition=partition)

    async def pending_errors(self) -> dict[str, list[str]]:
        return self.errors.pending()

    async def set_latency(self, ms: float, *, api: int | str | None = None, broker: int | None = None) -> Interceptor:
        """Hold every request of ``api`` (all for None) on ``broker`` (all for None) ``ms``
        wall-clock milliseconds before answering; ``remove()`` the result to stop."""
        delay = Delay(ms)

        def add_latency(_: Intercepted) -> Delay:
            return delay

        return self.hooks.add(None if api is None else api_key_of(api), add_latency, broker, keep=True, name=f"latency {ms} ms")

    async def disconnect_next(self, api: int | str | None = None, *, broker: int | None = None, count: int = 1) -> list[Interceptor]:
        """Close the connection of each of the next ``count`` matching requests, unanswered."""
        return [self.hooks.add(None if api is None else api_key_of(api), lambda _: CLOSE, broker, keep=False, name="disconnect") for _ in range(count)]

    async def drop_next(self, api: int | str | None = None, *, broker: int | None = None, count: int = 1) -> list[Interceptor]:
        """Never answer the next ``count`` matching requests (the client's request times out)."""
        return [self.hooks.add(None if api is None else api_key_of(api), lambda _: DROP, broker, keep=False, name="drop") for _ in range(count)]

    async def disconnect_all(self, broker: int | None = None) -> int:
        """Close every client connection (of one broker, or all); listeners stay open."""
        total = 0
        for node_id, server in list(self.cluster._servers.items()):
            if broker is None or node_id == broker:
                total += await server.close_connections()
        return total

    async def cap_api_version(self, api: int | str, max_version: int | None) -> None:
        """Advertise and serve ``api`` only up to ``max_version`` from now on (None: back to the
        configured cap). A cap below the lowest served version stops advertising the API.
        Connections that negotiated more and send it get closed, as a downgraded broker would."""
        key = api_key_of(api)
        caps = self.cluster.version_caps
        if max_version is None:
            caps.pop(key, None)
            if key in self._original_caps:
                caps[key] = self._original_caps[key]
        else:
            caps[key] = max_version
        self._record("control.api_version_capped", reason=f"{APIS[key].name} capped at {max_version}", api_key=key, max_version=max_version)

    async def reset_api_versions(self) -> None:
        caps = self.cluster.version_caps
        if caps != self._original_caps:
            caps.clear()
            caps.update(self._original_caps)

    # -- faults on the model ----------------------------------------------------------------------

    async def broker_down(self, broker_id: int) -> dict[str, int]:
        """Stop a broker: its listener closes (new connections refused) and its connections drop;
        Metadata and DescribeCluster leave it out; each partition it led fails over to the first
        live in-sync replica with a leader epoch bump (leader -1 and LEADER_NOT_AVAILABLE when
        none is left); coordinators it hosted move to the next live broker; its fetch sessions
        are gone. Returns {"topic-p": new leader} for every partition whose leader changed."""
        cluster = self.cluster
        self._broker(broker_id)
        if broker_id in cluster.down_brokers:
            raise ControlError(f"broker {broker_id} is already down")
        if len(cluster.down_brokers) + 1 == len(cluster.brokers):
            raise ControlError("cannot take down the last live broker")
        cluster.down_brokers.add(broker_id)
        server = cluster._servers.get(broker_id)
        if server is not None:
            await server.stop()
        moved: dict[str, int] = {}
        for topic, partition in cluster.iter_partitions():
            if broker_id not in partition.replica_ids:
                continue
            partition.offline_replica_ids.append(broker_id)
            if partition.leader_id == broker_id:
                live = partition.isr_ids
                self._set_leader(partition, live[0] if live else NO_LEADER)
                moved[f"{topic.name}-{partition.index}"] = partition.leader_id
        if cluster.controller_id == broker_id:
            cluster.controller_id = next(i for i in cluster.brokers if i not in cluster.down_brokers)
        from mockbroker.log.fetch_sessions import FetchSessionCache

        cluster.fetch_sessions[broker_id] = FetchSessionCache()
        self._record("control.broker_down", broker_id=broker_id, reason=f"broker {broker_id} taken down", leaders_moved=moved)
        return moved

    async def broker_up(self, broker_id: int) -> dict[str, int]:
        """Start a stopped broker again on the same port: it rejoins Metadata, its replicas
        rejoin the ISR, and it takes back the leadership of the partitions it is the preferred
        (first) replica of, and of leaderless ones, with a leader epoch bump, as Kafka's
        preferred-leader election does (without waiting for its 5-minute check)."""
        cluster = self.cluster
        self._broker(broker_id)
        if broker_id not in cluster.down_brokers:
            raise ControlError(f"broker {broker_id} is not down")
        moved: dict[str, int] = {}
        for topic, partition in cluster.iter_partitions():
            if broker_id in partition.offline_replica_ids:
                partition.offline_replica_ids.remove(broker_id)
            if broker_id in partition.replica_ids and (
                partition.leader_id == NO_LEADER or (partition.replica_ids[0] == broker_id and partition.leader_id != broker_id)
            ):
                self._set_leader(partition, broker_id)
                moved[f"{topic.name}-{partition.index}"] = broker_id
        cluster.down_brokers.discard(broker_id)
        server = cluster._servers.get(broker_id)
        if server is not None:
            await server.start()
        self._record("control.broker_up", broker_id=broker_id, reason=f"broker {broker_id} started again", leaders_moved=moved)
        return moved

    async def move_leader(self, topic: str, partition: int, broker_id: int | None = None) -> int:
        """Make ``broker_id`` (default: the next in-sync replica) lead the partition, bumping
        its leader epoch; returns the new epoch. Clients at the old leader get
        NOT_LEADER_OR_FOLLOWER, and those sending the old epoch FENCED_LEADER_EPOCH (KIP-320).
        A broker that holds no replica takes over the old leader's place in the replica list."""
        p = self._partition(topic, partition)
        if broker_id is None:
            candidates = [r for r in p.isr_ids if r != p.leader_id]
            if not candidates:
                raise ControlError(f"{topic}-{partition} has no other in-sync replica to lead it; pass broker_id")
            broker_id = candidates[0]
        self._broker(broker_id)
        if broker_id in self.cluster.down_brokers:
            raise ControlError(f"broker {broker_id} is down")
        if broker_id not in p.replica_ids:
            at = p.replica_ids.index(p.leader_id) if p.leader_id in p.replica_ids else 0
            p.replica_ids[at] = broker_id
        old = p.leader_id
        self._set_leader(p, broker_id)
        self._record(
            "control.leader_moved", broker_id=broker_id, reason=f"{topic}-{partition} leader moved from {old} to {broker_id}",
            topic=topic, partition=partition, leader_epoch=p.log.leader_epoch, previous_leader=old,
        )  # fmt: skip
        return p.log.leader_epoch

    async def move_coordinator(self, group_id: str, broker_id: int) -> int:
        """Make ``broker_id`` the group's coordinator; returns the previous one. The group's state
        stays (it lives in one coordinator for the whole cluster); requests to the old
        coordinator get NOT_COORDINATOR, so clients look it up again (FindCoordinator)."""
        self._broker(broker_id)
        if broker_id in self.cluster.down_brokers:
            raise ControlError(f"broker {broker_id} is down")
        previous = self.cluster.coordinator_for(group_id).node_id
        self.cluster.coordinator_moves[group_id] = broker_id
        self._record(
            "control.coordinator_moved", broker_id=broker_id, group_id=group_id,
            reason=f"coordinator of {group_id} moved from broker {previous} to {broker_id}", previous=previous,
        )  # fmt: skip
        return previous

    async def expire_session(
        self, group_id: str, member_id: str | None = None, *, instance_id: str | None = None, client_id: str | None = None
    ) -> str:
        """Expire one member's session now, as if its session timeout had passed without a
        heartbeat, through the coordinator's own expiry path (same events, same consequences).
        A classic group rebalances without it; ControlError while it is parked in
        JoinGroup/SyncGroup, where Kafka cannot expire it either. A consumer group member is
        fenced (its next heartbeat gets UNKNOWN_MEMBER_ID, and it rejoins with epoch 0) and the
        group epoch is bumped. Returns its member id."""
        coordinator, now = self.cluster.groups, self.cluster.clock.now_ms()
        classic = coordinator.groups.get(group_id)
        if classic is not None:
            candidates = [(m.member_id, m.member_id, m.group_instance_id, m.client_id) for m in classic.members.values()]
        else:
            consumer = self._consumer_group(group_id)
            candidates = [(m.member_id, m.member_id, m.instance_id, m.client_id) for m in consumer.members.values()]
        found = _only_match(group_id, candidates, member_id, instance_id, client_id)
        # Recorded once the coordinator accepts and before the expiry's own events: the log reads
        # cause then effect, and a refused call leaves no event.
        def cause() -> None:
            self._record("control.session_expired", group_id=group_id, reason=f"session of member {found} expired now", member_id=found)

        try:
            if classic is not None:
                coordinator.expire_member_session(group_id, found, now, cause)
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
        member has reconciled to the new epoch at its next heartbeat (docs/control.md)."""
        coordinator, now = self.cluster.groups, self.cluster.clock.now_ms()
        classic = coordinator.groups.get(group_id)
        consumer = None if classic is not None else self._consumer_group(group_id)
        def cause() -> None:  # as in expire_session: only once accepted, before the effects
            self._record("control.rebalance_forced", group_id=group_id, reason=reason)

        try:
            if classic is not None:
                coordinator.force_rebalance(group_id, now, reason, cause)
                return str(classic.state.value)
            failed = coordinator.consumer.force_rebalance(group_id, now, reason, cause)
        except ValueError as exc:
            raise ControlError(str(exc)) from None
        assert consumer is not None
        if failed is not None:
            raise ControlError(f"consumer group {group_id} is {consumer.state.value}: {failed}")
        return str(consumer.state.value)

    # -- topics and records -----------------------------------------------------------------------

    async def topics(self, include_internal: bool = False) -> dict[str, TopicSnapshot]:
        return {name: _topic_snapshot(t) for name, t in self.cluster.topics.items() if include_internal or not t.is_internal}

    async def topic(self, name: str) -> TopicSnapshot:
        return _topic_snapshot(self._topic(name))

    async def create_topic(
        self, name: str, partitions: int = 1, replication_factor: int = 1, configs: Mapping[str, str] | None = None
    ) -> TopicSnapshot:
        """Create a topic (TopicError with Kafka's error code when refused; configs are checked as
        CreateTopics checks them: INVALID_CONFIG with Kafka's message)."""
        from mockbroker.config.topics import validate_topic_configs
        from mockbroker.model import TopicError

        problem = validate_topic_configs(dict(configs or {}))
        if problem is not None:
            raise TopicError(problem.code, problem.message or "invalid topic config")
        return _topic_snapshot(self.cluster.create_topic(name, partitions, replication_factor, dict(configs or {})))

    async def delete_topic(self, name: str) -> None:
        self.cluster.delete_topic(name)

    async def produce(
        self,
        topic: str,
        records: Iterable[RecordLike],
        *,
        partition: int | None = None,
        compression: str | Compression = "none",
        timestamp_ms: int | None = None,
    ) -> list[tuple[int, int]]:
        """Append records as a producer would (one batch per partition, through the broker's own
        append checks); returns (partition, offset) per record, in order. A record is a value
        (bytes or str), a (key, value) pair, a dict with key/value/headers/timestamp/partition,
        or a SimpleRecord. Without ``partition``: keyed records go where Kafka's default
        partitioner puts them (murmur2 of the key), unkeyed ones round-robin."""
        from mockbroker.log.replica_manager import append_records

        t = self._topic(topic)
        codec = compression if isinstance(compression, Compression) else _codec(compression)
        now = self.cluster.clock.now_ms()
        by_partition: dict[int, list[tuple[int, SimpleRecord]]] = {}
        for position, item in enumerate(records):
            rec, where = _to_record(item, timestamp_ms if timestamp_ms is not None else now)
            index = partition if partition is not None else where
            if index is None:
                index = (
                    to_positive(murmur2(rec.key)) % len(t.partitions) if rec.key is not None
                    else next(self._round_robin) % len(t.partitions)
                )  # fmt: skip
            if not 0 <= index < len(t.partitions):
                raise NotFound(f"{topic} has no partition {index} (it has {len(t.partitions)})")
            by_partition.setdefault(index, []).append((position, rec))
        placed: dict[int, tuple[int, int]] = {}
        for index, entries in by_partition.items():
            p = t.partitions[index]
            if p.leader_id == NO_LEADER:
                raise ProduceError(ErrorCode.LEADER_NOT_AVAILABLE, f"{topic}-{index} has no live leader")
            batch = build_batch([rec for _, rec in entries], compression=codec)
            result = append_records(
                self.cluster, self.cluster.brokers[p.leader_id], t, p, batch,
                acks=-1, api_version=_PRODUCE_VERSION, client_id=CONTROL_CLIENT_ID, now_ms=now,
            )  # fmt: skip
            if result.error != ErrorCode.NONE:
                raise ProduceError(ErrorCode(result.error), result.error_message)
            for delta, (position, _) in enumerate(entries):
                placed[position] = (index, result.base_offset + delta)
        return [placed[i] for i in range(len(placed))]

    async def read(
        self, topic: str, partition: int = 0, offset: int = 0, max_records: int | None = None, *, include_control: bool = False
    ) -> list[ConsumedRecord]:
        """A partition's records from ``offset`` on, decoded (transaction markers left out
        unless ``include_control``)."""
        p = self._partition(topic, partition)
        out: list[ConsumedRecord] = []
        for stored in p.log.batches:
            if stored.last_offset < offset or (stored.is_control and not include_control):
                continue
            header, decoded = decode_batch(bytes(stored.data))
            codec = Compression(header.compression_type).name.lower()
            for r in decoded:
                if r.offset < offset:
                    continue
                out.append(
                    ConsumedRecord(
                        topic, partition, r.offset, r.timestamp, r.key, r.value,
                        tuple(r.headers), header.partition_leader_epoch, codec,
                    )
                )  # fmt: skip
                if max_records is not None and len(out) >= max_records:
                    return out
        return out

    async def log_end_offsets(self, topic: str) -> dict[int, int]:
        return {p.index: p.log.log_end_offset for p in self._topic(topic).partitions}

    # -- groups -----------------------------------------------------------------------------------

    async def groups(self) -> dict[str, GroupListing]:
        """Every group, classic and KIP-848 consumer groups alike: {group id: its listing}, by
        group id (iterating it gives the ids)."""
        coordinator = self.cluster.groups
        listed = [GroupListing(g.group_id, GROUP_TYPE_CLASSIC, g.state.value, g.protocol_type) for g in coordinator.groups.values()]
        listed += [GroupListing(g.group_id, GROUP_TYPE_CONSUMER, g.state.value, g.protocol_type) for g in coordinator.consumer.groups.values()]
        return {g.group_id: g for g in sorted(listed, key=lambda g: g.group_id)}

    async def describe_group(self, group_id: str) -> AnyGroupSnapshot | None:
        """The coordinator's view of a group: a ``GroupSnapshot`` for a classic group, a
        ``ConsumerGroupSnapshot`` for a KIP-848 consumer group (``.type`` tells which), None when
        there is no such group."""
        return self._snapshot(group_id)

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
        if group_type is not None and group_type not in (GROUP_TYPE_CLASSIC, GROUP_TYPE_CONSUMER):
            raise ValueError(f"unknown group type {group_type!r}; use {GROUP_TYPE_CLASSIC!r} or {GROUP_TYPE_CONSUMER!r}")

        def check() -> AnyGroupSnapshot | None:
            view = self._snapshot(group_id)
            if view is None or (group_type is not None and view.type != group_type):
                return None
            if reconciled and not isinstance(view, ConsumerGroupSnapshot):
                raise ControlError(f"group {group_id} is a classic group; reconciled=True is for consumer groups")
            if state is not None and view.state != state:
                return None
            if members is not None and len(view.members) != members:
                return None
            if generation_at_least is not None and view.generation_id < generation_at_least:
                return None
            if reconciled and not (isinstance(view, ConsumerGroupSnapshot) and view.reconciled):
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

    async def wait_for_event(
        self, type: str, group_id: str | None = None, *, since_seq: int = 0, timeout: float = DEFAULT_WAIT_S
    ) -> Event:
        """Wait for the first event of ``type`` (a prefix ending in ".") after ``since_seq``."""

        def check() -> Event | None:
            found = self.cluster.events.filter(type=type, group_id=group_id, since_seq=since_seq)
            return found[0] if found else None

        return await self._wait(check, f"event {type}" + (f" of {group_id}" if group_id else ""), lambda: "", timeout)

    async def wait_for_request(
        self, api: int | str, *, since_seq: int = 0, error: int | str | None = None, broker: int | None = None,
        client_id: str | None = None, timeout: float = DEFAULT_WAIT_S,
    ) -> RequestRecord:  # fmt: skip
        """Wait for an answered request of ``api`` in the request log (with ``error`` in its
        response, when given) after ``since_seq``; polls, as requests are not events."""
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            found = [
                r for r in self.hooks.log.filter(api, broker=broker, client_id=client_id, error=error, since_seq=since_seq)
                if r.outcome != "pending"
            ]  # fmt: skip
            if found:
                return found[0]
            if asyncio.get_running_loop().time() > deadline:
                raise WaitTimeout(f"timed out after {timeout:.1f}s waiting for a {api} request" + (f" answered {error}" if error else ""))
            await asyncio.sleep(0.005)

    # -- cluster state ----------------------------------------------------------------------------

    async def describe_cluster(self) -> ClusterSnapshot:
        """Cluster id, controller, every broker (bound and advertised address, rack, up or
        down) and the clock."""
        c = self.cluster
        brokers = tuple(
            BrokerSnapshot(n.node_id, n.host, n.port, n.advertised_host, n.advertised_port, n.rack, n.node_id not in c.down_brokers)
            for n in c.brokers.values()
        )
        return ClusterSnapshot(c.config.cluster_id, c.controller_id, brokers, c.clock.manual, c.clock.now_ms())

    async def faults(self) -> FaultsSnapshot:
        """The faults in force (clear_faults removes errors, interceptors and caps; brokers come
        back with broker_up, coordinators stay where they were moved)."""
        own = self.errors._interceptor  # the pushed errors' own interceptor: listed as pending_errors
        caps = self.cluster.version_caps
        changed = {
            APIS[k].name: caps.get(k) for k in sorted(set(caps) | set(self._original_caps)) if caps.get(k) != self._original_caps.get(k)
        }
        return FaultsSnapshot(
            pending_errors=self.errors.pending(),
            interceptors=tuple(i for i in self.hooks.interceptors if i is not own),
            brokers_down=tuple(sorted(self.cluster.down_brokers)),
            coordinator_moves=dict(self.cluster.coordinator_moves),
            api_version_caps=changed,
        )

    # -- helpers ----------------------------------------------------------------------------------

    async def _wait(self, check: Callable[[], T | None], wanted: str, explain: Callable[[], str], timeout: float) -> T:
        """Evaluate ``check`` now and after every event (once the change that recorded it is
        complete: call_soon), until it returns something truthy (or raises, which the waiter
        gets) or ``timeout`` passes."""
        result = check()
        if result:
            return result
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()

        def recheck() -> None:
            if not future.done():
                try:
                    value = check()
                except Exception as exc:  # check's own refusal (ControlError): the waiter gets it
                    future.set_exception(exc)
                    return
                if value:
                    future.set_result(value)

        def on_event(_: Event) -> None:
            loop.call_soon(recheck)

        unsubscribe = self.cluster.events.subscribe(on_event)
        try:
            return await asyncio.wait_for(future, timeout)
        except TimeoutError:
            raise WaitTimeout(f"timed out after {timeout:.1f}s waiting for {wanted}; last seen: {explain()}") from None
        finally:
            unsubscribe()

    def _record(self, type: str, *, reason: str, broker_id: int | None = None, group_id: str | None = None, **details: Any) -> None:
        self.cluster.events.record(type, broker_id=broker_id, group_id=group_id, reason=reason, **details)

    def _broker(self, broker_id: int) -> None:
        if broker_id not in self.cluster.brokers:
            raise NotFound(f"no broker {broker_id}; brokers are {sorted(self.cluster.brokers)}")

    def _topic(self, name: str) -> Topic:
        t = self.cluster.topics.get(name)
        if t is None:
            raise NotFound(f"no topic {name!r}; topics are {sorted(self.cluster.topics)}")
        return t

    def _partition(self, topic: str, index: int) -> Partition:
        t = self._topic(topic)
        if not 0 <= index < len(t.partitions):
            raise NotFound(f"{topic} has no partition {index} (it has {len(t.partitions)})")
        return t.partitions[index]

    def _snapshot(self, group_id: str) -> AnyGroupSnapshot | None:
        classic = self.cluster.groups.groups.get(group_id)
        if classic is not None:
            return _group_snapshot(classic)
        data = self.cluster.groups.snapshot(group_id)
        return None if data is None else _consumer_group_snapshot(data)

    def _consumer_group(self, group_id: str) -> ConsumerGroup:
        """The KIP-848 consumer group ``group_id`` (called once the classic groups were looked at)."""
        group = self.cluster.groups.consumer.groups.get(group_id)
        if group is None:
            known = sorted([*self.cluster.groups.groups, *self.cluster.groups.consumer.groups])
            raise NotFound(f"no group {group_id!r}; groups are {known}")
        return group

    def _set_leader(self, p: Partition, leader_id: int) -> None:
        p.leader_id = leader_id
        p.log.leader_epoch += 1
        p.log.notify_listeners()  # parked Fetches answer at once (NOT_LEADER_OR_FOLLOWER)

    def _committed(self, group_id: str, topic: str | None) -> dict[str, dict[int, int]]:
        stored = self.cluster.groups.offsets.group_offsets(group_id)
        return {
            t: {p: o.committed_offset for p, o in parts.items()}
            for t, parts in stored.items()
            if topic is None or t == topic
        }


# -- shaping ---------------------------------------------------------------------------------------


def _topic_snapshot(t: Topic) -> TopicSnapshot:
    return TopicSnapshot(
        name=t.name,
        topic_id=str(t.topic_id),
        is_internal=t.is_internal,
        replication_factor=t.replication_factor,
        configs=dict(t.configs),
        partitions=tuple(
            PartitionSnapshot(
                p.index, p.leader_id, p.log.leader_epoch, tuple(p.replica_ids), tuple(p.isr_ids),
                p.log.log_start_offset, p.log.log_end_offset,
            )
            for p in t.partitions
        ),
    )  # fmt: skip


def _group_snapshot(group: ClassicGroup) -> GroupSnapshot:
    return GroupSnapshot(
        group_id=group.group_id,
        state=group.state.value,
        generation_id=group.generation_id,
        protocol_type=group.protocol_type,
        protocol_name=group.protocol_name,
        leader_id=group.leader_id,
        members=tuple(_member_snapshot(group, m) for m in group.members.values()),
    )


def _consumer_group_snapshot(data: Mapping[str, Any]) -> ConsumerGroupSnapshot:
    """From ConsumerGroupCoordinator.snapshot's plain data (mockbroker/groups/consumer_coordinator.py)."""

    def by_topic(parts: Mapping[str, Iterable[int]]) -> dict[str, tuple[int, ...]]:
        return {topic: tuple(sorted(ps)) for topic, ps in parts.items()}

    return ConsumerGroupSnapshot(
        group_id=data["group_id"],
        state=data["state"],
        group_epoch=data["group_epoch"],
        assignment_epoch=data["assignment_epoch"],
        assignor=data["assignor"],
        subscribed_topics=dict(data["subscribed_topics"]),
        protocol_type=data["protocol_type"],
        members=tuple(
            ConsumerMemberSnapshot(
                member_id=m["member_id"], instance_id=m["instance_id"], rack_id=m["rack_id"],
                client_id=m["client_id"], client_host=m["client_host"], member_epoch=m["member_epoch"],
                previous_member_epoch=m["previous_member_epoch"], state=m["state"],
                subscribed_topic_names=tuple(m["subscribed_topic_names"]),
                subscribed_topic_regex=m["subscribed_topic_regex"], server_assignor=m["server_assignor"],
                rebalance_timeout_ms=m["rebalance_timeout_ms"], assigned=by_topic(m["assigned"]),
                pending_revocation=by_topic(m["pending_revocation"]), target=by_topic(m["target"]),
            )
            for m in data["members"]
        ),
    )  # fmt: skip


def _member_snapshot(group: ClassicGroup, m: ClassicGroupMember) -> MemberSnapshot:
    subscription: tuple[str, ...] | None = None
    owned: dict[str, tuple[int, ...]] | None = None
    assignment: dict[str, tuple[int, ...]] | None = None
    if m.protocol_type == "consumer" and m.supported_protocols:
        names = [name for name, _ in m.supported_protocols]
        metadata = m.supported_protocols[names.index(group.protocol_name)][1] if group.protocol_name in names else m.supported_protocols[0][1]
        try:
            _, sub = decode_subscription(metadata)
            subscription = tuple(sub.topics)
            owned = {tp.topic: tuple(tp.partitions) for tp in sub.owned_partitions}
        except DecodeError:
            pass
        if m.assignment:
            try:
                _, assigned = decode_assignment(bytes(m.assignment))
                assignment = {tp.topic: tuple(tp.partitions) for tp in assigned.assigned_partitions}
            except DecodeError:
                pass
        else:
            assignment = {}
    return MemberSnapshot(
        member_id=m.member_id,
        group_instance_id=m.group_instance_id,
        client_id=m.client_id,
        client_host=m.client_host,
        session_timeout_ms=m.session_timeout_ms,
        rebalance_timeout_ms=m.rebalance_timeout_ms,
        protocols=tuple(name for name, _ in m.supported_protocols),
        subscription=subscription,
        owned_partitions=owned,
        assignment=assignment,
        raw_assignment=bytes(m.assignment),
        awaiting_join=m.is_awaiting_join,
        awaiting_sync=m.is_awaiting_sync,
    )


def _codec(name: str) -> Compression:
    try:
        return Compression[name.upper()]
    except KeyError:
        raise ValueError(f"unknown compression {name!r}; use none, gzip, snappy, lz4 or zstd") from None


def _bytes(value: Any) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.encode()
    return bytes(value)


def _to_record(item: RecordLike, default_ts: int) -> tuple[SimpleRecord, int | None]:
    """(record, partition named by the item or None)."""
    if isinstance(item, SimpleRecord):
        ts = item.timestamp if item.timestamp is not None else default_ts
        return SimpleRecord(item.key, item.value, item.headers, ts), None
    if isinstance(item, Mapping):
        headers: Sequence[tuple[str, Any]] = item.get("headers") or ()
        if isinstance(headers, Mapping):
            headers = list(headers.items())
        return SimpleRecord(
            _bytes(item.get("key")),
            _bytes(item.get("value")),
            [(str(k), _bytes(v)) for k, v in headers],
            item.get("timestamp", default_ts),
        ), item.get("partition")  # fmt: skip
    if isinstance(item, tuple):
        key, value = item
        return SimpleRecord(_bytes(key), _bytes(value), (), default_ts), None
    return SimpleRecord(None, _bytes(item), (), default_ts), None

