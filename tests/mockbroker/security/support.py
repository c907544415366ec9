"""Shared pieces of the wire tests under an authorizer: a SASL_PLAINTEXT cluster with Kafka's
StandardAuthorizer switched on, a PLAIN login on a raw connection, and an ALLOW ACL added directly."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mockbroker import MockCluster
from mockbroker.security.acls import AclBinding, AclPermissionType, PatternType
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from mockbroker_protocol.messages.sasl_handshake import SaslHandshakeRequest
from tests.mockbroker.wire import WireClient

STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


@asynccontextmanager
async def secured_cluster(users: dict[str, str], **settings: Any) -> AsyncIterator[MockCluster]:
    """A started cluster with one SASL_PLAINTEXT listener serving ``users`` and the authorizer on;
    stopped at the end, failing the test if the broker raised on a bug of its own."""
    cluster = MockCluster(
        listeners="SASL_PLAINTEXT://127.0.0.1:0", sasl_users=users, authorizer_class_name=STANDARD_AUTHORIZER,
        **settings,
    )  # fmt: skip
    await cluster.start()
    try:
        yield cluster
    finally:
        await cluster.stop()
    assert not cluster.internal_errors


async def plain_login(cluster: MockCluster, user: str, password: str) -> WireClient:
    """A raw connection to the first broker, authenticated with SASL/PLAIN (handshake v1, v2 token)."""
    node = next(iter(cluster.brokers.values()))
    client = await WireClient.connect(node.host, node.port)
    assert (await client.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("PLAIN"))).error_code == 0
    token = f"\x00{user}\x00{password}".encode()
    assert (await client.request(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(token))).error_code == 0
    return client


def allow(
    cluster: MockCluster, resource_type: int, name: str, principal: str, operation: int,
    pattern_type: int = PatternType.LITERAL,
) -> None:  # fmt: skip
    """An ALLOW ACL from any host, added to the authorizer directly (no admin request)."""
    assert cluster.authorizer is not None
    cluster.authorizer.add(AclBinding(resource_type, name, pattern_type, principal, "*", operation, AclPermissionType.ALLOW))
