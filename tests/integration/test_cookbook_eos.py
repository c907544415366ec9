"""docs/cookbook.md, recipe 8: testing an exactly-once application (confluent-kafka).

The application (tests/integration/clients/eos_app.py) consumes ``payments``, writes each value
upper-cased to ``payments-out`` and commits its offsets inside the same transaction. The test kills
it with SIGKILL in the middle of a transaction whose records are already in the log, restarts it
under the same transactional.id, and checks what exactly-once promises: a read_committed reader of
the output sees every input exactly once, the group's committed offsets are the input's end, and a
read_uncommitted reader does see the killed transaction's records (so the kill really happened
mid-transaction).

docs/cookbook.md holds the same recipe as one file a user can paste (the test and a confluent-kafka
application in one module), run as pasted by tests/docs/test_snippets.py; the application here is
also run with kafka-python and aiokafka by tests/integration/test_transactions_eos.py.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from confluent_kafka import Consumer, KafkaError, TopicPartition

from mockbroker.testing import KafkaCluster
from tests.integration.support import DEADLINE_S, wait_for

APP = Path(__file__).parent / "clients" / "eos_app.py"
FAST_GROUP = {"group_initial_rebalance_delay_ms": 0, "group_min_session_timeout_ms": 1000}


def start_app(kafka_cluster: KafkaCluster, *extra: str, client: str = "confluent") -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(APP), "--bootstrap", kafka_cluster.bootstrap_servers, "--input", "payments",
         "--output", "payments-out", "--group", "payments-app", "--transactional-id", "payments-app-1",
         "--client", client, *extra],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip


def next_event(app: subprocess.Popen[str]) -> dict[str, object]:
    assert app.stdout is not None
    line = app.stdout.readline()
    assert line, f"the app exited ({app.wait()}) without a word"
    event: dict[str, object] = json.loads(line)
    return event


def read_output(kafka_cluster: KafkaCluster, isolation: str) -> list[bytes]:
    """Every value of payments-out, read with ``isolation`` up to the end of each partition."""
    consumer = Consumer({
        "bootstrap.servers": kafka_cluster.bootstrap_servers, "group.id": f"checker-{isolation}",
        "isolation.level": isolation, "enable.partition.eof": True, "enable.auto.commit": False,
    })  # fmt: skip
    consumer.assign([TopicPartition("payments-out", p, 0) for p in range(3)])
    values: list[bytes] = []
    at_end: set[int] = set()

    def drained() -> bool:
        msg = consumer.poll(0.2)
        if msg is not None:
            error = msg.error()
            if error is not None and error.code() == KafkaError._PARTITION_EOF:
                at_end.add(msg.partition() or 0)
            elif error is None:
                values.append(msg.value() or b"")
        return len(at_end) == 3

    try:
        wait_for(drained, f"the end of payments-out ({isolation})")
    finally:
        consumer.close()
    return values


@pytest.mark.kafka_cluster(topics={"payments": 3, "payments-out": 3}, **FAST_GROUP)
def test_exactly_once_across_a_crash(kafka_cluster: KafkaCluster) -> None:
    inputs = [f"payment-{i}".encode() for i in range(90)]
    kafka_cluster.produce("payments", inputs)

    app = start_app(kafka_cluster, "--hang-after", "3")  # 3 transactions, then hang mid-transaction
    try:
        while next_event(app)["event"] != "mid_transaction":
            pass
        app.send_signal(signal.SIGKILL)  # no EndTxn, no LeaveGroup: the socket just drops
    finally:
        app.wait(DEADLINE_S)

    restarted = start_app(kafka_cluster)  # init_transactions() fences the dead one, aborts its transaction
    try:
        while next_event(restarted)["event"] != "done":
            pass
    finally:
        assert restarted.wait(DEADLINE_S) == 0

    committed = read_output(kafka_cluster, "read_committed")
    assert sorted(committed) == sorted(v.upper() for v in inputs)  # every input exactly once
    assert kafka_cluster.committed_offsets("payments-app", "payments") == {"payments": {0: 30, 1: 30, 2: 30}}
    uncommitted = read_output(kafka_cluster, "read_uncommitted")
    assert len(uncommitted) > len(committed)  # the killed transaction's records are in the log, aborted


