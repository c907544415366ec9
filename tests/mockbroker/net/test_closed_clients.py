"""A client that goes away ends its work (issue #19, the CLOSE_WAIT case): its parked request (a
long-poll Fetch, a JoinGroup, a SyncGroup) is dropped and the broker's side of the socket closed
at once, not when the wait would have ended."""

from __future__ import annotations

import asyncio
import uuid

from mockbroker import MockCluster
from mockbroker.net.server import BrokerServer, Connection
from mockbroker_protocol import registry
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from mockbroker_protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from mockbroker_protocol.messages.share_fetch import FetchPartition, FetchTopic, ShareFetchRequest
from mockbroker_protocol.messages.share_group_heartbeat import ShareGroupHeartbeatRequest
from mockbroker_protocol.messages.sync_group import SyncGroupRequest
from tests.mockbroker.coordinators.groups_support import subscription
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


JOIN, SYNC, API_VERSIONS = 11, 14, 18


def _join(group_id: str, member_id: str = "") -> JoinGroupRequest:
    return JoinGroupRequest(
        group_id=group_id, session_timeout_ms=30_000, rebalance_timeout_ms=TEN_MINUTES_MS, member_id=member_id,
        protocol_type="consumer", protocols=[JoinGroupRequestProtocol("range", subscription("t"))],
    )  # fmt: skip


def _connection_of(server: BrokerServer, client: WireClient) -> Connection:
    port = client.writer.get_extra_info("sockname")[1]
    (connection,) = (c for c in server._connections if c.client[1] == port)
    return connection


async def _gone_within_a_second(server: BrokerServer, client: WireClient, port: int, left: int) -> None:
    connection = _connection_of(server, client)
    await wait_until(lambda: connection.parked is not None, "the request parks")
    await client.close()
    await wait_until(lambda: connection not in server._connections, "the broker dropped it", timeout=1.0)
    await wait_until(lambda: broker_sockets(port) == left, "the broker closed its socket", timeout=1.0)


async def test_a_closed_client_with_a_parked_join_group_leaves_no_socket(cluster: MockCluster) -> None:
    node = cluster.coordinator_for("joiners")
    server = cluster._servers[node.node_id]
    leader = await connect_to(cluster, node.node_id)
    assert (await leader.request(JOIN, 3, _join("joiners"))).error_code == 0
    joiner = await connect_to(cluster, node.node_id)
    # A second member: a rebalance that waits (ten minutes) for the leader to join again.
    await joiner.send_raw(registry.encode_request(RequestHeader(JOIN, 3, 1, "joiner"), _join("joiners")))
    await _gone_within_a_second(server, joiner, node.port, left=1)
    await leader.close()


async def test_a_closed_client_with_a_parked_sync_group_leaves_no_socket(cluster: MockCluster) -> None:
    node = cluster.coordinator_for("syncers")
    server = cluster._servers[node.node_id]
    leader = await connect_to(cluster, node.node_id)
    first = await leader.request(JOIN, 3, _join("syncers"))
    follower = await connect_to(cluster, node.node_id)
    await follower.send_raw(registry.encode_request(RequestHeader(JOIN, 3, 1, "f"), _join("syncers")))
    rejoined = await leader.request(JOIN, 3, _join("syncers", first.member_id))  # both are in
    _, joined = registry.decode_response(JOIN, 3, await follower.read_frame())
    assert rejoined.error_code == 0 and joined.error_code == 0 and joined.member_id != rejoined.leader
    # The follower's SyncGroup waits for the leader's assignment, which never comes.
    sync = SyncGroupRequest("syncers", joined.generation_id, joined.member_id)
    await follower.send_raw(registry.encode_request(RequestHeader(SYNC, 3, 2, "f"), sync))
    await _gone_within_a_second(server, follower, node.port, left=1)
    await leader.close()


async def test_a_closed_client_with_a_delayed_answer_leaves_no_socket(cluster: MockCluster) -> None:
    """A delayed answer (control.set_latency, ten minutes) is dropped with its client."""
    node_id = cluster.config.node_ids[0]
    node, server = cluster.brokers[node_id], cluster._servers[node_id]
    await cluster.control.set_latency(TEN_MINUTES_MS, api="ApiVersions", broker=node_id)
    client = await connect_to(cluster, node_id)
    await client.send_raw(registry.encode_request(RequestHeader(API_VERSIONS, 3, 1, "late"), ApiVersionsRequest("late", "1")))
    await _gone_within_a_second(server, client, node.port, left=0)


async def test_a_closed_client_with_a_dropped_request_leaves_no_socket(cluster: MockCluster) -> None:
    """A request the control API drops (never answered) holds its connection until the client
    goes; then the socket closes at once."""
    node_id = cluster.config.node_ids[0]
    node, server = cluster.brokers[node_id], cluster._servers[node_id]
    (drop,) = await cluster.control.drop_next("ApiVersions", broker=node_id)
    client = await connect_to(cluster, node_id)
    await client.send_raw(registry.encode_request(RequestHeader(API_VERSIONS, 3, 1, "dropped"), ApiVersionsRequest("dropped", "1")))
    await wait_until(lambda: not drop.active, "the request was dropped")
    await client.close()
    await wait_until(lambda: not server._connections, "the broker dropped it", timeout=1.0)
    await wait_until(lambda: broker_sockets(node.port) == 0, "the broker closed its socket", timeout=1.0)


SHARE_HEARTBEAT, SHARE_FETCH = 76, 78


async def test_a_closed_client_with_a_parked_share_fetch_leaves_no_socket(cluster: MockCluster) -> None:
    """A ShareFetch long poll (nothing to acquire, ten minutes of max_wait_ms) is dropped with its client."""
    topic = cluster.create_topic("shared", 1)
    member = str(uuid.UUID(int=7))
    coordinator = await connect_to(cluster, cluster.coordinator_for("sharers").node_id)
    beat = ShareGroupHeartbeatRequest(group_id="sharers", member_id=member, member_epoch=0, subscribed_topic_names=["shared"])
    joined = await coordinator.request(SHARE_HEARTBEAT, 1, beat)
    assert joined.error_code == 0 and joined.assignment is not None and joined.assignment.topic_partitions
    node_id = leader_of(cluster, "shared")
    node, server = cluster.brokers[node_id], cluster._servers[node_id]
    left = 1 if node_id == cluster.coordinator_for("sharers").node_id else 0
    client = await connect_to(cluster, node_id)
    fetch = ShareFetchRequest(
        group_id="sharers", member_id=member, share_session_epoch=0, max_wait_ms=TEN_MINUTES_MS, min_bytes=1,
        max_bytes=1 << 20, max_records=10, batch_size=10, topics=[FetchTopic(topic.topic_id, [FetchPartition(0)])],
    )  # fmt: skip
    await client.send_raw(registry.encode_request(RequestHeader(SHARE_FETCH, 1, 1, "sharer"), fetch))
    await _gone_within_a_second(server, client, node.port, left=left)
    await coordinator.close()
