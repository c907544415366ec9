"""topic_configs, pure: Java's parsing and printing, Kafka's validation messages, incremental ops."""

from __future__ import annotations

from mockbroker.config.cluster import ClusterConfig
from mockbroker.config.topics import (
    LONG_MAX,
    REMOVED_IN_KAFKA_4,
    TOPIC_CONFIGS,
    AlterConfigOp,
    ApiError,
    ConfigSource,
    ConfigType,
    apply_incremental,
    effective_value,
    java_double,
    java_split_comma,
    parse_value,
    topic_config_entries,
    validate_topic_configs,
)
from mockbroker_protocol.errors import ErrorCode


def invalid(message: str) -> ApiError:
    return ApiError(ErrorCode.INVALID_CONFIG, message)


def test_java_double_matches_double_to_string() -> None:
    cases = {0.5: "0.5", 1.0: "1.0", 0.001: "0.001", 1e-4: "1.0E-4", 1e7: "1.0E7", 12345678.9: "1.23456789E7",
             1234567.0: "1234567.0", -2.5: "-2.5", 0.0: "0.0", float("nan"): "NaN", float("inf"): "Infinity"}
    for value, text in cases.items():
        assert java_double(value) == text


def test_parse_follows_config_def() -> None:
    assert parse_value("x", ConfigType.LONG, " 42 ") == (42, None)
    assert parse_value("x", ConfigType.BOOLEAN, "TRUE") == (True, None)
    assert parse_value("x", ConfigType.LIST, "compact , delete") == (["compact", "delete"], None)
    assert parse_value("x", ConfigType.LIST, "  ") == ([], None)
    assert parse_value("x", ConfigType.DOUBLE, ".5") == (0.5, None)
    assert parse_value("x", ConfigType.INT, "2147483648") == (None, "Invalid value 2147483648 for configuration x: Not a number of type INT")
    assert parse_value("x", ConfigType.LONG, "1_000")[1] == "Invalid value 1_000 for configuration x: Not a number of type LONG"
    assert parse_value("x", ConfigType.BOOLEAN, "yes")[1] == "Invalid value yes for configuration x: Expected value to be either true or false"


def test_every_default_is_valid_and_known() -> None:
    assert validate_topic_configs({}) is None
    for key in TOPIC_CONFIGS.values():
        if key.validator is not None and key.default is not None:
            assert key.validator(key.name, key.default) is None, key.name


def test_unknown_and_removed_configs_are_invalid_config() -> None:
    assert validate_topic_configs({"no.such": "1"}) == invalid("Unknown topic config name: no.such")
    for name in REMOVED_IN_KAFKA_4:
        assert validate_topic_configs({name: "1"}) == invalid(f"Unknown topic config name: {name}")


def test_value_errors_use_kafka_wording() -> None:
    cases = {
        ("segment.bytes", "1000"): "Invalid value 1000 for configuration segment.bytes: Value must be at least 1048576",
        ("retention.ms", "-2"): "Invalid value -2 for configuration retention.ms: Value must be at least -1",
        ("min.cleanable.dirty.ratio", "1.5"):
            "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1",
        ("cleanup.policy", "delete,tidy"):
            "Invalid value tidy for configuration cleanup.policy: String must be one of: compact, delete",
        ("compression.type", "brotli"): "Invalid value brotli for configuration compression.type: "
            "String must be one of: uncompressed, zstd, lz4, snappy, gzip, producer",
        ("message.timestamp.type", "Now"):
            "Invalid value Now for configuration message.timestamp.type: String must be one of: CreateTime, LogAppendTime",
        ("compression.gzip.level", "0"):
            "Invalid value 0 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1",
        ("leader.replication.throttled.replicas", "0:1,x"):
            "Invalid value [0:1, x] for configuration leader.replication.throttled.replicas: "
            "leader.replication.throttled.replicas must be the literal '*' or a list of replicas in the following "
            "format: [partitionId]:[brokerId],[partitionId]:[brokerId],...",
        ("preallocate", "maybe"): "Invalid value maybe for configuration preallocate: Expected value to be either true or false",
    }
    for (name, value), message in cases.items():
        assert validate_topic_configs({name: value}) == invalid(message), name
    assert validate_topic_configs({"leader.replication.throttled.replicas": "*"}) is None
    assert validate_topic_configs({"cleanup.policy": ""}) is None  # an empty policy is allowed


def test_cross_config_rules() -> None:
    assert validate_topic_configs({"min.compaction.lag.ms": "10", "max.compaction.lag.ms": "5"}) == invalid(
        "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"
    )
    error = validate_topic_configs({"remote.storage.enable": "true"})
    assert error is not None and error.message is not None and "Tiered Storage" in error.message


def test_incremental_ops() -> None:
    new, error = apply_incremental({}, [("cleanup.policy", AlterConfigOp.APPEND, "compact")])
    assert error is None and new == {"cleanup.policy": "delete,compact"}
    new, error = apply_incremental(new, [("cleanup.policy", AlterConfigOp.SUBTRACT, "delete")])
    assert error is None and new == {"cleanup.policy": "compact"}
    new, error = apply_incremental(new, [("cleanup.policy", AlterConfigOp.APPEND, "compact,")])
    assert new == {"cleanup.policy": "compact"}  # Java's split drops the trailing empty item
    new, error = apply_incremental({"retention.ms": "5"}, [("retention.ms", AlterConfigOp.DELETE, None), ("a.b", 1, None)])
    assert error is None and new == {}
    _, error = apply_incremental({}, [("retention.ms", AlterConfigOp.APPEND, "5")])
    assert error == invalid("Can't APPEND to key retention.ms because its type is not LIST.")
    _, error = apply_incremental({}, [("retention.ms", 9, "5")])
    assert error == ApiError(ErrorCode.INVALID_REQUEST, "Unknown operations type 9")
    assert java_split_comma("") == [""] and java_split_comma(",,") == [] and java_split_comma(",a,") == ["", "a"]


def test_entries_report_sources_and_broker_synonyms() -> None:
    config = ClusterConfig(log_retention_ms=1000)
    entries = {e.name: e for e in topic_config_entries({"cleanup.policy": "compact , delete"}, config)}
    assert entries["cleanup.policy"].value == "compact,delete"
    assert entries["cleanup.policy"].source is ConfigSource.DYNAMIC_TOPIC_CONFIG
    assert [(s.name, s.value, s.source) for s in entries["retention.ms"].synonyms] == [
        ("log.retention.ms", "1000", ConfigSource.STATIC_BROKER_CONFIG),
    ]  # no DEFAULT_CONFIG synonym: log.retention.ms has no default of its own in KafkaConfig
    assert [(s.name, s.source) for s in entries["flush.messages"].synonyms] == [
        ("log.flush.interval.messages", ConfigSource.DEFAULT_CONFIG)
    ]
    assert entries["retention.ms"].value == "1000"
    assert entries["flush.ms"].value == str(LONG_MAX) and entries["flush.ms"].source is ConfigSource.DEFAULT_CONFIG
    assert entries["remote.storage.enable"].synonyms == []  # no broker-level synonym
    assert "internal.segment.bytes" not in entries
    # A fresh Kafka 4.x cluster (KIP-966's ELR on) holds min.insync.replicas as a cluster default.
    assert entries["min.insync.replicas"].source is ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG
    assert [(s.value, s.source) for s in entries["min.insync.replicas"].synonyms] == [
        ("1", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ("1", ConfigSource.DEFAULT_CONFIG),
    ]
    assert effective_value("retention.ms", {}, config) == 1000
    assert effective_value("max.message.bytes", {"max.message.bytes": "10"}, config) == 10
