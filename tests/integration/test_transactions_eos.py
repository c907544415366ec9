"""The exactly-once crash test of docs/cookbook.md (recipe 8, confluent-kafka there) with the other
Python clients that support transactions: kafka-python and aiokafka run the same
consume-transform-produce application (tests/integration/clients/eos_app.py), are SIGKILLed
mid-transaction and restarted; the output read with read_committed holds every input exactly once
and the group's committed offsets are the input's end."""

from __future__ import annotations

import signal

import pytest

from mockbroker.testing import KafkaCluster
from tests.integration.support import DEADLINE_S
from tests.integration.test_cookbook_eos import FAST_GROUP, next_event, read_output, start_app


@pytest.mark.parametrize("client", ["kafka-python", "aiokafka"])
@pytest.mark.kafka_cluster(topics={"payments": 3, "payments-out": 3}, **FAST_GROUP)
def test_exactly_once_across_a_crash(kafka_cluster: KafkaCluster, client: str) -> None:
    inputs = [f"payment-{i}".encode() for i in range(60)]
    kafka_cluster.produce("payments", inputs)

    app = start_app(kafka_cluster, "--hang-after", "2", client=client)
    try:
        while next_event(app)["event"] != "mid_transaction":
            pass
        app.send_signal(signal.SIGKILL)
    finally:
        app.wait(DEADLINE_S)

    restarted = start_app(kafka_cluster, client=client)
    try:
        while next_event(restarted)["event"] != "done":
            pass
    finally:
        assert restarted.wait(DEADLINE_S) == 0

    committed = read_output(kafka_cluster, "read_committed")
    assert sorted(committed) == sorted(v.upper() for v in inputs)
    assert kafka_cluster.committed_offsets("payments-app", "payments") == {"payments": {0: 20, 1: 20, 2: 20}}
    assert len(read_output(kafka_cluster, "read_uncommitted")) > len(committed)
