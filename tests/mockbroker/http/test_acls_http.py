"""The control API's ACL endpoints (docs/security.md): list, add (with CreateAcls' checks) and
remove by filter; 409 without an authorizer; each change an event."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from mockbroker import MockCluster
from tests.mockbroker.http.test_app import Api, _started


async def _api(cluster: MockCluster) -> AsyncIterator[tuple[MockCluster, Api]]:
    server, http = await _started(cluster)
    try:
        yield cluster, Api(http)
    finally:
        await http.close()
        await server.stop()
        await cluster.stop()
    assert not cluster.internal_errors, cluster.internal_errors


@pytest.fixture
async def api() -> AsyncIterator[tuple[MockCluster, Api]]:
    async for pair in _api(MockCluster(authorizer_class_name="org.apache.kafka.metadata.authorizer.StandardAuthorizer")):
        yield pair


@pytest.fixture
async def open_api() -> AsyncIterator[tuple[MockCluster, Api]]:
    async for pair in _api(MockCluster()):
        yield pair


async def test_acls_added_listed_removed(api: tuple[MockCluster, Api]) -> None:
    cluster, client = api
    added = await client.ok(
        "POST", "/acls", {"resource_type": "topic", "resource_name": "orders", "principal": "User:alice", "operation": "read"}
    )
    assert added == {
        "resource_type": "TOPIC", "resource_name": "orders", "pattern_type": "LITERAL", "principal": "User:alice",
        "host": "*", "operation": "READ", "permission_type": "ALLOW",
    }
    await client.ok("POST", "/acls", {"resource_type": "GROUP", "resource_name": "g-", "pattern_type": "PREFIXED",
                                      "principal": "User:alice", "operation": "READ"})
    status, body = await client.call("POST", "/acls", {"resource_type": "CLUSTER", "resource_name": "x", "principal": "User:a", "operation": "ALTER"})
    assert status == 409 and "kafka-cluster" in str(body)
    assert [a["resource_name"] for a in (await client.ok("GET", "/acls"))["acls"]] == ["orders", "g-"]
    assert cluster.authorizer is not None and cluster.authorizer.authorize("User:alice", "h", 3, 3, "g-1")
    removed = await client.ok("POST", "/acls/delete", {"resource_type": "GROUP"})
    assert [a["resource_name"] for a in removed["removed"]] == ["g-"]
    assert [e.type for e in cluster.events.filter() if e.type.startswith("control.acl")] == [
        "control.acl_added", "control.acl_added", "control.acl_removed",
    ]


async def test_without_an_authorizer_409(open_api: tuple[MockCluster, Api]) -> None:
    _, client = open_api
    status, body = await client.call("GET", "/acls")
    assert status == 409 and "authorizer.class.name" in str(body)
