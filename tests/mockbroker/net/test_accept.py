"""Accepting in bounded batches (issue #19, KIP-402): Kafka's Processor sets up at most
Processor.ConnectionQueueSize (20) new connections per poll; the broker accepts at most
CONNECTION_QUEUE_SIZE per event-loop turn, so a burst of connects does not hold up the connections
already open until every one of them is accepted. Counted in accept callbacks and connections
accepted, not in time."""

from __future__ import annotations

import asyncio
import socket
import struct

from mockbroker.control.intercept import Intercepted
from mockbroker.net.server import CONNECTION_QUEUE_SIZE
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from tests.mockbroker.net.test_limits import API_VERSIONS, api_versions, broker, connect, read_correlation

BURST = 100  # five batches; the listening socket's backlog is made to hold them all (Linux: backlog + 1)
BYSTANDER = 1000  # the correlation id of the request of a connection opened before the burst


async def test_a_burst_of_connections_is_accepted_in_batches_with_a_bystander_answered_between() -> None:
    assert BURST >= 4 * CONNECTION_QUEUE_SIZE
    # (with Kafka's default of 50, the connects beyond 51 would wait for the broker, which this
    # test does not let run until all are made)
    async with broker(socket_listen_backlog_size=BURST) as (cluster, server):
        bystander = await connect(server)
        await bystander.request(API_VERSIONS, 3, ApiVersionsRequest("t", "1"))
        accepted_then: list[int] = []  # connections accepted when the bystander's request is handled

        def note(request: Intercepted) -> None:
            if request.correlation_id == BYSTANDER:
                accepted_then.append(server.accepted - accepted)

        # (an interceptor runs each request in a task: one turn after its read)
        await cluster.control.intercept("ApiVersions", note, keep=True)
        accepted, calls = server.accepted, server.accept_calls
        # Without yielding to the event loop: the kernel completes every connect into the listening
        # socket's backlog, so all of them are pending when the broker next looks.
        burst = []
        for correlation_id in range(BURST):
            sock = socket.create_connection((server.node.host, server.node.port))
            sock.sendall(api_versions(correlation_id))
            burst.append(sock)
        bystander.writer.write(api_versions(BYSTANDER))  # readable in the same turn as the burst
        assert await read_correlation(bystander, API_VERSIONS, 3) == BYSTANDER
        # Handled while most of the burst still waited in the backlog: a turn takes one batch, not
        # every pending connection (read in the first turn, handled in the next: two batches).
        assert accepted_then and accepted_then[0] <= 2 * CONNECTION_QUEUE_SIZE < BURST
        streams = [await asyncio.open_connection(sock=sock) for sock in burst]
        for correlation_id, (reader, writer) in enumerate(streams):  # every one is served
            (size,) = struct.unpack(">i", await reader.readexactly(4))
            assert struct.unpack(">i", (await reader.readexactly(size))[:4]) == (correlation_id,)
            writer.close()
        assert server.accepted - accepted == BURST
        # Never more than a batch per accept callback (one callback per turn at most).
        assert server.accept_calls - calls >= BURST // CONNECTION_QUEUE_SIZE
        await bystander.close()
