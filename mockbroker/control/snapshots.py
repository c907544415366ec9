"""The control API's snapshots: plain, frozen data about groups, topics, brokers and faults (safe
to hand to another thread), and the builders that make them from the cluster's model."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from mockbroker.control.errors import ControlError, NotFound
from mockbroker.control.intercept import Interceptor
from mockbroker.control.share_snapshots import ShareGroupSnapshot
from mockbroker_protocol.consumer_protocol import decode_assignment, decode_subscription
from mockbroker_protocol.errors import DecodeError

if TYPE_CHECKING:
    from mockbroker.coordinators.classic.group import ClassicGroup, ClassicGroupMember
    from mockbroker.model import Topic

T = TypeVar("T")


def only_match(
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
    # The group's configs (KIP-848 GroupConfig): the overrides set on its GROUP config resource;
    # keys not listed take the broker's group.* settings (DescribeConfigs shows every key).
    configs: dict[str, str] = field(default_factory=dict)

    def member(self, *, client_id: str | None = None, instance_id: str | None = None, member_id: str | None = None) -> MemberSnapshot:
        """The one member matching; ControlError when none or several match."""
        candidates = [(m, m.member_id, m.group_instance_id, m.client_id) for m in self.members]
        return only_match(self.group_id, candidates, member_id, instance_id, client_id)

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
    # The group's configs (KIP-848 GroupConfig): the overrides set on its GROUP config resource;
    # keys not listed take the broker's group.* settings (DescribeConfigs shows every key).
    configs: dict[str, str] = field(default_factory=dict)
    # Each SubscribedTopicRegex of its members -> the topics it matched when the group last
    # resolved its regexes (GroupMetadataManager.maybeUpdateRegularExpressions): under an
    # authorizer, only those the refreshing member's principal may DESCRIBE.
    resolved_regexes: dict[str, tuple[str, ...]] = field(default_factory=dict)

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
        return only_match(self.group_id, candidates, member_id, instance_id, client_id)

    def assignment(self, topic: str) -> dict[str, tuple[int, ...]]:
        """member id -> the partitions of ``topic`` it owns now."""
        return {m.member_id: m.partitions(topic) for m in self.members}

    def target_assignment(self, topic: str) -> dict[str, tuple[int, ...]]:
        """member id -> the partitions of ``topic`` the target assignment gives it."""
        return {m.member_id: m.target_partitions(topic) for m in self.members}

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


Tasks = dict[str, dict[str, tuple[int, ...]]]  # "active"/"standby"/"warmup" -> subtopology id -> partitions


@dataclass(frozen=True, slots=True)
class StreamsMemberSnapshot:
    """A KIP-1071 streams group member (a Kafka Streams client) as its coordinator sees it."""

    member_id: str
    process_id: str  # the Kafka Streams instance (processId): standbys go to other processes
    client_id: str
    client_host: str
    member_epoch: int
    previous_member_epoch: int
    state: str  # STABLE, UNREVOKED_TASKS, UNRELEASED_TASKS
    topology_epoch: int
    user_endpoint: str | None  # host:port for interactive queries
    assigned: Tasks  # what it owns now
    pending_revocation: Tasks  # what it must give up before it moves on
    target: Tasks  # what the target assignment gives it

    def active_tasks(self) -> dict[str, tuple[int, ...]]:
        return self.assigned.get("active", {})


@dataclass(frozen=True, slots=True)
class StreamsGroupSnapshot:
    """A KIP-1071 streams group (``type`` "streams"): epochs, the topology's state on the topics
    (``subtopologies``: id -> number of tasks once valid; ``topology_status``: what is wrong,
    as the heartbeat's Status reports it), and each member's tasks."""

    group_id: str
    state: str  # Empty, NotReady, Assigning, Reconciling, Stable, Dead
    group_epoch: int
    assignment_epoch: int
    topology_epoch: int | None
    validated_topology_epoch: int
    subtopologies: dict[str, int]
    topology_status: dict[str, str] | None
    shutdown_requested_by: str | None
    members: tuple[StreamsMemberSnapshot, ...]
    protocol_type: str = "streams"
    type: str = "streams"
    # The group's configs (KIP-848 GroupConfig): the overrides set on its GROUP config resource;
    # keys not listed take the broker's group.* settings (DescribeConfigs shows every key).
    configs: dict[str, str] = field(default_factory=dict)

    @property
    def generation_id(self) -> int:
        """The group epoch, as for a consumer group."""
        return self.group_epoch

    @property
    def reconciled(self) -> bool:
        """Every member is STABLE at the assignment epoch with exactly its target."""
        return self.group_epoch == self.assignment_epoch and all(
            m.state == "STABLE" and m.member_epoch == self.assignment_epoch and m.assigned == m.target
            for m in self.members
        )

    def member(self, *, client_id: str | None = None, member_id: str | None = None) -> StreamsMemberSnapshot:
        """The one member matching; ControlError when none or several match."""
        candidates = [(m, m.member_id, None, m.client_id) for m in self.members]
        return only_match(self.group_id, candidates, member_id, None, client_id)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def streams_group_snapshot(data: Mapping[str, Any]) -> StreamsGroupSnapshot:
    """From StreamsGroupCoordinator.snapshot's plain data."""

    def tasks(t: Mapping[str, Mapping[str, Iterable[int]]]) -> Tasks:
        return {kind: {sub: tuple(ps) for sub, ps in by_sub.items()} for kind, by_sub in t.items()}

    return StreamsGroupSnapshot(
        group_id=data["group_id"], state=data["state"], group_epoch=data["group_epoch"],
        assignment_epoch=data["assignment_epoch"], topology_epoch=data["topology_epoch"],
        validated_topology_epoch=data["validated_topology_epoch"], subtopologies=dict(data["subtopologies"]),
        topology_status=data["topology_status"], shutdown_requested_by=data["shutdown_requested_by"],
        members=tuple(
            StreamsMemberSnapshot(
                member_id=m["member_id"], process_id=m["process_id"], client_id=m["client_id"],
                client_host=m["client_host"], member_epoch=m["member_epoch"],
                previous_member_epoch=m["previous_member_epoch"], state=m["state"],
                topology_epoch=m["topology_epoch"], user_endpoint=m["user_endpoint"],
                assigned=tasks(m["assigned"]), pending_revocation=tasks(m["pending_revocation"]), target=tasks(m["target"]),
            )
            for m in data["members"]
        ),
    )  # fmt: skip


AnyGroupSnapshot = GroupSnapshot | ConsumerGroupSnapshot | StreamsGroupSnapshot | ShareGroupSnapshot


@dataclass(frozen=True, slots=True)
class GroupListing:
    """One group as ``groups()`` lists it (ListGroups' fields)."""

    group_id: str
    type: str  # "classic", "consumer", "streams" or "share"
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
class EndpointSnapshot:
    """One listener of one broker."""

    listener: str  # its name (listeners)
    security_protocol: str  # PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
    host: str  # where it binds
    port: int
    advertised_host: str | None  # what clients that came in on it are told; None: not advertised
    advertised_port: int


@dataclass(frozen=True, slots=True)
class BrokerSnapshot:
    node_id: int
    host: str  # where its (first) listener binds
    port: int
    advertised_host: str  # what Metadata tells clients of the first listener
    advertised_port: int
    rack: str | None
    up: bool  # False after broker_down
    listeners: tuple[EndpointSnapshot, ...] = ()  # every listener, in the order of `listeners`


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
    # transactional id -> broker (control.move_transaction_coordinator)
    transaction_coordinator_moves: dict[str, int] = field(default_factory=dict)
    # transactional id -> until when (cluster clock, ms) its coordinator answers COORDINATOR_LOAD_IN_PROGRESS
    transaction_coordinators_loading: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TransactionSnapshot:
    """A transactional id as its coordinator sees it (Kafka's TransactionMetadata; what
    DescribeTransactions answers): the state, the producer id and epoch, the timeout, when the
    transaction started (-1: none), the partitions in it, and which broker coordinates it."""

    transactional_id: str
    state: str  # Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, PrepareEpochFence
    producer_id: int
    producer_epoch: int
    transaction_timeout_ms: int
    start_time_ms: int
    last_update_time_ms: int
    partitions: tuple[tuple[str, int], ...]
    coordinator: int

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["partitions"] = [{"topic": t, "partition": p} for t, p in self.partitions]
        return out



# -- shaping ---------------------------------------------------------------------------------------


def topic_snapshot(t: Topic) -> TopicSnapshot:
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


def group_snapshot(group: ClassicGroup) -> GroupSnapshot:
    return GroupSnapshot(
        group_id=group.group_id,
        state=group.state.value,
        generation_id=group.generation_id,
        protocol_type=group.protocol_type,
        protocol_name=group.protocol_name,
        leader_id=group.leader_id,
        members=tuple(_member_snapshot(group, m) for m in group.members.values()),
    )


def consumer_group_snapshot(data: Mapping[str, Any]) -> ConsumerGroupSnapshot:
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
        resolved_regexes={pattern: tuple(names) for pattern, names in data["resolved_regexes"].items()},
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
