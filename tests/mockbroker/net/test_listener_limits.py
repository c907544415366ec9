"""A listener's own connection limit (KIP-402, Kafka's ConnectionQuotas.ListenerConnectionQuota):
``listener.name.<name>.max.connections`` holds that listener's connections beyond it unread while
the broker's other listeners still accept, and the broker-wide ``max.connections`` still bounds all
listeners together. Over real sockets, two PLAINTEXT listeners of one broker."""

from __future__ import annotations

from mockbroker import MockCluster
from mockbroker.net.server import BrokerServer
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from tests.mockbroker.datapath import wait_until
from tests.mockbroker.net.test_limits import API_VERSIONS, api_versions, read_correlation
from tests.mockbroker.wire import WireClient

LISTENERS = "INTERNAL://127.0.0.1:0,EXTERNAL://127.0.0.1:0"
PROTOCOLS = "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT"


async def connect(server: BrokerServer, listener: str) -> WireClient:
    host, port = server.node.endpoints[listener].host, server.node.endpoints[listener].port
    return await WireClient.connect(host, port)


def held_on(server: BrokerServer, listener: str) -> int:
    return sum(1 for c in server.held if c.listener.name == listener)


async def test_a_listeners_max_connections_holds_its_connections_while_another_listener_accepts() -> None:
    cluster = MockCluster(
        brokers=1, listeners=LISTENERS, listener_security_protocol_map=PROTOCOLS, max_connections=4,
        listener_overrides={"listener.name.external.max.connections": "1"},
    )
    await cluster.start()
    try:
        (server,) = cluster._servers.values()
        first = await connect(server, "EXTERNAL")
        await first.request(API_VERSIONS, 3, ApiVersionsRequest("t", "1"))
        second = await connect(server, "EXTERNAL")
        await wait_until(lambda: held_on(server, "EXTERNAL") == 1, "the second EXTERNAL connection is held")
        await second.send_raw(api_versions(7))
        # INTERNAL has no limit of its own: it accepts (and answers) up to the broker's max.connections.
        internal = [await connect(server, "INTERNAL") for _ in range(3)]
        for client in internal:
            await client.request(API_VERSIONS, 3, ApiVersionsRequest("t", "1"))
        assert server.held[0].frames.buffered == 0  # the held one is not read
        assert (server.admitted, held_on(server, "EXTERNAL")) == (4, 1)
        # The broker is full now: a fifth connection is held whichever listener it comes on.
        fifth = await connect(server, "INTERNAL")
        await wait_until(lambda: held_on(server, "INTERNAL") == 1, "the broker-wide limit holds INTERNAL too")
        await fifth.send_raw(api_versions(9))
        # An INTERNAL slot freed goes to the held INTERNAL connection, not to EXTERNAL (still at its limit).
        await internal[0].close()
        assert await read_correlation(fifth, API_VERSIONS, 3) == 9
        assert (server.admitted, held_on(server, "EXTERNAL")) == (4, 1)
        # The EXTERNAL connection closes: the held one has its listener's slot, and is answered.
        await first.close()
        assert await read_correlation(second, API_VERSIONS, 3) == 7
        assert not server.held and server.admitted == 4
        for client in (second, fifth, *internal[1:]):
            await client.close()
    finally:
        await cluster.stop()
    assert cluster.internal_errors == []
