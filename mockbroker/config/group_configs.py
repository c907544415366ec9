"""Per-group configuration (KIP-848's GroupConfig, extended by KIP-932 and KIP-1071): the names,
their checks against the broker's group.* bounds, and what DescribeConfigs shows of them.

Kafka 4.3.1's org.apache.kafka.coordinator.group.GroupConfig defines 17 keys; each group id may
override any of them with IncrementalAlterConfigs/AlterConfigs on a GROUP resource, even before
the group exists (the overrides are metadata records, not group state, so DeleteGroups leaves them
in place). A key not overridden takes the broker's group.* setting named by its synonym
(GroupConfig.ALL_GROUP_CONFIG_SYNONYMS), or the key's own default when it has none.

Validation is GroupConfig.validate: the broker's values and the group's overrides merged, unknown
names refused, every value parsed (ConfigDef.parse, in definition order: type and lower bound),
then the bounds of the broker's group.*.min/max settings and session > heartbeat, each with
Kafka's message, all INVALID_CONFIG. mockbroker has no settings for some bounds; those take
Kafka's defaults (share record lock duration 15000-60000, delivery count limit 2-10, partition
max record locks 100-4000, max standby replicas 2, assignment intervals 0-15000), and the streams
group session/heartbeat bounds are the consumer group's (equal to Kafka's by default).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from mockbroker.config.groups import GroupConfig
from mockbroker.config.topics import (
    ApiError,
    ConfigEntry,
    ConfigSource,
    ConfigSynonym,
    ConfigType,
    Value,
    at_least,
    format_value,
    invalid_value,
    parse_value,
    valid_string,
)
from mockbroker_protocol.errors import ErrorCode

# ShareGroupAutoOffsetResetStrategy: earliest, latest, or by_duration:<ISO-8601 duration>, not negative.
_DURATION = re.compile(r"P(?:\d+D)?(?:T(?=\d)(?:\d+H)?(?:\d+M)?(?:\d+(?:[.,]\d{0,9})?S)?)?", re.IGNORECASE)
_DURATION_UNITS_MS = {"D": 86_400_000, "H": 3_600_000, "M": 60_000, "S": 1000}


def _auto_offset_reset(name: str, value: Value) -> str | None:
    assert isinstance(value, str)
    if value in ("earliest", "latest") or (
        value.startswith("by_duration:") and by_duration_ms(value) is not None
    ):
        return None
    return invalid_value(
        name,
        value,
        f"Invalid value `{value}` for configuration {name}. The value must be either 'earliest', 'latest' "
        "or of the format 'by_duration:<PnDTnHnMn.nS>'.",
    )


def by_duration_ms(value: str) -> int | None:
    """The milliseconds of a ``by_duration:<PnDTnHnMn.nS>`` strategy (java.time.Duration.parse,
    no sign), None when it does not parse."""
    text = value.removeprefix("by_duration:")
    if text in ("P", "PT") or not _DURATION.fullmatch(text):
        return None
    total = 0.0
    for amount, unit in re.findall(r"(\d+(?:[.,]\d*)?)([DHMS])", text.upper().replace("P", "", 1)):
        total += float(amount.replace(",", ".")) * _DURATION_UNITS_MS[unit]
    return int(total)


@dataclass(frozen=True, slots=True)
class GroupConfigKey:
    """One GroupConfig key: its type, Kafka's default, lower bound, broker synonym, and where
    mockbroker's broker-level value comes from (a GroupConfig field, or a fixed value)."""

    name: str
    type: ConfigType
    kafka_default: Value
    validator: Callable[[str, Value], str | None] | None
    synonym: str | None
    setting: str | None
    documentation: str
    fixed: Value | None = None


def _int(
    name: str,
    default: int,
    minimum: int,
    synonym: str,
    setting: str | None,
    doc: str,
    fixed: int | None = None,
) -> GroupConfigKey:
    return GroupConfigKey(name, ConfigType.INT, default, at_least(minimum), synonym, setting, doc, fixed)


_SHARE_RESET_DOC = (
    "The strategy to initialize the share-partition start offset. <ul><li>earliest: automatically reset the offset to "
    "the earliest offset</li><li>latest: automatically reset the offset to the latest offset</li><li>by_duration:&lt;"
    "duration&gt;: automatically reset the offset to a configured duration from the current timestamp. &lt;duration&gt; "
    "must be specified in ISO8601 format (PnDTnHnMn.nS). Negative duration is not allowed.</li><li>anything else: throw "
    "exception to the share consumer.</li></ul>"
)
_SHARE_ISOLATION_DOC = (
    'Controls how to read records written transactionally. If set to "read_committed", the share group will only '
    'deliver transactional records which have been committed. If set to "read_uncommitted", the share group will return '
    "all messages, even transactional messages which have been aborted. Non-transactional records will be returned "
    "unconditionally in either mode."
)

# In GroupConfig's definition order (ConfigDef.parse reports the first bad value in this order).
GROUP_CONFIG_KEYS: dict[str, GroupConfigKey] = {
    key.name: key
    for key in (
        _int("consumer.session.timeout.ms", 45000, 1, "group.consumer.session.timeout.ms", "consumer_group_session_timeout_ms",
             "The timeout to detect client failures when using the consumer group protocol."),
        _int("consumer.heartbeat.interval.ms", 5000, 1, "group.consumer.heartbeat.interval.ms",
             "consumer_group_heartbeat_interval_ms", "The heartbeat interval given to the members of a consumer group."),
        # mockbroker computes a consumer or share group's target assignment at once; the key is
        # served (validated, described at Kafka's default) but does not change when it is computed.
        _int("consumer.assignment.interval.ms", 1000, 0, "group.consumer.assignment.interval.ms", None,
             "The interval between assignment updates for a consumer group.", 1000),
        _int("share.session.timeout.ms", 45000, 1, "group.share.session.timeout.ms", "share_group_session_timeout_ms",
             "The timeout to detect client failures when using the share group protocol."),
        _int("share.heartbeat.interval.ms", 5000, 1, "group.share.heartbeat.interval.ms", "share_group_heartbeat_interval_ms",
             "The heartbeat interval given to the members of a share group."),
        _int("share.record.lock.duration.ms", 30000, 1000, "group.share.record.lock.duration.ms",
             "share_group_record_lock_duration_ms", "The record acquisition lock duration in milliseconds for share groups."),
        _int("share.delivery.count.limit", 5, 2, "group.share.delivery.count.limit", "share_group_delivery_count_limit",
             "The maximum number of delivery attempts for a record delivered to a share group."),
        _int("share.partition.max.record.locks", 2000, 100, "group.share.partition.max.record.locks",
             "share_group_partition_max_record_locks", "Share-group record lock limit per share-partition."),
        GroupConfigKey("share.auto.offset.reset", ConfigType.STRING, "latest", _auto_offset_reset, None, None,
                       _SHARE_RESET_DOC),
        GroupConfigKey("share.isolation.level", ConfigType.STRING, "read_uncommitted",
                       valid_string("read_committed", "read_uncommitted"), None, None, _SHARE_ISOLATION_DOC),
        GroupConfigKey("share.renew.acknowledge.enable", ConfigType.BOOLEAN, True, None, None, None,
                       "Whether the renew acknowledge type is enabled for the share group."),
        _int("share.assignment.interval.ms", 1000, 0, "group.share.assignment.interval.ms", None,
             "The interval between assignment updates for a share group.", 1000),
        _int("streams.session.timeout.ms", 45000, 1, "group.streams.session.timeout.ms", "streams_group_session_timeout_ms",
             "The timeout to detect client failures when using the streams group protocol."),
        _int("streams.heartbeat.interval.ms", 5000, 1, "group.streams.heartbeat.interval.ms",
             "streams_group_heartbeat_interval_ms", "The heartbeat interval given to the members."),
        _int("streams.num.standby.replicas", 0, 0, "group.streams.num.standby.replicas", "streams_group_num_standby_replicas",
             "The number of standby replicas for each task."),
        _int("streams.initial.rebalance.delay.ms", 3000, 0, "group.streams.initial.rebalance.delay.ms",
             "streams_group_initial_rebalance_delay_ms",
             "The amount of time the group coordinator will wait for more streams clients to join a new group before "
             "performing the first rebalance. A longer delay means potentially fewer rebalances."),
        # A streams group's assignment is computed at once in mockbroker: Kafka with
        # group.streams.assignment.interval.ms=0 (as the differential suite's Kafka is set).
        _int("streams.assignment.interval.ms", 1000, 0, "group.streams.assignment.interval.ms", None,
             "The interval between assignment updates for a streams group.", 0),
    )
}  # fmt: skip

# Bounds mockbroker has no setting for: Kafka's defaults (ShareGroupConfig, GroupCoordinatorConfig).
SHARE_RECORD_LOCK_DURATION_BOUNDS = (15000, 60000)
SHARE_DELIVERY_COUNT_LIMIT_BOUNDS = (2, 10)
SHARE_PARTITION_MAX_RECORD_LOCKS_BOUNDS = (100, 4000)
STREAMS_MAX_STANDBY_REPLICAS = 2
ASSIGNMENT_INTERVAL_BOUNDS = (0, 15000)


def broker_value(key: GroupConfigKey, config: GroupConfig) -> Value:
    """The broker-level value of a key (its group.* synonym's, or its own default)."""
    if key.setting is not None:
        value: Value = getattr(config, key.setting)
        return value
    return key.kafka_default if key.fixed is None else key.fixed


def _around(bounds: tuple[int, int], broker: int) -> tuple[int, int]:
    """A bound mockbroker has no setting for, widened to the broker's own value (Kafka's broker
    settings are checked against these bounds at start; mockbroker's are not)."""
    return min(bounds[0], broker), max(bounds[1], broker)


def _bounds(config: GroupConfig) -> list[tuple[str, str, int, int]]:
    """(key, the broker setting's prefix, min, max) in GroupConfig.validateValues' order."""
    c = config
    return [
        ("consumer.heartbeat.interval.ms", "group.consumer", c.consumer_group_min_heartbeat_interval_ms,
         c.consumer_group_max_heartbeat_interval_ms),
        ("consumer.session.timeout.ms", "group.consumer", c.consumer_group_min_session_timeout_ms,
         c.consumer_group_max_session_timeout_ms),
        ("consumer.assignment.interval.ms", "group.consumer", *ASSIGNMENT_INTERVAL_BOUNDS),
        ("share.heartbeat.interval.ms", "group.share", c.share_group_min_heartbeat_interval_ms,
         c.share_group_max_heartbeat_interval_ms),
        ("share.session.timeout.ms", "group.share", c.share_group_min_session_timeout_ms, c.share_group_max_session_timeout_ms),
        ("share.record.lock.duration.ms", "group.share",
         *_around(SHARE_RECORD_LOCK_DURATION_BOUNDS, c.share_group_record_lock_duration_ms)),
        ("share.delivery.count.limit", "group.share",
         *_around(SHARE_DELIVERY_COUNT_LIMIT_BOUNDS, c.share_group_delivery_count_limit)),
        ("share.partition.max.record.locks", "group.share",
         *_around(SHARE_PARTITION_MAX_RECORD_LOCKS_BOUNDS, c.share_group_partition_max_record_locks)),
        ("share.assignment.interval.ms", "group.share", *ASSIGNMENT_INTERVAL_BOUNDS),
        ("streams.heartbeat.interval.ms", "group.streams", c.consumer_group_min_heartbeat_interval_ms,
         c.consumer_group_max_heartbeat_interval_ms),
        ("streams.session.timeout.ms", "group.streams", c.consumer_group_min_session_timeout_ms,
         c.consumer_group_max_session_timeout_ms),
        ("streams.num.standby.replicas", "group.streams", -1, max(STREAMS_MAX_STANDBY_REPLICAS, c.streams_group_num_standby_replicas)),
        ("streams.assignment.interval.ms", "group.streams", *ASSIGNMENT_INTERVAL_BOUNDS),
    ]  # fmt: skip


def _bound_message(key: str, prefix: str, low: bool) -> str:
    # GroupConfig names the bound setting: group.<kind>.min.<rest> (max.standby.replicas for standbys).
    rest = key.split(".", 1)[1]
    if key == "streams.num.standby.replicas":
        return f"{key} must be less than or equal to group.streams.max.standby.replicas"
    if low:
        return f"{key} must be greater than or equal to {prefix}.min.{rest}"
    return f"{key} must be less than or equal to {prefix}.max.{rest}"


def parse_group_configs(overrides: Mapping[str, str], config: GroupConfig) -> dict[str, Value] | ApiError:
    """The broker's values with the overrides on top, every value parsed and checked against its
    type and lower bound (ConfigDef.parse); the first error, in definition order, otherwise."""
    unknown = [name for name in overrides if name not in GROUP_CONFIG_KEYS]
    if unknown:
        return ApiError(ErrorCode.INVALID_CONFIG, f"Unknown group config name: {unknown[0]}")
    values: dict[str, Value] = {}
    for name, key in GROUP_CONFIG_KEYS.items():
        raw = overrides.get(name)
        if raw is None:
            values[name] = broker_value(key, config)
            continue
        value, error = parse_value(name, key.type, raw)
        if error is None and key.validator is not None:
            assert value is not None
            error = key.validator(name, value)
        if error is not None:
            return ApiError(ErrorCode.INVALID_CONFIG, error)
        assert value is not None
        values[name] = value
    return values


def validate_group_configs(overrides: Mapping[str, str], config: GroupConfig) -> ApiError | None:
    """GroupConfig.validate of a group's complete set of overrides against the broker's bounds."""
    values = parse_group_configs(overrides, config)
    if isinstance(values, ApiError):
        return values
    for name, prefix, low, high in _bounds(config):
        value = values[name]
        assert isinstance(value, int)
        if value < low:
            return ApiError(ErrorCode.INVALID_CONFIG, _bound_message(name, prefix, True))
        if value > high:
            return ApiError(ErrorCode.INVALID_CONFIG, _bound_message(name, prefix, False))
    for kind in ("consumer", "share", "streams"):
        session, heartbeat = values[f"{kind}.session.timeout.ms"], values[f"{kind}.heartbeat.interval.ms"]
        assert isinstance(session, int) and isinstance(heartbeat, int)
        if session <= heartbeat:
            return ApiError(
                ErrorCode.INVALID_CONFIG,
                f"{kind}.session.timeout.ms must be greater than {kind}.heartbeat.interval.ms",
            )
    return None


def _broker_synonyms(key: GroupConfigKey, config: GroupConfig) -> list[ConfigSynonym]:
    """The broker-level synonyms, highest precedence first: the value set on the broker (when it is
    not Kafka's default, as if in server.properties: STATIC_BROKER_CONFIG), then Kafka's default.
    A key without a broker synonym is its own default synonym."""
    name = key.synonym or key.name
    default = ConfigSynonym(name, format_value(key.type, key.kafka_default), ConfigSource.DEFAULT_CONFIG)
    value = broker_value(key, config)
    if value == key.kafka_default:
        return [default]
    return [ConfigSynonym(name, format_value(key.type, value), ConfigSource.STATIC_BROKER_CONFIG), default]


def group_config_entries(overrides: Mapping[str, str], config: GroupConfig) -> list[ConfigEntry]:
    """ConfigHelper's description of a GROUP resource: every key, its effective value, its source
    (GROUP_CONFIG when overridden) and its synonyms, highest precedence first."""
    entries = []
    for name, key in GROUP_CONFIG_KEYS.items():
        synonyms = _broker_synonyms(key, config)
        raw = overrides.get(name)
        if raw is not None:
            parsed, _ = parse_value(name, key.type, raw)
            synonyms.insert(0, ConfigSynonym(name, format_value(key.type, parsed), ConfigSource.GROUP_CONFIG))
        top = synonyms[0]
        entries.append(
            ConfigEntry(name, top.value, top.source, key.type, key.documentation, synonyms=synonyms)
        )
    return entries


@dataclass(frozen=True, slots=True)
class EffectiveGroupConfig:
    """A group's configs as its coordinator uses them (GroupConfigManager.groupConfig): the
    overrides on top of the broker's values."""

    consumer_session_timeout_ms: int
    consumer_heartbeat_interval_ms: int
    share_session_timeout_ms: int
    share_heartbeat_interval_ms: int
    share_record_lock_duration_ms: int
    share_delivery_count_limit: int
    share_partition_max_record_locks: int
    share_auto_offset_reset: str
    share_isolation_level: str
    share_renew_acknowledge_enable: bool
    streams_session_timeout_ms: int
    streams_heartbeat_interval_ms: int
    streams_num_standby_replicas: int
    streams_initial_rebalance_delay_ms: int

    @classmethod
    def of(cls, overrides: Mapping[str, str], config: GroupConfig) -> EffectiveGroupConfig:
        values = parse_group_configs(overrides, config)
        if isinstance(values, ApiError):  # stored overrides were validated: a bug of ours
            raise AssertionError(f"invalid stored group configs {dict(overrides)}: {values.message}")
        fields = {name: values[name.replace("_", ".")] for name in cls.__dataclass_fields__}
        return cls(**fields)  # type: ignore[arg-type]
