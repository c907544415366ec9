"""Cluster configuration: one dataclass, every setting also reachable by its Kafka name.

Defaults are Kafka's unless a faster test says otherwise; where we differ, the field says so.
``ClusterConfig.from_kafka({"auto.create.topics.enable": "false"})`` reads Kafka-named settings
(strings, as they come from TOML, flags or the environment) and rejects unknown keys and bad
values with a message naming the key.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

# Kafka's 4.x defaults, for reference in docs and --kafka-defaults.
KAFKA_MESSAGE_MAX_BYTES = 1048588
KAFKA_SOCKET_REQUEST_MAX_BYTES = 104857600


@dataclass(slots=True)
class ClusterConfig:
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
    message_max_bytes: int = KAFKA_MESSAGE_MAX_BYTES  # message.max.bytes
    socket_request_max_bytes: int = KAFKA_SOCKET_REQUEST_MAX_BYTES  # socket.request.max.bytes
    log_retention_ms: int = 604800000  # log.retention.ms (7 days)
    log_retention_bytes: int = -1  # log.retention.bytes
    # api key -> highest version to advertise and serve ("behave like an older broker")
    api_version_caps: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.brokers < 1:
            raise ValueError(f"brokers must be at least 1, not {self.brokers}")
        if self.racks and len(self.racks) != self.brokers:
            raise ValueError(f"racks names {len(self.racks)} racks for {self.brokers} brokers")
        if not 0 <= self.port <= 65535:
            raise ValueError(f"port must be 0-65535, not {self.port}")
        for name in ("num_partitions", "default_replication_factor", "offsets_topic_num_partitions", "message_max_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"{KAFKA_NAMES_BY_FIELD.get(name, name)} must be at least 1, not {getattr(self, name)}")

    @property
    def node_ids(self) -> list[int]:
        return [self.first_node_id + i for i in range(self.brokers)]

    @classmethod
    def from_kafka(cls, settings: dict[str, Any], **fields: Any) -> ClusterConfig:
        """Build from Kafka-named settings (values may be strings) plus plain field overrides."""
        kwargs = dict(fields)
        for key, raw in settings.items():
            name = KAFKA_NAMES.get(key)
            if name is None:
                known = ", ".join(sorted(KAFKA_NAMES))
                raise ValueError(f"unknown setting {key!r}; known settings: {known}")
            kwargs[name] = _coerce(key, raw, FIELD_TYPES[name])
        return cls(**kwargs)


KAFKA_NAMES: dict[str, str] = {
    "auto.create.topics.enable": "auto_create_topics_enable",
    "num.partitions": "num_partitions",
    "default.replication.factor": "default_replication_factor",
    "offsets.topic.num.partitions": "offsets_topic_num_partitions",
    "message.max.bytes": "message_max_bytes",
    "socket.request.max.bytes": "socket_request_max_bytes",
    "log.retention.ms": "log_retention_ms",
    "log.retention.bytes": "log_retention_bytes",
}
KAFKA_NAMES_BY_FIELD = {v: k for k, v in KAFKA_NAMES.items()}
FIELD_TYPES: dict[str, str] = {f.name: str(f.type) for f in dataclasses.fields(ClusterConfig)}


def _coerce(key: str, raw: Any, type_name: str) -> Any:
    if type_name == "bool":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("true", "false"):
            return text == "true"
        raise ValueError(f"{key} must be true or false, not {raw!r}")
    if type_name == "int":
        if isinstance(raw, bool):
            raise ValueError(f"{key} must be an integer, not {raw!r}")
        try:
            return int(str(raw).strip())
        except ValueError:
            raise ValueError(f"{key} must be an integer, not {raw!r}") from None
    return raw
