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
from mockbroker_protocol.messages import incremental_alter_configs as iac
from mockbroker_protocol.messages.streams_group_describe import StreamsGroupDescribeRequest
from tests.differential.harness import Connection
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
    bootstrap: str, protocol: str, guarantee: str = "at_least_once", *, crash: bool, cluster: Observed | None = None,
    third: bool = True, standby_replicas: int = 0,
) -> dict[str, int]:  # fmt: skip
    """Two instances, then a third (unless not ``third``), then one stopped (killed when
    ``crash``); the counts after each step must be the true counts of every line so far.
    ``cluster`` (a mockbroker, or a Kafka's address, described by StreamsGroupDescribe) is
    checked for the tasks' owners; with ``standby_replicas`` the group is configured so
    (streams.num.standby.replicas, a group config) and each stateful task must have a standby
    on another instance. Returns the final counts."""
    app_id = f"wordcount-{protocol}-{guarantee.replace('_', '-')}-{next(_ids)}-{os.getpid()}"
    topics = (f"{app_id}-input", f"{app_id}-output")
    create_topics(bootstrap, *topics)
    if standby_replicas:
        assert isinstance(cluster, tuple), "the group config is set on Kafka only"
        set_group_config(cluster, app_id, "streams.num.standby.replicas", str(standby_replicas))
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
            if standby_replicas:
                active, standby = _stateful_owners(snap, "active"), _stateful_owners(snap, "standby")
                assert sorted(standby) == [0, 1, 2, 3] and all(active[t] != standby[t] for t in active), snap

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


Observed = KafkaCluster | tuple[str, int]  # a mockbroker (its snapshot), or a Kafka's address


def describe_streams_group(address: tuple[str, int], group_id: str) -> dict[str, Any] | None:
    """A Kafka's streams group in the shape of mockbroker's snapshot (state, members with their
    process and assigned tasks), from StreamsGroupDescribe."""
    connection = Connection(address)
    try:
        (group,) = connection.call(89, 0, StreamsGroupDescribeRequest(group_ids=[group_id])).groups
    finally:
        connection.close()
    if group.error_code:
        return None

    def tasks(entries: list[Any]) -> dict[str, list[int]]:
        return {t.subtopology_id: sorted(t.partitions) for t in entries}

    members = [
        {"member_id": m.member_id, "process_id": m.process_id,
         "assigned": {"active": tasks(m.assignment.active_tasks), "standby": tasks(m.assignment.standby_tasks)}}
        for m in group.members
    ]  # fmt: skip
    return {"state": group.group_state, "members": members}


def set_group_config(address: tuple[str, int], group_id: str, name: str, value: str) -> None:
    """IncrementalAlterConfigs SET of a group config (resource type GROUP, 32) on a Kafka."""
    request = iac.IncrementalAlterConfigsRequest(
        resources=[iac.AlterConfigsResource(32, group_id, [iac.AlterableConfig(name, 0, value)])]
    )
    connection = Connection(address)
    try:
        (result,) = connection.call(44, 1, request).responses
    finally:
        connection.close()
    assert result.error_code == 0, result


def _stable_snapshot(cluster: Observed, group_id: str, members: int) -> dict[str, Any] | None:
    if isinstance(cluster, tuple):
        snap = describe_streams_group(cluster, group_id)
    else:
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
    than killed: Kafka's streams session timeout is at least 45 s), with one standby replica
    (the group config streams.num.standby.replicas) placed as on mockbroker: each stateful task's
    standby on another instance; StreamsGroupDescribe shows the owners."""
    address = (kafka_broker.host, kafka_broker.port)
    counts = run_word_count(f"{address[0]}:{address[1]}", "streams", crash=False, cluster=address, standby_replicas=1)
    assert counts == expected_counts(lines_of(0) + lines_of(1) + lines_of(2))


def _stateful_owners(snap: dict[str, Any], kind: str) -> dict[int, str]:
    """Task of the stateful subtopology (the count, "1") -> the process holding it as ``kind``."""
    return {t: m["process_id"] for m in snap["members"] for t in m["assigned"][kind].get("1", [])}


def test_standby_replica_takes_over_when_the_active_instance_dies() -> None:
    """streams.num.standby.replicas=1 set for the group (a group config, IncrementalAlterConfigs on
    its GROUP resource; the broker's group.streams.num.standby.replicas stays 0), three instances:
    each stateful task has its standby on another instance; one instance is SIGKILLed, and when its
    session expires its stateful tasks go to the instances that held them as standbys
    (StickyTaskAssignor: previous standby first); the counts stay exact."""
    cluster = start_cluster(brokers=1, request_log=False)
    try:
        bootstrap = cluster.bootstrap_servers
        app_id = f"wordcount-standby-{os.getpid()}"
        topics = (f"{app_id}-input", f"{app_id}-output")
        create_topics(bootstrap, *topics)
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        set_group_config((host, int(port)), app_id, "streams.num.standby.replicas", "1")
        reader = OutputReader(bootstrap, topics[1])
        with tempfile.TemporaryDirectory() as state_dir, instances() as apps:
            apps += [Instance(bootstrap, app_id, "streams", "at_least_once", state_dir, n, topics) for n in "abc"]
            for app in apps:
                wait_for(app.running, f"{app.name} RUNNING", app.explain, timeout=STARTUP_S)
            snap = wait_for(lambda: _stable_snapshot(cluster, app_id, 3), "a Stable group of three members")
            active, standby = _stateful_owners(snap, "active"), _stateful_owners(snap, "standby")
            assert sorted(active) == sorted(standby) == [0, 1, 2, 3], snap  # one standby per stateful task
            assert all(active[t] != standby[t] for t in active), snap  # never beside its active task
            produce(bootstrap, topics[0], lines_of(0))
            wait_for(lambda: reader.poll() == expected_counts(lines_of(0)), "the counts of the first batch",
                     lambda: str(reader.latest), timeout=90)  # fmt: skip
            victim = next(m for m in snap["members"] if m["assigned"]["active"].get("1"))
            lost = victim["assigned"]["active"]["1"]
            killed = next(a for a in apps if _process_id_of(Path(state_dir) / a.name) == victim["process_id"])
            killed.kill()
            survivors = wait_for(lambda: _stable_snapshot(cluster, app_id, 2), "the survivors, Stable", timeout=60)
            after = _stateful_owners(survivors, "active")
            assert sorted(after) == [0, 1, 2, 3], survivors
            # every stateful task of the killed instance is now active where its standby was, unless
            # that instance already had its quota of active tasks (8 tasks over 2 members: 4)
            full = {m["process_id"] for m in survivors["members"] if sum(map(len, m["assigned"]["active"].values())) >= 4}
            moved = {t: after[t] for t in lost if after[t] != standby[t] and standby[t] not in full}
            assert not moved, (killed.name, snap, survivors)
            assert any(after[t] == standby[t] for t in lost), (killed.name, snap, survivors)  # a standby took over
            produce(bootstrap, topics[0], lines_of(1))
            wait_for(lambda: reader.poll() == expected_counts(lines_of(0) + lines_of(1)), "the counts after the takeover",
                     lambda: str(reader.latest), timeout=90)  # fmt: skip
        reader.close()
    finally:
        problems = cluster.close(check=False)
    assert not [p for p in problems if p.startswith("broker bug:")], problems


def _process_id_of(state_dir: Path) -> str | None:
    """The process id an instance persisted in its state directory (StateDirectory's
    kafka-streams-process-metadata file, KIP-1071's process.id)."""
    for path in state_dir.rglob("kafka-streams-process-metadata"):
        match = re.search(r'"processId"\s*:\s*"([^"]+)"', path.read_text(errors="replace"))
        if match:
            return match.group(1)
    return None


@pytest.mark.parametrize("broker", ["mockbroker", "kafka"])
def test_missing_source_topic_is_reported_and_the_app_recovers_when_it_appears(
    broker: str, request: pytest.FixtureRequest
) -> None:
    """Started before its input topic exists, the application is told MISSING_SOURCE_TOPICS with
    Kafka's detail (the group NotReady, no tasks); once the topic is created it gets its tasks and
    counts. On Apache Kafka 4.3.1 the same: NotReady in StreamsGroupDescribe, then the counts (the
    heartbeat's status itself is compared with Kafka's by tests/differential/test_streams_groups.py)."""
    if broker == "kafka":
        kafka = request.getfixturevalue("kafka_broker")
        cluster: Observed = (kafka.host, kafka.port)
        bootstrap = f"{kafka.host}:{kafka.port}"
    else:
        mock: KafkaCluster = request.getfixturevalue("mock")
        cluster, bootstrap = mock, mock.bootstrap_servers
    app_id = f"wordcount-missing-{broker}-{os.getpid()}"
    topics = (f"{app_id}-input", f"{app_id}-output")
    with tempfile.TemporaryDirectory() as state_dir, instances() as apps:
        apps.append(Instance(bootstrap, app_id, "streams", "at_least_once", state_dir, "a", topics))

        def missing() -> bool:
            if isinstance(cluster, tuple):
                described = describe_streams_group(cluster, app_id)
                return described is not None and described["state"] == "NotReady" and len(described["members"]) == 1
            snap = cluster.call(lambda: cluster.cluster.groups.snapshot(app_id))
            if snap is None or snap["topology_status"] is None:
                return False
            return bool(snap["state"] == "NotReady" and snap["topology_status"] == {
                "status": "MISSING_SOURCE_TOPICS", "detail": f"Source topics {topics[0]} are missing."
            })

        wait_for(missing, "the group NotReady with MISSING_SOURCE_TOPICS", apps[0].explain, timeout=STARTUP_S)
        create_topics(bootstrap, *topics)
        reader = OutputReader(bootstrap, topics[1])
        produce(bootstrap, topics[0], lines_of(0))
        wait_for(lambda: reader.poll() == expected_counts(lines_of(0)), "the counts once the topic exists",
                 lambda: f"{reader.latest}\n{apps[0].explain()}", timeout=90)  # fmt: skip
        wait_for(lambda: _stable_snapshot(cluster, app_id, 1), "the group Stable with its one member")
        reader.close()
