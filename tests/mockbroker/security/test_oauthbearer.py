"""OAUTHBEARER (KIP-255) and re-authentication (KIP-368) on the wire: Kafka's unsecured JWS rules
(OAuthBearerUnsecuredJws, OAuthBearerUnsecuredValidatorCallbackHandler), the JSON challenge and
%x01, a pluggable validator, session_lifetime_ms, re-authentication's rules and a lapsed session."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mockbroker import MockCluster
from mockbroker.clock import ManualClock
from mockbroker.config.cluster import ClusterConfig
from mockbroker.security.oauthbearer import (
    OAuthBearerIllegalTokenError,
    OAuthBearerToken,
    UnsecuredValidator,
    jaas_options,
    parse_client_first,
    unsecured_token,
)
from mockbroker_protocol import registry
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.metadata import MetadataRequest
from mockbroker_protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from mockbroker_protocol.messages.sasl_handshake import SaslHandshakeRequest
from tests.mockbroker.wire import WireClient

JAAS = (
    'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
    'unsecuredValidatorRequiredScope="kafka" unsecuredValidatorAllowableClockSkewMs="1000";'
)


def _now_s() -> float:
    return time.time()


def _token(**claims: Any) -> str:
    base: dict[str, Any] = {"sub": "alice", "iat": int(_now_s()), "exp": int(_now_s()) + 3600, "scope": "kafka"}
    base.update(claims)
    return unsecured_token({k: v for k, v in base.items() if v is not None})


def _first(token: str, authzid: str = "", **extensions: str) -> bytes:
    pairs = "".join(f"{k}={v}\x01" for k, v in extensions.items())
    return f"n,{'a=' + authzid if authzid else ''},\x01auth=Bearer {token}\x01{pairs}\x01".encode()


def test_client_first_message() -> None:
    parsed = parse_client_first(_first("a.b.", authzid="alice", traceId="42"))
    assert (parsed.authorization_id, parsed.token, parsed.extensions) == ("alice", "a.b.", {"traceId": "42"})
    for bad in (b"n,,\x01\x01", b"n,,auth=Bearer a.b.\x01\x01", b"n,,\x01auth=Basic a.b.\x01\x01", b"y,,\x01auth=Bearer a.b.\x01\x01"):
        with pytest.raises(Exception, match="OAUTHBEARER client first message"):
            parse_client_first(bad)


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"sub": None}, "No principal name in JWT claim: sub"),
        ({"exp": None}, "No expiration time in JWT"),
        ({"exp": -10}, "was on or after the Expiration Time"),  # seconds from now (when the test runs)
        ({"iat": 600}, "was after the indicated time"),
        ({"sub": 7}, "'sub' claim was not of type String"),
        ({"scope": "other"}, "missing a required scope"),
    ],
)
def test_unsecured_validator_refusals(claims: dict[str, Any], reason: str) -> None:
    # exp and iat are given relative to now, taken here: a time taken when the parameters are
    # collected is long past when a whole suite reaches this test
    now = int(time.time())
    claims = {k: now + v if k in ("exp", "iat") and isinstance(v, int) else v for k, v in claims.items()}
    validator = UnsecuredValidator.from_options(jaas_options(JAAS))
    with pytest.raises(OAuthBearerIllegalTokenError, match=reason):
        validator(_token(**claims), int(time.time() * 1000))


def test_unsecured_validator_options() -> None:
    options = jaas_options(JAAS + ' unsecuredValidatorPrincipalClaimName="client_id"')
    validator = UnsecuredValidator.from_options(options)
    assert validator.required_scope == ("kafka",) and validator.allowable_clock_skew_ms == 1000
    token = validator(_token(client_id="svc", scope=["kafka", "x"]), int(time.time() * 1000))
    assert token.principal_name == "svc" and token.scope == {"kafka", "x"}
    # the clock skew lets a token expired by less than it through
    skewed = UnsecuredValidator.from_options(jaas_options(JAAS))
    now = int(time.time())
    assert skewed(_token(iat=now - 60, exp=now), now * 1000 + 500).principal_name == "alice"
    with pytest.raises(OAuthBearerIllegalTokenError, match="Expiration Time"):
        skewed(_token(iat=now - 60, exp=now), now * 1000 + 1000)
    with pytest.raises(OAuthBearerIllegalTokenError, match="must have 'none'"):
        validator("eyJhbGciOiJIUzI1NiJ9.e30.", 0)
    with pytest.raises(OAuthBearerIllegalTokenError, match="must not contain a digital signature"):
        validator(_token() + "c2ln", 0)
    with pytest.raises(ValueError, match="must not be negative"):
        UnsecuredValidator.from_options({"unsecuredValidatorAllowableClockSkewMs": "-1"})


def test_settings_by_kafka_names() -> None:
    config = ClusterConfig.from_kafka(
        {
            "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config": JAAS,
            "oauthbearer.sasl.server.callback.handler.class": "tests.mockbroker.security.test_oauthbearer.fixed_validator",
            "connections.max.reauth.ms": "60000",
        }
    )
    assert config.oauthbearer_sasl_jaas_config == JAAS and config.connections_max_reauth_ms == 60000
    with pytest.raises(ValueError, match="cannot load"):
        MockCluster(
            listeners="SASL_PLAINTEXT://127.0.0.1:0",
            sasl_enabled_mechanisms="OAUTHBEARER",
            oauthbearer_sasl_server_callback_handler_class="tests.nowhere.validate",
        )


def fixed_validator(token_value: str, now_ms: int) -> OAuthBearerToken:
    """A pluggable validator: "good-<name>" tokens, valid for a minute; "scope" tokens lack a scope."""
    if token_value == "scope":
        raise OAuthBearerIllegalTokenError("no scope", failure_scope="[kafka]")
    if not token_value.startswith("good-"):
        raise OAuthBearerIllegalTokenError("unknown token", failure_openid_config="https://idp.example/.well-known")
    return OAuthBearerToken(token_value, token_value.removeprefix("good-"), now_ms + 60_000)


async def _cluster(**settings: Any) -> MockCluster:
    cluster = MockCluster(
        listeners="SASL_PLAINTEXT://127.0.0.1:0",
        sasl_enabled_mechanisms=settings.pop("sasl_enabled_mechanisms", "OAUTHBEARER"),
        oauthbearer_sasl_jaas_config=JAAS,
        **settings,
    )
    return await cluster.start()


@pytest.fixture
async def oauth_cluster() -> AsyncIterator[MockCluster]:
    cluster = await _cluster()
    try:
        yield cluster
    finally:
        await cluster.stop()
    assert not cluster.internal_errors


async def _login(cluster: MockCluster, message: bytes, version: int = 2) -> tuple[WireClient, Any]:
    node = next(iter(cluster.brokers.values()))
    client = await WireClient.connect(node.host, node.port)
    assert (await client.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("OAUTHBEARER"))).error_code == 0
    return client, await client.request(ApiKey.SASL_AUTHENTICATE, version, SaslAuthenticateRequest(message))


async def test_good_token_then_served(oauth_cluster: MockCluster) -> None:
    client, response = await _login(oauth_cluster, _first(_token(exp=int(time.time()) + 600)))
    assert response.error_code == ErrorCode.NONE and response.auth_bytes == b""
    # the token's exp bounds the session even without connections.max.reauth.ms (Kafka 4.3.1)
    assert 590_000 <= response.session_lifetime_ms <= 600_000
    assert (await client.request(ApiKey.METADATA, 9, MetadataRequest(topics=[]))).brokers
    succeeded = [e for e in oauth_cluster.events if e.type == "authentication.succeeded"]
    assert succeeded[-1].details["principal"] == "User:alice" and succeeded[-1].details["mechanism"] == "OAUTHBEARER"


@pytest.mark.parametrize(
    ("claims", "challenge"),
    [
        ({"sub": None}, b'{"status":"invalid_token"}'),
        ({"exp": int(time.time()) - 60}, b'{"status":"invalid_token"}'),
        ({"scope": "other"}, b'{"status":"insufficient_scope", "scope":"[kafka]"}'),
    ],
)
async def test_refused_token_challenge_then_failure(oauth_cluster: MockCluster, claims: dict[str, Any], challenge: bytes) -> None:
    client, response = await _login(oauth_cluster, _first(_token(**claims)))
    assert (response.error_code, response.auth_bytes, response.session_lifetime_ms) == (ErrorCode.NONE, challenge, 0)
    final = await client.request(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(b"\x01"))
    assert (final.error_code, final.error_message) == (ErrorCode.SASL_AUTHENTICATION_FAILED, challenge.decode())
    assert await client.closed_by_peer()
    assert any(e.type == "authentication.failed" and e.details["mechanism"] == "OAUTHBEARER" for e in oauth_cluster.events)


async def test_bad_message_and_authzid(oauth_cluster: MockCluster) -> None:
    client, response = await _login(oauth_cluster, b"n,,\x01auth=Bearer\x01\x01")
    assert response.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert response.error_message == "Authentication failed during authentication due to invalid credentials with SASL mechanism OAUTHBEARER"
    assert await client.closed_by_peer()
    # a scheme other than Bearer, a header without alg: closed without an answer, as Kafka does
    for message in (b"n,,\x01auth=Basic abc\x01\x01", _first("e30." + _token().split(".")[1] + ".")):
        node = next(iter(oauth_cluster.brokers.values()))
        client = await WireClient.connect(node.host, node.port)
        assert (await client.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("OAUTHBEARER"))).error_code == 0
        await client.send_raw(registry.encode_request(RequestHeader(ApiKey.SASL_AUTHENTICATE, 2, 5, "t"), SaslAuthenticateRequest(message)))
        assert await client.closed_by_peer()
    client, response = await _login(oauth_cluster, _first(_token(), authzid="bob"))
    assert response.error_message == (
        "Authentication failed: Client requested an authorization id (bob) that is different from the token's principal name (alice)"
    )


async def test_pluggable_validator() -> None:
    cluster = await _cluster(oauthbearer_sasl_server_callback_handler_class="tests.mockbroker.security.test_oauthbearer:fixed_validator")
    try:
        _client, response = await _login(cluster, _first("good-carol"))
        assert response.error_code == ErrorCode.NONE and 0 < response.session_lifetime_ms <= 60_000
        _client, response = await _login(cluster, _first("bad"))
        assert response.auth_bytes == b'{"status":"invalid_token", "openid-configuration":"https://idp.example/.well-known"}'
        _client, response = await _login(cluster, _first("scope"))
        assert response.auth_bytes == b'{"status":"insufficient_scope", "scope":"[kafka]"}'
    finally:
        await cluster.stop()


async def _plain_login(cluster: MockCluster, user: str = "alice") -> tuple[WireClient, Any]:
    node = next(iter(cluster.brokers.values()))
    client = await WireClient.connect(node.host, node.port)
    assert (await client.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("PLAIN"))).error_code == 0
    return client, await client.request(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(f"\x00{user}\x00pw".encode()))


async def _reauth_cluster() -> MockCluster:
    return await _cluster(
        clock=ManualClock(),
        sasl_enabled_mechanisms="PLAIN,SCRAM-SHA-256,OAUTHBEARER",
        sasl_users={"alice": "pw", "bob": "pw"},
        connections_max_reauth_ms=5000,
    )


async def test_session_lifetime_and_lapsed_session_closes() -> None:
    cluster = await _reauth_cluster()
    try:
        client, response = await _plain_login(cluster)
        assert response.session_lifetime_ms == 5000
        assert isinstance(cluster.clock, ManualClock)
        cluster.clock.advance(5000)
        assert (await client.request(ApiKey.METADATA, 9, MetadataRequest(topics=[]))).brokers  # not yet past
        cluster.clock.advance(1)
        await client.send_raw(_metadata_frame())
        assert await client.closed_by_peer()
        assert any(e.type == "authentication.session_expired" and e.details["principal"] == "User:alice" for e in cluster.events)
    finally:
        await cluster.stop()


def _metadata_frame() -> bytes:
    return registry.encode_request(RequestHeader(ApiKey.METADATA, 9, 99, "t"), MetadataRequest(topics=[]))


async def test_reauthentication_rules() -> None:
    cluster = await _reauth_cluster()
    try:
        client, _ = await _plain_login(cluster)
        assert isinstance(cluster.clock, ManualClock)
        cluster.clock.advance(4000)
        # same mechanism, same principal: a new session, the connection goes on past the old one's end
        assert (await client.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("PLAIN"))).error_code == 0
        again = await client.request(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(b"\x00alice\x00pw"))
        assert (again.error_code, again.session_lifetime_ms) == (0, 5000)
        cluster.clock.advance(4000)
        assert (await client.request(ApiKey.METADATA, 9, MetadataRequest(topics=[]))).brokers
        # within a second of the last re-authentication: not one (KafkaApis: ILLEGAL_SASL_STATE)
        cluster.clock.advance(100)
        assert (await client.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("PLAIN"))).error_code == 0
        await client.request(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(b"\x00alice\x00pw"))
        cluster.clock.advance(100)
        illegal = await client.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("PLAIN"))
        assert illegal.error_code == ErrorCode.ILLEGAL_SASL_STATE
        reauth = [e for e in cluster.events if e.type == "authentication.succeeded" and e.details["reauthentication"]]
        assert len(reauth) == 2

        other, _ = await _plain_login(cluster)
        cluster.clock.advance(1000)
        assert (await other.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("PLAIN"))).error_code == 0
        changed = await other.request(ApiKey.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(b"\x00bob\x00pw"))
        assert changed.error_code == ErrorCode.SASL_AUTHENTICATION_FAILED
        assert changed.error_message == "Cannot change principals during re-authentication from User.alice: User.bob"
        assert await other.closed_by_peer()

        third, _ = await _plain_login(cluster)
        cluster.clock.advance(1000)
        assert (await third.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("SCRAM-SHA-256"))).error_code == 0
        # REAUTH_BAD_MECHANISM: the token after the handshake closes the connection, unanswered
        await third.send_raw(
            registry.encode_request(RequestHeader(ApiKey.SASL_AUTHENTICATE, 2, 5, "t"), SaslAuthenticateRequest(b"n,,n=alice,r=abc"))
        )
        assert await third.closed_by_peer()
        assert any(e.reason and "not supported for re-authentication of mechanism 'PLAIN'" in e.reason for e in cluster.events)
    finally:
        await cluster.stop()


async def test_without_reauth_setting_plain_sessions_do_not_expire(oauth_cluster: MockCluster) -> None:
    cluster = await _cluster(sasl_enabled_mechanisms="PLAIN", sasl_users={"alice": "pw"})
    try:
        client, response = await _plain_login(cluster)
        assert response.session_lifetime_ms == 0
        assert (await client.request(ApiKey.SASL_HANDSHAKE, 1, SaslHandshakeRequest("PLAIN"))).error_code == ErrorCode.ILLEGAL_SASL_STATE
    finally:
        await cluster.stop()


async def test_control_describes_the_validator_without_the_jaas_line() -> None:
    cluster = await _cluster(connections_max_reauth_ms=60000)
    try:
        snap = await cluster.control.describe_security()
        assert snap.connections_max_reauth_ms == 60000
        assert snap.oauthbearer == {
            "validator": "unsecured",
            "principal_claim_name": "sub",
            "scope_claim_name": "scope",
            "required_scope": ["kafka"],
            "allowable_clock_skew_ms": 1000,
        }
        assert "OAuthBearerLoginModule" not in repr(snap)
    finally:
        await cluster.stop()
    # a callable given directly (the fixture's and MockCluster's keyword)
    cluster = await _cluster(oauthbearer_sasl_server_callback_handler_class=fixed_validator)
    try:
        snap = await cluster.control.describe_security()
        assert snap.oauthbearer == {"validator": "tests.mockbroker.security.test_oauthbearer.fixed_validator"}
        _client, response = await _login(cluster, _first("good-frank"))
        assert response.error_code == ErrorCode.NONE
    finally:
        await cluster.stop()


def test_handshake_lists_mechanisms_in_kafkas_order() -> None:
    # Kafka 4.3.1 with sasl.enabled.mechanisms=SCRAM-SHA-256,OAUTHBEARER,SCRAM-SHA-512,PLAIN
    # answered SaslHandshake with this list (its HashMap's order).
    from mockbroker.security.sasl import kafka_mechanism_order

    given = ("SCRAM-SHA-256", "OAUTHBEARER", "SCRAM-SHA-512", "PLAIN")
    assert kafka_mechanism_order(given) == ("SCRAM-SHA-512", "PLAIN", "SCRAM-SHA-256", "OAUTHBEARER")
