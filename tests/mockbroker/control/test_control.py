"""The control API's core on the cluster's own loop, over raw protocol requests: the intercept
hook and what it may answer, the request log, pushed errors at cluster, broker and partition
level, leader and broker moves, version caps, and produce/read."""

from __future__ import annotations

import asyncio

import pytest
from kafka.partitioner.default import murmur2 as kafka_python_murmur2

from mockbroker import MockCluster
from mockbroker.control import ControlError
from mockbroker.intercept import CLOSE, DROP, After, Delay, Intercepted, Respond
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.hashing import murmur2
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from mockbroker_protocol.messages.find_coordinator import FindCoordinatorRequest
from mockbroker_protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from mockbroker_protocol.messages.metadata import MetadataRequest, MetadataResponse
from mockbroker_protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from tests.mockbroker.datapath import batch, connect_to, fetch, fetch_request, leader_of, only_partition
from tests.mockbroker.wire import WireClient

API_VERSIONS, METADATA, PRODUCE, LIST_OFFSETS, FIND_COORDINATOR = 18, 3, 0, 2, 10


async def metadata(client: WireClient, version: int = 12) -> MetadataResponse:
    response: MetadataResponse = await client.request(METADATA, version, MetadataRequest(topics=None))
    return response


async def test_intercept_observes_then_answers_then_is_gone(cluster: MockCluster) -> None:
    seen: list[tuple[str, int, str, int]] = []

    def observe(r: Intercepted) -> None:
        seen.append((r.api_name, r.api_version, r.client_id, r.broker_id))

    await cluster.control.intercept("ApiVersions", observe, keep=True)
    canned = ApiVersionsResponse(error_code=ErrorCode.NONE, api_keys=[])
    one_shot = await cluster.control.intercept(API_VERSIONS, lambda r: Respond(canned), broker=2)
    c1 = await connect_to(cluster, 1)
    c2 = await connect_to(cluster, 2)
    assert (await c1.request(API_VERSIONS, 3, ApiVersionsRequest("t", "1"))).api_keys  # broker 1: untouched
    assert (await c2.request(API_VERSIONS, 3, ApiVersionsRequest("t", "1"))).api_keys == []  # the canned answer
    assert not one_shot.active and one_shot.calls == 1
    assert (await c2.request(API_VERSIONS, 3, ApiVersionsRequest("t", "1"))).api_keys  # one shot: gone
    assert seen == [("ApiVersions", 3, "wire-test", 1), ("ApiVersions", 3, "wire-test", 2), ("ApiVersions", 3, "wire-test", 2)]
    await c1.close()
    await c2.close()


async def test_intercept_drop_close_delay_and_after(cluster: MockCluster) -> None:
    client = await connect_to(cluster, 1)
    await cluster.control.intercept(METADATA, lambda r: DROP)
    with pytest.raises(TimeoutError):
        await client.request(METADATA, 12, MetadataRequest(topics=None), timeout=0.3)
    await client.close()

    client = await connect_to(cluster, 1)
    await cluster.control.intercept(METADATA, lambda r: Delay(1))

    def rename(response: MetadataResponse) -> None:
        response.cluster_id = "edited"

    await cluster.control.intercept(METADATA, lambda r: After(rename))
    assert (await metadata(client)).cluster_id == "edited"
    await cluster.control.intercept(None, lambda r: CLOSE)
    with pytest.raises(asyncio.IncompleteReadError):
        await metadata(client)
    assert cluster.intercepting is False  # one-shot interceptors used up: the fast path is back
    await cluster.control.intercept(None, lambda r: None, keep=True)
    assert cluster.intercepting is True
    await cluster.control.clear_faults()
    assert cluster.intercepting is False
    await client.close()


async def test_request_log_records_and_filters(cluster: MockCluster) -> None:
    await cluster.control.enable_request_log()
    cluster.create_topic("t", 1)
    await cluster.control.push_errors("FindCoordinator", "COORDINATOR_NOT_AVAILABLE")
    client = await connect_to(cluster, 1)
    await metadata(client)
    answer = await client.request(FIND_COORDINATOR, 3, FindCoordinatorRequest(key="g"))
    assert answer.error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
    assert answer.node_id == -1
    logged = await cluster.control.requests()
    assert [(r.api_name, r.api_version, r.client_id, r.broker_id, r.outcome) for r in logged] == [
        ("Metadata", 12, "wire-test", 1, "answered"),
        ("FindCoordinator", 3, "wire-test", 1, "intercepted"),
    ]
    assert [r.correlation_id for r in logged] == [1, 2]
    (failed,) = await cluster.control.requests(error="COORDINATOR_NOT_AVAILABLE")
    assert failed.errors == ("COORDINATOR_NOT_AVAILABLE",) and failed.api_key == FIND_COORDINATOR
    assert await cluster.control.requests("Metadata", broker=2) == []
    await client.close()


async def test_broker_level_errors_come_before_cluster_level_ones(cluster: MockCluster) -> None:
    await cluster.control.push_errors(FIND_COORDINATOR, "NOT_COORDINATOR", "COORDINATOR_LOAD_IN_PROGRESS")
    await cluster.control.push_errors(FIND_COORDINATOR, "GROUP_AUTHORIZATION_FAILED", broker=2)
    c1, c2 = await connect_to(cluster, 1), await connect_to(cluster, 2)
    find = FindCoordinatorRequest(key="g")
    codes = [
        (await c2.request(FIND_COORDINATOR, 3, find)).error_code,  # broker 2's own error first
        (await c2.request(FIND_COORDINATOR, 3, find)).error_code,  # then the cluster's, in order
        (await c1.request(FIND_COORDINATOR, 3, find)).error_code,
        (await c1.request(FIND_COORDINATOR, 3, find)).error_code,  # all used up
    ]
    assert codes == [
        ErrorCode.GROUP_AUTHORIZATION_FAILED, ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.NONE,
    ]  # fmt: skip
    # v4+: the error goes into each key's entry
    batched = await c1.request(FIND_COORDINATOR, 4, FindCoordinatorRequest(key_type=0, coordinator_keys=["a", "b"]))
    assert [c.error_code for c in batched.coordinators] == [0, 0]
    await cluster.control.push_errors(FIND_COORDINATOR, "NOT_COORDINATOR")
    batched = await c1.request(FIND_COORDINATOR, 4, FindCoordinatorRequest(key_type=0, coordinator_keys=["a", "b"]))
    assert [(c.key, c.error_code) for c in batched.coordinators] == [("a", 16), ("b", 16)]
    assert await cluster.control.pending_errors() == {}
    await c1.close()
    await c2.close()


async def test_partition_level_produce_error_lands_in_that_partition_and_appends_nothing(cluster: MockCluster) -> None:
    cluster.create_topic("two", 2, replication_factor=1)
    for p in cluster.topics["two"].partitions:  # both partitions on broker 1, so one request carries both
        p.leader_id, p.replica_ids = 1, [1]
    await cluster.control.push_errors("Produce", "NOT_LEADER_OR_FOLLOWER", topic="two", partition=1)
    client = await connect_to(cluster, 1)
    request = ProduceRequest(
        acks=-1, timeout_ms=1000,
        topic_data=[TopicProduceData(name="two", partition_data=[PartitionProduceData(0, batch(b"a")), PartitionProduceData(1, batch(b"b"))])],
    )  # fmt: skip
    response = await client.request(PRODUCE, 9, request)
    answers = {(p.index, p.error_code, p.base_offset) for t in response.responses for p in t.partition_responses}
    assert answers == {(0, 0, 0), (1, ErrorCode.NOT_LEADER_OR_FOLLOWER, -1)}
    assert await cluster.control.log_end_offsets("two") == {0: 1, 1: 0}
    # the retry goes through
    response = await client.request(PRODUCE, 9, request)
    assert {(p.index, p.error_code) for t in response.responses for p in t.partition_responses} == {(0, 0), (1, 0)}
    await client.close()


async def test_partition_level_read_error_overwrites_the_answer(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1)
    await cluster.control.produce("t", [b"x", b"y"])
    await cluster.control.push_errors(LIST_OFFSETS, "OFFSET_NOT_AVAILABLE", topic="t", partition=0)
    client = await connect_to(cluster, leader_of(cluster, "t"))
    request = ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsTopic("t", [ListOffsetsPartition(0, -1, -1)])])
    (p,) = (await client.request(LIST_OFFSETS, 7, request)).topics[0].partitions
    assert (p.error_code, p.offset) == (ErrorCode.OFFSET_NOT_AVAILABLE, -1)
    (p,) = (await client.request(LIST_OFFSETS, 7, request)).topics[0].partitions
    assert (p.error_code, p.offset) == (0, 2)
    await client.close()


async def test_push_errors_refuses_what_it_cannot_place(cluster: MockCluster) -> None:
    with pytest.raises(ValueError, match="no per-partition errors"):
        await cluster.control.push_errors("JoinGroup", "NOT_COORDINATOR", topic="t", partition=0)
    with pytest.raises(ValueError, match="unknown error"):
        await cluster.control.push_errors("JoinGroup", "NO_SUCH_ERROR")
    with pytest.raises(ValueError, match="unknown API"):
        await cluster.control.push_errors("Frobnicate", "NOT_COORDINATOR")
    with pytest.raises(ValueError, match="no error field"):
        await cluster.control.push_errors("DescribeConfigs", "NOT_COORDINATOR")


async def test_move_leader_bumps_the_epoch_and_fences_the_old_one(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1, replication_factor=3)
    old = leader_of(cluster, "t")
    epoch = await cluster.control.move_leader("t", 0)
    new = leader_of(cluster, "t")
    assert new != old and epoch == 1
    old_client, new_client = await connect_to(cluster, old), await connect_to(cluster, new)
    stale = await fetch(old_client, fetch_request(cluster, [("t", 0, 0)]))
    assert only_partition(stale).error_code == ErrorCode.NOT_LEADER_OR_FOLLOWER
    fenced = await fetch(new_client, fetch_request(cluster, [("t", 0, 0)], current_leader_epoch=0))
    assert only_partition(fenced).error_code == ErrorCode.FENCED_LEADER_EPOCH
    current = await fetch(new_client, fetch_request(cluster, [("t", 0, 0)], current_leader_epoch=1))
    assert only_partition(current).error_code == ErrorCode.NONE
    (topic,) = (await metadata(new_client)).topics
    assert (topic.partitions[0].leader_id, topic.partitions[0].leader_epoch) == (new, 1)
    await old_client.close()
    await new_client.close()


async def test_broker_down_and_up(cluster: MockCluster) -> None:
    cluster.create_topic("t", 3, replication_factor=3)
    led_by_2 = [p.index for p in cluster.topics["t"].partitions if p.leader_id == 2]
    port = cluster.brokers[2].port
    watcher = await connect_to(cluster, 2)
    moved = await cluster.control.broker_down(2)
    assert sorted(moved) == [f"t-{i}" for i in led_by_2] and 2 not in moved.values()
    assert await watcher.closed_by_peer()
    with pytest.raises(OSError):
        await WireClient.connect("127.0.0.1", port)
    client = await connect_to(cluster, 1)
    meta = await metadata(client)
    assert sorted(b.node_id for b in meta.brokers) == [1, 3]
    for p in meta.topics[0].partitions:
        assert p.leader_id != 2 and 2 not in p.isr_nodes and p.offline_replicas == ([2] if 2 in p.replica_nodes else [])
    assert {(await cluster.control.coordinator(f"g{i}")) for i in range(20)} <= {1, 3}
    await cluster.control.broker_up(2)
    assert cluster.brokers[2].port == port
    back = await connect_to(cluster, 2)
    meta = await metadata(back)
    assert sorted(b.node_id for b in meta.brokers) == [1, 2, 3]
    assert {p.partition_index for p in meta.topics[0].partitions if p.leader_id == 2} == set(led_by_2)
    assert all(p.leader_epoch == 2 for p in meta.topics[0].partitions if p.partition_index in led_by_2)
    for c in (client, back):
        await c.close()
    with pytest.raises(ControlError, match="not down"):
        await cluster.control.broker_up(2)


async def test_cap_api_version(cluster: MockCluster) -> None:
    client = await connect_to(cluster, 1)
    await cluster.control.cap_api_version("Metadata", 4)
    versions = await client.request(API_VERSIONS, 3, ApiVersionsRequest("t", "1"))
    assert {k.api_key: k.max_version for k in versions.api_keys}[METADATA] == 4
    assert (await metadata(client, version=4)).brokers
    await cluster.control.cap_api_version("Metadata", None)
    versions = await client.request(API_VERSIONS, 3, ApiVersionsRequest("t", "1"))
    assert {k.api_key: k.max_version for k in versions.api_keys}[METADATA] == 13
    await client.close()


async def test_produce_and_read_back(cluster: MockCluster) -> None:
    cluster.create_topic("t", 4)
    placed = await cluster.control.produce(
        "t",
        [("k1", "v1"), {"key": "k2", "value": b"v2", "headers": {"h": "x"}}, {"value": "v3", "partition": 3}],
        compression="zstd",
    )
    assert placed[2] == (3, 0)
    for key, (partition, _) in zip([b"k1", b"k2"], placed, strict=False):
        assert partition == (kafka_python_murmur2(key) & 0x7FFFFFFF) % 4
    records = await cluster.control.read("t", placed[1][0])
    assert [(r.key, r.value, r.headers, r.compression) for r in records if r.key == b"k2"] == [(b"k2", b"v2", (("h", b"x"),), "zstd")]
    with pytest.raises(ControlError, match="no partition 9"):
        await cluster.control.produce("t", [b"x"], partition=9)


@pytest.mark.parametrize("key", [b"", b"a", b"ab", b"abc", b"abcd", b"hello world", bytes(range(256))])
def test_murmur2_is_kafkas(key: bytes) -> None:
    assert murmur2(key) & 0x7FFFFFFF == kafka_python_murmur2(key) & 0x7FFFFFFF
