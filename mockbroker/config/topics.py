"""Topic configs as Kafka 4.x defines them, the broker configs clients read, and their validation.

The table is Kafka's ``LogConfig`` (storage/.../log/LogConfig.java) as of 4.x: the same names,
types, defaults and validators, in the same order (validation reports the first bad value in
that order, as ``ConfigDef.parse`` does). Messages are Kafka's: ``ConfigException`` ("Invalid
value X for configuration Y: ...") and ``LogConfig.validateNames`` ("Unknown topic config name: X").

Removed in Kafka 4.0 and therefore unknown here (INVALID_CONFIG, as a 4.x broker answers):
``message.format.version`` (KIP-724), ``message.timestamp.difference.max.ms`` (KIP-937) and
``message.downconversion.enable`` (no longer defined by 4.x LogConfig; only the deprecated
constant is left in the client's TopicConfig). KIP-1030 (4.0) raised the ``segment.bytes``
minimum to 1 MiB and set ``message.timestamp.after.max.ms`` to one hour.

What DescribeConfigs and CreateTopics v5+ report follows ``ConfigHelper.createTopicConfigEntry``:
a topic override has source DYNAMIC_TOPIC_CONFIG (1); otherwise the value comes from the broker's
synonym (``ServerTopicConfigSynonyms``): STATIC_BROKER_CONFIG (4) when the cluster sets it to
something other than Kafka's default, DEFAULT_CONFIG (5) otherwise. Topic configs are never
read-only or sensitive.

Errors are values (``ApiError``), never exceptions: callers put them in responses.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from enum import IntEnum
from typing import TYPE_CHECKING

from mockbroker_protocol.errors import ErrorCode

if TYPE_CHECKING:
    from mockbroker.config.cluster import ClusterConfig, Configured
    from mockbroker.model import BrokerNode

INT_MAX = (1 << 31) - 1
INT_MIN = -(1 << 31)
LONG_MAX = (1 << 63) - 1
LONG_MIN = -(1 << 63)


class ConfigType(IntEnum):
    """DescribeConfigsResponse.ConfigType (v3+, KIP-569): ConfigDef.Type on the wire."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class ConfigSource(IntEnum):
    """DescribeConfigsResponse.ConfigSource (v1+, KIP-226)."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


class ConfigResourceType(IntEnum):
    """org.apache.kafka.common.config.ConfigResource.Type ids."""

    UNKNOWN = 0
    TOPIC = 2
    BROKER = 4
    BROKER_LOGGER = 8
    CLIENT_METRICS = 16
    GROUP = 32


class AlterConfigOp(IntEnum):
    """AlterConfigOp.OpType ids (IncrementalAlterConfigs, KIP-339)."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


@dataclass(frozen=True, slots=True)
class ApiError:
    """An error code and message for one response entry (Kafka's ApiError)."""

    code: ErrorCode
    message: str | None = None


# -- Java's formatting and parsing ----------------------------------------------------------------

_JAVA_INT = re.compile(r"[+-]?[0-9]+")
# Double.parseDouble: decimal or exponent form, optional f/d suffix, NaN and Infinity.
_JAVA_DOUBLE = re.compile(r"[+-]?(NaN|Infinity|(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)[fFdD]?)")
# ConfigDef's LIST parsing splits on commas with the whitespace around them.
_COMMA_WITH_WHITESPACE = re.compile(r"\s*,\s*")
_THROTTLED_REPLICA = re.compile(r"([0-9]+:[0-9]+)?")

Value = bool | int | float | str | list[str]


def java_double(d: float) -> str:
    """Java's Double.toString: plain between 1e-3 and 1e7, else computerized scientific notation."""
    if math.isnan(d):
        return "NaN"
    if math.isinf(d):
        return "Infinity" if d > 0 else "-Infinity"
    if d == 0:
        return "-0.0" if math.copysign(1.0, d) < 0 else "0.0"
    # repr is the shortest string that round-trips, as Java's (JDK 19+) algorithm picks.
    sign, digits, exponent = Decimal(repr(d)).as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits)).rstrip("0") or "0"
    sci_exp = len(digits) + exponent - 1
    prefix = "-" if sign else ""
    if 1e-3 <= abs(d) < 1e7:
        plain = format(abs(Decimal(repr(d))), "f")
        if "." not in plain:
            plain += ".0"
        return prefix + plain
    return f"{prefix}{text[0]}.{text[1:] or '0'}E{sci_exp}"


def java_string(value: object) -> str:
    """How Java prints a parsed config value inside ConfigException's message."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double(value)
    if isinstance(value, list):
        return "[" + ", ".join(value) + "]"
    return str(value)


def java_split_comma(text: str) -> list[str]:
    """Java's String.split(","): trailing empty strings are dropped (but "" gives [""])."""
    parts = text.split(",")
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    if parts == [""] and text:
        return []
    return parts


def invalid_value(name: str, value: object, message: str) -> str:
    """ConfigException(name, value, message)'s text."""
    return f"Invalid value {java_string(value)} for configuration {name}: {message}"


def parse_value(name: str, config_type: ConfigType, raw: str) -> tuple[Value | None, str | None]:
    """ConfigDef.parseType for a string value: (parsed, None) or (None, the ConfigException text)."""
    trimmed = raw.strip()
    if config_type is ConfigType.BOOLEAN:
        if trimmed.lower() in ("true", "false"):
            return trimmed.lower() == "true", None
        return None, invalid_value(name, raw, "Expected value to be either true or false")
    if config_type in (ConfigType.STRING, ConfigType.PASSWORD, ConfigType.CLASS):
        return trimmed, None
    if config_type in (ConfigType.INT, ConfigType.SHORT, ConfigType.LONG):
        lo, hi = {
            ConfigType.INT: (INT_MIN, INT_MAX),
            ConfigType.SHORT: (-(1 << 15), (1 << 15) - 1),
            ConfigType.LONG: (LONG_MIN, LONG_MAX),
        }[config_type]
        if _JAVA_INT.fullmatch(trimmed) and lo <= int(trimmed) <= hi:
            return int(trimmed), None
        return None, invalid_value(name, raw, f"Not a number of type {config_type.name}")
    if config_type is ConfigType.DOUBLE:
        if _JAVA_DOUBLE.fullmatch(trimmed):
            return float(trimmed.rstrip("fFdD").replace("Infinity", "inf")), None
        return None, invalid_value(name, raw, "Not a number of type DOUBLE")
    if config_type is ConfigType.LIST:
        return ([] if not trimmed else _COMMA_WITH_WHITESPACE.split(trimmed)), None
    return None, invalid_value(name, raw, "Unknown type.")


def format_value(config_type: ConfigType, value: Value | None) -> str | None:
    """ConfigDef.convertToString: what DescribeConfigs shows for a parsed value."""
    if value is None:
        return None
    if config_type is ConfigType.LIST:
        assert isinstance(value, list)
        return ",".join(value)
    return java_string(value)


# -- validators (ConfigDef.Range, ValidString, ValidList and Kafka's own) ----------------------------

Validator = Callable[[str, Value], str | None]


def at_least(minimum: int) -> Validator:
    def check(name: str, value: Value) -> str | None:
        assert isinstance(value, int | float)
        return invalid_value(name, value, f"Value must be at least {minimum}") if value < minimum else None

    return check


def between(minimum: int, maximum: int) -> Validator:
    def check(name: str, value: Value) -> str | None:
        assert isinstance(value, int | float)
        if value < minimum:
            return invalid_value(name, value, f"Value must be at least {minimum}")
        if value > maximum:
            return invalid_value(name, value, f"Value must be no more than {maximum}")
        return None

    return check


def valid_string(*options: str) -> Validator:
    def check(name: str, value: Value) -> str | None:
        if value not in options:
            return invalid_value(name, value, "String must be one of: " + ", ".join(options))
        return None

    return check


def valid_list(*options: str) -> Validator:
    element = valid_string(*options)

    def check(name: str, value: Value) -> str | None:
        assert isinstance(value, list)
        for item in value:
            error = element(name, item)
            if error:
                return error
        return None

    return check


def _gzip_level(name: str, value: Value) -> str | None:
    # CompressionType.GZIP.levelValidator: Deflater's 1-9, or its DEFAULT_COMPRESSION (-1).
    assert isinstance(value, int)
    if value > 9 or (value < 1 and value != -1):
        return invalid_value(name, value, "Value must be between 1 and 9 or equal to -1")
    return None


def _throttled_replicas(name: str, value: Value) -> str | None:
    # ThrottledReplicaListValidator: "*" or partitionId:brokerId pairs.
    assert isinstance(value, list)
    proposed = [item.strip() for item in value]
    if all(_THROTTLED_REPLICA.fullmatch(s) for s in proposed) or "".join(proposed) == "*":
        return None
    return invalid_value(
        name,
        value,
        f"{name} must be the literal '*' or a list of replicas in the following format: "
        "[partitionId]:[brokerId],[partitionId]:[brokerId],...",
    )


# -- the topic config table ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TopicConfigKey:
    name: str
    type: ConfigType
    default: Value | None
    validator: Validator | None
    # The broker config that supplies the default (ServerTopicConfigSynonyms), if any.
    server_synonym: str | None
    documentation: str
    internal: bool = False  # defineInternal: accepted, described only when set


def _key(
    name: str,
    type_: ConfigType,
    default: Value | None,
    validator: Validator | None,
    synonym: str | None,
    doc: str,
    *,
    internal: bool = False,
) -> TopicConfigKey:
    return TopicConfigKey(name, type_, default, validator, synonym, doc, internal)


_C = ConfigType
_COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")  # BrokerCompressionType order

# In LogConfig's definition order (validation reports the first bad value in this order).
TOPIC_CONFIG_KEYS: tuple[TopicConfigKey, ...] = (
    _key("segment.bytes", _C.INT, 1073741824, at_least(1048576), "log.segment.bytes",
         "Size of one log segment file; retention and compaction work a segment at a time."),
    _key("segment.ms", _C.LONG, 604800000, at_least(1), "log.roll.ms",
         "Time after which a segment is rolled even if it is not full."),
    _key("segment.jitter.ms", _C.LONG, 0, at_least(0), "log.roll.jitter.ms",
         "Largest random amount taken off the segment roll time, to spread rolls out."),
    _key("segment.index.bytes", _C.INT, 10485760, at_least(4), "log.index.size.max.bytes",
         "Size of the offset index preallocated per segment."),
    _key("flush.messages", _C.LONG, LONG_MAX, at_least(1), "log.flush.interval.messages",
         "Force an fsync after this many messages (the default leaves it to the OS)."),
    _key("flush.ms", _C.LONG, LONG_MAX, at_least(0), "log.flush.interval.ms",
         "Force an fsync after this much time (the default leaves it to the OS)."),
    _key("retention.bytes", _C.LONG, -1, None, "log.retention.bytes",
         "Largest size a partition may grow to before old segments are deleted; -1 for no limit."),
    _key("retention.ms", _C.LONG, 604800000, at_least(-1), "log.retention.ms",
         "How long records are kept before old segments are deleted; -1 for no limit."),
    _key("max.message.bytes", _C.INT, 1048588, at_least(0), "message.max.bytes",
         "Largest record batch the topic accepts, after compression."),
    _key("index.interval.bytes", _C.INT, 4096, at_least(0), "log.index.interval.bytes",
         "Bytes of log between two offset index entries."),
    _key("delete.retention.ms", _C.LONG, 86400000, at_least(0), "log.cleaner.delete.retention.ms",
         "How long tombstones are kept in a compacted topic."),
    _key("min.compaction.lag.ms", _C.LONG, 0, at_least(0), "log.cleaner.min.compaction.lag.ms",
         "Shortest time a record stays uncompacted."),
    _key("max.compaction.lag.ms", _C.LONG, LONG_MAX, at_least(1), "log.cleaner.max.compaction.lag.ms",
         "Longest time a record may stay ineligible for compaction."),
    _key("file.delete.delay.ms", _C.LONG, 60000, at_least(0), "log.segment.delete.delay.ms",
         "Wait before a deleted segment file is removed from disk."),
    _key("min.cleanable.dirty.ratio", _C.DOUBLE, 0.5, between(0, 1), "log.cleaner.min.cleanable.ratio",
         "Share of uncompacted log that makes the log eligible for cleaning."),
    _key("cleanup.policy", _C.LIST, ["delete"], valid_list("compact", "delete"), "log.cleanup.policy",
         "delete, compact, or both: what happens to old segments."),
    _key("unclean.leader.election.enable", _C.BOOLEAN, False, None, "unclean.leader.election.enable",
         "Whether a replica outside the ISR may become leader (risking data loss)."),
    _key("min.insync.replicas", _C.INT, 1, at_least(1), "min.insync.replicas",
         "Replicas that must acknowledge a write produced with acks=all."),
    _key("compression.type", _C.STRING, "producer", valid_string(*_COMPRESSION_TYPES), "compression.type",
         "Final compression of the topic's batches; producer keeps the producer's codec."),
    _key("compression.gzip.level", _C.INT, -1, _gzip_level, "compression.gzip.level",
         "gzip level when compression.type is gzip."),
    _key("compression.lz4.level", _C.INT, 9, between(1, 17), "compression.lz4.level",
         "lz4 level when compression.type is lz4."),
    _key("compression.zstd.level", _C.INT, 3, between(-131072, 22), "compression.zstd.level",
         "zstd level when compression.type is zstd."),
    _key("preallocate", _C.BOOLEAN, False, None, "log.preallocate",
         "Whether segment files are preallocated on disk."),
    _key("message.timestamp.type", _C.STRING, "CreateTime", valid_string("CreateTime", "LogAppendTime"),
         "log.message.timestamp.type", "CreateTime keeps the producer's timestamps, LogAppendTime uses the broker's."),
    _key("message.timestamp.before.max.ms", _C.LONG, LONG_MAX, at_least(0), "log.message.timestamp.before.max.ms",
         "How far in the past a CreateTime timestamp may be (KIP-937)."),
    _key("message.timestamp.after.max.ms", _C.LONG, 3600000, at_least(0), "log.message.timestamp.after.max.ms",
         "How far in the future a CreateTime timestamp may be (KIP-937; one hour since 4.0, KIP-1030)."),
    _key("leader.replication.throttled.replicas", _C.LIST, [], _throttled_replicas, None,
         "Replicas throttled on the leader side, as partitionId:brokerId pairs or *."),
    _key("follower.replication.throttled.replicas", _C.LIST, [], _throttled_replicas, None,
         "Replicas throttled on the follower side, as partitionId:brokerId pairs or *."),
    _key("remote.storage.enable", _C.BOOLEAN, False, None, None,
         "Tiered storage for this topic (KIP-405); this broker has none."),
    _key("local.retention.ms", _C.LONG, -2, at_least(-2), "log.local.retention.ms",
         "Local retention time with tiered storage; -2 means retention.ms."),
    _key("local.retention.bytes", _C.LONG, -2, at_least(-2), "log.local.retention.bytes",
         "Local retention size with tiered storage; -2 means retention.bytes."),
    _key("remote.log.copy.disable", _C.BOOLEAN, False, None, None,
         "Stop copying segments to tiered storage."),
    _key("remote.log.delete.on.disable", _C.BOOLEAN, False, None, None,
         "Delete tiered data when remote storage is disabled."),
    _key("internal.segment.bytes", _C.INT, None, None, None,
         "Segment size override for tests (KIP-1030).", internal=True),
)
TOPIC_CONFIGS: dict[str, TopicConfigKey] = {k.name: k for k in TOPIC_CONFIG_KEYS}

# Kafka topic configs that 4.0 removed; a 4.x broker answers "Unknown topic config name".
REMOVED_IN_KAFKA_4 = ("message.format.version", "message.timestamp.difference.max.ms", "message.downconversion.enable")

TIERED_STORAGE_DISABLED = (
    "Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage."
)


def _cluster_setting(config: ClusterConfig, field_name: str) -> int | None:
    value = getattr(config, field_name, None)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# Topic defaults that come from the cluster's settings: topic config -> ClusterConfig field.
_CLUSTER_DEFAULTS = {
    "retention.ms": "log_retention_ms",
    "retention.bytes": "log_retention_bytes",
    "max.message.bytes": "message_max_bytes",
}


def topic_default(name: str, config: ClusterConfig | None) -> tuple[Value | None, ConfigSource]:
    """A topic config's value when the topic does not set it, and where that value comes from."""
    key = TOPIC_CONFIGS[name]
    field_name = _CLUSTER_DEFAULTS.get(name)
    if config is not None and field_name is not None:
        value = _cluster_setting(config, field_name)
        if value is not None and value != key.default:
            return value, ConfigSource.STATIC_BROKER_CONFIG
    return key.default, ConfigSource.DEFAULT_CONFIG


def effective_value(name: str, overrides: Mapping[str, str], config: ClusterConfig | None = None) -> Value | None:
    """The parsed value a topic runs with (for produce, retention...): its override or the default."""
    key = TOPIC_CONFIGS[name]
    raw = overrides.get(name)
    if raw is not None:
        value, error = parse_value(name, key.type, raw)
        if error is None:
            return value
    return topic_default(name, config)[0]


# -- validation -------------------------------------------------------------------------------------


def validate_topic_configs(configs: Mapping[str, str]) -> ApiError | None:
    """LogConfig.validate for a topic's complete set of overrides (no None values: callers answer
    those with their own API's wording). None when valid, else INVALID_CONFIG with Kafka's text."""
    for name in configs:
        if name not in TOPIC_CONFIGS:
            return ApiError(ErrorCode.INVALID_CONFIG, f"Unknown topic config name: {name}")
    parsed: dict[str, Value | None] = {}
    for key in TOPIC_CONFIG_KEYS:
        raw = configs.get(key.name)
        if raw is None:
            parsed[key.name] = key.default
            continue
        value, error = parse_value(key.name, key.type, raw)
        if error is None and key.validator is not None and value is not None:
            error = key.validator(key.name, value)
        if error is not None:
            return ApiError(ErrorCode.INVALID_CONFIG, error)
        parsed[key.name] = value
    # LogConfig.validateValues
    min_lag, max_lag = parsed["min.compaction.lag.ms"], parsed["max.compaction.lag.ms"]
    assert isinstance(min_lag, int) and isinstance(max_lag, int)
    if min_lag > max_lag:
        return ApiError(
            ErrorCode.INVALID_CONFIG,
            f"conflict topic config setting min.compaction.lag.ms ({min_lag}) > max.compaction.lag.ms ({max_lag})",
        )
    # LogConfig.validateRemoteStorageOnlyIfSystemEnabled: this broker has no remote log storage.
    if parsed["remote.storage.enable"] is True:
        return ApiError(ErrorCode.INVALID_CONFIG, TIERED_STORAGE_DISABLED)
    return None


def null_configs_error(names: Iterable[str]) -> ApiError:
    """CreateTopics and the controller's validator on null topic config values."""
    return ApiError(ErrorCode.INVALID_CONFIG, "Null value not supported for topic configs: " + ",".join(names))


def apply_incremental(
    current: Mapping[str, str], ops: Iterable[tuple[str, int, str | None]]
) -> tuple[dict[str, str], ApiError | None]:
    """ConfigurationControlManager.incrementalAlterConfigResource for a topic: SET, DELETE, and
    APPEND/SUBTRACT on LIST configs (comma-separated values, starting from the default when unset).
    Returns the new override map, or an error; validation of the result is the caller's next step."""
    result = dict(current)
    for name, op_id, value in ops:
        if op_id == AlterConfigOp.SET:
            if value is None:
                return result, null_configs_error([name])
            result[name] = value
        elif op_id == AlterConfigOp.DELETE:
            result.pop(name, None)
        elif op_id in (AlterConfigOp.APPEND, AlterConfigOp.SUBTRACT):
            op = AlterConfigOp(op_id)
            key = TOPIC_CONFIGS.get(name)
            if key is None or key.type is not ConfigType.LIST:
                return result, ApiError(
                    ErrorCode.INVALID_CONFIG, f"Can't {op.name} to key {name} because its type is not LIST."
                )
            # getParts: the current value, else the default, split on commas, empty parts dropped.
            base = result.get(name)
            if base is None:
                base = format_value(key.type, key.default) or ""
            parts = [p for p in base.split(",") if p]
            for item in java_split_comma(value or ""):
                if op is AlterConfigOp.APPEND:
                    if item not in parts:
                        parts.append(item)
                elif item in parts:
                    parts.remove(item)
            result[name] = ",".join(parts)
        else:
            return result, ApiError(ErrorCode.INVALID_REQUEST, f"Unknown operations type {op_id}")
    return result, None


# -- what DescribeConfigs and CreateTopics v5+ report -----------------------------------------------


@dataclass(frozen=True, slots=True)
class ConfigSynonym:
    name: str
    value: str | None
    source: ConfigSource


@dataclass(frozen=True, slots=True)
class ConfigEntry:
    name: str
    value: str | None
    source: ConfigSource
    type: ConfigType
    documentation: str
    read_only: bool = False
    is_sensitive: bool = False
    synonyms: list[ConfigSynonym] = field(default_factory=list)


def topic_config_entries(overrides: Mapping[str, str], config: ClusterConfig | None) -> list[ConfigEntry]:
    """Every topic config with its effective value, source and synonyms (highest precedence first)."""
    entries = []
    for key in sorted(TOPIC_CONFIG_KEYS, key=lambda k: k.name):
        raw = overrides.get(key.name)
        if key.internal and raw is None:
            continue
        synonyms: list[ConfigSynonym] = []
        if raw is not None:
            parsed, error = parse_value(key.name, key.type, raw)
            value = raw if error is not None else format_value(key.type, parsed)
            synonyms.append(ConfigSynonym(key.name, value, ConfigSource.DYNAMIC_TOPIC_CONFIG))
        if key.server_synonym is not None:
            broker_value, broker_source = topic_default(key.name, config)
            if broker_source is ConfigSource.STATIC_BROKER_CONFIG:
                synonyms.append(ConfigSynonym(key.server_synonym, format_value(key.type, broker_value), broker_source))
            if key.default is not None:
                synonyms.append(
                    ConfigSynonym(key.server_synonym, format_value(key.type, key.default), ConfigSource.DEFAULT_CONFIG)
                )
        if synonyms:
            top = synonyms[0]
            value, source = top.value, top.source
        else:
            value, source = format_value(key.type, key.default), ConfigSource.DEFAULT_CONFIG
        entries.append(ConfigEntry(key.name, value, source, key.type, key.documentation, synonyms=synonyms))
    return entries


# -- broker configs (DescribeConfigs on resource type BROKER) ---------------------------------------


@dataclass(frozen=True, slots=True)
class BrokerConfigKey:
    name: str
    type: ConfigType
    kafka_default: str | None  # Kafka's default, as DescribeConfigs prints it (None: no default)
    # Read-only unless DynamicBrokerConfig.AllDynamicConfigs has it (the log.* synonyms of topic
    # configs and message.max.bytes are dynamic; num.partitions and the like are not).
    read_only: bool
    value: Callable[[Configured, BrokerNode], str | None]
    documentation: str


def _setting(field_name: str, fallback: str | None) -> Callable[[Configured, BrokerNode], str | None]:
    def read(cluster: Configured, node: BrokerNode) -> str | None:
        value = getattr(cluster.config, field_name, None)
        return fallback if value is None else java_string(value)

    return read


def _fixed(value: str | None) -> Callable[[Configured, BrokerNode], str | None]:
    return lambda cluster, node: value


# The broker configs clients and tools look at. Values come from ClusterConfig where it models
# them; the rest are Kafka 4.x defaults that mockbroker behaves as.
BROKER_CONFIG_KEYS: tuple[BrokerConfigKey, ...] = (
    BrokerConfigKey("node.id", _C.INT, "-1", True, lambda c, n: str(n.node_id), "This node's id."),
    BrokerConfigKey("broker.id", _C.INT, "-1", True, lambda c, n: str(n.node_id), "This broker's id (node.id in KRaft)."),
    BrokerConfigKey("broker.rack", _C.STRING, None, True, lambda c, n: n.rack, "This broker's rack."),
    BrokerConfigKey("auto.create.topics.enable", _C.BOOLEAN, "true", True,
                    _setting("auto_create_topics_enable", "true"), "Metadata requests create unknown topics."),
    BrokerConfigKey("num.partitions", _C.INT, "1", True, _setting("num_partitions", "1"),
                    "Partitions of a topic created without a count."),
    BrokerConfigKey("default.replication.factor", _C.INT, "1", True, _setting("default_replication_factor", "1"),
                    "Replication factor of a topic created without one."),
    BrokerConfigKey("offsets.topic.num.partitions", _C.INT, "50", True, _setting("offsets_topic_num_partitions", "50"),
                    "Partitions of __consumer_offsets, which place group coordinators."),
    BrokerConfigKey("message.max.bytes", _C.INT, "1048588", False, _setting("message_max_bytes", "1048588"),
                    "Largest record batch a topic accepts unless it sets max.message.bytes."),
    BrokerConfigKey("socket.request.max.bytes", _C.INT, "104857600", True,
                    _setting("socket_request_max_bytes", "104857600"), "Largest request frame accepted."),
    BrokerConfigKey("log.retention.ms", _C.LONG, "604800000", False, _setting("log_retention_ms", "604800000"),
                    "Default retention.ms of topics."),
    BrokerConfigKey("log.retention.bytes", _C.LONG, "-1", False, _setting("log_retention_bytes", "-1"),
                    "Default retention.bytes of topics."),
    BrokerConfigKey("log.cleanup.policy", _C.LIST, "delete", False, _fixed("delete"), "Default cleanup.policy of topics."),
    BrokerConfigKey("log.segment.bytes", _C.INT, "1073741824", False, _fixed("1073741824"),
                    "Default segment.bytes of topics."),
    BrokerConfigKey("log.message.timestamp.type", _C.STRING, "CreateTime", False, _fixed("CreateTime"),
                    "Default message.timestamp.type of topics."),
    BrokerConfigKey("min.insync.replicas", _C.INT, "1", False, _fixed("1"), "Default min.insync.replicas of topics."),
    BrokerConfigKey("compression.type", _C.STRING, "producer", False, _fixed("producer"),
                    "Default compression.type of topics."),
    BrokerConfigKey("unclean.leader.election.enable", _C.BOOLEAN, "false", False, _fixed("false"),
                    "Default unclean.leader.election.enable of topics."),
    BrokerConfigKey("delete.topic.enable", _C.BOOLEAN, "true", True, _fixed("true"), "DeleteTopics is allowed."),
)


def broker_config_entries(cluster: Configured, node: BrokerNode) -> list[ConfigEntry]:
    """ConfigHelper.createBrokerConfigEntry for a broker's own configs: source STATIC_BROKER_CONFIG
    for settings that differ from Kafka's default, DEFAULT_CONFIG otherwise; synonyms list both."""
    entries = []
    for key in BROKER_CONFIG_KEYS:
        value = key.value(cluster, node)
        synonyms = []
        if value is not None and value != key.kafka_default:
            synonyms.append(ConfigSynonym(key.name, value, ConfigSource.STATIC_BROKER_CONFIG))
        if key.kafka_default is not None:
            synonyms.append(ConfigSynonym(key.name, key.kafka_default, ConfigSource.DEFAULT_CONFIG))
        source = synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG
        entries.append(
            ConfigEntry(key.name, value, source, key.type, key.documentation, read_only=key.read_only, synonyms=synonyms)
        )
    return entries
