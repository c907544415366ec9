"""A real Kafka Streams application (KIP-1071, group.protocol=streams) against mockbroker and against
Apache Kafka 4.3.1: the word count of mockbroker_conformance/drivers/streams (a repartition topic
and a state store with its changelog), two then three instances, one killed, standby replicas,
exactly_once_v2. The counts it writes must be the words' true counts, on both brokers.

The app is built by `make streams-app` (Maven, javac) into build/streams-app; without it the tests
skip on a user's machine and fail under CI=true.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import confluent_kafka
import confluent_kafka.admin as confluent_admin
import pytest

from mockbroker.testing import KafkaCluster, start_cluster
from tests.integration.support import in_ci, wait_for

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "build" / "streams-app"
STARTUP_S = 60.0
_ids = itertools.count()
WORDS = ["apple", "banana", "cherry", "date", "elder", "fig", "grape", "honeydew"]


def app_classpath() -> str:
    if not (APP / ".built").is_file():
        message = "the Kafka Streams word count is not built (`make streams-app`: Maven and javac)"
        if in_ci():
            pytest.fail(message + "; CI must run every test")
        pytest.skip(message)
    return f"{APP / 'classes'}:{APP / 'libs'}/*"


class Instance:
    """One instance of the application: a JVM running mockbroker.streams.WordCount."""

    def __init__(self, bootstrap: str, app_id: str, protocol: str, guarantee: str, state_dir: str, name: str,
                 topics: tuple[str, str]) -> None:  # fmt: skip
        self.name = name
        self.states: list[str] = []
        self.log: list[str] = []
        self.proc = subprocess.Popen(
            ["java", "-Xmx256m", "-XX:TieredStopAtLevel=1", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
             "-cp", app_classpath(), "mockbroker.streams.WordCount",
             bootstrap, app_id, protocol, guarantee, os.path.join(state_dir, name), *topics],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )  # fmt: skip
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            line = line.rstrip()
            self.log.append(line)
            if line.startswith("STATE "):
                self.states.append(line.removeprefix("STATE "))

    def running(self) -> bool:
        return bool(self.states) and self.states[-1] == "RUNNING"

    def explain(self) -> str:
        return f"{self.name}: states {self.states}, last output:\n  " + "\n  ".join(self.log[-15:])

    def close(self) -> None:
        """Stop cleanly: the member leaves the group."""
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            with contextlib.suppress(BrokenPipeError):
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def kill(self) -> None:
        """A crash: no leave; the broker notices when the member's session expires."""
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()


def expected_counts(lines: list[str]) -> dict[str, int]:
    """What the word count computes: lower case, split on non-word characters (Java's \\W+)."""
    counts: collections.Counter[str] = collections.Counter()
    for line in lines:
        counts.update(w for w in re.split(r"[^a-zA-Z0-9_]+", line.lower()) if w)
    return dict(counts)


def lines_of(batch: int, n: int = 40) -> list[str]:
    return [" ".join(WORDS[(batch * 7 + i * j) % len(WORDS)] for j in range(1, 4)) for i in range(n)]


class OutputReader:
    """The latest count per word in the output topic (read_committed, so that an aborted
    exactly-once transaction is not counted)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self.latest: dict[str, int] = {}
        self.consumer = confluent_kafka.Consumer({
            "bootstrap.servers": bootstrap, "group.id": f"reader-{next(_ids)}-{time.monotonic_ns()}",
            "auto.offset.reset": "earliest", "isolation.level": "read_committed", "enable.auto.commit": False,
        })  # fmt: skip
        self.consumer.subscribe([topic])

    def poll(self) -> dict[str, int]:
        for message in self.consumer.consume(num_messages=500, timeout=0.2):
            if message.error() is None and message.key() is not None:
                self.latest[message.key().decode()] = int.from_bytes(message.value(), "big", signed=True)
        return self.latest

    def close(self) -> None:
        self.consumer.close()


def produce(bootstrap: str, topic: str, lines: list[str]) -> None:
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i, line in enumerate(lines):
        producer.produce(topic, key=f"line-{i % 7}", value=line)
    assert producer.flush(30) == 0


def create_topics(bootstrap: str, input_topic: str, output_topic: str) -> None:
    admin = confluent_admin.AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_topics([
        confluent_admin.NewTopic(input_topic, 4, 1), confluent_admin.NewTopic(output_topic, 1, 1),
    ])  # fmt: skip
    for future in futures.values():
        future.result(30)


@contextlib.contextmanager
def instances() -> Iterator[list[Instance]]:
    started: list[Instance] = []
    try:
        yield started
    finally:
        for instance in started:
            instance.close()


def run_word_count(
    bootstrap: str, protocol: str, guarantee: str = "at_least_once", *, crash: bool, cluster: KafkaCluster | None = None,
    third: bool = True,
) -> dict[str, int]:  # fmt: skip
    """Two instances, then a third (unless not ``third``), then one stopped (killed when
    ``crash``); the counts after each step must be the true counts of every line so far.
    Returns the final counts."""
    app_id = f"wordcount-{protocol}-{guarantee.replace('_', '-')}-{next(_ids)}-{os.getpid()}"
    topics = (f"{app_id}-input", f"{app_id}-output")
    create_topics(bootstrap, *topics)
    reader = OutputReader(bootstrap, topics[1])
    sent: list[str] = []
    with tempfile.TemporaryDirectory() as state_dir, instances() as apps:

        def start(name: str) -> Instance:
            instance = Instance(bootstrap, app_id, protocol, guarantee, state_dir, name, topics)
            apps.append(instance)
            return instance

        def counted(what: str) -> None:
            expected = expected_counts(sent)
            wait_for(lambda: reader.poll() == expected, what,
                     lambda: f"counts {reader.latest}\nexpected {expected}\n" + "\n".join(a.explain() for a in apps),
                     timeout=90)  # fmt: skip

        first, second = start("a"), start("b")
        for app in (first, second):
            wait_for(app.running, f"{app.name} RUNNING", app.explain, timeout=STARTUP_S)
        sent += lines_of(0)
        produce(bootstrap, topics[0], lines_of(0))
        counted("the counts of the first batch with two instances")

        if third:
            started = start("c")
            wait_for(started.running, "c RUNNING", started.explain, timeout=STARTUP_S)
        sent += lines_of(1)
        produce(bootstrap, topics[0], lines_of(1))
        counted("the counts of two batches")
        if third and cluster is not None and protocol == "streams":
            snap = wait_for(lambda: _stable_snapshot(cluster, app_id, 3), "a Stable streams group of three members")
            owners = [t for m in snap["members"] for ts in m["assigned"]["active"].values() for t in ts]
            assert len(owners) == 8, snap  # 4 tasks of each subtopology, each owned once

        if crash:
            second.kill()
        else:
            second.close()
        sent += lines_of(2)
        produce(bootstrap, topics[0], lines_of(2))
        counted("the counts of three batches after an instance went")
        if cluster is not None and protocol == "streams":
            snap = wait_for(lambda: _stable_snapshot(cluster, app_id, 2 if third else 1), "a Stable streams group without it")
            owners = [t for m in snap["members"] for ts in m["assigned"]["active"].values() for t in ts]
            assert len(owners) == 8, snap
    reader.close()
    return dict(reader.latest)


def _stable_snapshot(cluster: KafkaCluster, group_id: str, members: int) -> dict[str, Any] | None:
    snap = cluster.call(lambda: cluster.cluster.groups.snapshot(group_id))
    if snap is None or snap["state"] != "Stable" or len(snap["members"]) != members:
        return None
    return snap


@pytest.fixture
def mock() -> Iterator[KafkaCluster]:
    cluster = start_cluster(brokers=3, request_log=False)
    try:
        yield cluster
    finally:
        problems = cluster.close(check=False)
        bugs = [p for p in problems if p.startswith("broker bug:")]
        assert not bugs, bugs


def test_word_count_streams_protocol_on_mockbroker(mock: KafkaCluster) -> None:
    counts = run_word_count(mock.bootstrap_servers, "streams", crash=True, cluster=mock)
    assert counts == expected_counts(lines_of(0) + lines_of(1) + lines_of(2))


def test_word_count_exactly_once_v2_on_mockbroker(mock: KafkaCluster) -> None:
    counts = run_word_count(mock.bootstrap_servers, "streams", "exactly_once_v2", crash=True, cluster=mock)
    assert counts == expected_counts(lines_of(0) + lines_of(1) + lines_of(2))


def test_word_count_classic_protocol_on_mockbroker(mock: KafkaCluster) -> None:
    """The same application with the classic rebalance protocol (the streams partition assignor
    on the client): the row of the other group protocol (two instances, then one leaves)."""
    counts = run_word_count(mock.bootstrap_servers, "classic", crash=False, third=False)
    assert counts == expected_counts(lines_of(0) + lines_of(1) + lines_of(2))


def test_word_count_streams_protocol_same_output_on_kafka(kafka_broker: Any) -> None:
    """The same run against Apache Kafka 4.3.1 gives the same counts (an instance is closed rather
    than killed: Kafka's streams session timeout is at least 45 s)."""
    counts = run_word_count(f"{kafka_broker.host}:{kafka_broker.port}", "streams", crash=False)
    assert counts == expected_counts(lines_of(0) + lines_of(1) + lines_of(2))


def test_standby_replica_takes_over_when_the_active_instance_dies() -> None:
    """group.streams.num.standby.replicas=1: each stateful task has a standby on the other
    instance; killing one instance makes the other active for all of them."""
    cluster = start_cluster(brokers=1, request_log=False, group_streams_num_standby_replicas=1)
    try:
        bootstrap = cluster.bootstrap_servers
        app_id = f"wordcount-standby-{os.getpid()}"
        topics = (f"{app_id}-input", f"{app_id}-output")
        create_topics(bootstrap, *topics)
        reader = OutputReader(bootstrap, topics[1])
        with tempfile.TemporaryDirectory() as state_dir, instances() as apps:
            apps += [Instance(bootstrap, app_id, "streams", "at_least_once", state_dir, n, topics) for n in ("a", "b")]
            for app in apps:
                wait_for(app.running, f"{app.name} RUNNING", app.explain, timeout=STARTUP_S)
            snap = wait_for(lambda: _stable_snapshot(cluster, app_id, 2), "a Stable group of two members")
            by_process = {m["process_id"]: m for m in snap["members"]}
            for member in snap["members"]:
                other = next(m for p, m in by_process.items() if p != member["process_id"])
                # the stateful subtopology (the count) has its standby on the other process
                assert member["assigned"]["standby"].get("1", []) == other["assigned"]["active"].get("1", []), snap
            produce(bootstrap, topics[0], lines_of(0))
            wait_for(lambda: reader.poll() == expected_counts(lines_of(0)), "the counts of the first batch",
                     lambda: str(reader.latest), timeout=90)  # fmt: skip
            apps[0].kill()
            survivor = wait_for(lambda: _stable_snapshot(cluster, app_id, 1), "the survivor alone, Stable", timeout=60)
            assert survivor["members"][0]["assigned"]["active"] == {"0": [0, 1, 2, 3], "1": [0, 1, 2, 3]}
            produce(bootstrap, topics[0], lines_of(1))
            wait_for(lambda: reader.poll() == expected_counts(lines_of(0) + lines_of(1)), "the counts after the takeover",
                     lambda: str(reader.latest), timeout=90)  # fmt: skip
        reader.close()
    finally:
        problems = cluster.close(check=False)
    assert not [p for p in problems if p.startswith("broker bug:")], problems


def test_missing_source_topic_is_reported_and_the_app_recovers_when_it_appears(mock: KafkaCluster) -> None:
    """Started before its input topic exists, the application is told MISSING_SOURCE_TOPICS (the
    group stays NotReady, no tasks); once the topic is created it gets its tasks and counts."""
    bootstrap = mock.bootstrap_servers
    app_id = f"wordcount-missing-{os.getpid()}"
    topics = (f"{app_id}-input", f"{app_id}-output")
    with tempfile.TemporaryDirectory() as state_dir, instances() as apps:
        apps.append(Instance(bootstrap, app_id, "streams", "at_least_once", state_dir, "a", topics))

        def missing() -> bool:
            snap = mock.call(lambda: mock.cluster.groups.snapshot(app_id))
            if snap is None or snap["topology_status"] is None:
                return False
            return bool(snap["topology_status"]["status"] == "MISSING_SOURCE_TOPICS" and snap["state"] == "NotReady")

        wait_for(missing, "the group NotReady with MISSING_SOURCE_TOPICS", apps[0].explain, timeout=STARTUP_S)
        create_topics(bootstrap, *topics)
        reader = OutputReader(bootstrap, topics[1])
        produce(bootstrap, topics[0], lines_of(0))
        wait_for(lambda: reader.poll() == expected_counts(lines_of(0)), "the counts once the topic exists",
                 lambda: f"{reader.latest}\n{apps[0].explain()}", timeout=90)  # fmt: skip
        wait_for(lambda: _stable_snapshot(mock, app_id, 1), "the group Stable with its one member")
        reader.close()
