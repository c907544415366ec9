"""Helpers for the data-path tests (Produce, Fetch, ListOffsets): raw requests over loopback."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from mockbroker import MockCluster
from mockbroker_protocol.messages.fetch import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    FetchTopic,
    PartitionData,
)
from mockbroker_protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from mockbroker_protocol.messages.produce import (
    PartitionProduceData,
    PartitionProduceResponse,
    ProduceRequest,
    ProduceResponse,
    TopicProduceData,
)
from mockbroker_protocol.records import SimpleRecord, build_batch
from tests.mockbroker.wire import WireClient

PRODUCE, FETCH, LIST_OFFSETS, INIT_PRODUCER_ID, OFFSET_FOR_LEADER_EPOCH = 0, 1, 2, 22, 23
DEADLINE_S = 10.0


async def connect_to(cluster: MockCluster, node_id: int) -> WireClient:
    node = cluster.brokers[node_id]
    return await WireClient.connect(node.host, node.port)


def leader_of(cluster: MockCluster, topic: str, partition: int = 0) -> int:
    return cluster.topics[topic].partitions[partition].leader_id


def not_leader_of(cluster: MockCluster, topic: str, partition: int = 0) -> int:
    leader = leader_of(cluster, topic, partition)
    return next(n for n in cluster.brokers if n != leader)


async def leader_client(cluster: MockCluster, topic: str, partition: int = 0) -> WireClient:
    return await connect_to(cluster, leader_of(cluster, topic, partition))


def batch(*values: bytes, key: bytes | None = b"k", timestamp: int = 1_700_000_000_000, **kwargs: Any) -> bytes:
    return build_batch([SimpleRecord(key=key, value=v, timestamp=timestamp + i) for i, v in enumerate(values)], **kwargs)


def produce_request(
    cluster: MockCluster, topic: str, records: bytes | None, *, partition: int = 0, acks: int = -1, by_id: bool = False
) -> ProduceRequest:
    t = TopicProduceData(name=topic, partition_data=[PartitionProduceData(partition, records)])
    if by_id:
        t.topic_id = cluster.topics[topic].topic_id
    return ProduceRequest(acks=acks, timeout_ms=5000, topic_data=[t])


async def produce(
    client: WireClient,
    cluster: MockCluster,
    topic: str,
    records: bytes | None,
    *,
    partition: int = 0,
    version: int = 9,
    acks: int = -1,
) -> PartitionProduceResponse:
    req = produce_request(cluster, topic, records, partition=partition, acks=acks, by_id=version >= 13)
    resp: ProduceResponse = await client.request(PRODUCE, version, req)
    (t,) = resp.responses
    (p,) = t.partition_responses
    return p


def fetch_request(
    cluster: MockCluster,
    wanted: Sequence[tuple[str, int, int]],
    *,
    version: int = 12,
    max_wait_ms: int = 0,
    min_bytes: int = 1,
    max_bytes: int = 50 * 1024 * 1024,
    partition_max_bytes: int = 1024 * 1024,
    isolation_level: int = 0,
    session_id: int = 0,
    session_epoch: int = -1,
    current_leader_epoch: int = -1,
) -> FetchRequest:
    """``wanted``: (topic, partition, fetch offset) triples."""
    topics: list[FetchTopic] = []
    for name, partition, offset in wanted:
        if not topics or topics[-1].topic != name:
            known = cluster.topics.get(name)
            topics.append(FetchTopic(topic=name, topic_id=known.topic_id if known else uuid.uuid4()))
        topics[-1].partitions.append(
            FetchPartition(
                partition=partition,
                fetch_offset=offset,
                partition_max_bytes=partition_max_bytes,
                current_leader_epoch=current_leader_epoch,
            )
        )
    return FetchRequest(
        max_wait_ms=max_wait_ms,
        min_bytes=min_bytes,
        max_bytes=max_bytes,
        isolation_level=isolation_level,
        session_id=session_id,
        session_epoch=session_epoch,
        topics=topics,
    )


async def fetch(client: WireClient, req: FetchRequest, *, version: int = 12, timeout: float = DEADLINE_S) -> FetchResponse:
    resp: FetchResponse = await client.request(FETCH, version, req, timeout=timeout)
    return resp


def partitions_of(resp: FetchResponse) -> list[PartitionData]:
    return [p for t in resp.responses for p in t.partitions]


def only_partition(resp: FetchResponse) -> PartitionData:
    (p,) = partitions_of(resp)
    return p


def records_bytes(p: PartitionData) -> bytes:
    return b"" if p.records is None else bytes(p.records)  # type: ignore[arg-type]


async def list_offset(
    client: WireClient,
    topic: str,
    timestamp: int,
    *,
    partition: int = 0,
    version: int = 9,
    isolation_level: int = 0,
    replica_id: int = -1,
) -> ListOffsetsPartitionResponse:
    req = ListOffsetsRequest(
        replica_id=replica_id,
        isolation_level=isolation_level,
        topics=[ListOffsetsTopic(topic, [ListOffsetsPartition(partition_index=partition, timestamp=timestamp)])],
    )
    resp = await client.request(LIST_OFFSETS, version, req)
    (t,) = resp.topics
    (p,) = t.partitions
    assert isinstance(p, ListOffsetsPartitionResponse)
    return p


async def wait_until(predicate: Callable[[], bool], what: str, timeout: float = DEADLINE_S) -> None:
    """Poll a condition on the loop until it holds; fail with ``what`` at the deadline."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)  # yields to the broker; the condition, not the sleep, synchronises


def parked_on(cluster: MockCluster, topic: str, partition: int = 0) -> bool:
    """True while a Fetch is parked listening for appends to that partition."""
    return bool(cluster.topics[topic].partitions[partition].log._listeners)
