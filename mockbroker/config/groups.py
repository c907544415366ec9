"""The group coordinator's settings, by their Kafka names (``ClusterConfig.group_config()`` resolves them).

mockbroker's defaults are Kafka's except where a fast test needs otherwise; ``kafka_defaults=True``
(``mockbroker serve --kafka-defaults``) gives Kafka's exact values for everything not set explicitly.

| Kafka setting | mockbroker default | Kafka default (GroupCoordinatorConfig) |
|---|---|---|
| group.min.session.timeout.ms | **1** (any positive session timeout) | 6000 |
| group.max.session.timeout.ms | 1800000 | 1800000 |
| group.initial.rebalance.delay.ms | **0** (the first generation forms at once) | 3000 |
| group.max.size | 2147483647 | 2147483647 |
| offsets.retention.minutes | 10080 (7 days) | 10080 |
| offsets.retention.check.interval.ms | 600000 | 600000 |
| offset.metadata.max.bytes | 4096 | 4096 |
| offsets.topic.num.partitions | 50 | 50 |
| (internal) classic new-member join timeout | 300000 | 300000 (not a setting) |
| group.consumer.session.timeout.ms | **10000** | 45000 |
| group.consumer.min.session.timeout.ms | **1** | 45000 |
| group.consumer.max.session.timeout.ms | 60000 | 60000 |
| group.consumer.heartbeat.interval.ms | **100** | 5000 |
| group.consumer.min.heartbeat.interval.ms | **1** | 5000 |
| group.consumer.max.heartbeat.interval.ms | 15000 | 15000 |
| group.consumer.max.size | 2147483647 | 2147483647 |
| group.consumer.assignors | uniform,range | uniform,range |
| group.consumer.migration.policy | bidirectional | bidirectional |
| group.consumer.regex.refresh.interval.ms (internal, at least 10000) | 600000 | 600000 |
| group.share.session.timeout.ms | **10000** | 45000 |
| group.share.min.session.timeout.ms | **1** | 45000 |
| group.share.max.session.timeout.ms | 60000 | 60000 |
| group.share.heartbeat.interval.ms | **100** | 5000 |
| group.share.min.heartbeat.interval.ms | **1** | 5000 |
| group.share.max.heartbeat.interval.ms | 15000 | 15000 |
| group.share.max.size | 200 | 200 |
| group.share.record.lock.duration.ms | 30000 | 30000 |
| group.share.delivery.count.limit | 5 | 5 |
| group.share.partition.max.record.locks | 2000 | 2000 |

Why the two differ: with Kafka's 6000 ms minimum a test cannot use a short session timeout to
watch a member expire, and Kafka's 3000 ms initial delay makes every fresh group's first
generation take 3 s (kafka-group-semantics §3.6; Kafka's own test suites set it to 0). KIP-848
members heartbeat every group.consumer.heartbeat.interval.ms and a rebalance advances one heartbeat
at a time (revoke, then assign, §10.3), so Kafka's 5 s interval makes each step of a test take
seconds; the session timeout is lowered with it (share groups, KIP-932, take the same fast values) so that a killed member is noticed in a test's time.
At 100 ms, a group of 50 librdkafka members is fully assigned in a few tenths of a second (members
that join one after another need two or three revoke/assign steps) and settles a tenth of a second
after a member leaves (bench/RESULTS.md); a member heartbeating ten times a second costs the broker
well under 1% of a core.

As in GroupCoordinatorConfig, the session timeout must lie within its min and max, the heartbeat
interval within its own, and the heartbeat interval must be below the session timeout.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mockbroker_assignors.base import Assignor

# Assignment checks (mockbroker/coordinators/classic/assignment_checks.py): modes of assignment_checks and
# assignment_strict.
CHECK_MODES = ("off", "validate", "full")
STRICT_MODES = ("off", "violations", "all")


def check_mode(value: str) -> str:
    if value not in CHECK_MODES:
        raise ValueError(f"assignment_checks must be one of {', '.join(CHECK_MODES)}, not {value!r}")
    return value


def strict_mode(value: str) -> str:
    if value not in STRICT_MODES:
        raise ValueError(f"assignment_strict must be one of {', '.join(STRICT_MODES)}, not {value!r}")
    return value


def resolve_broker_assignors(patterns: Mapping[str, str]) -> dict[str, Assignor]:
    """broker_assignors: glob -> assignor name or "module:attr", resolved now (client-side
    registry), so a typo fails at start and not at the first rebalance. ValueError names the
    pattern. The assignors are imported here only when some are configured (start-up stays fast)."""
    from mockbroker_assignors import registry

    resolved: dict[str, Assignor] = {}
    for pattern, name in patterns.items():
        if not pattern:
            raise ValueError("broker_assignors: a group pattern must not be empty")
        try:
            resolved[pattern] = registry.resolve(name)
        except (KeyError, ImportError, TypeError, ValueError) as exc:
            raise ValueError(f"broker_assignors[{pattern!r}] = {name!r}: {exc}") from None
    return resolved


# mockbroker's and Kafka's values of the settings whose defaults differ (ClusterConfig None).
MOCK_GROUP_MIN_SESSION_TIMEOUT_MS = 1
KAFKA_GROUP_MIN_SESSION_TIMEOUT_MS = 6000
MOCK_GROUP_INITIAL_REBALANCE_DELAY_MS = 0
KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS = 3000
# GroupCoordinatorConfig.CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS: a constant, not a setting.
CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000
MOCK_CONSUMER_SESSION_TIMEOUT_MS = 10000
KAFKA_CONSUMER_SESSION_TIMEOUT_MS = 45000
MOCK_CONSUMER_MIN_SESSION_TIMEOUT_MS = 1
KAFKA_CONSUMER_MIN_SESSION_TIMEOUT_MS = 45000
MOCK_CONSUMER_HEARTBEAT_INTERVAL_MS = 100
KAFKA_CONSUMER_HEARTBEAT_INTERVAL_MS = 5000
MOCK_CONSUMER_MIN_HEARTBEAT_INTERVAL_MS = 1
MOCK_STREAMS_SESSION_TIMEOUT_MS = 10000
KAFKA_STREAMS_SESSION_TIMEOUT_MS = 45000
MOCK_STREAMS_HEARTBEAT_INTERVAL_MS = 100
KAFKA_STREAMS_HEARTBEAT_INTERVAL_MS = 5000
MOCK_STREAMS_INITIAL_REBALANCE_DELAY_MS = 0
KAFKA_STREAMS_INITIAL_REBALANCE_DELAY_MS = 3000
KAFKA_CONSUMER_MIN_HEARTBEAT_INTERVAL_MS = 5000
DEFAULT_CONSUMER_ASSIGNORS = ("uniform", "range")
# ConsumerGroupMigrationPolicy: which online conversions between classic and consumer groups are
# allowed (kafka-group-semantics §10.8). Kafka parses the name case-insensitively.
MIGRATION_POLICIES = ("disabled", "upgrade", "downgrade", "bidirectional")
DEFAULT_MIGRATION_POLICY = "bidirectional"


def migration_policy(value: str) -> str:
    """The policy's canonical (lower-case) name; ValueError naming the allowed ones."""
    policy = value.strip().lower()
    if policy not in MIGRATION_POLICIES:
        raise ValueError(
            f"group.consumer.migration.policy must be one of {', '.join(MIGRATION_POLICIES)}, not {value!r}"
        )
    return policy


@dataclass(frozen=True, slots=True)
class GroupConfig:
    """The group coordinator's settings, resolved (``ClusterConfig.group_config()``) and checked together."""

    group_min_session_timeout_ms: int = MOCK_GROUP_MIN_SESSION_TIMEOUT_MS
    group_max_session_timeout_ms: int = 1800000
    group_initial_rebalance_delay_ms: int = MOCK_GROUP_INITIAL_REBALANCE_DELAY_MS
    group_max_size: int = 2147483647
    offsets_retention_minutes: int = 10080
    offsets_retention_check_interval_ms: int = 600000
    offset_metadata_max_bytes: int = 4096
    classic_group_new_member_join_timeout_ms: int = CLASSIC_GROUP_NEW_MEMBER_JOIN_TIMEOUT_MS
    consumer_group_session_timeout_ms: int = MOCK_CONSUMER_SESSION_TIMEOUT_MS
    consumer_group_min_session_timeout_ms: int = MOCK_CONSUMER_MIN_SESSION_TIMEOUT_MS
    consumer_group_max_session_timeout_ms: int = 60000
    consumer_group_heartbeat_interval_ms: int = MOCK_CONSUMER_HEARTBEAT_INTERVAL_MS
    consumer_group_min_heartbeat_interval_ms: int = MOCK_CONSUMER_MIN_HEARTBEAT_INTERVAL_MS
    consumer_group_max_heartbeat_interval_ms: int = 15000
    consumer_group_max_size: int = 2147483647
    # Names or "module:attr" references, resolved by mockbroker_assignors.registry; the first is the default.
    consumer_group_assignors: tuple[str, ...] = DEFAULT_CONSUMER_ASSIGNORS
    consumer_group_migration_policy: str = DEFAULT_MIGRATION_POLICY
    # How old a group's regex resolution may grow before a heartbeat resolves it again
    # (GroupMetadataManager.maybeUpdateRegularExpressions).
    consumer_group_regex_refresh_interval_ms: int = 600000
    # KIP-1071 streams groups (GroupCoordinatorConfig's group.streams.*)
    streams_group_session_timeout_ms: int = MOCK_STREAMS_SESSION_TIMEOUT_MS
    streams_group_heartbeat_interval_ms: int = MOCK_STREAMS_HEARTBEAT_INTERVAL_MS
    streams_group_max_size: int = 2147483647
    streams_group_num_standby_replicas: int = 0
    streams_group_initial_rebalance_delay_ms: int = MOCK_STREAMS_INITIAL_REBALANCE_DELAY_MS

    share_group_session_timeout_ms: int = MOCK_CONSUMER_SESSION_TIMEOUT_MS
    share_group_min_session_timeout_ms: int = MOCK_CONSUMER_MIN_SESSION_TIMEOUT_MS
    share_group_max_session_timeout_ms: int = 60000
    share_group_heartbeat_interval_ms: int = MOCK_CONSUMER_HEARTBEAT_INTERVAL_MS
    share_group_min_heartbeat_interval_ms: int = MOCK_CONSUMER_MIN_HEARTBEAT_INTERVAL_MS
    share_group_max_heartbeat_interval_ms: int = 15000
    share_group_max_size: int = 200
    share_group_record_lock_duration_ms: int = 30000
    share_group_delivery_count_limit: int = 5
    share_group_partition_max_record_locks: int = 2000

    def __post_init__(self) -> None:
        """GroupCoordinatorConfig's cross-checks of the KIP-848 settings."""
        session, heartbeat = self.consumer_group_session_timeout_ms, self.consumer_group_heartbeat_interval_ms
        if not self.consumer_group_min_session_timeout_ms <= session <= self.consumer_group_max_session_timeout_ms:
            raise ValueError(
                f"group.consumer.session.timeout.ms must be within group.consumer.min.session.timeout.ms "
                f"({self.consumer_group_min_session_timeout_ms}) and group.consumer.max.session.timeout.ms "
                f"({self.consumer_group_max_session_timeout_ms}), not {session}"
            )
        if not self.consumer_group_min_heartbeat_interval_ms <= heartbeat <= self.consumer_group_max_heartbeat_interval_ms:
            raise ValueError(
                f"group.consumer.heartbeat.interval.ms must be within group.consumer.min.heartbeat.interval.ms "
                f"({self.consumer_group_min_heartbeat_interval_ms}) and group.consumer.max.heartbeat.interval.ms "
                f"({self.consumer_group_max_heartbeat_interval_ms}), not {heartbeat}"
            )
        if heartbeat >= session:
            raise ValueError(
                f"group.consumer.heartbeat.interval.ms ({heartbeat}) must be less than "
                f"group.consumer.session.timeout.ms ({session})"
            )
        if not self.consumer_group_assignors:
            raise ValueError("group.consumer.assignors must name at least one assignor")
        object.__setattr__(self, "consumer_group_migration_policy", migration_policy(self.consumer_group_migration_policy))
        # GroupCoordinatorConfig's same cross-checks of the KIP-932 share-group settings.
        session, heartbeat = self.share_group_session_timeout_ms, self.share_group_heartbeat_interval_ms
        if not self.share_group_min_session_timeout_ms <= session <= self.share_group_max_session_timeout_ms:
            raise ValueError(
                f"group.share.session.timeout.ms must be within group.share.min.session.timeout.ms "
                f"({self.share_group_min_session_timeout_ms}) and group.share.max.session.timeout.ms "
                f"({self.share_group_max_session_timeout_ms}), not {session}"
            )
        if not self.share_group_min_heartbeat_interval_ms <= heartbeat <= self.share_group_max_heartbeat_interval_ms:
            raise ValueError(
                f"group.share.heartbeat.interval.ms must be within group.share.min.heartbeat.interval.ms "
                f"({self.share_group_min_heartbeat_interval_ms}) and group.share.max.heartbeat.interval.ms "
                f"({self.share_group_max_heartbeat_interval_ms}), not {heartbeat}"
            )
        if heartbeat >= session:
            raise ValueError(
                f"group.share.heartbeat.interval.ms ({heartbeat}) must be less than "
                f"group.share.session.timeout.ms ({session})"
            )

    @property
    def is_upgrade_enabled(self) -> bool:
        """ConsumerGroupMigrationPolicy.isUpgradeEnabled."""
        return self.consumer_group_migration_policy in ("upgrade", "bidirectional")

    @property
    def is_downgrade_enabled(self) -> bool:
        """ConsumerGroupMigrationPolicy.isDowngradeEnabled."""
        return self.consumer_group_migration_policy in ("downgrade", "bidirectional")

    @property
    def offsets_retention_ms(self) -> int:
        return self.offsets_retention_minutes * 60 * 1000
