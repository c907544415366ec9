"""Cluster configuration: one dataclass, every setting also reachable by its Kafka name.

Defaults are Kafka's unless a faster test says otherwise; where we differ, the field says so.
``ClusterConfig.from_kafka({"auto.create.topics.enable": "false"})`` reads Kafka-named settings
(strings, as they come from TOML, flags or the environment) and rejects unknown keys and bad
values with a message naming the key.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from mockbroker.config.groups import (
    KAFKA_CONSUMER_HEARTBEAT_INTERVAL_MS,
    KAFKA_CONSUMER_MIN_HEARTBEAT_INTERVAL_MS,
    KAFKA_CONSUMER_MIN_SESSION_TIMEOUT_MS,
    KAFKA_CONSUMER_SESSION_TIMEOUT_MS,
    KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS,
    KAFKA_GROUP_MIN_SESSION_TIMEOUT_MS,
    KAFKA_STREAMS_HEARTBEAT_INTERVAL_MS,
    KAFKA_STREAMS_INITIAL_REBALANCE_DELAY_MS,
    KAFKA_STREAMS_SESSION_TIMEOUT_MS,
    MOCK_CONSUMER_HEARTBEAT_INTERVAL_MS,
    MOCK_CONSUMER_MIN_HEARTBEAT_INTERVAL_MS,
    MOCK_CONSUMER_MIN_SESSION_TIMEOUT_MS,
    MOCK_CONSUMER_SESSION_TIMEOUT_MS,
    MOCK_GROUP_INITIAL_REBALANCE_DELAY_MS,
    MOCK_GROUP_MIN_SESSION_TIMEOUT_MS,
    MOCK_STREAMS_HEARTBEAT_INTERVAL_MS,
    MOCK_STREAMS_INITIAL_REBALANCE_DELAY_MS,
    MOCK_STREAMS_SESSION_TIMEOUT_MS,
    GroupConfig,
    check_mode,
    resolve_broker_assignors,
    strict_mode,
)

# Kafka's 4.x defaults, for reference in docs and --kafka-defaults.
KAFKA_MESSAGE_MAX_BYTES = 1048588
KAFKA_SOCKET_REQUEST_MAX_BYTES = 104857600
# log.retention.check.interval.ms: Kafka deletes by time on a 5-minute schedule, not on append
# (mockbroker.log.retention arms the check; mockbroker.log.replica_manager keeps appends to it).
RETENTION_CHECK_INTERVAL_MS = 300_000


@dataclass(slots=True)
class ClusterConfig:
    """A cluster's settings: listeners and brokers, then Kafka-named settings (``from_kafka``)."""

    brokers: int = 1
    host: str = "127.0.0.1"  # where listeners bind
    port: int = 0  # first broker's port; 0 picks free ports; broker i listens on port + i otherwise
    advertised_host: str | None = None  # what Metadata tells clients (a sidecar's DNS name); default: host
    advertised_port: int | None = None  # first broker's advertised port; default: the bound port
    first_node_id: int = 1
    racks: tuple[str, ...] = ()  # rack per broker, in order; empty: no racks
    cluster_id: str = "mockbroker-cluster-0001"
    # Kafka-named settings
    auto_create_topics_enable: bool = True  # auto.create.topics.enable
    num_partitions: int = 1  # num.partitions
    default_replication_factor: int = 1  # default.replication.factor
    offsets_topic_num_partitions: int = 50  # offsets.topic.num.partitions
    transaction_state_log_num_partitions: int = 50  # transaction.state.log.num.partitions
    transaction_max_timeout_ms: int = 900000  # transaction.max.timeout.ms (15 min)
    transactional_id_expiration_ms: int = 604800000  # transactional.id.expiration.ms (7 days)
    # mockbroker's own: how long a completed transaction's markers take to be written (0: before
    # EndTxn is answered); meanwhile the transaction is PrepareCommit/PrepareAbort
    transaction_marker_delay_ms: int = 0
    # The finalized transaction.version feature advertised in ApiVersions (KIP-890; Kafka's
    # kafka-features tool sets it): 2, as Kafka 4.x finalizes it on a new cluster (checked by
    # tests/differential/test_api_versions.py): a Java 4.x producer bumps the epoch with every
    # EndTxn (v5) and adds partitions implicitly through Produce v12 and TxnOffsetCommit v5;
    # 1: explicit AddPartitionsToTxn and AddOffsetsToTxn, as a cluster upgraded from 3.x has it.
    transaction_version: int = 2
    share_coordinator_state_topic_num_partitions: int = 50  # share.coordinator.state.topic.num.partitions
    message_max_bytes: int = KAFKA_MESSAGE_MAX_BYTES  # message.max.bytes
    socket_request_max_bytes: int = KAFKA_SOCKET_REQUEST_MAX_BYTES  # socket.request.max.bytes
    # Bytes of large requests (64 KiB and up) being read or queued, per broker, as Kafka's
    # MemoryPool (mockbroker_protocol.framing.MemoryPool); <= 0: unbounded, Kafka's default -1.
    queued_max_request_bytes: int = -1  # queued.max.request.bytes
    max_connections: int = 2147483647  # max.connections (per broker; beyond it, held unread)
    max_connections_per_ip: int = 2147483647  # max.connections.per.ip (beyond it, closed)
    connections_max_idle_ms: int = 600000  # connections.max.idle.ms (10 min)
    # The listening sockets' backlog (KIP-764), given to listen(): connections the kernel completes
    # while the broker has not accepted them yet (Linux caps it at net.core.somaxconn).
    socket_listen_backlog_size: int = 50  # socket.listen.backlog.size
    # A Fetch's max_bytes and min_bytes are capped by it (KafkaApis.handleFetchRequest).
    fetch_max_bytes: int = 57671680  # fetch.max.bytes (55 MiB)
    log_retention_ms: int = 604800000  # log.retention.ms (7 days)
    log_retention_bytes: int = -1  # log.retention.bytes
    # api key -> highest version to advertise and serve ("behave like an older broker")
    api_version_caps: dict[int, int] = field(default_factory=dict)
    # "behave like Kafka X": a profile of version caps (mockbroker/config/profiles.py); explicit
    # api_version_caps override the profile's entries
    kafka_version: str = "4.0"
    # Group coordinator settings, resolved (and listed side by side with Kafka's) in
    # mockbroker/config/groups.py. None: mockbroker's fast-test default, or Kafka's exact value
    # when kafka_defaults is set (only the ones marked differ).
    group_min_session_timeout_ms: int | None = None  # group.min.session.timeout.ms: 1 here, Kafka 6000
    group_max_session_timeout_ms: int = 1800000  # group.max.session.timeout.ms (30 min)
    group_initial_rebalance_delay_ms: int | None = None  # group.initial.rebalance.delay.ms: 0 here, Kafka 3000
    group_max_size: int = 2147483647  # group.max.size (unlimited)
    offsets_retention_minutes: int = 10080  # offsets.retention.minutes (7 days)
    offsets_retention_check_interval_ms: int = 600000  # offsets.retention.check.interval.ms (10 min)
    offset_metadata_max_bytes: int = 4096  # offset.metadata.max.bytes (counted in characters, as Kafka does)
    # KIP-848 consumer groups (resolved in mockbroker/config/groups.py; None: mockbroker's
    # fast-test default, or Kafka's with kafka_defaults).
    group_consumer_session_timeout_ms: int | None = None  # group.consumer.session.timeout.ms: 10000 here, Kafka 45000
    group_consumer_min_session_timeout_ms: int | None = None  # group.consumer.min.session.timeout.ms: 1 here, Kafka 45000
    group_consumer_max_session_timeout_ms: int = 60000  # group.consumer.max.session.timeout.ms
    group_consumer_heartbeat_interval_ms: int | None = None  # group.consumer.heartbeat.interval.ms: 100 here, Kafka 5000
    group_consumer_min_heartbeat_interval_ms: int | None = None  # group.consumer.min.heartbeat.interval.ms: 1 here, Kafka 5000
    group_consumer_max_heartbeat_interval_ms: int = 15000  # group.consumer.max.heartbeat.interval.ms
    group_consumer_max_size: int = 2147483647  # group.consumer.max.size
    # group.consumer.assignors: comma-separated names or "module:attr" references of server-side
    # assignors (mockbroker_assignors.registry); the first is the default.
    group_consumer_assignors: str = "uniform,range"
    # group.consumer.migration.policy: bidirectional, upgrade, downgrade or disabled (Kafka's
    # default bidirectional): online migration between classic and consumer groups (§10.8).
    group_consumer_migration_policy: str = "bidirectional"
    # group.consumer.regex.refresh.interval.ms (Kafka's default, 10 min; an internal setting of
    # GroupCoordinatorConfig, at least 10000): how old a group's regex resolution may grow before a
    # heartbeat resolves the group's regexes again with no other reason to.
    group_consumer_regex_refresh_interval_ms: int = 600000
    # KIP-1071 streams groups (resolved in mockbroker/config/groups.py; None: mockbroker's
    # fast-test default, or Kafka's with kafka_defaults).
    group_streams_session_timeout_ms: int | None = None  # group.streams.session.timeout.ms: 10000 here, Kafka 45000
    group_streams_heartbeat_interval_ms: int | None = None  # group.streams.heartbeat.interval.ms: 100 here, Kafka 5000
    group_streams_max_size: int = 2147483647  # group.streams.max.size
    group_streams_num_standby_replicas: int = 0  # group.streams.num.standby.replicas
    # group.streams.initial.rebalance.delay.ms: 0 here, Kafka 3000
    group_streams_initial_rebalance_delay_ms: int | None = None

    # KIP-932 share groups (resolved in mockbroker/config/groups.py; None: mockbroker's fast-test
    # default, or Kafka's with kafka_defaults).
    group_share_session_timeout_ms: int | None = None  # group.share.session.timeout.ms: 10000 here, Kafka 45000
    group_share_min_session_timeout_ms: int | None = None  # group.share.min.session.timeout.ms: 1 here, Kafka 45000
    group_share_max_session_timeout_ms: int = 60000  # group.share.max.session.timeout.ms
    group_share_heartbeat_interval_ms: int | None = None  # group.share.heartbeat.interval.ms: 100 here, Kafka 5000
    group_share_min_heartbeat_interval_ms: int | None = None  # group.share.min.heartbeat.interval.ms: 1 here, Kafka 5000
    group_share_max_heartbeat_interval_ms: int = 15000  # group.share.max.heartbeat.interval.ms
    group_share_max_size: int = 200  # group.share.max.size
    group_share_record_lock_duration_ms: int = 30000  # group.share.record.lock.duration.ms
    group_share_delivery_count_limit: int = 5  # group.share.delivery.count.limit
    group_share_partition_max_record_locks: int = 2000  # group.share.partition.max.record.locks
    # Kafka's exact defaults for every setting above left at None (--kafka-defaults).
    kafka_defaults: bool = False
    # Also append the event log (mockbroker/events.py, docs/events.md) to this file as JSON Lines.
    events_path: str | None = None
    # Also append every event to the internal topic __mockbroker_events (mockbroker/log/events_topic.py,
    # docs/events.md "As a topic"): JSON values keyed by group, readable by any Kafka client.
    events_topic: bool = False
    events_topic_partitions: int = 1  # its partition count (1 keeps the cluster-wide order)
    # Its retention.ms (Kafka's default, 7 days) and retention.bytes per partition (100 MiB here, where
    # Kafka's is unbounded: the log is in memory).
    events_topic_retention_ms: int = 604800000
    events_topic_retention_bytes: int = 104857600
    # Checks of the assignments SyncGroup stores (mockbroker/coordinators/classic/assignment_checks.py):
    # "off", "validate" (ownership, subscriptions, decodable bytes) or "full" (also the reference
    # check against Java's built-in assignors).
    assignment_checks: str = "full"
    # Which findings also go to cluster.strict_failures (the pytest fixture fails the test on
    # them): "off", "violations" (all but reference divergences) or "all".
    assignment_strict: str = "off"
    # Broker-side assignment: group id or glob (fnmatch) -> assignor name or "module:attr"; the
    # broker's assignment replaces the leader's. An exact group id wins over globs, then the first
    # matching glob in order.
    broker_assignors: dict[str, str] = field(default_factory=dict)
    # Security (mockbroker/security/, docs/security.md), by Kafka's names. listeners: one or more
    # "NAME://host:port", each its own port and security protocol (the first broker's port; broker
    # i listens on each port + i); empty: one PLAINTEXT listener on host and port. A listener's
    # name maps to its security protocol through listener.security.protocol.map (unset: Kafka's
    # default, each protocol's name to itself). Clients get the addresses of the listener they
    # came in on (mockbroker/config/listeners.py).
    listeners: str = ""  # listeners
    advertised_listeners: str = ""  # advertised.listeners
    listener_security_protocol_map: str = ""  # listener.security.protocol.map
    # Checked as Kafka checks them, without effect: one process has no inter-broker traffic.
    inter_broker_listener_name: str = ""  # inter.broker.listener.name
    control_plane_listener_name: str = ""  # control.plane.listener.name (ZooKeeper-era, gone in Kafka 4)
    # Kafka's per-listener settings, "listener.name.<name>.<setting>" -> value, for the settings
    # config.listeners.LISTENER_OVERRIDABLE names (sasl.enabled.mechanisms, ssl.client.auth).
    listener_overrides: dict[str, str] = field(default_factory=dict)
    # sasl.enabled.mechanisms: Kafka's default is GSSAPI (not served here); ours is what is served.
    sasl_enabled_mechanisms: str = "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"
    ssl_keystore_location: str | None = None  # ssl.keystore.location: a PEM file, chain and key (ssl.keystore.type=PEM)
    ssl_key_password: str | None = None  # ssl.key.password
    ssl_truststore_location: str | None = None  # ssl.truststore.location: PEM CA(s) for client certificates
    ssl_client_auth: str = "none"  # ssl.client.auth: none, requested or required
    # KIP-368: a SASL session's maximum lifetime (0: none; an OAUTHBEARER token's exp still ends it).
    connections_max_reauth_ms: int = 0  # connections.max.reauth.ms
    # Kafka closes a connection whose authentication failed this long after its answer.
    connection_failed_authentication_delay_ms: int = 100  # connection.failed.authentication.delay.ms
    # OAUTHBEARER (KIP-255, mockbroker/security/oauthbearer.py), Kafka's per-listener settings
    # without their "listener.name.<listener>." prefix: the validator, a Python callable
    # (token, now_ms) -> OAuthBearerToken or its dotted path (empty: Kafka's unsecured validator),
    # and the JAAS line whose unsecuredValidator* options that validator reads.
    oauthbearer_sasl_server_callback_handler_class: str | Callable[[str, int], Any] = ""  # oauthbearer.sasl.server.callback.handler.class
    oauthbearer_sasl_jaas_config: str = ""  # oauthbearer.sasl.jaas.config
    # mockbroker's own: users made at start (name -> password), each usable with PLAIN and both
    # SCRAM mechanisms (SCRAM credentials stored salted, 4096 iterations).
    sasl_users: dict[str, str] = field(default_factory=dict)
    # ACLs (mockbroker/security/acls.py), by Kafka's names: any authorizer.class.name switches
    # StandardAuthorizer's rules on (empty: no authorizer, every request allowed and CreateAcls /
    # DeleteAcls / DescribeAcls answer SECURITY_DISABLED); super.users "User:a;User:b".
    authorizer_class_name: str = ""  # authorizer.class.name
    super_users: str = ""  # super.users
    allow_everyone_if_no_acl_found: bool = False  # allow.everyone.if.no.acl.found

    def __post_init__(self) -> None:
        from mockbroker.config.profiles import caps_for

        caps_for(self.kafka_version)  # ValueError naming the known profiles
        if self.brokers < 1:
            raise ValueError(f"brokers must be at least 1, not {self.brokers}")
        if self.racks and len(self.racks) != self.brokers:
            raise ValueError(f"racks names {len(self.racks)} racks for {self.brokers} brokers")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port must be 0-65535, not {self.port}")
        if self.port and self.port + self.brokers - 1 > 65535:
            raise ValueError(
                f"port {self.port} leaves no room for {self.brokers} brokers: they would listen on "
                f"{self.port}-{self.port + self.brokers - 1}, above 65535"
            )
        # advertised_port 0 means the same as None: advertise the bound port.
        if self.advertised_port and not 1 <= self.advertised_port <= 65536 - self.brokers:
            raise ValueError(f"advertised_port must be 1-{65536 - self.brokers} for {self.brokers} broker(s), not {self.advertised_port}")
        if self.first_node_id < 0:
            raise ValueError(f"first_node_id must be at least 0, not {self.first_node_id}")
        if self.events_topic_partitions < 1:
            raise ValueError(f"events_topic_partitions must be at least 1, not {self.events_topic_partitions}")
        check_mode(self.assignment_checks)
        strict_mode(self.assignment_strict)
        if self.broker_assignors:  # only then are the assignors imported (start-up stays fast)
            resolve_broker_assignors(self.broker_assignors)  # ValueError naming an unknown assignor
        for name, key in KAFKA_NAMES_BY_FIELD.items():
            value = getattr(self, name)
            bounds = KAFKA_RANGES.get(key)
            if bounds is not None and value is not None and not isinstance(value, bool) and not bounds[0] <= value <= bounds[1]:
                raise _config_error(key, value, bounds)
        self.group_config()  # ValueError for inconsistent group settings
        from mockbroker.config.listeners import check_security

        check_security(self)  # ValueError for inconsistent listener, TLS or SASL settings

    def group_config(self) -> GroupConfig:
        """The group coordinator's settings: each unset (None) one takes mockbroker's fast-test value,
        or Kafka's with kafka_defaults; GroupConfig checks them together (ValueError)."""
        return GroupConfig(
            **_classic_group_settings(self),
            **_consumer_group_settings(self),
            **_streams_group_settings(self),
            **_share_group_settings(self),
        )

    @property
    def effective_version_caps(self) -> dict[int, int]:
        """The profile's caps with the explicit api_version_caps applied on top."""
        from mockbroker.config.profiles import caps_for

        return {**caps_for(self.kafka_version), **self.api_version_caps}

    @property
    def node_ids(self) -> list[int]:
        return [self.first_node_id + i for i in range(self.brokers)]

    @classmethod
    def from_kafka(cls, settings: dict[str, Any], **fields: Any) -> ClusterConfig:
        """Build from Kafka-named settings (values may be strings) plus plain field overrides."""
        kwargs = dict(fields)
        for key, raw in settings.items():
            name, value = parse_kafka_setting(key, raw)
            kwargs[name] = value
        return cls(**gather_listener_overrides(kwargs))


KAFKA_NAMES: dict[str, str] = {
    "auto.create.topics.enable": "auto_create_topics_enable",
    "num.partitions": "num_partitions",
    "default.replication.factor": "default_replication_factor",
    "offsets.topic.num.partitions": "offsets_topic_num_partitions",
    "transaction.state.log.num.partitions": "transaction_state_log_num_partitions",
    "transaction.max.timeout.ms": "transaction_max_timeout_ms",
    "transactional.id.expiration.ms": "transactional_id_expiration_ms",
    "share.coordinator.state.topic.num.partitions": "share_coordinator_state_topic_num_partitions",
    "message.max.bytes": "message_max_bytes",
    "socket.request.max.bytes": "socket_request_max_bytes",
    "queued.max.request.bytes": "queued_max_request_bytes",
    "max.connections": "max_connections",
    "max.connections.per.ip": "max_connections_per_ip",
    "connections.max.idle.ms": "connections_max_idle_ms",
    "socket.listen.backlog.size": "socket_listen_backlog_size",
    "fetch.max.bytes": "fetch_max_bytes",
    "log.retention.ms": "log_retention_ms",
    "log.retention.bytes": "log_retention_bytes",
    "group.min.session.timeout.ms": "group_min_session_timeout_ms",
    "group.max.session.timeout.ms": "group_max_session_timeout_ms",
    "group.initial.rebalance.delay.ms": "group_initial_rebalance_delay_ms",
    "group.max.size": "group_max_size",
    "offsets.retention.minutes": "offsets_retention_minutes",
    "offsets.retention.check.interval.ms": "offsets_retention_check_interval_ms",
    "offset.metadata.max.bytes": "offset_metadata_max_bytes",
    "group.consumer.session.timeout.ms": "group_consumer_session_timeout_ms",
    "group.consumer.min.session.timeout.ms": "group_consumer_min_session_timeout_ms",
    "group.consumer.max.session.timeout.ms": "group_consumer_max_session_timeout_ms",
    "group.consumer.heartbeat.interval.ms": "group_consumer_heartbeat_interval_ms",
    "group.consumer.min.heartbeat.interval.ms": "group_consumer_min_heartbeat_interval_ms",
    "group.consumer.max.heartbeat.interval.ms": "group_consumer_max_heartbeat_interval_ms",
    "group.consumer.max.size": "group_consumer_max_size",
    "group.consumer.assignors": "group_consumer_assignors",
    "group.consumer.migration.policy": "group_consumer_migration_policy",
    "group.consumer.regex.refresh.interval.ms": "group_consumer_regex_refresh_interval_ms",
    "group.streams.session.timeout.ms": "group_streams_session_timeout_ms",
    "group.streams.heartbeat.interval.ms": "group_streams_heartbeat_interval_ms",
    "group.streams.max.size": "group_streams_max_size",
    "group.streams.num.standby.replicas": "group_streams_num_standby_replicas",
    "group.streams.initial.rebalance.delay.ms": "group_streams_initial_rebalance_delay_ms",
    "listeners": "listeners",
    "advertised.listeners": "advertised_listeners",
    "listener.security.protocol.map": "listener_security_protocol_map",
    "inter.broker.listener.name": "inter_broker_listener_name",
    "control.plane.listener.name": "control_plane_listener_name",
    "sasl.enabled.mechanisms": "sasl_enabled_mechanisms",
    "ssl.keystore.location": "ssl_keystore_location",
    "ssl.key.password": "ssl_key_password",
    "ssl.truststore.location": "ssl_truststore_location",
    "ssl.client.auth": "ssl_client_auth",
    "connections.max.reauth.ms": "connections_max_reauth_ms",
    "connection.failed.authentication.delay.ms": "connection_failed_authentication_delay_ms",
    "oauthbearer.sasl.server.callback.handler.class": "oauthbearer_sasl_server_callback_handler_class",
    "oauthbearer.sasl.jaas.config": "oauthbearer_sasl_jaas_config",
    "authorizer.class.name": "authorizer_class_name",
    "super.users": "super_users",
    "allow.everyone.if.no.acl.found": "allow_everyone_if_no_acl_found",

    "group.share.session.timeout.ms": "group_share_session_timeout_ms",
    "group.share.min.session.timeout.ms": "group_share_min_session_timeout_ms",
    "group.share.max.session.timeout.ms": "group_share_max_session_timeout_ms",
    "group.share.heartbeat.interval.ms": "group_share_heartbeat_interval_ms",
    "group.share.min.heartbeat.interval.ms": "group_share_min_heartbeat_interval_ms",
    "group.share.max.heartbeat.interval.ms": "group_share_max_heartbeat_interval_ms",
    "group.share.max.size": "group_share_max_size",
    "group.share.record.lock.duration.ms": "group_share_record_lock_duration_ms",
    "group.share.delivery.count.limit": "group_share_delivery_count_limit",
    "group.share.partition.max.record.locks": "group_share_partition_max_record_locks",
}
KAFKA_NAMES_BY_FIELD = {v: k for k, v in KAFKA_NAMES.items()}
FIELD_TYPES: dict[str, str] = {f.name: str(f.type) for f in dataclasses.fields(ClusterConfig)}

_INT32_MAX = (1 << 31) - 1
_INT32_MIN = -(1 << 31)
_INT64_MAX = (1 << 63) - 1
# Allowed values of the integer settings, as Kafka's ConfigDef validators have them (INT settings
# are 32-bit, LONG ones 64-bit; -1 means "no limit" for retention).
KAFKA_RANGES: dict[str, tuple[int, int]] = {
    "num.partitions": (1, _INT32_MAX),
    "default.replication.factor": (1, _INT32_MAX),
    "offsets.topic.num.partitions": (1, _INT32_MAX),
    "transactional.id.expiration.ms": (1, _INT32_MAX),  # TransactionLogConfig: INT, atLeast(1)
    "message.max.bytes": (1, _INT32_MAX),
    "socket.request.max.bytes": (1, _INT32_MAX),
    # SocketServerConfigs: queued.max.request.bytes is a LONG without a validator; max.connections
    # and max.connections.per.ip are INT atLeast(0); connections.max.idle.ms a LONG.
    "queued.max.request.bytes": (-(1 << 63), _INT64_MAX),
    "max.connections": (0, _INT32_MAX),
    "max.connections.per.ip": (0, _INT32_MAX),
    "connections.max.idle.ms": (-(1 << 63), _INT64_MAX),
    # SocketServerConfigs: INT, atLeast(1), default 50; read broker-wide only (Kafka 4.3.1's
    # Acceptor takes KafkaConfig.socketListenBacklogSize, not a listener.name.<name>. value).
    "socket.listen.backlog.size": (1, _INT32_MAX),
    "connections.max.reauth.ms": (-(1 << 63), _INT64_MAX),  # SocketServerConfigs: LONG, no validator
    "connection.failed.authentication.delay.ms": (0, _INT32_MAX),  # SocketServerConfigs: INT, atLeast(0)
    "fetch.max.bytes": (1024, _INT32_MAX),  # ServerConfigs: INT, atLeast(1024)
    "log.retention.ms": (-1, _INT64_MAX),
    "log.retention.bytes": (-1, _INT64_MAX),
    # GroupCoordinatorConfig: INT settings without a validator accept any int32.
    "group.min.session.timeout.ms": (_INT32_MIN, _INT32_MAX),
    "group.max.session.timeout.ms": (_INT32_MIN, _INT32_MAX),
    "group.initial.rebalance.delay.ms": (_INT32_MIN, _INT32_MAX),
    "group.max.size": (1, _INT32_MAX),
    "offsets.retention.minutes": (1, _INT32_MAX),
    "offsets.retention.check.interval.ms": (1, _INT64_MAX),
    "offset.metadata.max.bytes": (_INT32_MIN, _INT32_MAX),
    # GroupCoordinatorConfig: atLeast(1) for the KIP-848 timeouts and the group size.
    "group.consumer.session.timeout.ms": (1, _INT32_MAX),
    "group.consumer.min.session.timeout.ms": (1, _INT32_MAX),
    "group.consumer.max.session.timeout.ms": (1, _INT32_MAX),
    "group.consumer.heartbeat.interval.ms": (1, _INT32_MAX),
    "group.consumer.min.heartbeat.interval.ms": (1, _INT32_MAX),
    "group.consumer.max.heartbeat.interval.ms": (1, _INT32_MAX),
    "group.consumer.max.size": (1, _INT32_MAX),
    # defineInternal(INT, 600000, atLeast(10000)): accepted like the others, absent from Kafka's docs.
    "group.consumer.regex.refresh.interval.ms": (10000, _INT32_MAX),
    # ShareGroupConfig / GroupCoordinatorConfig (Kafka 4.3): the KIP-932 settings and their ranges.
    "group.share.session.timeout.ms": (1, _INT32_MAX),
    "group.share.min.session.timeout.ms": (1, _INT32_MAX),
    "group.share.max.session.timeout.ms": (1, _INT32_MAX),
    "group.share.heartbeat.interval.ms": (1, _INT32_MAX),
    "group.share.min.heartbeat.interval.ms": (1, _INT32_MAX),
    "group.share.max.heartbeat.interval.ms": (1, _INT32_MAX),
    "group.share.max.size": (1, 1000),
    "group.share.record.lock.duration.ms": (1000, 3600000),
    "group.share.delivery.count.limit": (2, 10),
    "group.share.partition.max.record.locks": (100, 10000),
}


def _config_error(key: str, value: Any, bounds: tuple[int, int] | None) -> ValueError:
    """Kafka's ConfigException for a bad number, in its words: ConfigDef.parseType's "Not a number
    of type INT" (or LONG: a setting whose range reaches 2^63-1) for what is not a number of the
    type, Range.ensureValid's "Value must be at least" / "no more than" for one out of range."""
    lo, hi = bounds or (_INT32_MIN, _INT32_MAX)
    kind, type_lo, type_hi = ("LONG", -(1 << 63), _INT64_MAX) if hi == _INT64_MAX else ("INT", _INT32_MIN, _INT32_MAX)
    if isinstance(value, bool) or not isinstance(value, int) or not type_lo <= value <= type_hi:
        reason = f"Not a number of type {kind}"
    else:
        reason = f"Value must be at least {lo}" if value < lo else f"Value must be no more than {hi}"
    return ValueError(f"Invalid value {value} for configuration {key}: {reason}")


_LISTENER_PREFIXED = re.compile(r"listener\.name\.[a-z0-9_]+\.(oauthbearer\..+)")


def parse_kafka_setting(key: str, raw: Any) -> tuple[str, Any]:
    """One Kafka-named setting -> (field name, typed value); ValueError names the key and what it allows."""
    name = KAFKA_NAMES.get(key)
    if name is None and (listener_key := _LISTENER_PREFIXED.fullmatch(key)) is not None:
        # listener.name.<listener>.oauthbearer.*: Kafka's per-listener form of the OAUTHBEARER settings
        # (the one SASL listener's, here).
        name = KAFKA_NAMES.get(listener_key.group(1))
    if name is None and key.startswith("listener.name."):
        # Kafka's per-listener settings: one pseudo-field per key, so that each source (flags,
        # environment, file) sets keys of its own; gather_listener_overrides makes the dict.
        return LISTENER_OVERRIDE_PREFIX + key, str(raw).lower() if isinstance(raw, bool) else str(raw)
    if name is None:
        known = ", ".join(sorted(KAFKA_NAMES))
        raise ValueError(f"unknown setting {key!r}; known settings: {known}")
    value = _coerce(key, raw, FIELD_TYPES[name])
    bounds = KAFKA_RANGES.get(key)
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        raise _config_error(key, value, bounds)
    return name, value


LISTENER_OVERRIDE_PREFIX = "listener_overrides:"


def gather_listener_overrides(fields: dict[str, Any]) -> dict[str, Any]:
    """Field values with the ``listener.name.*`` pseudo-fields of parse_kafka_setting gathered into
    ``listener_overrides`` (on top of one given as a dict)."""
    out: dict[str, Any] = {}
    overrides: dict[str, str] = dict(fields.get("listener_overrides") or {})
    for name, value in fields.items():
        if name.startswith(LISTENER_OVERRIDE_PREFIX):
            overrides[name[len(LISTENER_OVERRIDE_PREFIX):]] = value
        elif name != "listener_overrides":
            out[name] = value
    if overrides:
        out["listener_overrides"] = overrides
    return out


def _coerce(key: str, raw: Any, type_name: str) -> Any:
    if type_name == "bool":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("true", "false"):
            return text == "true"
        # ConfigDef.parseType's message for a BOOLEAN
        raise ValueError(f"Invalid value {raw} for configuration {key}: Expected value to be either true or false")
    if type_name in ("int", "int | None"):
        bounds = KAFKA_RANGES.get(key)
        if isinstance(raw, bool | float):
            raise _config_error(key, raw, bounds)
        try:
            return int(str(raw).strip())
        except ValueError:
            raise _config_error(key, raw, bounds) from None
    return raw


class Configured(Protocol):
    """Anything with a cluster config (mockbroker.state.ClusterState): what the config and log
    modules take, so that they need not import the state above them."""

    @property
    def config(self) -> ClusterConfig: ...



# ClusterConfig.group_config(), by group kind. A None setting is "not set": mockbroker's fast-test
# value, or Kafka's when kafka_defaults (the table in mockbroker/config/groups.py says which differ).


def _pick(config: ClusterConfig, value: int | None, mock: int, kafka: int) -> int:
    if value is not None:
        return value
    return kafka if config.kafka_defaults else mock


def _classic_group_settings(c: ClusterConfig) -> dict[str, Any]:
    return {
        "group_min_session_timeout_ms": _pick(
            c, c.group_min_session_timeout_ms, MOCK_GROUP_MIN_SESSION_TIMEOUT_MS, KAFKA_GROUP_MIN_SESSION_TIMEOUT_MS
        ),
        "group_max_session_timeout_ms": c.group_max_session_timeout_ms,
        "group_initial_rebalance_delay_ms": _pick(
            c, c.group_initial_rebalance_delay_ms, MOCK_GROUP_INITIAL_REBALANCE_DELAY_MS,
            KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS,
        ),
        "group_max_size": c.group_max_size,
        "offsets_retention_minutes": c.offsets_retention_minutes,
        "offsets_retention_check_interval_ms": c.offsets_retention_check_interval_ms,
        "offset_metadata_max_bytes": c.offset_metadata_max_bytes,
    }


def _consumer_group_settings(c: ClusterConfig) -> dict[str, Any]:
    """KIP-848 consumer groups (GroupCoordinatorConfig's group.consumer.*)."""
    return {
        "consumer_group_session_timeout_ms": _pick(
            c, c.group_consumer_session_timeout_ms, MOCK_CONSUMER_SESSION_TIMEOUT_MS, KAFKA_CONSUMER_SESSION_TIMEOUT_MS
        ),
        "consumer_group_min_session_timeout_ms": _pick(
            c, c.group_consumer_min_session_timeout_ms, MOCK_CONSUMER_MIN_SESSION_TIMEOUT_MS,
            KAFKA_CONSUMER_MIN_SESSION_TIMEOUT_MS,
        ),
        "consumer_group_max_session_timeout_ms": c.group_consumer_max_session_timeout_ms,
        "consumer_group_heartbeat_interval_ms": _pick(
            c, c.group_consumer_heartbeat_interval_ms, MOCK_CONSUMER_HEARTBEAT_INTERVAL_MS,
            KAFKA_CONSUMER_HEARTBEAT_INTERVAL_MS,
        ),
        "consumer_group_min_heartbeat_interval_ms": _pick(
            c, c.group_consumer_min_heartbeat_interval_ms, MOCK_CONSUMER_MIN_HEARTBEAT_INTERVAL_MS,
            KAFKA_CONSUMER_MIN_HEARTBEAT_INTERVAL_MS,
        ),
        "consumer_group_max_heartbeat_interval_ms": c.group_consumer_max_heartbeat_interval_ms,
        "consumer_group_max_size": c.group_consumer_max_size,
        "consumer_group_assignors": tuple(a.strip() for a in c.group_consumer_assignors.split(",") if a.strip()),
        "consumer_group_migration_policy": c.group_consumer_migration_policy,
        "consumer_group_regex_refresh_interval_ms": c.group_consumer_regex_refresh_interval_ms,
    }


def _streams_group_settings(c: ClusterConfig) -> dict[str, Any]:
    """KIP-1071 streams groups (group.streams.*)."""
    return {
        "streams_group_session_timeout_ms": _pick(
            c, c.group_streams_session_timeout_ms, MOCK_STREAMS_SESSION_TIMEOUT_MS, KAFKA_STREAMS_SESSION_TIMEOUT_MS
        ),
        "streams_group_heartbeat_interval_ms": _pick(
            c, c.group_streams_heartbeat_interval_ms, MOCK_STREAMS_HEARTBEAT_INTERVAL_MS,
            KAFKA_STREAMS_HEARTBEAT_INTERVAL_MS,
        ),
        "streams_group_max_size": c.group_streams_max_size,
        "streams_group_num_standby_replicas": c.group_streams_num_standby_replicas,
        "streams_group_initial_rebalance_delay_ms": _pick(
            c, c.group_streams_initial_rebalance_delay_ms, MOCK_STREAMS_INITIAL_REBALANCE_DELAY_MS,
            KAFKA_STREAMS_INITIAL_REBALANCE_DELAY_MS,
        ),
    }


def _share_group_settings(c: ClusterConfig) -> dict[str, Any]:
    """KIP-932 share groups (ShareGroupConfig): the consumer groups' fast values."""
    return {
        "share_group_session_timeout_ms": _pick(
            c, c.group_share_session_timeout_ms, MOCK_CONSUMER_SESSION_TIMEOUT_MS, KAFKA_CONSUMER_SESSION_TIMEOUT_MS
        ),
        "share_group_min_session_timeout_ms": _pick(
            c, c.group_share_min_session_timeout_ms, MOCK_CONSUMER_MIN_SESSION_TIMEOUT_MS,
            KAFKA_CONSUMER_MIN_SESSION_TIMEOUT_MS,
        ),
        "share_group_max_session_timeout_ms": c.group_share_max_session_timeout_ms,
        "share_group_heartbeat_interval_ms": _pick(
            c, c.group_share_heartbeat_interval_ms, MOCK_CONSUMER_HEARTBEAT_INTERVAL_MS,
            KAFKA_CONSUMER_HEARTBEAT_INTERVAL_MS,
        ),
        "share_group_min_heartbeat_interval_ms": _pick(
            c, c.group_share_min_heartbeat_interval_ms, MOCK_CONSUMER_MIN_HEARTBEAT_INTERVAL_MS,
            KAFKA_CONSUMER_MIN_HEARTBEAT_INTERVAL_MS,
        ),
        "share_group_max_heartbeat_interval_ms": c.group_share_max_heartbeat_interval_ms,
        "share_group_max_size": c.group_share_max_size,
        "share_group_record_lock_duration_ms": c.group_share_record_lock_duration_ms,
        "share_group_delivery_count_limit": c.group_share_delivery_count_limit,
        "share_group_partition_max_record_locks": c.group_share_partition_max_record_locks,
    }
