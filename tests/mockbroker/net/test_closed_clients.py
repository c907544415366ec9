"""A client that goes away ends its work (issue #19, the CLOSE_WAIT case): its parked request is
dropped and the broker's side of the socket closed at once, not when the wait would have ended."""

from __future__ import annotations

import asyncio

from mockbroker import MockCluster
from mockbroker_protocol import registry
from mockbroker_protocol.headers import RequestHeader
from tests.mockbroker.datapath import FETCH, connect_to, fetch_request, leader_of, wait_until
from tests.mockbroker.net.sockets import broker_sockets
from tests.mockbroker.wire import WireClient

CLIENTS = 50
TEN_MINUTES_MS = 600_000


async def test_closed_clients_with_parked_fetches_leave_no_sockets_behind(cluster: MockCluster) -> None:
    cluster.create_topic("idle", 1)
    node_id = leader_of(cluster, "idle")
    node, server = cluster.brokers[node_id], cluster._servers[node_id]
    log = cluster.topics["idle"].partitions[0].log
    # Nothing to read and min_bytes 1: each Fetch parks for ten minutes.
    req = fetch_request(cluster, [("idle", 0, 0)], max_wait_ms=TEN_MINUTES_MS, min_bytes=1)
    clients: list[WireClient] = []
    for i in range(CLIENTS):
        client = await connect_to(cluster, node_id)
        frame = registry.encode_request(RequestHeader(FETCH, 12, i + 1, "closer"), req)
        await client.send_raw(frame)
        clients.append(client)
    await wait_until(lambda: len(log._listeners) == CLIENTS, "every Fetch parked")
    assert broker_sockets(node.port) == CLIENTS
    await asyncio.gather(*(client.close() for client in clients))
    await wait_until(lambda: not server._connections, "the broker dropped the connections", timeout=1.0)
    await wait_until(lambda: broker_sockets(node.port) == 0, "the broker closed its sockets", timeout=1.0)
    await wait_until(lambda: not log._listeners, "the parked Fetches ended", timeout=1.0)
    # The broker goes on serving.
    client = await connect_to(cluster, node_id)
    resp = await client.request(FETCH, 12, fetch_request(cluster, [("idle", 0, 0)]))
    assert resp.error_code == 0
    await client.close()
