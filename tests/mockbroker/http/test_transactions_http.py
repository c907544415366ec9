"""The HTTP control API's transactions, with aiokafka as the real transactional producer: an open
transaction listed and described as its coordinator sees it, aborted over HTTP (the producer is
fenced at its commit, a read_committed consumer sees nothing), and the transaction coordinator's
faults (moved, loading) listed in /faults."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.errors import KafkaError

from mockbroker import MockCluster
from tests.integration.support import DEADLINE_S
from tests.mockbroker.http.test_app import Api, _started

TID = "http-txn"


@pytest.fixture
async def env() -> AsyncIterator[tuple[MockCluster, Api]]:
    cluster = MockCluster(brokers=3)
    server, http = await _started(cluster)
    try:
        yield cluster, Api(http)
    finally:
        await http.close()
        await server.stop()
        await cluster.stop()
    assert not cluster.internal_errors, cluster.internal_errors


async def test_a_transaction_listed_described_and_aborted_over_http(env: tuple[MockCluster, Api]) -> None:
    cluster, api = env
    cluster.create_topic("out", 1)
    producer = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap_servers, transactional_id=TID)
    await producer.start()
    try:
        await producer.begin_transaction()
        await producer.send_and_wait("out", b"never")
        (listed,) = (await api.ok("GET", "/transactions", state="Ongoing"))["transactions"]
        assert (listed["transactional_id"], listed["state"], listed["partitions"]) == (
            TID, "Ongoing", [{"topic": "out", "partition": 0}],
        )  # fmt: skip
        assert listed["coordinator"] == await cluster.control.transaction_coordinator(TID)
        assert listed["start_time_ms"] > 0 and listed["transaction_timeout_ms"] == 60000
        assert (await api.ok("GET", f"/transactions/{TID}")) == listed
        assert (await api.ok("GET", "/transactions", state="Empty"))["transactions"] == []

        aborted = await api.ok("POST", f"/transactions/{TID}/abort", {"reason": "hanging"})
        assert (aborted["state"], aborted["producer_epoch"], aborted["partitions"]) == (
            "CompleteAbort", listed["producer_epoch"] + 1, [],
        )  # fmt: skip
        with pytest.raises(KafkaError):  # the zombie is fenced at its next request
            await asyncio.wait_for(producer.commit_transaction(), DEADLINE_S)
        status, body = await api.post(f"/transactions/{TID}/abort")
        assert status == 409 and "not Ongoing" in body["error"]
        assert (await api.post("/transactions/nobody/abort"))[0] == 404
        assert (await api.get("/transactions/nobody"))[0] == 404
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(
        "out", bootstrap_servers=cluster.bootstrap_servers, isolation_level="read_committed", auto_offset_reset="earliest"
    )
    await consumer.start()
    try:
        batches = await consumer.getmany(timeout_ms=200)
        assert [r.value for rs in batches.values() for r in rs] == []
    finally:
        await consumer.stop()
    (event,) = cluster.events.filter("control.transaction_aborted")
    assert event.reason == "hanging"


async def test_transaction_coordinator_faults_over_http(env: tuple[MockCluster, Api]) -> None:
    cluster, api = env
    home = await cluster.control.transaction_coordinator(TID)
    target = next(b for b in cluster.brokers if b != home)
    moved = await api.ok("POST", f"/transactions/{TID}/coordinator", {"broker_id": target})
    assert moved == {"previous": home, "coordinator": target}
    loading = await api.ok("POST", f"/transactions/{TID}/loading", {"duration_ms": 60_000})
    assert loading["coordinator"] == target
    faults = await api.ok("GET", "/faults")
    assert faults["transaction_coordinator_moves"] == {TID: target}
    assert faults["transaction_coordinators_loading"] == {TID: loading["until_ms"]}
    await cluster.control.enable_request_log()
    producer = AIOKafkaProducer(bootstrap_servers=cluster.bootstrap_servers, transactional_id=TID)
    start = asyncio.ensure_future(producer.start())  # retries COORDINATOR_LOAD_IN_PROGRESS
    try:
        await cluster.control.wait_for_request("InitProducerId", error="COORDINATOR_LOAD_IN_PROGRESS", timeout=DEADLINE_S)
        assert (await api.ok("POST", f"/transactions/{TID}/loading", {"duration_ms": 0}))["coordinator"] == target
        await asyncio.wait_for(start, DEADLINE_S)
        described = await api.ok("GET", f"/transactions/{TID}")
        assert (described["state"], described["coordinator"]) == ("Empty", target)
    finally:
        await producer.stop()
    assert (await api.post(f"/transactions/{TID}/coordinator", {"broker_id": 99}))[0] == 404
