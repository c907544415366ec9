"""Several listeners per broker on the wire: each answers Metadata, FindCoordinator, DescribeCluster
with the brokers' addresses on itself (KafkaApis answers with request.context.listenerName), the
answers kept by request bytes never cross listeners, and a listener that advertised.listeners
leaves out has no address (KRaftMetadataCache: LISTENER_NOT_FOUND; getCoordinator:
COORDINATOR_NOT_AVAILABLE), as a real Kafka 4.3.1 configured so answers (checked by hand with
mockbroker_conformance's launcher: Metadata v12/v5/v0, FindCoordinator v2/v4, DescribeCluster)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from mockbroker import MockCluster
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.describe_cluster import DescribeClusterRequest
from mockbroker_protocol.messages.find_coordinator import FindCoordinatorRequest
from mockbroker_protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from tests.mockbroker.wire import WireClient

TWO = {
    "listeners": "INTERNAL://127.0.0.1:0,EXTERNAL://127.0.0.1:0",
    "listener_security_protocol_map": "INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT",
}


@pytest.fixture
async def two_listeners() -> AsyncIterator[MockCluster]:
    cluster = MockCluster(brokers=2, **TWO)
    cluster.create_topic("orders", 2)
    await cluster.start()
    try:
        yield cluster
    finally:
        await cluster.stop()
    assert not cluster.internal_errors


def _addresses(cluster: MockCluster, listener: str) -> dict[int, tuple[str, int]]:
    return {n.node_id: (n.endpoints[listener].host, n.endpoints[listener].port) for n in cluster.brokers.values()}


async def _client(cluster: MockCluster, node_id: int, listener: str) -> WireClient:
    endpoint = cluster.brokers[node_id].endpoints[listener]
    return await WireClient.connect(endpoint.host, endpoint.port)


async def test_each_listener_answers_with_its_own_addresses(two_listeners: MockCluster) -> None:
    cluster = two_listeners
    internal, external = _addresses(cluster, "INTERNAL"), _addresses(cluster, "EXTERNAL")
    assert len(set(internal.values()) | set(external.values())) == 4  # four sockets, four ports
    ask = MetadataRequest(topics=[MetadataRequestTopic(name="orders")])
    # The same request bytes (same client id) on both listeners, twice: kept answers stay apart.
    clients = {name: await _client(cluster, 1, name) for name in ("INTERNAL", "EXTERNAL")}
    for _ in range(2):
        for name, expected in (("INTERNAL", internal), ("EXTERNAL", external)):
            response = await clients[name].request(ApiKey.METADATA, 12, ask)
            assert {b.node_id: (b.host, b.port) for b in response.brokers} == expected
            assert [p.error_code for p in response.topics[0].partitions] == [0, 0]
    coordinator = await clients["EXTERNAL"].request(ApiKey.FIND_COORDINATOR, 4, FindCoordinatorRequest(coordinator_keys=["g"]))
    [entry] = coordinator.coordinators
    assert (entry.error_code, (entry.host, entry.port)) == (0, external[entry.node_id])
    old = await clients["EXTERNAL"].request(ApiKey.FIND_COORDINATOR, 1, FindCoordinatorRequest(key="g"))
    assert (old.host, old.port) == external[old.node_id]
    described = await clients["EXTERNAL"].request(ApiKey.DESCRIBE_CLUSTER, 1, DescribeClusterRequest())
    assert {b.broker_id: (b.host, b.port) for b in described.brokers} == external
    for client in clients.values():
        await client.close()


async def test_a_broker_taken_down_and_up_listens_on_every_listener_again(two_listeners: MockCluster) -> None:
    cluster = two_listeners
    before = _addresses(cluster, "EXTERNAL")
    await cluster.control.broker_down(2)
    await cluster.control.broker_up(2)
    assert _addresses(cluster, "EXTERNAL") == before
    client = await _client(cluster, 2, "EXTERNAL")
    response = await client.request(ApiKey.METADATA, 12, MetadataRequest(topics=None))
    assert {b.node_id: (b.host, b.port) for b in response.brokers} == before
    await client.close()


async def test_a_listener_left_out_of_advertised_listeners_has_no_address() -> None:
    cluster = MockCluster(
        listeners="PLAINTEXT://127.0.0.1:0,HIDDEN://127.0.0.1:0",
        listener_security_protocol_map="PLAINTEXT:PLAINTEXT,HIDDEN:PLAINTEXT",
        advertised_listeners="PLAINTEXT://127.0.0.1:0",
    )
    cluster.create_topic("orders", 1)
    await cluster.start()
    try:
        client = await _client(cluster, 1, "HIDDEN")
        ask = MetadataRequest(topics=[MetadataRequestTopic(name="orders")])
        for version, code in ((12, ErrorCode.LISTENER_NOT_FOUND), (5, ErrorCode.LEADER_NOT_AVAILABLE)):
            response = await client.request(ApiKey.METADATA, version, ask)
            assert response.brokers == []
            [partition] = response.topics[0].partitions
            assert (partition.error_code, partition.leader_id, partition.offline_replicas) == (code, -1, [1])
        coordinator = await client.request(ApiKey.FIND_COORDINATOR, 4, FindCoordinatorRequest(coordinator_keys=["g"]))
        assert coordinator.coordinators[0].error_code == ErrorCode.COORDINATOR_NOT_AVAILABLE
        assert coordinator.coordinators[0].node_id == -1
        described = await client.request(ApiKey.DESCRIBE_CLUSTER, 1, DescribeClusterRequest())
        assert (described.brokers, described.controller_id) == ([], -1)
        old = await client.request(ApiKey.FIND_COORDINATOR, 2, FindCoordinatorRequest(key="g"))
        assert (old.error_code, old.error_message, old.node_id) == (15, "The coordinator is not available.", -1)
        v0 = await client.request(ApiKey.METADATA, 0, ask)
        assert (v0.topics[0].partitions[0].error_code, v0.topics[0].partitions[0].replica_nodes) == (5, [])
        await client.close()
        shown = await cluster.control.describe_cluster()
        assert [(e.listener, e.advertised_host) for e in shown.brokers[0].listeners] == [
            ("PLAINTEXT", "127.0.0.1"), ("HIDDEN", None)
        ]
    finally:
        await cluster.stop()
    assert not cluster.internal_errors
