"""kcat's balanced consumer (-G, librdkafka's high-level KafkaConsumer): three kcat processes join
one group on a 12-partition topic, split the partitions (each partition owned by exactly one, as
kcat's own rebalance messages and the coordinator both say), consume every record once, and
commit (auto-commit) until the coordinator holds the end offset of every partition. On SIGTERM
each kcat closes its consumer, leaves the group and exits 0, and the group ends Empty with its
offsets kept.
"""

from __future__ import annotations

import re
import signal
import subprocess
import threading
from collections.abc import Iterator

import pytest

from tests.integration.groups_support import (
    assert_exactly_once,
    committed_offsets,
    explain_group,
    group_broker,
    group_state,
    produce,
    wait_for,
)
from tests.integration.support import DEADLINE_S, BrokerThread, require_tool

PARTITIONS = 12
PER_PARTITION = 10
MEMBERS = 3
# kcat -G reports its rebalances on stderr: "% Group g rebalanced (memberid m): assigned: t [0], t [3]"
REBALANCED = re.compile(r"rebalanced \(memberid (?P<member>\S+)\): (?P<what>assigned|revoked): (?P<parts>.*)$")


@pytest.fixture
def broker() -> Iterator[BrokerThread]:
    yield from group_broker()


class Kcat:
    """One ``kcat -G`` process; stdout lines are records (partition, offset, value)."""

    def __init__(self, kcat: str, bootstrap: str, group: str, topic: str, client_id: str) -> None:
        self.client_id = client_id
        self.records: list[tuple[int, int, str]] = []
        self.assignment: frozenset[int] | None = None
        self.stderr: list[str] = []
        self._lock = threading.Lock()
        self.proc = subprocess.Popen(
            [
                kcat, "-b", bootstrap, "-G", group,
                "-X", f"client.id={client_id}",
                "-X", "auto.offset.reset=earliest",
                "-X", "enable.auto.commit=true",
                "-X", "auto.commit.interval.ms=100",
                "-X", "session.timeout.ms=6000",
                "-X", "heartbeat.interval.ms=200",
                "-f", r"%p\t%o\t%s\n",
                "-u",
                topic,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            partition, offset, value = line.rstrip("\n").split("\t", 2)
            with self._lock:
                self.records.append((int(partition), int(offset), value))

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            line = line.rstrip("\n")
            with self._lock:
                self.stderr.append(line)
                match = REBALANCED.search(line)
                if match:
                    parts = frozenset(int(p) for p in re.findall(r"\[(\d+)\]", match["parts"]))
                    self.assignment = parts if match["what"] == "assigned" else frozenset()

    def consumed(self) -> list[tuple[int, int, str]]:
        with self._lock:
            return list(self.records)

    def explain(self) -> str:
        with self._lock:
            tail = "\n    ".join(self.stderr[-15:])
        return f"  {self.client_id}: assignment {self.assignment}, {len(self.records)} records; stderr:\n    {tail}"


def test_kcat_balanced_consumers_join_consume_and_commit(broker: BrokerThread) -> None:
    kcat = require_tool("kcat")
    topic, group = "kcat-balanced", "kcat-balanced"
    broker.create_topic(topic, PARTITIONS)
    members = [Kcat(kcat, broker.bootstrap_servers, group, topic, f"kcat-{i}") for i in range(1, MEMBERS + 1)]

    def explain() -> str:
        return explain_group(broker, group, topic) + "\n" + "\n".join(m.explain() for m in members)

    try:
        # Joined: the coordinator's assignment covers every partition, and each kcat reports
        # (in its rebalance message) exactly what the coordinator stored for it.
        def agreed() -> bool:
            view = group_state(broker, group, topic)
            if view is None or view.state != "Stable" or set(view.by_client_id()) != {m.client_id for m in members}:
                return False
            stored = view.by_client_id()
            if frozenset().union(*(m.assignment for m in view.members)) != frozenset(range(PARTITIONS)):
                return False
            return all(m.assignment == stored[m.client_id].assignment for m in members)

        wait_for(agreed, "the kcat consumers to join and agree with the coordinator on the assignment", explain)
        view = group_state(broker, group, topic)
        assert view is not None
        assert_exactly_once({m.client_id: m.assignment or frozenset() for m in members}, PARTITIONS, "kcat")
        owner = {p: m for m in members for p in (m.assignment or ())}

        # Consume: every record once, each by its partition's owner.
        sent = produce(broker.bootstrap_servers, topic, PER_PARTITION, PARTITIONS, "kcat")
        wait_for(
            lambda: sum(len(m.consumed()) for m in members) >= PARTITIONS * PER_PARTITION,
            f"the kcat consumers to consume {PARTITIONS * PER_PARTITION} records",
            explain,
        )
        got: dict[int, list[tuple[int, str]]] = {}
        for m in members:
            for partition, offset, value in m.consumed():
                assert owner[partition] is m, f"{m.client_id} consumed partition {partition}, owned by {owner[partition].client_id}"
                got.setdefault(partition, []).append((offset, value))
        assert got == {p: list(enumerate(values)) for p, values in sent.items()}

        # Commit: auto-commit brings every partition's committed offset to its end.
        wait_for(
            lambda: committed_offsets(broker, group, topic) == dict.fromkeys(range(PARTITIONS), PER_PARTITION),
            "the kcat consumers to commit every partition's end offset",
            lambda: f"committed {committed_offsets(broker, group, topic)}\n{explain()}",
        )

        # SIGTERM: each kcat closes its consumer (LeaveGroup) and exits 0; the group ends Empty.
        for m in members:
            m.proc.send_signal(signal.SIGTERM)
        for m in members:
            assert m.proc.wait(DEADLINE_S) == 0, f"{m.client_id} exited {m.proc.returncode}\n{m.explain()}"
        wait_for(
            lambda: (state := group_state(broker, group, topic)) is not None and state.state == "Empty",
            "the group to be Empty once every kcat left",
            explain,
        )
        assert committed_offsets(broker, group, topic) == dict.fromkeys(range(PARTITIONS), PER_PARTITION)
    finally:
        for m in members:
            if m.proc.poll() is None:
                m.proc.kill()
                m.proc.wait()
