"""The cluster's basic types: brokers, topics, partitions, topic errors and Kafka's topic-name rules.

A leaf of the package: it imports nothing of mockbroker's (the log's ``PartitionLog`` is named for
the type checker only), so every layer (config, log, coordinators, control, handlers) can use
these types without reaching for the composition root (mockbroker/cluster.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mockbroker_protocol.errors import ErrorCode

if TYPE_CHECKING:
    import uuid

    from mockbroker.log.partition import PartitionLog

OFFSETS_TOPIC = "__consumer_offsets"
TRANSACTION_TOPIC = "__transaction_state"
# The event log as a topic (mockbroker/log/events_topic.py; ClusterConfig.events_topic).
EVENTS_TOPIC = "__mockbroker_events"

# Kafka's Topic.validate: legal characters, and a length that leaves room for partition suffixes.
_LEGAL_TOPIC = re.compile(r"^[a-zA-Z0-9._-]+$")
MAX_TOPIC_NAME_LENGTH = 249


@dataclass(slots=True)
class Endpoint:
    """One listener of one broker (Kafka's BrokerRegistration endpoint): where it binds and the
    address clients that came in on it are given."""

    listener: str  # the listener's name (listeners)
    security_protocol: str  # PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
    host: str  # bound host
    port: int  # bound port (0 until started)
    # None: advertised.listeners leaves this listener out, so (as in Kafka) the broker has no
    # address on it: Metadata gives no brokers, partitions LISTENER_NOT_FOUND.
    advertised_host: str | None
    advertised_port: int  # 0 until started: the bound port


@dataclass(slots=True)
class BrokerNode:
    """One broker: its node id, rack, and the address it binds and the one it advertises (those
    of its first listener), and all its listeners (``endpoints``, by listener name)."""

    node_id: int
    host: str  # bound host
    port: int  # bound port (0 until started)
    rack: str | None
    advertised_host: str
    advertised_port: int
    endpoints: dict[str, Endpoint] = field(default_factory=dict)

    def address(self, listener: str) -> tuple[str, int] | None:
        """The host and port this broker advertises on ``listener`` (KafkaApis answers with the
        listener of the request's connection: BrokerRegistration.node(listenerName)); None where
        it has none. "" (a request made without a connection) is the first listener's."""
        if listener:
            endpoint = self.endpoints.get(listener)
            if endpoint is None or endpoint.advertised_host is None:
                return None
            return endpoint.advertised_host, endpoint.advertised_port
        return self.advertised_host, self.advertised_port


@dataclass(slots=True)
class Partition:
    """One partition: its leader, replicas (some possibly offline) and log."""

    index: int
    leader_id: int
    replica_ids: list[int]
    log: PartitionLog
    # Replicas on brokers taken down (control.broker_down): out of the ISR, offline in Metadata.
    offline_replica_ids: list[int] = field(default_factory=list)

    @property
    def isr_ids(self) -> list[int]:
        return [r for r in self.replica_ids if r not in self.offline_replica_ids]


@dataclass(slots=True)
class Topic:
    """One topic: name, topic id (KIP-516), partitions and topic-level configs."""

    name: str
    topic_id: uuid.UUID
    partitions: list[Partition]
    replication_factor: int
    configs: dict[str, str] = field(default_factory=dict)
    is_internal: bool = False


class TopicError(Exception):
    """A topic operation refused with a Kafka error code (CreateTopics and friends report it)."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def validate_topic_name(name: str) -> None:
    # Kafka 4.3's Topic.validate wording (checked against a real 4.3 broker by tests/differential).
    if not name:
        raise TopicError(ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic name is invalid: the empty string is not allowed")
    if name in (".", ".."):
        raise TopicError(ErrorCode.INVALID_TOPIC_EXCEPTION, f"Topic name is invalid: '{name}' is not allowed")
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        raise TopicError(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"Topic name is invalid: the length of '{name}' is longer than the max allowed length {MAX_TOPIC_NAME_LENGTH}",
        )
    if not _LEGAL_TOPIC.match(name):
        raise TopicError(
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            f"Topic name is invalid: '{name}' contains one or more characters other than ASCII alphanumerics, "
            "'.', '_' and '-'",
        )


def collision_key(name: str) -> str:
    # Kafka refuses topics whose names differ only in '.' versus '_' (metric names collide).
    return name.replace(".", "_")
