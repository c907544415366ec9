"""ClusterState (mockbroker/state.py) on its own, without listeners, and MockCluster
(mockbroker/cluster.py) as the composition around it: listeners, the control API, start and stop."""

from __future__ import annotations

import pytest

from mockbroker import MockCluster
from mockbroker.control import Control
from mockbroker.net.server import BrokerServer
from mockbroker.state import ClusterState, MemoKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from tests.mockbroker.wire import WireClient


def test_a_bare_state_holds_topics_and_places_coordinators() -> None:
    state = ClusterState(brokers=3)
    topic = state.create_topic("orders", 6, 2)
    assert state.topics["orders"] is topic and state.topic_by_id(topic.topic_id) is topic
    assert [p.leader_id for p in topic.partitions] == [1, 2, 3, 1, 2, 3]
    assert state.coordinator_for("g").node_id in state.brokers
    assert dict(state.listeners) == {}
    with pytest.raises(NotImplementedError):
        state.request_hooks  # noqa: B018 - the property is what is tested


def test_memos_are_typed_per_key_and_per_cluster() -> None:
    key: MemoKey[list[int]] = MemoKey("test.memo")
    a, b = ClusterState(), ClusterState()
    assert a.memos.get(key) is None
    stored = a.memos.set(key, [1])
    assert a.memos.get(key) is stored and b.memos.get(key) is None


async def test_the_cluster_composes_listeners_and_control() -> None:
    cluster = MockCluster(brokers=2)
    assert dict(cluster.listeners) == {}
    await cluster.start()
    try:
        assert set(cluster.listeners) == {1, 2}
        assert all(isinstance(server, BrokerServer) for server in cluster.listeners.values())
        assert isinstance(cluster.control, Control) and cluster.control is cluster.control
        assert cluster.request_hooks is cluster.control.hooks
        node = cluster.brokers[2]
        client = await WireClient.connect(node.host, node.port)
        try:
            answer = await client.request(18, 3, ApiVersionsRequest(client_software_name="t", client_software_version="1"))
            assert answer.error_code == ErrorCode.NONE
            # The answer was kept on this cluster's state (ClusterState.answers), by api key.
            assert cluster.answers.get(18)
        finally:
            await client.close()
    finally:
        await cluster.stop()
    assert dict(cluster.listeners) == {} and cluster.internal_errors == []
