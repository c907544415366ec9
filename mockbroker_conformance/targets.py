"""What the conformance suite runs against: an embedded mockbroker (the default), librdkafka's mock
cluster (``rdkafka-mock``), a real Apache Kafka started for the run (``kafka``, the reference), or
any Kafka-compatible broker at a bootstrap address.

A ``Target`` makes one ``TargetCluster`` per scenario run (fresh brokers, so runs cannot disturb
each other and can go concurrently), except the bootstrap and kafka targets, whose one broker is
shared and so gets per-run topic and group names. A cluster seeds records, creates topics and, where it can,
injects faults; ``faults`` lists which (a scenario needing another is "not supported" there).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import itertools
import time
import uuid
from typing import Any

from mockbroker_conformance.audit import Auditor
from mockbroker_conformance.model import Finding, NotSupported, ScenarioFailed

# The faults a scenario may ask for.
FAULTS = ("move_coordinator", "move_leader", "broker_down", "push_errors", "latency")
SeedRecord = tuple[int, str | None, str]  # partition, key, value
SEED_TIMEOUT_S = 20.0
# KIP-848 groups' broker-side timing on both embedded targets (Kafka's defaults: 45 s and 5 s).
CONSUMER_SESSION_TIMEOUT_MS, CONSUMER_HEARTBEAT_INTERVAL_MS = 6000, 300
# KIP-1071 streams groups the same (Kafka's defaults: 45 s and 5 s). Standby replicas are a group
# config too (the client's num.standby.replicas is ignored): the streams-standby scenario sets
# streams.num.standby.replicas on its own group (TargetCluster.alter_group_configs).
EMBEDDED_STREAMS_SETTINGS = {
    "group_streams_session_timeout_ms": CONSUMER_SESSION_TIMEOUT_MS,
    "group_streams_heartbeat_interval_ms": CONSUMER_HEARTBEAT_INTERVAL_MS,
}


class NotDelivered(ScenarioFailed):
    """The reference producer could not append the records a scenario needs."""


class TargetCluster:
    """One scenario run's brokers. Subclasses implement what they can."""

    kind = ""
    faults: frozenset[str] = frozenset()
    auditor: Auditor | None = None
    control: Any = None  # mockbroker's async control facade, for broker-side checks

    def __init__(self, bootstrap: str, broker_ids: list[int], prefix: str = "") -> None:
        self.bootstrap = bootstrap
        self.broker_ids = broker_ids
        self.prefix = prefix  # prepended to topic and group names on a shared broker

    def name(self, base: str) -> str:
        return f"{self.prefix}{base}"

    def require(self, fault: str) -> None:
        if fault not in self.faults:
            raise NotSupported(f"the {self.kind} target cannot inject {fault.replace('_', ' ')}")

    async def create_topic(self, topic: str, partitions: int, replication_factor: int = 1) -> None:
        raise NotImplementedError

    async def seed(self, topic: str, records: list[SeedRecord]) -> None:
        """Append records through a reference path (not the client under test)."""
        await asyncio.to_thread(_confluent_produce, self.bootstrap, topic, records)

    async def alter_group_configs(self, group: str, configs: dict[str, str]) -> None:
        """Set a group's configs (KIP-848 group configs: KIP-932's share.*, KIP-1071's streams.*) as
        an application does: IncrementalAlterConfigs on the GROUP resource, confluent-kafka's AdminClient."""
        await asyncio.to_thread(_confluent_alter_group_configs, self.bootstrap, group, configs)

    async def coordinator(self, group: str) -> int | None:
        return None

    async def move_coordinator(self, group: str, broker_id: int) -> None:
        self.require("move_coordinator")

    async def leader(self, topic: str, partition: int) -> int | None:
        return None

    async def move_leader(self, topic: str, partition: int, broker_id: int) -> None:
        self.require("move_leader")

    async def broker_down(self, broker_id: int) -> None:
        self.require("broker_down")

    async def broker_up(self, broker_id: int) -> None:
        self.require("broker_down")

    async def push_errors(self, api: str, api_key: int, *errors: str) -> None:
        self.require("push_errors")

    async def set_latency(self, ms: int) -> None:
        self.require("latency")

    async def audit_findings(self) -> list[Finding]:
        """The client audit's findings so far (only where the target audits: mockbroker)."""
        return []

    async def close(self) -> list[str]:
        """Stop; return problems found (broker bugs, leaks), each a line."""
        return []


class Target:
    kind = ""
    description = ""

    async def start(self, brokers: int, run_id: str) -> TargetCluster:
        raise NotImplementedError

    async def close(self) -> None:
        pass


# -- embedded mockbroker ---------------------------------------------------------------------------


class EmbeddedCluster(TargetCluster):
    kind = "mockbroker"
    faults = frozenset(FAULTS)

    def __init__(self, kafka: Any, auditor: Auditor) -> None:
        super().__init__(kafka.bootstrap_servers, list(kafka.broker_ids))
        self.kafka = kafka
        self.control = kafka.aio
        self.auditor = auditor

    async def create_topic(self, topic: str, partitions: int, replication_factor: int = 1) -> None:
        await self.control.create_topic(topic, partitions, replication_factor)

    async def seed(self, topic: str, records: list[SeedRecord]) -> None:
        for partition, key, value in records:
            await self.control.produce(topic, [(key, value) if key is not None else value], partition=partition)

    async def coordinator(self, group: str) -> int | None:
        return int(await self.control.coordinator(group))

    async def move_coordinator(self, group: str, broker_id: int) -> None:
        await self.control.move_coordinator(group, broker_id)

    async def leader(self, topic: str, partition: int) -> int | None:
        return int((await self.control.topic(topic)).leaders()[partition])

    async def move_leader(self, topic: str, partition: int, broker_id: int) -> None:
        await self.control.move_leader(topic, partition, broker_id)

    async def broker_down(self, broker_id: int) -> None:
        await self.control.broker_down(broker_id)

    async def broker_up(self, broker_id: int) -> None:
        await self.control.broker_up(broker_id)

    async def push_errors(self, api: str, api_key: int, *errors: str) -> None:
        await self.control.push_errors(api, *errors)

    async def set_latency(self, ms: int) -> None:
        await self.control.set_latency(ms)

    async def audit_findings(self) -> list[Finding]:
        auditor = self.auditor
        assert auditor is not None
        now = await self.control.now_ms()
        findings: list[Finding] = await asyncio.to_thread(self.kafka.call, lambda: list(auditor.finish(now)))
        return findings

    async def close(self) -> list[str]:
        problems: list[str] = await asyncio.to_thread(self.kafka.close, False)
        return problems


class EmbeddedTarget(Target):
    """A fresh in-process mockbroker per run, on its own thread, with the test-friendly group
    settings (no initial rebalance delay, a 1 ms minimum session timeout) and the client audit."""

    kind = "mockbroker"

    def __init__(self, **settings: Any) -> None:
        self.settings = settings
        from mockbroker import __version__

        self.description = f"mockbroker {__version__} (embedded)"
        # One start at a time: a cluster's construction fills process-wide registries (assignors)
        # lazily, which is not meant to happen on two threads at once. A start takes milliseconds.
        self._starting = asyncio.Lock()

    async def start(self, brokers: int, run_id: str) -> TargetCluster:
        from mockbroker.testing import start_cluster

        async with self._starting:
            kafka = await asyncio.to_thread(start_cluster, brokers, **self.settings)
        config = kafka.cluster.config
        auditor = Auditor(consumer_session_timeout_ms=config.group_consumer_session_timeout_ms or 45_000,
                          streams_session_timeout_ms=config.group_streams_session_timeout_ms or 45_000)  # fmt: skip
        await kafka.aio.intercept(None, auditor.observe, keep=True)
        return EmbeddedCluster(kafka, auditor)


# -- librdkafka's mock cluster ---------------------------------------------------------------------

# The mock's error codes are Kafka's.
_ERROR_CODES = {"NOT_LEADER_OR_FOLLOWER": 6, "COORDINATOR_NOT_AVAILABLE": 15, "NOT_COORDINATOR": 16,
                "REQUEST_TIMED_OUT": 7, "COORDINATOR_LOAD_IN_PROGRESS": 14}  # fmt: skip


class RdkafkaMockCluster(TargetCluster):
    kind = "rdkafka-mock"
    faults = frozenset(FAULTS)

    def __init__(self, mock: Any) -> None:
        super().__init__(mock.bootstrap_servers, list(range(1, mock.brokers + 1)))
        self.mock = mock
        self._coordinators: dict[str, int] = {}
        self._leaders: dict[tuple[str, int], int] = {}

    async def create_topic(self, topic: str, partitions: int, replication_factor: int = 1) -> None:
        self.mock.create_topic(topic, partitions, replication_factor)
        # The mock places leaders round-robin; pin them so that moves are known (its API has no getter).
        for p in range(partitions):
            leader = self.broker_ids[p % len(self.broker_ids)]
            self.mock.set_leader(topic, p, leader)
            self._leaders[(topic, p)] = leader

    async def coordinator(self, group: str) -> int | None:
        if group not in self._coordinators:  # pin it, so that a later move is a move
            self.mock.set_coordinator("group", group, self.broker_ids[0])
            self._coordinators[group] = self.broker_ids[0]
        return self._coordinators[group]

    async def move_coordinator(self, group: str, broker_id: int) -> None:
        self.mock.set_coordinator("group", group, broker_id)
        self._coordinators[group] = broker_id

    async def leader(self, topic: str, partition: int) -> int | None:
        return self._leaders.get((topic, partition))

    async def move_leader(self, topic: str, partition: int, broker_id: int) -> None:
        self.mock.set_leader(topic, partition, broker_id)
        self._leaders[(topic, partition)] = broker_id

    async def broker_down(self, broker_id: int) -> None:
        self.mock.broker_down(broker_id)

    async def broker_up(self, broker_id: int) -> None:
        self.mock.broker_up(broker_id)

    async def push_errors(self, api: str, api_key: int, *errors: str) -> None:
        self.mock.push_request_errors(api_key, [_ERROR_CODES[e] for e in errors])

    async def set_latency(self, ms: int) -> None:
        for b in self.broker_ids:
            self.mock.set_rtt(b, ms)

    async def close(self) -> list[str]:
        await asyncio.to_thread(self.mock.destroy)
        return []


class RdkafkaMockTarget(Target):
    """A fresh librdkafka mock cluster per run (in this process, through ctypes), with its initial
    rebalance delay set to 0 like mockbroker's test-friendly default."""

    kind = "rdkafka-mock"

    def __init__(self) -> None:
        import confluent_kafka

        self.description = f"librdkafka {confluent_kafka.libversion()[0]} mock cluster"

    async def start(self, brokers: int, run_id: str) -> TargetCluster:
        from mockbroker_conformance.rdkafka_mock import MockCluster

        mock = await asyncio.to_thread(MockCluster, brokers)
        mock.set_initial_rebalance_delay_ms(0)
        mock.set_consumer_group_timing(CONSUMER_SESSION_TIMEOUT_MS, CONSUMER_HEARTBEAT_INTERVAL_MS)
        return RdkafkaMockCluster(mock)


# -- any broker at a bootstrap address -------------------------------------------------------------


class BootstrapCluster(TargetCluster):
    kind = "bootstrap"

    async def create_topic(self, topic: str, partitions: int, replication_factor: int = 1) -> None:
        await asyncio.to_thread(_confluent_create_topic, self.bootstrap, topic, partitions, replication_factor)


class BootstrapTarget(Target):
    """A broker someone else runs. Runs share it, so each run's topics and groups get a unique
    prefix; topics are created with replication factor 1 when the broker has fewer brokers than a
    scenario asks for. No faults: it has no control API."""

    kind = "bootstrap"

    def __init__(self, bootstrap: str) -> None:
        self.bootstrap = bootstrap
        self.description = f"broker at {bootstrap}"
        self._session = uuid.uuid4().hex[:6]
        self._runs = itertools.count(1)

    async def start(self, brokers: int, run_id: str) -> TargetCluster:
        return BootstrapCluster(self.bootstrap, [], prefix=f"conf-{self._session}-{next(self._runs)}-")


# -- a real Apache Kafka, started for the run ---------------------------------------------------------

# The group timing the scenarios assume, as broker settings: the classic minimum session timeout
# (Kafka's 6 s default would refuse the 2 s session of the member a scenario kills, with
# INVALID_SESSION_TIMEOUT) and the KIP-848 session and heartbeat (defaults 45 s and 5 s, with
# minimums of the same size), the same as the embedded targets'.
KAFKA_GROUP_SETTINGS = {
    "group.min.session.timeout.ms": "1000",
    "group.consumer.session.timeout.ms": str(CONSUMER_SESSION_TIMEOUT_MS),
    "group.consumer.min.session.timeout.ms": "1000",
    "group.consumer.heartbeat.interval.ms": str(CONSUMER_HEARTBEAT_INTERVAL_MS),
    "group.consumer.min.heartbeat.interval.ms": "100",
    "group.streams.session.timeout.ms": str(CONSUMER_SESSION_TIMEOUT_MS),
    "group.streams.min.session.timeout.ms": "1000",
    "group.streams.heartbeat.interval.ms": str(CONSUMER_HEARTBEAT_INTERVAL_MS),
    "group.streams.min.heartbeat.interval.ms": "100",
    # KIP-932: the share-lock-expiry scenario gives its group a 1 s share.record.lock.duration.ms
    # (a group config), which must not be under this minimum (default 15 s).
    "group.share.min.record.lock.duration.ms": "1000",
}


class KafkaTarget(BootstrapTarget):
    """One real Kafka node (``mockbroker_conformance/kafka/launcher.py``: KRaft, single node,
    ``group.initial.rebalance.delay.ms=0``, the group timing above) started on the first run and
    stopped by ``close``. Runs share it like a bootstrap broker (per-run names, topics with
    replication factor 1); no faults: it has no control API."""

    kind = "kafka"

    def __init__(self) -> None:
        from mockbroker_conformance.kafka.launcher import KAFKA_VERSION

        super().__init__("")
        self.description = f"Apache Kafka {KAFKA_VERSION}"
        self.broker: Any = None
        self._starting = asyncio.Lock()

    async def start(self, brokers: int, run_id: str) -> TargetCluster:
        async with self._starting:
            if self.broker is None:
                from mockbroker_conformance.kafka import launcher

                self.broker = await asyncio.to_thread(launcher.start, properties=KAFKA_GROUP_SETTINGS)
                self.bootstrap = self.broker.bootstrap_servers
                # Kafka runs in its own session: stopped at exit too if the run dies before close().
                atexit.register(self.broker.stop)
        cluster = await super().start(brokers, run_id)
        cluster.kind = "kafka"
        return cluster

    async def close(self) -> None:
        if self.broker is not None:
            await asyncio.to_thread(self.broker.stop)
            self.broker = None


# -- the reference path (confluent-kafka in this process) for targets without a control API ---------


def _confluent_alter_group_configs(bootstrap: str, group: str, configs: dict[str, str]) -> None:
    from confluent_kafka.admin import (  # type: ignore[attr-defined]
        AdminClient,
        AlterConfigOpType,
        ConfigEntry,
        ConfigResource,
        ResourceType,
    )

    entries = [ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in configs.items()]
    client = AdminClient({"bootstrap.servers": bootstrap, "client.id": "conformance-admin", "log_level": 0})
    for future in client.incremental_alter_configs([ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)]).values():
        future.result(30)


def _confluent_produce(bootstrap: str, topic: str, records: list[SeedRecord]) -> None:
    from confluent_kafka import KafkaException, Producer

    failures: list[Any] = []

    def delivered(err: Any, _msg: Any) -> None:
        if err is not None:
            failures.append(err)

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 1, "client.id": "conformance-seed", "log_level": 0})
    for partition, key, value in records:
        producer.produce(topic, value=value.encode(), key=None if key is None else key.encode(), partition=partition,
                         on_delivery=delivered)  # fmt: skip
    left = producer.flush(SEED_TIMEOUT_S)
    if failures:
        raise KafkaException(failures[0])
    if left:
        raise NotDelivered(f"seeding {topic} through the reference producer: {left} records undelivered after {SEED_TIMEOUT_S:.0f} s")


def _confluent_create_topic(bootstrap: str, topic: str, partitions: int, replication_factor: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

    admin = AdminClient({"bootstrap.servers": bootstrap, "client.id": "conformance-admin"})
    brokers = len(admin.list_topics(timeout=30).brokers)
    rf = min(replication_factor, max(brokers, 1))
    for future in admin.create_topics([NewTopic(topic, partitions, rf)], operation_timeout=30).values():
        future.result(30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # created is not yet known to every broker
        with contextlib.suppress(Exception):
            meta = admin.list_topics(topic, timeout=5).topics.get(topic)
            if meta is not None and meta.error is None and len(meta.partitions) == partitions:
                return
    raise TimeoutError(f"topic {topic} not visible after 30 s")
