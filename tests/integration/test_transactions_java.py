"""The Java producer (kafka-clients 4.3, from `make kafka`'s jars) in transactions under both
transaction versions (KIP-890): under 2 (mockbroker's default, as a new Kafka 4 cluster) it bumps
its epoch with every EndTxn v5 and adds partitions through Produce v12; under 1 it uses
AddPartitionsToTxn and AddOffsetsToTxn and keeps its epoch. Commits with the group's offsets,
aborts, and a read_committed consumer that sees only the committed records."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mockbroker.testing import start_cluster
from mockbroker_conformance.kafka import launcher
from tests.integration.support import in_ci, require_tool

SOURCE = Path(__file__).parent / "clients" / "java" / "TransactionalProducer.java"


def _classpath() -> str:
    libs = launcher.kafka_home() / "libs"
    if not any(libs.glob("kafka-clients-*.jar")):
        message = f"kafka-clients is not in {libs} (make kafka)"
        if in_ci():
            pytest.fail(message)
        pytest.skip(message)
    return f"{libs}/*"


@pytest.mark.parametrize("transaction_version", [2, 1])
def test_java_transactional_producer(transaction_version: int) -> None:
    java = require_tool("java")
    classpath = _classpath()
    kc = start_cluster(brokers=1, transaction_version=transaction_version, request_log=True)
    try:
        kc.create_topic("java-txn", 1)
        run = subprocess.run(
            [java, "-cp", classpath, str(SOURCE), kc.bootstrap_servers, "java-app", "java-txn", "java-group"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr[-3000:]
        assert "READ commit-0,commit-1,commit-2" in run.stdout, run.stdout + run.stderr[-3000:]
        assert kc.committed_offsets("java-group") == {"java-txn": {0: 3}}
        txn = kc.describe_transaction("java-app")
        assert txn is not None and txn.state == "CompleteAbort"
        end_versions = {r.api_version for r in kc.requests("EndTxn")}
        add_partitions = kc.requests("AddPartitionsToTxn")
        if transaction_version == 2:
            assert end_versions == {5} and txn.producer_epoch == 6  # one bump per EndTxn
            assert add_partitions == []  # Produce v12 and TxnOffsetCommit v5 add them
        else:
            assert max(end_versions) < 5 and txn.producer_epoch == 0
            assert add_partitions != []
        assert kc.internal_errors == []
    finally:
        kc.close()
