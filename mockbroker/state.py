"""ClusterState: what requests read and change, for every broker of one cluster.

Brokers, topics and topic ids, coordinator placement, producer ids, fetch sessions, the event log,
timers and the clock, the group coordinator (made on first use), internal errors, the intercept
flag, brokers taken down, and the answers the request path keeps. Handlers, dispatch and control
type against this class; ``mockbroker.cluster.MockCluster`` extends it with the composition (the
listeners, the control API) and the lifecycle. All of it is changed only on the cluster's event
loop, so nothing needs a lock.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, cast

from mockbroker.clock import Clock, LoopClock
from mockbroker.config.cluster import ClusterConfig
from mockbroker.config.listeners import ListenerSpec, advertised_of, enabled_mechanisms, listeners_of
from mockbroker.events import Event, EventLog
from mockbroker.model import (
    BrokerNode,
    Endpoint,
    Partition,
    Topic,
    TopicError,
    collision_key,
    validate_topic_name,
)
from mockbroker.security.acls import Authorizer, authorizer_of
from mockbroker.security.oauthbearer import Validator, validator_of
from mockbroker.security.sasl import Credentials
from mockbroker.timers import Timers
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.hashing import partition_for

if TYPE_CHECKING:
    import uuid

    from mockbroker.coordinators.classic.assignment_checks import AssignmentChecks
    from mockbroker.coordinators.router import GroupCoordinator
    from mockbroker.coordinators.transactions.coordinator import TransactionCoordinator
    from mockbroker.log.fetch_sessions import FetchSessionCache
    from mockbroker.log.producers import ProducerIdManager
    from mockbroker.security.tls import TlsMaterial

log = logging.getLogger("mockbroker")

_COORDINATOR_CACHE_SIZE = 100_000
# The group cleanup cycle's timer until the coordinator exists (ClusterState.groups).
_GROUP_CLEANUP_KEY = ("group-metadata-expiration", "before the coordinator")


class Listener(Protocol):
    """One broker's listener as the state and control see it (mockbroker.net.server.BrokerServer):
    control takes a broker down by stopping it and up by starting it again."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def close_connections(self) -> int: ...


class RequestHooks(Protocol):
    """The interceptors and request log (mockbroker.intercept.RequestHooks), as dispatch calls
    them while ``intercepting`` is true."""

    def handle(self, ctx: Any, handler: Any, request: Any) -> Awaitable[Any]: ...


# -- what the request path keeps (mockbroker.dispatch.dispatch, mockbroker.net.server) --------------
#
# An answer kept by request bytes: (valid(state), api key, version cap when kept, size prefix, the
# rest after the correlation id). A request of an API with a fast handler, kept by its bytes:
# (fast, api key, version cap when kept, api version, the decoded request).
AnswerEntry = tuple[Callable[[Any], bool], int, "int | None", bytes, bytes]
FastHandler = Callable[[Any, BrokerNode, int, Any], "tuple[bytes, bytes] | None"]
RequestEntry = tuple[FastHandler, int, "int | None", int, Any]

T = TypeVar("T")


class MemoKey(Generic[T]):
    """The key of one handler's per-cluster memo (``ClusterState.memos``), typed by its value."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"MemoKey({self.name!r})"


class Memos:
    """Handlers' per-cluster memos (what ApiVersions advertises, Metadata's answers), owned by the
    cluster so that they go with it."""

    __slots__ = ("_values",)

    def __init__(self) -> None:
        self._values: dict[MemoKey[Any], object] = {}

    def get(self, key: MemoKey[T]) -> T | None:
        return cast("T | None", self._values.get(key))

    def set(self, key: MemoKey[T], value: T) -> T:
        self._values[key] = value
        return value


def _oauth_validator(config: ClusterConfig, mechanisms: tuple[str, ...]) -> Validator | None:
    """OAUTHBEARER's token validator (mockbroker/security/oauthbearer.py), when it is enabled."""
    if "OAUTHBEARER" not in mechanisms:
        return None
    return validator_of(config.oauthbearer_sasl_server_callback_handler_class, config.oauthbearer_sasl_jaas_config)


def _broker_nodes(config: ClusterConfig, listeners: list[ListenerSpec]) -> dict[int, BrokerNode]:
    """The brokers by node id, each with every listener: broker i listens on each listener's port
    + i (0: a free port) and advertises advertised.listeners' address + i on it; without
    advertised.listeners, advertised_host/port's (advertised_port: the first listener's only) or
    the bound address. A listener advertised.listeners leaves out has no address (as in Kafka)."""
    advertised = advertised_of(config)
    brokers: dict[int, BrokerNode] = {}
    for i, node_id in enumerate(config.node_ids):
        endpoints: dict[str, Endpoint] = {}
        for n, spec in enumerate(listeners):
            port = spec.port + i if spec.port else 0
            if advertised is None:
                adv_host: str | None = config.advertised_host or spec.host
                first_adv_port = config.advertised_port if n == 0 else None
            elif spec.name in advertised:
                given_host, first_adv_port = advertised[spec.name]
                adv_host = given_host or config.advertised_host or spec.host
            else:
                adv_host, first_adv_port = None, None
            adv_port = first_adv_port + i if first_adv_port else port
            endpoints[spec.name] = Endpoint(spec.name, spec.security_protocol, spec.host, port, adv_host, adv_port)
        first = endpoints[listeners[0].name]
        rack = config.racks[i] if config.racks else None
        brokers[node_id] = BrokerNode(
            node_id, first.host, first.port, rack, first.advertised_host or first.host,
            first.advertised_port if first.advertised_host is not None else first.port, endpoints,
        )
    return brokers


class ClusterState:
    """One cluster's state, for every broker: built from a ClusterConfig (or its keyword settings)
    and a clock; usable without listeners (the composition, MockCluster, adds them)."""

    def __init__(self, config: ClusterConfig | None = None, *, clock: Clock | None = None, **overrides: Any) -> None:
        if config is None:
            config = ClusterConfig(**overrides)
        elif overrides:
            raise TypeError("pass either a ClusterConfig or keyword settings, not both")
        self.config = config
        self.clock: Clock = clock or LoopClock()
        self.timers = Timers(self.clock)
        # The brokers' listeners (mockbroker/config/listeners.py), ``listener`` the first; TLS
        # material is made or loaded when the cluster starts.
        self.listener_specs: list[ListenerSpec] = listeners_of(config)
        self.listener: ListenerSpec = self.listener_specs[0]
        self.brokers: dict[int, BrokerNode] = _broker_nodes(config, self.listener_specs)
        self._init_security(config)
        # Set by MockCluster.start for SSL and SASL_SSL: each TLS listener's certificates and the CA
        # its clients trust (listener_tls), and the first TLS listener's (tls: ssl_ca_path).
        self.tls: TlsMaterial | None = None
        self.listener_tls: dict[str, TlsMaterial] = {}
        self.controller_id = config.node_ids[0]
        # read on every request by dispatch: computed once, the config does not change under a cluster
        self.version_caps: dict[int, int] = config.effective_version_caps
        self.topics: dict[str, Topic] = {}
        self.topic_ids: dict[uuid.UUID, str] = {}
        # Producer ids for InitProducerId (idempotent and transactional producers, KIP-98): made
        # on first use (``producer_ids``), as the log's modules are imported with the first topic.
        self._producer_ids: ProducerIdManager | None = None
        # Incremental fetch sessions (KIP-227), per broker: made with the first Fetch (``fetch_sessions``).
        self._fetch_sessions: dict[int, FetchSessionCache] | None = None
        # Broker bugs (unexpected exceptions while serving); the pytest fixture fails the test.
        self.internal_errors: list[BaseException] = []
        self.events = EventLog(self.clock.now_ms, path=config.events_path)
        # Assignment findings that strict mode (config.assignment_strict) counts as failures; the
        # pytest fixture fails the test at teardown when this is not empty.
        self.strict_failures: list[Any] = []
        # Consumer groups (classic and KIP-848) and committed offsets (mockbroker/coordinators/), for
        # every broker: each group request is served by the broker coordinator_for(group_id) names.
        # Made on first use (``groups``), with the assignment checks: importing the coordinators and
        # the assignors is a third of a cold start, and a cluster may never see a group request.
        self._groups: GroupCoordinator | None = None
        self._assignment_checks: AssignmentChecks | None = None
        self._transactions: TransactionCoordinator | None = None  # made on first use, as groups
        # Subscribed now, so that the checks hear events in the same order among listeners as if
        # they had been made here (only group events, which need the coordinator, reach them).
        self.events.subscribe(self._assignment_checks_listen)
        self._topic_counter = 0
        self._init_control_state()
        # What the request path keeps (see AnswerEntry, RequestEntry): answers by api key, then by
        # request bytes minus the correlation id; requests of APIs with a fast handler, the same.
        self.answers: dict[int, dict[bytes, AnswerEntry]] = {}
        # Answers depend on the listener of the request (its addresses): each keeps its own (answers_for).
        self.listener_answers: dict[str, dict[int, dict[bytes, AnswerEntry]]] = {self.listener.name: self.answers}
        self.fast_requests: dict[int, dict[bytes, RequestEntry]] = {}
        self.memos = Memos()
        if config.events_topic:
            self._make_events_topic()

    def _init_security(self, config: ClusterConfig) -> None:
        """SASL users and mechanisms (per listener), OAUTHBEARER's validator and the authorizer."""
        # SASL users (PLAIN passwords, SCRAM salted credentials: mockbroker/security/sasl.py).
        self.credentials = Credentials()
        for user, password in config.sasl_users.items():
            self.credentials.add_user(user, password)
        self.sasl_mechanisms: tuple[str, ...] = enabled_mechanisms(config)
        # Each listener's (listener.name.<name>.sasl.enabled.mechanisms, else the cluster's).
        self.listener_mechanisms = {spec.name: enabled_mechanisms(config, spec.name) for spec in self.listener_specs}
        # OAUTHBEARER's validator, when a listener enables the mechanism
        self.oauth_validator: Validator | None = _oauth_validator(
            config, tuple({m for ms in self.listener_mechanisms.values() for m in ms})
        )
        # ACLs and StandardAuthorizer's rules with authorizer.class.name, else None (handlers/_authz.py)
        self.authorizer: Authorizer | None = authorizer_of(config)

    def _init_control_state(self) -> None:
        """What the control model (mockbroker/control/) changes by hand: dispatch takes its slow
        path (interceptors, request log, pushed errors: ``request_hooks``) only while
        ``intercepting`` is true."""
        self.intercepting = False
        # Brokers taken down (listener closed, left out of Metadata) and coordinators moved by hand.
        self.down_brokers: set[int] = set()
        self.coordinator_moves: dict[str, int] = {}
        # Transaction coordinators moved by hand (by transactional id), and ids whose coordinator
        # answers COORDINATOR_LOAD_IN_PROGRESS until a time on the cluster clock (as Kafka's does
        # while it loads its __transaction_state partition): control.move_transaction_coordinator,
        # control.load_transaction_coordinator.
        self.transaction_coordinator_moves: dict[str, int] = {}
        self.transaction_loading_until_ms: dict[str, int] = {}
        self._coordinator_partitions: dict[str, int] = {}
        self._coordinator_nodes: dict[str, BrokerNode] = {}  # coordinator_for with nothing moved or down

    def _make_events_topic(self) -> None:
        """The event log as the internal topic __mockbroker_events (mockbroker/log/events_topic.py),
        fed from now on by a listener of the event log; the file sink, if any, stays."""
        from mockbroker.log.events_topic import EventsTopicWriter
        from mockbroker.model import EVENTS_TOPIC

        config = self.config
        configs = {
            "cleanup.policy": "delete",
            "retention.ms": str(config.events_topic_retention_ms),
            "retention.bytes": str(config.events_topic_retention_bytes),
        }
        topic = self.create_topic(EVENTS_TOPIC, config.events_topic_partitions, 1, configs, internal=True)
        # Leaders of the topics created next are placed as if this one did not exist, so that a
        # test's expectations of which broker leads what hold with the topic on or off.
        self._topic_counter -= 1
        self.events.subscribe(EventsTopicWriter(self, topic))

    # -- what the composition provides (mockbroker.cluster.MockCluster) ----------------------------

    @property
    def listeners(self) -> Mapping[int, Listener]:
        """The brokers' listeners by node id (none before the cluster starts)."""
        return {}

    @property
    def request_hooks(self) -> RequestHooks:
        """The interceptors and request log, which dispatch calls while ``intercepting``."""
        raise NotImplementedError("a bare ClusterState has no control API; MockCluster has")

    # -- producer ids, fetch sessions, groups -------------------------------------------------------

    @property
    def producer_ids(self) -> ProducerIdManager:
        if self._producer_ids is None:
            from mockbroker.log.producers import ProducerIdManager

            self._producer_ids = ProducerIdManager()
        return self._producer_ids

    @property
    def fetch_sessions(self) -> dict[int, FetchSessionCache]:
        """Incremental fetch sessions (KIP-227) by broker: each lives on the broker that created it.

        Made on first use: the module (and its random and uuid imports) is ~5% of a cold start, and
        a cache holds nothing until a Fetch opens a session (its session ids are random either way)."""
        sessions = self._fetch_sessions
        if sessions is None:
            from mockbroker.log.fetch_sessions import FetchSessionCache

            sessions = self._fetch_sessions = {node_id: FetchSessionCache() for node_id in self.brokers}
        return sessions

    @property
    def groups(self) -> GroupCoordinator:
        """The cluster's group coordinator (classic and KIP-848 groups, committed offsets)."""
        groups = self._groups
        return groups if groups is not None else self._make_groups()

    @property
    def transactions(self) -> TransactionCoordinator:
        """The cluster's transaction coordinator (mockbroker/coordinators/transactions/), made on first use."""
        if self._transactions is None:
            from mockbroker.coordinators.transactions.wiring import make_transaction_coordinator

            self._transactions = make_transaction_coordinator(self)
        return self._transactions

    @property
    def assignment_checks(self) -> AssignmentChecks:
        """Checks of the assignments SyncGroup stores (mockbroker/coordinators/classic/assignment_checks.py)."""
        if self._assignment_checks is None:
            self._make_groups()
        assert self._assignment_checks is not None
        return self._assignment_checks

    def _make_groups(self) -> GroupCoordinator:
        from mockbroker.coordinators.classic.assignment_checks import AssignmentChecks
        from mockbroker.coordinators.router import GroupCoordinator

        config = self.config
        checks = self._assignment_checks = AssignmentChecks(
            topic_sizes=lambda: {name: len(t.partitions) for name, t in self.topics.items()},
            partition_racks=self._partition_racks,
            checks=config.assignment_checks,
            strict=config.assignment_strict,
            broker_assignors=config.broker_assignors,
            on_strict_failure=self.strict_failures.append,
            on_internal_error=self.record_internal_error,
        )
        groups = self._groups = GroupCoordinator(
            config.group_config(),
            self.timers,
            self.events,
            broker_of=lambda group_id: self.coordinator_for(group_id).node_id,
            on_internal_error=self.record_internal_error,
            assignment_checks=checks,
            topics=self.topics,
        )
        deadline = self.timers.deadline(_GROUP_CLEANUP_KEY)
        if deadline is not None:  # started: take over the cleanup cycle where it stands
            self.timers.cancel(_GROUP_CLEANUP_KEY)
            groups.start(deadline - groups.config.offsets_retention_check_interval_ms)
        return groups

    def start_timers(self, now_ms: int) -> None:
        """Arm the periodic work of a started cluster: the retention check, the group cleanup."""
        from mockbroker.log.retention import schedule_retention_check

        schedule_retention_check(self, now_ms)
        if self._groups is not None:
            self._groups.start(now_ms)
        else:
            # The coordinator's periodic cleanup (§8.2) is armed from start even while the
            # coordinator does not exist: a cycle with no groups only re-arms itself, and the
            # coordinator made later takes over the armed deadline (``groups``), so expiry times
            # are those of a coordinator made here.
            self._group_cleanup_tick(now_ms)

    def _group_cleanup_tick(self, now_ms: int) -> None:
        interval = self.config.group_config().offsets_retention_check_interval_ms
        self.timers.schedule(_GROUP_CLEANUP_KEY, now_ms + interval, self._group_cleanup_tick)

    def _assignment_checks_listen(self, event: Event) -> None:
        if self._assignment_checks is not None:
            self._assignment_checks.listen(event)

    @property
    def ssl_ca_path(self) -> str | None:
        """The PEM file of the CA that signed the first TLS listener's certificate (generated at
        start unless ssl.keystore.location is given; then ssl.truststore.location), for clients'
        ssl cafile. Each listener's: ssl_ca_path_for."""
        return self.tls.cafile if self.tls is not None else None

    def ssl_ca_path_for(self, listener: str) -> str | None:
        """The CA a client of ``listener`` trusts (its listener.name.<name>.ssl.keystore.location's
        ssl.truststore.location, or the generated CA); None on a listener without TLS."""
        material = self.listener_tls.get(listener)
        return material.cafile if material is not None else None

    @property
    def bootstrap_servers(self) -> str:
        """host:port of every broker on the first listener."""
        return ",".join(f"{n.advertised_host}:{n.advertised_port}" for n in self.brokers.values())

    def bootstrap_servers_for(self, listener: str) -> str:
        """host:port of every broker on ``listener`` (its advertised address, else the bound one);
        KeyError for a listener the brokers do not have."""
        out = []
        for n in self.brokers.values():
            endpoint = n.endpoints[listener.upper()]
            host = endpoint.advertised_host if endpoint.advertised_host is not None else endpoint.host
            out.append(f"{host}:{endpoint.advertised_port if endpoint.advertised_host is not None else endpoint.port}")
        return ",".join(out)

    def answers_for(self, listener: str) -> dict[int, dict[bytes, AnswerEntry]]:
        """The answers kept for requests that came in on ``listener`` ("": the first's)."""
        if not listener:
            return self.answers
        answers = self.listener_answers.get(listener)
        if answers is None:
            answers = self.listener_answers[listener] = {}
        return answers

    def record_internal_error(self, exc: BaseException) -> None:
        log.error("broker bug while serving a request", exc_info=exc)
        self.internal_errors.append(exc)

    def _partition_racks(self, topic: str) -> tuple[frozenset[str], ...]:
        """The racks of each partition's replicas (KIP-881 rack-aware assignment); () without racks."""
        t = self.topics.get(topic)
        if t is None or not self.config.racks:
            return ()
        return tuple(frozenset(r for b in p.replica_ids if (r := self.brokers[b].rack)) for p in t.partitions)

    # -- topics -----------------------------------------------------------------------------------

    def create_topic(
        self,
        name: str,
        partitions: int | None = None,
        replication_factor: int | None = None,
        configs: dict[str, str] | None = None,
        *,
        validate_only: bool = False,
        internal: bool = False,
    ) -> Topic:
        validate_topic_name(name)
        if name in self.topics:
            raise TopicError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        collides = collision_key(name)
        for existing in self.topics:
            if collision_key(existing) == collides:
                raise TopicError(
                    ErrorCode.INVALID_TOPIC_EXCEPTION,
                    f"Topic '{name}' collides with existing topic: {existing}",
                )
        n_partitions = self.config.num_partitions if partitions is None or partitions == -1 else partitions
        rf = self.config.default_replication_factor if replication_factor is None or replication_factor == -1 else replication_factor
        if n_partitions < 1:
            raise TopicError(ErrorCode.INVALID_PARTITIONS, "Number of partitions must be larger than 0.")
        if rf < 1:
            raise TopicError(ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0.")
        if rf > len(self.brokers):
            raise TopicError(
                ErrorCode.INVALID_REPLICATION_FACTOR,
                f"Unable to replicate the partition {rf} time(s): The target replication factor of {rf} "
                f"cannot be reached because only {len(self.brokers)} broker(s) are registered or some brokers have "
                "all their log directories cordoned.",  # Kafka 4.3's wording (KIP-1066 cordoning)
            )
        import uuid  # with the first topic: uuid imports platform, ~2.5% of a cold start

        topic = Topic(name, uuid.uuid4(), [], rf, dict(configs or {}), is_internal=internal)
        topic.partitions = [self._new_partition(topic, i) for i in range(n_partitions)]
        if validate_only:
            return topic
        self.topics[name] = topic
        self.topic_ids[topic.topic_id] = name
        self._topic_counter += 1
        return topic

    def _new_partition(self, topic: Topic, index: int) -> Partition:
        # Spread leaders round-robin, staggered per topic, as Kafka's replica placement does
        # (deterministically here, so tests can predict which broker leads which partition).
        ids = list(self.brokers)
        start = (self._topic_counter + index) % len(ids)
        replicas = [ids[(start + r) % len(ids)] for r in range(topic.replication_factor)]
        from mockbroker.log.partition import PartitionLog

        return Partition(index, replicas[0], replicas, PartitionLog(topic.name, index))

    def add_partitions(self, name: str, total: int) -> Topic:
        topic = self.topics.get(name)
        if topic is None:
            raise TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"This server does not host this topic: {name}")
        current = len(topic.partitions)
        if total < current:
            raise TopicError(ErrorCode.INVALID_PARTITIONS, f"Topic currently has {current} partitions, which is higher than the requested {total}.")
        if total == current:
            raise TopicError(ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partitions.")
        topic.partitions += [self._new_partition(topic, i) for i in range(current, total)]
        return topic

    def delete_topic(self, name: str) -> Topic:
        topic = self.topics.pop(name, None)
        if topic is None:
            raise TopicError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"This server does not host this topic: {name}")
        self.topic_ids.pop(topic.topic_id, None)
        if self._groups is not None:  # no coordinator yet: no offsets or groups to clean up
            self._groups.on_topic_deleted(name, self.clock.now_ms())
        return topic

    def topic_by_id(self, topic_id: uuid.UUID) -> Topic | None:
        name = self.topic_ids.get(topic_id)
        return None if name is None else self.topics.get(name)

    def partition(self, topic: str, index: int) -> Partition | None:
        t = self.topics.get(topic)
        if t is None or not 0 <= index < len(t.partitions):
            return None
        return t.partitions[index]

    def iter_partitions(self) -> Iterator[tuple[Topic, Partition]]:
        for t in self.topics.values():
            for p in t.partitions:
                yield t, p

    def maybe_auto_create(self, name: str) -> Topic | None:
        """auto.create.topics.enable: Metadata for an unknown, valid topic creates it."""
        if not self.config.auto_create_topics_enable or name.startswith("__"):
            return None
        try:
            return self.create_topic(name)
        except TopicError:
            return None

    # -- coordinators -----------------------------------------------------------------------------

    def coordinator_partition(self, key: str) -> int:
        """The partition of the internal topic that owns ``key`` (a group or transactional id)."""
        # Every group request asks this: remembered per key (the partition count never changes
        # under a cluster), forgotten wholesale if a client invents group ids without end.
        partition = self._coordinator_partitions.get(key)
        if partition is None:
            if len(self._coordinator_partitions) >= _COORDINATOR_CACHE_SIZE:
                self._coordinator_partitions.clear()
            partition = partition_for(key, self.config.offsets_topic_num_partitions)
            self._coordinator_partitions[key] = partition
        return partition

    def coordinator_for(self, key: str) -> BrokerNode:
        """The group coordinator: the broker leading the group's partition of __consumer_offsets
        (or where control.move_coordinator put it)."""
        if not self.coordinator_moves and not self.down_brokers:
            # Every group request asks this. With nothing moved and every broker up the answer
            # depends on the key alone (the brokers and the partition count never change under
            # a cluster), so it is remembered, and read back only in that case.
            node = self._coordinator_nodes.get(key)
            if node is None:
                if len(self._coordinator_nodes) >= _COORDINATOR_CACHE_SIZE:
                    self._coordinator_nodes.clear()
                node = self._coordinator_nodes[key] = self.internal_partition_leader(self.coordinator_partition(key))
            return node
        moved = self.coordinator_moves.get(key)
        if moved is not None and moved not in self.down_brokers:
            return self.brokers[moved]
        return self.internal_partition_leader(self.coordinator_partition(key))

    def transaction_coordinator_for(self, transactional_id: str) -> BrokerNode:
        """The transaction coordinator: the broker leading the id's partition of
        __transaction_state (TransactionStateManager.partitionFor), or where
        control.move_transaction_coordinator put it."""
        moved = self.transaction_coordinator_moves.get(transactional_id)
        if moved is not None and moved not in self.down_brokers:
            return self.brokers[moved]
        partition = partition_for(transactional_id, self.config.transaction_state_log_num_partitions)
        return self.internal_partition_leader(partition)

    def internal_partition_leader(self, partition: int) -> BrokerNode:
        """The broker leading ``partition`` of an internal topic (__consumer_offsets,
        __transaction_state, __share_group_state): their partitions are spread over the brokers
        in node order, so partition p is led by broker p mod N. Every coordinator lookup goes
        through here, so FindCoordinator and the coordinators can never disagree. A broker that
        is down leads nothing: its partitions fail over to the next live broker in node order
        (the others' stay where they are, as after a Kafka leader election)."""
        ids = list(self.brokers)
        for step in range(len(ids)):
            node_id = ids[(partition + step) % len(ids)]
            if node_id not in self.down_brokers:
                return self.brokers[node_id]
        return self.brokers[ids[partition % len(ids)]]

