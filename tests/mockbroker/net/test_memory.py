"""Frame memory under hostile announcements (issue #19, "must show" 1 at small scale): a frame's
buffer grows with the bytes that arrive, and queued.max.request.bytes (Kafka's MemoryPool) mutes
the connections it cannot serve while everyone else is answered."""

from __future__ import annotations

import asyncio
import os
import struct
from collections.abc import AsyncIterator

import pytest

from mockbroker import MockCluster
from mockbroker.net.server import BrokerServer
from mockbroker_protocol import registry
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from tests.mockbroker.datapath import batch, produce_request, wait_until
from tests.mockbroker.wire import WireClient

ANNOUNCERS = 20
HUNDRED_MB = 100 * 1024 * 1024
API_VERSIONS = 18
PRODUCE = 0


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def announce(server: BrokerServer, size: int, sent: bytes = b"x") -> WireClient:
    client = await WireClient.connect(server.node.host, server.node.port)
    await client.send_raw(struct.pack(">i", size) + sent)
    return client


async def api_versions_answered(server: BrokerServer) -> None:
    client = await WireClient.connect(server.node.host, server.node.port)
    try:
        resp = await client.request(API_VERSIONS, 3, ApiVersionsRequest("bystander", "1"), timeout=5.0)
        assert resp.error_code == 0
    finally:
        await client.close()


@pytest.fixture
async def budgeted() -> AsyncIterator[MockCluster]:
    c = MockCluster(brokers=1, queued_max_request_bytes=200_000)
    await c.start()
    try:
        yield c
    finally:
        await c.stop()
    assert c.internal_errors == []


def only_server(cluster: MockCluster) -> BrokerServer:
    (server,) = cluster._servers.values()
    return server


async def test_announced_frames_cost_only_the_bytes_that_arrive(cluster: MockCluster) -> None:
    """20 connections announcing 100 MB frames and sending one byte each: the broker's memory
    does not grow by their announced sizes (it grew by 2 GB before), and others are answered."""
    server = next(iter(cluster._servers.values()))
    before = rss_bytes()
    clients = [await announce(server, HUNDRED_MB) for _ in range(ANNOUNCERS)]
    await wait_until(lambda: sum(c.frames.buffered for c in server._connections) == ANNOUNCERS, "every byte read")
    assert rss_bytes() - before < 64 * 1024 * 1024
    await api_versions_answered(server)
    await asyncio.gather(*(c.close() for c in clients))


async def test_connections_beyond_the_budget_are_muted_and_others_answered(budgeted: MockCluster) -> None:
    server = only_server(budgeted)
    pool = server.pool
    assert pool is not None and pool.size == 200_000
    clients = [await announce(server, HUNDRED_MB) for _ in range(ANNOUNCERS)]
    # Non-strict, as Kafka's pool: the first takes more than the budget, every other one waits.
    await wait_until(lambda: pool.waiting == ANNOUNCERS - 1, "the others wait for memory")
    assert pool.is_out_of_memory
    await api_versions_answered(server)  # small requests are never held for the budget
    await asyncio.gather(*(c.close() for c in clients))
    await wait_until(lambda: not server._connections, "the announcers are gone")
    assert pool.available == pool.size and pool.waiting == 0


async def test_an_exhausted_budget_leaves_the_announcers_bytes_in_the_kernel(budgeted: MockCluster) -> None:
    """Out of memory, a connection's read takes only the next size prefix (Kafka's NetworkReceive
    reads the size, then asks the pool): the 64 KiB each refused announcer sent stay in its
    socket, not in the broker's memory."""
    server = only_server(budgeted)
    pool = server.pool
    assert pool is not None
    sent = bytes(64 * 1024)
    clients = [await announce(server, HUNDRED_MB, sent) for _ in range(ANNOUNCERS)]
    await wait_until(lambda: pool.waiting == ANNOUNCERS - 1, "the others wait for memory")
    held = sorted(c.frames.buffered for c in server._connections)
    assert held == [4] * (ANNOUNCERS - 1) + [len(sent)]
    await api_versions_answered(server)
    await asyncio.gather(*(c.close() for c in clients))
    await wait_until(lambda: pool.available == pool.size, "all memory released")


async def test_a_muted_connection_is_served_once_memory_is_released(budgeted: MockCluster) -> None:
    budgeted.create_topic("big", 1)
    server = only_server(budgeted)
    pool = server.pool
    assert pool is not None
    hog = await announce(server, 300_000)  # takes the whole budget, then sends nothing more
    await wait_until(lambda: pool.is_out_of_memory, "the budget is taken")
    records = batch(b"v" * 150_000)
    frame = registry.encode_request(RequestHeader(PRODUCE, 9, 7, "big"), produce_request(budgeted, "big", records))
    producer = await WireClient.connect(server.node.host, server.node.port)
    await producer.send_raw(frame[:1000])
    await wait_until(lambda: pool.waiting == 1, "the producer waits for memory")
    await producer.send_raw(frame[1000:])  # stays in the socket: the connection is muted
    await hog.close()  # its memory goes back: the producer's frame is read and answered
    answer = await producer.read_frame()
    correlation_id, resp = registry.decode_response(PRODUCE, 9, answer)
    assert correlation_id == 7
    assert resp.responses[0].partition_responses[0].error_code == 0
    await producer.close()
    await wait_until(lambda: pool.available == pool.size, "all memory released")
