"""The transactional APIs over loopback: versions and their error renames, NOT_COORDINATOR,
AddPartitionsToTxn's batched and verify-only forms, TxnOffsetCommit's checks, Produce's
verification of a transaction's first batch (KIP-890), and the admin APIs (KIP-664)."""

from __future__ import annotations

from mockbroker import MockCluster
from mockbroker.handlers._coordinator import transaction_coordinator
from mockbroker.model import OFFSETS_TOPIC
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest
from mockbroker_protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTransaction,
)
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from mockbroker_protocol.messages.describe_producers import DescribeProducersRequest, TopicRequest
from mockbroker_protocol.messages.describe_transactions import DescribeTransactionsRequest
from mockbroker_protocol.messages.end_txn import EndTxnRequest
from mockbroker_protocol.messages.init_producer_id import InitProducerIdRequest
from mockbroker_protocol.messages.list_transactions import ListTransactionsRequest
from mockbroker_protocol.messages.produce import PartitionProduceResponse
from mockbroker_protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
)
from tests.mockbroker.datapath import batch, connect_to, leader_client, produce_request
from tests.mockbroker.wire import WireClient

TID = "wire-txn"
E = ErrorCode


async def produce(
    client: WireClient, cluster: MockCluster, topic: str, records: bytes, *, version: int, transactional_id: str
) -> PartitionProduceResponse:
    req = produce_request(cluster, topic, records)
    req.transactional_id = transactional_id
    resp = await client.request(0, version, req)
    (p,) = resp.responses[0].partition_responses
    assert isinstance(p, PartitionProduceResponse)
    return p


async def coordinator_client(cluster: MockCluster, tid: str = TID) -> WireClient:
    return await connect_to(cluster, transaction_coordinator(cluster, tid).node_id)


async def init(client: WireClient, tid: str = TID) -> tuple[int, int]:
    resp = await client.request(22, 4, InitProducerIdRequest(transactional_id=tid, transaction_timeout_ms=60000))
    assert resp.error_code == E.NONE
    return resp.producer_id, resp.producer_epoch


def add_request(pid: int, epoch: int, *partitions: tuple[str, int], tid: str = TID) -> AddPartitionsToTxnRequest:
    topics: dict[str, list[int]] = {}
    for topic, p in partitions:
        topics.setdefault(topic, []).append(p)
    return AddPartitionsToTxnRequest(
        v3_and_below_transactional_id=tid, v3_and_below_producer_id=pid, v3_and_below_producer_epoch=epoch,
        v3_and_below_topics=[AddPartitionsToTxnTopic(t, ps) for t, ps in topics.items()],
    )  # fmt: skip


def add_errors(resp: object) -> dict[tuple[str, int], int]:
    return {
        (t.name, p.partition_index): p.partition_error_code
        for t in resp.results_by_topic_v3_and_below  # type: ignore[attr-defined]
        for p in t.results_by_partition
    }


async def test_api_versions_advertises_the_transactional_apis(cluster: MockCluster) -> None:
    client = await connect_to(cluster, 1)
    resp = await client.request(18, 3, ApiVersionsRequest("mockbroker-test", "1.0"))
    served = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    assert {k: served[k] for k in (24, 25, 26, 28, 61, 65, 66)} == {
        24: (0, 5), 25: (0, 4), 26: (0, 5), 28: (0, 5), 61: (0, 0), 65: (0, 0), 66: (0, 2),
    }  # fmt: skip
    await client.close()


async def test_add_partitions_end_txn_and_their_errors_by_version(cluster: MockCluster) -> None:
    cluster.create_topic("t", 2)
    client = await coordinator_client(cluster)
    pid, epoch = await init(client)
    resp = await client.request(24, 3, add_request(pid, epoch, ("t", 0), ("nope", 0)))
    assert add_errors(resp) == {("t", 0): E.OPERATION_NOT_ATTEMPTED, ("nope", 0): E.UNKNOWN_TOPIC_OR_PARTITION}
    assert add_errors(await client.request(24, 3, add_request(pid, epoch, ("t", 0), ("t", 1)))) == {
        ("t", 0): E.NONE, ("t", 1): E.NONE,
    }  # fmt: skip
    assert add_errors(await client.request(24, 1, add_request(pid, epoch + 1, ("t", 0))))[("t", 0)] == E.INVALID_PRODUCER_EPOCH
    assert add_errors(await client.request(24, 2, add_request(pid, epoch + 1, ("t", 0))))[("t", 0)] == E.PRODUCER_FENCED
    fenced = EndTxnRequest(transactional_id=TID, producer_id=pid, producer_epoch=epoch + 1, committed=True)
    assert (await client.request(26, 1, fenced)).error_code == E.INVALID_PRODUCER_EPOCH
    assert (await client.request(26, 3, fenced)).error_code == E.PRODUCER_FENCED
    commit = EndTxnRequest(transactional_id=TID, producer_id=pid, producer_epoch=epoch, committed=True)
    assert (await client.request(26, 3, commit)).error_code == E.NONE
    again = await client.request(26, 3, EndTxnRequest(transactional_id=TID, producer_id=pid, producer_epoch=epoch, committed=False))
    assert again.error_code == E.INVALID_TXN_STATE
    await client.close()


async def test_the_wrong_broker_answers_not_coordinator(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    right = transaction_coordinator(cluster, TID).node_id
    wrong = await connect_to(cluster, next(n for n in cluster.brokers if n != right))
    assert add_errors(await wrong.request(24, 3, add_request(1, 0, ("t", 0)))) == {("t", 0): E.NOT_COORDINATOR}
    assert (await wrong.request(25, 3, AddOffsetsToTxnRequest(TID, 1, 0, "g"))).error_code == E.NOT_COORDINATOR
    assert (await wrong.request(26, 3, EndTxnRequest(TID, 1, 0, True))).error_code == E.NOT_COORDINATOR
    described = await wrong.request(65, 0, DescribeTransactionsRequest([TID]))
    assert described.transaction_states[0].error_code == E.NOT_COORDINATOR
    await wrong.close()


async def test_batched_add_and_verify_only(cluster: MockCluster) -> None:
    cluster.create_topic("t", 2)
    client = await coordinator_client(cluster)
    pid, epoch = await init(client)

    def txn(verify_only: bool) -> AddPartitionsToTxnRequest:
        return AddPartitionsToTxnRequest(transactions=[AddPartitionsToTxnTransaction(
            TID, pid, epoch, verify_only, [AddPartitionsToTxnTopic("t", [0, 1])])])  # fmt: skip

    def errors(resp: object) -> list[int]:
        (result,) = resp.results_by_transaction  # type: ignore[attr-defined]
        return [p.partition_error_code for t in result.topic_results for p in t.results_by_partition]

    assert errors(await client.request(24, 5, txn(True))) == [E.TRANSACTION_ABORTABLE] * 2
    # Kafka 4.3 answers TRANSACTION_ABORTABLE at v4 too (tests/differential/test_transactions.py)
    assert errors(await client.request(24, 4, txn(True))) == [E.TRANSACTION_ABORTABLE] * 2
    assert errors(await client.request(24, 5, txn(False))) == [E.NONE, E.NONE]
    assert errors(await client.request(24, 5, txn(True))) == [E.NONE, E.NONE]
    await client.close()


async def test_produce_verifies_the_first_transactional_batch(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    coordinator = await coordinator_client(cluster)
    pid, epoch = await init(coordinator)
    client = await leader_client(cluster, "t")
    first = batch(b"a", producer_id=pid, producer_epoch=epoch, base_sequence=0, is_transactional=True)
    not_added = await produce(client, cluster, "t", first, version=9, transactional_id=TID)
    assert (not_added.error_code, not_added.error_message) == (
        E.INVALID_TXN_STATE,
        "Partition was not added to the transaction",
    )
    assert (
        await produce(client, cluster, "t", first, version=11, transactional_id=TID)
    ).error_code == E.TRANSACTION_ABORTABLE
    await coordinator.request(24, 3, add_request(pid, epoch, ("t", 0)))
    assert (await produce(client, cluster, "t", first, version=9, transactional_id=TID)).error_code == E.NONE
    zombie = batch(b"z", producer_id=pid, producer_epoch=epoch, base_sequence=0, is_transactional=True)
    await coordinator.request(26, 3, EndTxnRequest(TID, pid, epoch, True))
    await init(coordinator)  # epoch + 1: the old epoch is fenced
    assert (await produce(client, cluster, "t", zombie, version=9, transactional_id=TID)).error_code == E.INVALID_PRODUCER_EPOCH
    await client.close()
    await coordinator.close()


async def test_txn_offset_commit_checks_the_transaction_and_the_group(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    coordinator = await coordinator_client(cluster)
    pid, epoch = await init(coordinator)
    group = await connect_to(cluster, cluster.coordinator_for("g").node_id)

    def commit(version: int, **fields: object) -> TxnOffsetCommitRequest:
        request = TxnOffsetCommitRequest(
            transactional_id=TID, group_id="g", producer_id=pid, producer_epoch=epoch,
            topics=[TxnOffsetCommitRequestTopic("t", [TxnOffsetCommitRequestPartition(0, 5)]),
                    TxnOffsetCommitRequestTopic("nope", [TxnOffsetCommitRequestPartition(0, 5)])],
        )  # fmt: skip
        for name, value in fields.items():
            setattr(request, name, value)
        return request

    def errors(resp: object) -> list[int]:
        return [p.error_code for t in resp.topics for p in t.partitions]  # type: ignore[attr-defined]

    unknown = E.UNKNOWN_TOPIC_OR_PARTITION
    assert errors(await group.request(28, 3, commit(3))) == [E.INVALID_TXN_STATE, unknown]  # no AddOffsetsToTxn
    assert errors(await group.request(28, 4, commit(4))) == [E.TRANSACTION_ABORTABLE, unknown]
    assert (await coordinator.request(25, 3, AddOffsetsToTxnRequest(TID, pid, epoch, "g"))).error_code == E.NONE
    txn = cluster.transactions.describe(TID)
    assert txn is not None and (OFFSETS_TOPIC, cluster.coordinator_partition("g")) in txn.partitions
    assert errors(await group.request(28, 3, commit(3, producer_epoch=epoch + 1))) == [E.INVALID_PRODUCER_EPOCH, unknown]
    assert errors(await group.request(28, 3, commit(3, generation_id=4, member_id="m"))) == [E.ILLEGAL_GENERATION, unknown]
    assert errors(await group.request(28, 3, commit(3))) == [E.NONE, unknown]
    await coordinator.request(26, 3, EndTxnRequest(TID, pid, epoch, True))
    assert cluster.groups.fetch_offsets("g", [("t", [0])]).topics[0].partitions[0].committed_offset == 5
    await group.close()
    await coordinator.close()


async def test_describe_list_transactions_and_describe_producers(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    coordinator = await coordinator_client(cluster)
    pid, epoch = await init(coordinator)
    await coordinator.request(24, 3, add_request(pid, epoch, ("t", 0)))
    (state,) = (await coordinator.request(65, 0, DescribeTransactionsRequest([TID]))).transaction_states
    assert (state.error_code, state.transaction_state, state.producer_id, state.transaction_timeout_ms) == (
        E.NONE, "Ongoing", pid, 60000,
    )  # fmt: skip
    assert [(t.topic, t.partitions) for t in state.topics] == [("t", [0])]
    here = transaction_coordinator(cluster, TID).node_id
    never = next(t for t in (f"never-{i}" for i in range(1000)) if transaction_coordinator(cluster, t).node_id == here)
    (missing,) = (await coordinator.request(65, 0, DescribeTransactionsRequest([never]))).transaction_states
    assert missing.error_code == E.TRANSACTIONAL_ID_NOT_FOUND
    listed = await coordinator.request(66, 1, ListTransactionsRequest(state_filters=["Ongoing", "Nope"]))
    assert [(t.transactional_id, t.transaction_state) for t in listed.transaction_states] == [(TID, "Ongoing")]
    assert listed.unknown_state_filters == ["Nope"]
    bad_pattern = await coordinator.request(66, 2, ListTransactionsRequest(transactional_id_pattern="("))
    assert bad_pattern.error_code == E.INVALID_REGULAR_EXPRESSION

    client = await leader_client(cluster, "t")
    first = batch(b"a", producer_id=pid, producer_epoch=epoch, base_sequence=0, is_transactional=True)
    assert (await produce(client, cluster, "t", first, version=9, transactional_id=TID)).error_code == E.NONE
    described = await client.request(61, 0, DescribeProducersRequest([TopicRequest("t", [0, 7])]))
    ok, absent = described.topics[0].partitions
    assert absent.error_code == E.UNKNOWN_TOPIC_OR_PARTITION
    (producer,) = ok.active_producers
    assert (producer.producer_id, producer.producer_epoch, producer.last_sequence, producer.current_txn_start_offset) == (
        pid, epoch, 0, 0,
    )  # fmt: skip
    await client.close()
    await coordinator.close()


async def test_api_versions_finalizes_transaction_version_2_by_default(cluster: MockCluster) -> None:
    """As a new Kafka 4.3 cluster; the supported range (min 0) only from v4 (KIP-1022)."""
    client = await connect_to(cluster, 1)
    resp = await client.request(18, 4, ApiVersionsRequest("mockbroker-test", "1.0"))
    assert [(f.name, f.min_version, f.max_version) for f in resp.supported_features] == [
        ("transaction.version", 0, 2)
    ]
    assert [(f.name, f.max_version_level) for f in resp.finalized_features] == [("transaction.version", 2)]
    assert resp.finalized_features_epoch >= 0
    v3 = await client.request(18, 3, ApiVersionsRequest("mockbroker-test", "1.0"))
    assert (v3.supported_features, [f.name for f in v3.finalized_features]) == ([], ["transaction.version"])
    await client.close()


async def test_transaction_version_1_setting() -> None:
    cluster = MockCluster(brokers=1, transaction_version=1)
    await cluster.start()
    try:
        client = await connect_to(cluster, 1)
        resp = await client.request(18, 4, ApiVersionsRequest("mockbroker-test", "1.0"))
        assert [(f.name, f.max_version_level) for f in resp.finalized_features] == [
            ("transaction.version", 1)
        ]
        await client.close()
    finally:
        await cluster.stop()


async def test_transaction_version_2_setting_and_the_implicit_add_of_produce_v12() -> None:
    cluster = MockCluster(brokers=1, transaction_version=2)
    await cluster.start()
    try:
        client = await connect_to(cluster, 1)
        resp = await client.request(18, 3, ApiVersionsRequest("mockbroker-test", "1.0"))
        assert [(f.name, f.max_version_level) for f in resp.finalized_features] == [("transaction.version", 2)]
        cluster.create_topic("t", 1)
        pid, epoch = await init(client)
        first = batch(b"a", producer_id=pid, producer_epoch=epoch, base_sequence=0, is_transactional=True)
        assert (await produce(client, cluster, "t", first, version=11, transactional_id=TID)).error_code == E.TRANSACTION_ABORTABLE
        assert (await produce(client, cluster, "t", first, version=12, transactional_id=TID)).error_code == E.NONE
        txn = cluster.transactions.describe(TID)
        assert txn is not None and txn.state.value == "Ongoing" and txn.sorted_partitions() == [("t", 0)]
        ended = await client.request(26, 5, EndTxnRequest(TID, pid, epoch, True))
        assert (ended.error_code, ended.producer_id, ended.producer_epoch) == (E.NONE, pid, epoch + 1)
        log = cluster.topics["t"].partitions[0].log
        assert log.last_stable_offset == log.high_watermark == 2
        await client.close()
    finally:
        await cluster.stop()
    assert cluster.internal_errors == []


async def test_produce_while_the_transaction_completes_gets_kafkas_verification_answer() -> None:
    """The coordinator answers CONCURRENT_TRANSACTIONS while the markers are being written
    (PrepareCommit): ReplicaManager gives producers before transactions version 2 (Produce < v12)
    NOT_ENOUGH_REPLICAS naming the underlying error, which they retry; v12 gets
    CONCURRENT_TRANSACTIONS itself, without a message."""
    cluster = MockCluster(brokers=1, transaction_marker_delay_ms=600_000)
    await cluster.start()
    try:
        client = await connect_to(cluster, 1)
        cluster.create_topic("t", 1)
        pid, epoch = await init(client)
        await client.request(24, 3, add_request(pid, epoch, ("t", 0)))
        first = batch(b"a", producer_id=pid, producer_epoch=epoch, base_sequence=0, is_transactional=True)
        assert (
            await produce(client, cluster, "t", first, version=9, transactional_id=TID)
        ).error_code == E.NONE
        assert (await client.request(26, 3, EndTxnRequest(TID, pid, epoch, True))).error_code == E.NONE
        # A partition with no open transaction of the producer (on "t" the marker is not written
        # yet, so the batch would join the open transaction unverified, as in Kafka).
        cluster.create_topic("u", 1)
        next_txn = batch(b"b", producer_id=pid, producer_epoch=epoch, base_sequence=0, is_transactional=True)
        old = await produce(client, cluster, "u", next_txn, version=9, transactional_id=TID)
        assert (old.error_code, old.error_message) == (
            E.NOT_ENOUGH_REPLICAS,
            "Unable to verify the partition has been added to the transaction. Underlying error: CONCURRENT_TRANSACTIONS",
        )
        new = await produce(client, cluster, "u", next_txn, version=12, transactional_id=TID)
        assert (new.error_code, new.error_message) == (E.CONCURRENT_TRANSACTIONS, None)
        await client.close()
    finally:
        await cluster.stop()
    assert cluster.internal_errors == []
