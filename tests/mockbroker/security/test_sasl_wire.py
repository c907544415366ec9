"""SASL rules on the wire (SaslServerAuthenticator's): what is served before authentication, the
handshake's errors, PLAIN and SCRAM exchanges (RFC 5802/7677), the v0 raw-token flow, and
ILLEGAL_SASL_STATE where Kafka's KafkaApis answers."""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import AsyncIterator

import pytest

from mockbroker import MockCluster
from mockbroker.security.scram import make_credential
from mockbroker_protocol import registry
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from mockbroker_protocol.messages.metadata import MetadataRequest
from mockbroker_protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from mockbroker_protocol.messages.sasl_handshake import SaslHandshakeRequest
from tests.mockbroker.wire import WireClient


@pytest.fixture
async def sasl_cluster() -> AsyncIterator[MockCluster]:
    cluster = MockCluster(listeners="SASL_PLAINTEXT://127.0.0.1:0", sasl_users={"alice": "secret"}, sasl_enabled_mechanisms="PLAIN,SCRAM-SHA-256")
    await cluster.start()
    try:
        yield cluster
    finally:
        await cluster.stop()
    assert not cluster.internal_errors


async def _connect(cluster: MockCluster) -> WireClient:
    node = next(iter(cluster.brokers.values()))
    return await WireClient.connect(node.host, node.port)


def test_rfc7677_stored_key() -> None:
    # RFC 7677 section 3: user "user", password "pencil", salt W22ZaJ0SNY7soEsUEjb6gQ==, i=4096.
    credential = make_credential("SCRAM-SHA-256", "pencil", 4096, base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ=="))
    salted = hashlib.pbkdf2_hmac("sha256", b"pencil", base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ=="), 4096)
    client_key = hmac.new(salted, b"Client Key", "sha256").digest()
    assert credential.stored_key == hashlib.sha256(client_key).digest()
    auth = (
        b"n=user,r=rOprNGfwEbeRWgbNEkqO,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
        b"s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096,c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
    )
    signature = hmac.new(credential.server_key, auth, "sha256").digest()
    assert base64.b64encode(signature) == b"6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


async def test_only_api_versions_and_sasl_before_authentication(sasl_cluster: MockCluster) -> None:
    client = await _connect(sasl_cluster)
    versions = await client.request(ApiKey.API_VERSIONS, 3, ApiVersionsRequest("t", "1"))
    served = {k.api_key for k in versions.api_keys}
    assert {ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE} <= served
    await client.send_raw(registry.encode_request(RequestHeader(ApiKey.METADATA, 9, 7, "t"), MetadataRequest(topics=None)))
    assert await client.closed_by_peer()
    assert any(e.reason == "Unexpected Kafka request of type METADATA during SASL handshake." for e in sasl_cluster.events)


async def test_unsupported_mechanism(sasl_cluster: MockCluster) -> None:
    client = await _connect(sasl_cluster)
    response = await client.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("SCRAM-SHA-512"))
    assert response.error_code == ErrorCode.UNSUPPORTED_SASL_MECHANISM
    assert response.mechanisms == ["PLAIN", "SCRAM-SHA-256"]
    assert await client.closed_by_peer()


async def test_plain_wrong_password_then_right(sasl_cluster: MockCluster) -> None:
    client = await _connect(sasl_cluster)
    assert (await client.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("PLAIN"))).error_code == 0
    response = await client.request(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(b"\x00alice\x00nope"))
    assert response.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert response.error_message == "Authentication failed: Invalid username or password"
    assert await client.closed_by_peer()

    client = await _connect(sasl_cluster)
    assert (await client.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("PLAIN"))).error_code == 0
    response = await client.request(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(b"\x00alice\x00secret"))
    assert response.error_code == 0 and response.session_lifetime_ms == 0
    metadata = await client.request(ApiKey.METADATA, 9, MetadataRequest(topics=[]))
    assert [b.node_id for b in metadata.brokers] == list(sasl_cluster.brokers)
    again = await client.request(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(b"\x00alice\x00secret"))
    assert again.error_code == ErrorCode.ILLEGAL_SASL_STATE
    assert again.error_message == "SaslAuthenticate request received after successful authentication"


async def test_scram_exchange_and_bad_proof(sasl_cluster: MockCluster) -> None:
    for password, ok in (("secret", True), ("wrong", False)):
        client = await _connect(sasl_cluster)
        assert (await client.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("SCRAM-SHA-256"))).error_code == 0
        first_bare = "n=alice,r=clientnonce"
        server_first = (await client.request(ApiKey.SASL_AUTHENTICATE, 1, SaslAuthenticateRequest(f"n,,{first_bare}".encode()))).auth_bytes.decode()
        attrs = dict(item.split("=", 1) for item in server_first.split(","))
        assert attrs["r"].startswith("clientnonce") and attrs["i"] == "4096"
        salted = hashlib.pbkdf2_hmac("sha256", password.encode(), base64.b64decode(attrs["s"]), 4096)
        client_key = hmac.new(salted, b"Client Key", "sha256").digest()
        final_without_proof = f"c=biws,r={attrs['r']}"
        auth = f"{first_bare},{server_first},{final_without_proof}".encode()
        signature = hmac.new(hashlib.sha256(client_key).digest(), auth, "sha256").digest()
        proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature, strict=True))).decode()
        final = await client.request(ApiKey.SASL_AUTHENTICATE, 1, SaslAuthenticateRequest(f"{final_without_proof},p={proof}".encode()))
        if ok:
            server_key = hmac.new(salted, b"Server Key", "sha256").digest()
            assert final.error_code == 0
            assert final.auth_bytes == b"v=" + base64.b64encode(hmac.new(server_key, auth, "sha256").digest())
        else:
            assert final.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
            assert final.error_message == (
                "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"
            )
            assert await client.closed_by_peer()


async def test_v0_handshake_raw_plain_token(sasl_cluster: MockCluster) -> None:
    client = await _connect(sasl_cluster)
    assert (await client.request(ApiKey.SASL_HANDSHAKE, 0, SaslHandshakeRequest("PLAIN"))).error_code == 0
    token = b"\x00alice\x00secret"
    await client.send_raw(len(token).to_bytes(4, "big") + token)
    assert await client.read_frame() == b""
    metadata = await client.request(ApiKey.METADATA, 9, MetadataRequest(topics=[]))
    assert metadata.brokers


async def test_plaintext_listener_answers_illegal_sasl_state() -> None:
    async with MockCluster() as cluster:
        client = await _connect(cluster)
        response = await client.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("PLAIN"))
        assert response.error_code == ErrorCode.ILLEGAL_SASL_STATE
        assert (await client.request(ApiKey.METADATA, 9, MetadataRequest(topics=[]))).brokers


async def test_a_second_handshake_during_the_exchange_is_illegal_and_closes(sasl_cluster: MockCluster) -> None:
    client = await _connect(sasl_cluster)
    assert (await client.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("PLAIN"))).error_code == 0
    again = await client.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("PLAIN"))
    assert again.error_code == ErrorCode.ILLEGAL_SASL_STATE
    assert await client.closed_by_peer()


async def test_other_request_during_authentication_gets_its_error_answer_then_closes(sasl_cluster: MockCluster) -> None:
    """SaslServerAuthenticator.handleSaslToken: after a v1 handshake any request but SaslAuthenticate
    gets its own error response (ILLEGAL_SASL_STATE), then the connection closes."""
    from mockbroker_protocol.messages.metadata import MetadataRequestTopic

    client = await _connect(sasl_cluster)
    assert (await client.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("PLAIN"))).error_code == 0
    response = await client.request(ApiKey.METADATA, 12, MetadataRequest(topics=[MetadataRequestTopic(name="t")]))
    assert [(t.name, t.error_code) for t in response.topics] == [("t", ErrorCode.ILLEGAL_SASL_STATE)]
    assert response.brokers == []
    assert await client.closed_by_peer()
    assert any(e.reason == "Unexpected Kafka request of type METADATA during SASL authentication." for e in sasl_cluster.events)
