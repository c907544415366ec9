"""A KIP-848 consumer group's resolved regexes over the HTTP control API: ``GET /groups/{id}``
shows each member regex and the topics it matched at the group's last resolution (under an
authorizer, only those the refreshing member's principal may DESCRIBE), as the OpenAPI document
says (the ``ConsumerGroup`` schema)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import aiohttp
import pytest

from mockbroker import MockCluster
from mockbroker.http import AdminServer
from mockbroker.http.components import check
from mockbroker.http.schema import ref
from mockbroker.security.acls import AclOperation, ResourceType
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest
from tests.mockbroker.security.support import allow, plain_login, secured_cluster
from tests.mockbroker.wire import WireClient

USERS = {"alice": "alice-secret"}


@pytest.fixture
async def cluster() -> AsyncIterator[MockCluster]:
    async with secured_cluster(USERS) as cluster:
        yield cluster


def _allow(cluster: MockCluster, rtype: int, name: str, op: int) -> None:
    allow(cluster, rtype, name, "User:alice", op)


async def _alice(cluster: MockCluster) -> WireClient:
    return await plain_login(cluster, "alice", USERS["alice"])


async def _get_group(cluster: MockCluster, group_id: str) -> dict[str, object]:
    server = await AdminServer(cluster).start("127.0.0.1", 0)
    try:
        async with aiohttp.ClientSession(base_url=server.url) as http, http.get(f"/groups/{group_id}") as response:
            assert response.status == 200, await response.text()
            body: dict[str, object] = await response.json()
            return body
    finally:
        await server.stop()


async def test_get_group_shows_the_resolved_regexes_filtered_by_describe(cluster: MockCluster) -> None:
    for name in ("orders-a", "orders-b", "payments"):
        cluster.create_topic(name, 2)
    _allow(cluster, ResourceType.GROUP, "g", AclOperation.READ)
    _allow(cluster, ResourceType.TOPIC, "orders-a", AclOperation.DESCRIBE)
    _allow(cluster, ResourceType.TOPIC, "payments", AclOperation.DESCRIBE)
    alice = await _alice(cluster)
    try:
        joined = await alice.request(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, ConsumerGroupHeartbeatRequest(
            group_id="g", member_id=str(uuid.UUID(int=1)), member_epoch=0, rebalance_timeout_ms=30_000,
            subscribed_topic_regex="orders-.*", topic_partitions=[],
        ))  # fmt: skip
        assert joined.error_code == 0, joined
    finally:
        await alice.close()
    body = await _get_group(cluster, "g")
    assert check(ref("Group"), body, "body") == body  # as the OpenAPI document describes it
    assert body["resolved_regexes"] == {"orders-.*": ["orders-a"]}  # orders-b: no DESCRIBE
    assert body["subscribed_topics"] == {"orders-a": 2}
