"""The control API over transactions, with the transactional APIs over loopback: listing and
describing transactional ids, aborting an ongoing transaction from outside (the producer fenced,
the ABORT markers written), moving a transaction coordinator, and making one answer
COORDINATOR_LOAD_IN_PROGRESS for a while on a ManualClock; and the same through the fixture facade."""

from __future__ import annotations

import pytest

from mockbroker import MockCluster
from mockbroker.clock import ManualClock
from mockbroker.control import ControlError, NotFound
from mockbroker.handlers._coordinator import transaction_coordinator
from mockbroker.testing import start_cluster
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.end_txn import EndTxnRequest
from mockbroker_protocol.messages.find_coordinator import FindCoordinatorRequest
from mockbroker_protocol.messages.init_producer_id import InitProducerIdRequest
from mockbroker_protocol.messages.list_transactions import ListTransactionsRequest
from tests.mockbroker.datapath import batch, connect_to, leader_client
from tests.mockbroker.handlers.test_transactions_wire import add_request, coordinator_client, init, produce

TID = "wire-txn"  # the id tests.mockbroker.handlers.test_transactions_wire's helpers use
E = ErrorCode


async def test_transactions_listed_described_and_aborted(cluster: MockCluster) -> None:
    cluster.create_topic("t", 2)
    control = cluster.control
    coordinator = await coordinator_client(cluster)
    pid, epoch = await init(coordinator)
    (empty,) = (await control.transactions()).values()
    assert (empty.state, empty.producer_id, empty.producer_epoch, empty.start_time_ms) == ("Empty", pid, epoch, -1)
    await coordinator.request(24, 3, add_request(pid, epoch, ("t", 1), ("t", 0)))
    client = await leader_client(cluster, "t")
    records = batch(b"a", producer_id=pid, producer_epoch=epoch, base_sequence=0, is_transactional=True)
    assert (await produce(client, cluster, "t", records, version=9, transactional_id=TID)).error_code == E.NONE
    ongoing = await control.describe_transaction(TID)
    assert ongoing is not None
    assert (ongoing.state, ongoing.partitions, ongoing.transaction_timeout_ms) == ("Ongoing", (("t", 0), ("t", 1)), 60000)
    assert ongoing.coordinator == await control.transaction_coordinator(TID) == transaction_coordinator(cluster, TID).node_id
    assert ongoing.to_json()["partitions"] == [{"topic": "t", "partition": 0}, {"topic": "t", "partition": 1}]
    assert list(await control.transactions(state="Ongoing")) == [TID]
    assert await control.transactions(state="Empty") == {}
    assert await control.describe_transaction("nobody") is None

    aborted = await control.abort_transaction(TID)
    assert (aborted.state, aborted.producer_epoch, aborted.partitions) == ("CompleteAbort", epoch + 1, ())
    log = cluster.topics["t"].partitions[0].log
    assert log.last_stable_offset == log.high_watermark == 2  # the record and its ABORT marker
    assert [a.producer_id for a in log.aborted_txns] == [pid]
    fenced = await coordinator.request(26, 3, EndTxnRequest(TID, pid, epoch, True))
    assert fenced.error_code == E.PRODUCER_FENCED  # the zombie learns at its next request
    (event,) = [e for e in cluster.events.filter("control.transaction_aborted")]
    assert (event.details["transactional_id"], event.details["producer_epoch"]) == (TID, epoch + 1)
    with pytest.raises(ControlError, match="not Ongoing"):
        await control.abort_transaction(TID)
    with pytest.raises(NotFound):
        await control.abort_transaction("nobody")
    await client.close()
    await coordinator.close()


async def test_move_transaction_coordinator() -> None:
    cluster = MockCluster(brokers=3)
    await cluster.start()
    try:
        control = cluster.control
        home = await control.transaction_coordinator(TID)
        target = next(b for b in cluster.brokers if b != home)
        assert await control.move_transaction_coordinator(TID, target) == home
        assert await control.transaction_coordinator(TID) == target
        old = await connect_to(cluster, home)
        refused = await old.request(22, 4, InitProducerIdRequest(transactional_id=TID, transaction_timeout_ms=60000))
        assert refused.error_code == E.NOT_COORDINATOR
        found = await old.request(10, 4, FindCoordinatorRequest(key_type=1, coordinator_keys=[TID]))
        assert (found.coordinators[0].error_code, found.coordinators[0].node_id) == (E.NONE, target)
        new = await connect_to(cluster, target)
        pid, _ = await init(new)
        snapshot = await control.describe_transaction(TID)
        assert snapshot is not None and (snapshot.producer_id, snapshot.coordinator) == (pid, target)
        assert (await control.faults()).transaction_coordinator_moves == {TID: target}
        (event,) = cluster.events.filter("control.transaction_coordinator_moved")
        assert (event.broker_id, event.details["previous"]) == (target, home)
        with pytest.raises(NotFound):
            await control.move_transaction_coordinator(TID, 99)
        await old.close()
        await new.close()
    finally:
        await cluster.stop()
    assert cluster.internal_errors == []


async def test_load_transaction_coordinator_on_a_manual_clock() -> None:
    clock = ManualClock()
    cluster = MockCluster(brokers=1, clock=clock)
    await cluster.start()
    try:
        control = cluster.control
        client = await connect_to(cluster, 1)
        pid, epoch = await init(client)
        until = await control.load_transaction_coordinator(TID, 1000)
        assert until == clock.now_ms() + 1000
        assert (await control.faults()).transaction_coordinators_loading == {TID: until}
        request = InitProducerIdRequest(transactional_id=TID, transaction_timeout_ms=60000)
        assert (await client.request(22, 4, request)).error_code == E.COORDINATOR_LOAD_IN_PROGRESS
        assert (await client.request(26, 3, EndTxnRequest(TID, pid, epoch, True))).error_code == E.COORDINATOR_LOAD_IN_PROGRESS
        assert (await client.request(66, 1, ListTransactionsRequest())).error_code == E.COORDINATOR_LOAD_IN_PROGRESS
        await control.advance(999)
        assert (await client.request(22, 4, request)).error_code == E.COORDINATOR_LOAD_IN_PROGRESS
        await control.advance(1)
        assert (await client.request(22, 4, request)).error_code == E.NONE
        assert (await control.faults()).transaction_coordinators_loading == {}
        await control.load_transaction_coordinator(TID, 5000)
        await control.clear_faults()  # ends the loading too
        assert (await client.request(66, 1, ListTransactionsRequest())).error_code == E.NONE
        assert len(cluster.events.filter("control.transaction_coordinator_loading")) == 2
        await client.close()
    finally:
        await cluster.stop()
    assert cluster.internal_errors == []


def test_the_fixture_facade_reaches_transactions() -> None:
    kc = start_cluster(brokers=1, request_log=False)
    try:
        assert kc.transactions() == {}
        assert kc.describe_transaction("nobody") is None
        with pytest.raises(NotFound):
            kc.abort_transaction("nobody")
        assert kc.transaction_coordinator("x") == 1
    finally:
        kc.close()
