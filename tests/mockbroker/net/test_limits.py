"""Connection limits with Kafka's names and meanings (issue #19): max.connections (held unread),
max.connections.per.ip (closed), connections.max.idle.ms (closed), the cap on requests waiting
behind a parked one (muted) and write backpressure (a client that does not read is muted)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mockbroker import MockCluster
from mockbroker.net import server as net
from mockbroker.net.server import BrokerServer, Connection
from mockbroker_protocol import registry
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from tests.mockbroker.datapath import FETCH, batch, fetch_request, produce, wait_until
from tests.mockbroker.wire import WireClient

API_VERSIONS = 18


@asynccontextmanager
async def broker(**settings: Any) -> AsyncIterator[tuple[MockCluster, BrokerServer]]:
    cluster = MockCluster(brokers=1, **settings)
    await cluster.start()
    try:
        (server,) = cluster._servers.values()
        yield cluster, server
    finally:
        await cluster.stop()
    assert cluster.internal_errors == []


async def connect(server: BrokerServer) -> WireClient:
    return await WireClient.connect(server.node.host, server.node.port)


def api_versions(correlation_id: int) -> bytes:
    return registry.encode_request(RequestHeader(API_VERSIONS, 3, correlation_id, "t"), ApiVersionsRequest("t", "1"))


async def read_correlation(client: WireClient, api_key: int, version: int) -> int:
    correlation_id, _ = registry.decode_response(api_key, version, await client.read_frame())
    return correlation_id


def connection_of(server: BrokerServer, client: WireClient) -> Connection:
    port = client.writer.get_extra_info("sockname")[1]
    (connection,) = (c for c in server._connections if c.client[1] == port)
    return connection


async def test_max_connections_holds_the_next_connection_unread_until_one_closes() -> None:
    async with broker(max_connections=2) as (_, server):
        first, second, third = await connect(server), await connect(server), await connect(server)
        await wait_until(lambda: len(server.held) == 1 and server.admitted == 2, "the third is held")
        await third.send_raw(api_versions(3))
        await first.request(API_VERSIONS, 3, ApiVersionsRequest("t", "1"))  # admitted ones are served
        assert server.held[0].frames.buffered == 0  # the held one is not read
        await first.close()
        assert await read_correlation(third, API_VERSIONS, 3) == 3  # its slot freed: served
        assert not server.held and server.admitted == 2
        await second.close()
        await third.close()


async def test_max_connections_per_ip_closes_the_connection_beyond_it() -> None:
    async with broker(max_connections_per_ip=2) as (_, server):
        kept = [await connect(server), await connect(server)]
        refused = await connect(server)
        assert await refused.closed_by_peer()
        for client in kept:
            await client.request(API_VERSIONS, 3, ApiVersionsRequest("t", "1"))
        assert server.per_ip == {"127.0.0.1": 2}
        await refused.close()
        for client in kept:
            await client.close()


async def test_connections_max_idle_ms_closes_a_silent_connection() -> None:
    async with broker(connections_max_idle_ms=200) as (_, server):
        silent = await connect(server)
        assert await silent.closed_by_peer(timeout=5.0)
        await wait_until(lambda: not server._connections, "the idle connection is dropped")
        await silent.close()


async def test_requests_pipelined_behind_a_parked_one_mute_the_connection() -> None:
    async with broker() as (cluster, server):
        cluster.create_topic("t", 1)
        client = await connect(server)
        parked = fetch_request(cluster, [("t", 0, 0)], max_wait_ms=60_000, min_bytes=1)
        await client.send_raw(registry.encode_request(RequestHeader(FETCH, 12, 1, "t"), parked))
        connection = connection_of(server, client)
        await wait_until(lambda: connection.parked is not None, "the Fetch parks")
        behind = 2 * net.MAX_REQUESTS_IN_FLIGHT
        await client.send_raw(b"".join(api_versions(2 + i) for i in range(behind)))
        await wait_until(lambda: bool(connection._muted & net._BACKLOG), "the connection is muted")
        producer = await connect(server)
        await produce(producer, cluster, "t", batch(b"wake"))  # the Fetch is answered, then the rest
        got = [await read_correlation(client, FETCH, 12)]
        got += [await read_correlation(client, API_VERSIONS, 3) for _ in range(behind)]
        assert got == list(range(1, behind + 2))
        assert not connection._muted
        await producer.close()
        await client.close()


async def test_a_client_that_does_not_read_its_answers_is_muted() -> None:
    async with broker() as (cluster, server):
        cluster.create_topic("t", 1)
        producer = await connect(server)
        for _ in range(4):
            assert (await produce(producer, cluster, "t", batch(b"x" * 250_000))).error_code == 0
        reader = await connect(server)
        fetches = 40  # each answer is ~1 MB: far more than the socket and the write buffer hold
        req = fetch_request(cluster, [("t", 0, 0)])
        frames = [registry.encode_request(RequestHeader(FETCH, 12, 1 + i, "t"), req) for i in range(fetches)]
        await reader.send_raw(b"".join(frames))
        connection = connection_of(server, reader)
        await wait_until(lambda: bool(connection._muted & net._WRITING), "reading paused for writing")
        got = [await read_correlation(reader, FETCH, 12) for _ in range(fetches)]
        assert got == list(range(1, fetches + 1))
        await wait_until(lambda: not connection._muted, "reading resumes")
        await producer.close()
        await reader.close()


def test_the_limits_are_settings_with_kafka_names() -> None:
    from mockbroker.config.cluster import ClusterConfig

    config = ClusterConfig.from_kafka(
        {
            "queued.max.request.bytes": "1048576",
            "max.connections": "5",
            "max.connections.per.ip": "2",
            "connections.max.idle.ms": "1000",
        }
    )
    assert (config.queued_max_request_bytes, config.max_connections) == (1048576, 5)
    assert (config.max_connections_per_ip, config.connections_max_idle_ms) == (2, 1000)
    defaults = ClusterConfig()  # Kafka's defaults
    assert defaults.queued_max_request_bytes == -1 and defaults.max_connections == 2**31 - 1
    assert defaults.max_connections_per_ip == 2**31 - 1 and defaults.connections_max_idle_ms == 600_000
    try:
        ClusterConfig.from_kafka({"max.connections": "-1"})
    except ValueError as exc:
        assert "max.connections" in str(exc)
    else:
        raise AssertionError("max.connections=-1 was accepted (Kafka: atLeast(0))")
