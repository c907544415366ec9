"""Differential: SASL OAUTHBEARER with unsecured JWS tokens (KIP-255) and re-authentication
(KIP-368) against a Kafka 4.3.1 configured the same way (a Kafka of its own for this module:
OAUTHBEARER and PLAIN on its SASL_PLAINTEXT listener, Kafka's unsecured validator requiring the
scope ``kafka``, ``connections.max.reauth.ms`` ten minutes on that listener and five for PLAIN
there, twenty for the broker): good tokens and their session_lifetime_ms, PLAIN's, a token
without ``sub``, an expired one, one without the scope, a malformed client message, an
authorization id that is not the token's principal, and re-authentication's rules (same
principal, same mechanism, not twice within a second)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mockbroker.security.oauthbearer import unsecured_token
from mockbroker_conformance.kafka import launcher
from mockbroker_protocol import registry
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.metadata import MetadataRequest
from mockbroker_protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from mockbroker_protocol.messages.sasl_handshake import SaslHandshakeRequest
from tests.conftest import real_kafka
from tests.differential.harness import Context, Item, Raw, Step, Target, differential, mockbroker_target

SASL_HANDSHAKE, SASL_AUTHENTICATE, METADATA = 17, 36, 3
MAX_REAUTH_MS = 600_000
# KIP-368's lookup: the listener's setting over the broker's, the listener and mechanism's over the
# listener's (PLAIN's sessions end sooner than OAUTHBEARER's).
BROKER_MAX_REAUTH_MS = 1_200_000
PLAIN_MAX_REAUTH_MS = 300_000
REAUTH_OVERRIDES = {
    "listener.name.sasl_plaintext.connections.max.reauth.ms": str(MAX_REAUTH_MS),
    "listener.name.sasl_plaintext.plain.connections.max.reauth.ms": str(PLAIN_MAX_REAUTH_MS),
}
JAAS = (
    "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
    'unsecuredLoginStringClaim_sub="broker" unsecuredValidatorRequiredScope="kafka" unsecuredValidatorAllowableClockSkewMs="2000";'
)  # the broker logs in too (its own token, unsecuredLogin*): options mockbroker does not read
PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";'


@pytest.fixture(scope="module")
def oauth_targets() -> Iterator[tuple[Target, Target]]:
    sasl_port = launcher.free_port()
    properties = {
        "listeners": f"PLAINTEXT://127.0.0.1:{{port}},SASL_PLAINTEXT://127.0.0.1:{sasl_port},CONTROLLER://127.0.0.1:{{controller}}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{{port}},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
        "sasl.enabled.mechanisms": "OAUTHBEARER,PLAIN",
        "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config": JAAS,
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "connections.max.reauth.ms": str(BROKER_MAX_REAUTH_MS),
        **REAUTH_OVERRIDES,
    }
    with real_kafka(properties=properties), mockbroker_target(
        listeners="SASL_PLAINTEXT://127.0.0.1:0",
        sasl_enabled_mechanisms="OAUTHBEARER,PLAIN",
        sasl_users={"alice": "alice-secret"},
        oauthbearer_sasl_jaas_config=JAAS,
        connections_max_reauth_ms=BROKER_MAX_REAUTH_MS,
        listener_overrides=REAUTH_OVERRIDES,
    ) as mock:
        yield Target("kafka", ("127.0.0.1", sasl_port)), mock


def token(lifetime_s: int = 3600, **claims: Any) -> Callable[[], str]:
    """An unsecured JWS made when the step runs (each target gets a fresh one)."""

    def make() -> str:
        now = int(time.time())
        base: dict[str, Any] = {"sub": "alice", "iat": now, "exp": now + lifetime_s, "scope": "kafka"}
        base.update(claims)
        return unsecured_token({k: v for k, v in base.items() if v is not None})

    return make


def first(make: Callable[[], str], authzid: str = "", scheme: str = "Bearer") -> Callable[[Context], SaslAuthenticateRequest]:
    def build(ctx: Context) -> SaslAuthenticateRequest:
        gs2 = f"n,a={authzid}," if authzid else "n,,"
        return SaslAuthenticateRequest(f"{gs2}\x01auth={scheme} {make()}\x01\x01".encode())

    return build


def handshake(conn: str, mechanism: str = "OAUTHBEARER") -> Step:
    return Step(SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism), conn=conn, label=f"handshake-{conn}")


def authenticate(conn: str, request: Any, normalise: Any = None) -> Step:
    return Step(SASL_AUTHENTICATE, 2, request, conn=conn, label=f"auth-{conn}", normalise=normalise)


def lifetime_in_seconds(tree: Any, ctx: Context) -> Any:
    """session_lifetime_ms counts down from the token's exp as the request is served: compared to
    the second (both brokers answer within the same second of the token's making)."""
    tree["session_lifetime_ms"] = round(tree["session_lifetime_ms"] / 10_000)
    return tree


def closed(conn: str) -> Raw:
    """Whether the broker closed the connection (a Metadata request after a failed login)."""

    def frame(ctx: Context) -> bytes:
        return registry.encode_request(RequestHeader(METADATA, 12, 99, "differential"), MetadataRequest(topics=[]))

    return Raw(frame, label=f"closed-{conn}", conn=conn)


def authenticate_unanswered(conn: str, make: Callable[[Context], SaslAuthenticateRequest]) -> Raw:
    """A SaslAuthenticate Kafka answers by closing the connection (compared: closed or not)."""

    def frame(ctx: Context) -> bytes:
        return registry.encode_request(RequestHeader(SASL_AUTHENTICATE, 2, 98, "differential"), make(ctx))

    return Raw(frame, label=f"unanswered-{conn}", conn=conn)


def refused(conn: str, make: Callable[[Context], SaslAuthenticateRequest]) -> list[Item]:
    """A token the validator refuses: the JSON challenge, the client's %x01, the failure, closed."""
    return [
        handshake(conn),
        authenticate(conn, make),
        authenticate(conn, SaslAuthenticateRequest(b"\x01")),
        closed(conn),
    ]


def test_oauthbearer_tokens(oauth_targets: tuple[Target, Target]) -> None:
    steps: list[Item] = [
        # a good token: the session ends at the listener's connections.max.reauth.ms (sooner than exp)
        handshake("good"),
        authenticate("good", first(token())),
        # PLAIN on the same listener: its own listener.name.sasl_plaintext.plain.connections.max.reauth.ms
        handshake("plain", "PLAIN"),
        authenticate("plain", SaslAuthenticateRequest(b"\x00alice\x00alice-secret")),
        Step(METADATA, 12, MetadataRequest(topics=[]), conn="good", ignore=("brokers", "cluster_id", "controller_id")),
        # a token expiring before connections.max.reauth.ms: the session ends at its exp
        handshake("short"),
        authenticate("short", first(token(lifetime_s=120)), normalise=lifetime_in_seconds),
        *refused("nosub", first(token(sub=None))),
        *refused("expired", first(token(lifetime_s=-60))),
        *refused("scope", first(token(scope="other"))),
        *refused("unsigned", first(lambda: token()() + "c2ln")),
        # Kafka's malformed-message answer (the generic message), and what it closes without an
        # answer: a scheme other than Bearer (its message names a group its pattern lacks) and a
        # header without alg (a NullPointerException)
        handshake("malformed"),
        authenticate("malformed", lambda ctx: SaslAuthenticateRequest(b"n,,\x01auth=Bearer\x01\x01")),
        closed("malformed"),
        handshake("basic"),
        authenticate_unanswered("basic", first(token(), scheme="Basic")),
        handshake("noalg"),
        authenticate_unanswered("noalg", first(lambda: "e30." + token()().split(".")[1] + ".")),
        handshake("authzid"),
        authenticate("authzid", first(token(), authzid="bob")),
        closed("authzid"),
    ]
    differential(*oauth_targets, steps)


def test_reauthentication_rules(oauth_targets: tuple[Target, Target]) -> None:
    steps: list[Item] = [
        # the same principal again: a new session; a second re-authentication within a second is
        # not one (KafkaApis answers the handshake)
        handshake("same"),
        authenticate("same", first(token())),
        handshake("same"),
        authenticate("same", first(token())),
        handshake("same"),
        Step(METADATA, 12, MetadataRequest(topics=[]), conn="same", ignore=("brokers", "cluster_id", "controller_id")),
        # another principal
        handshake("other"),
        authenticate("other", first(token())),
        handshake("other"),
        authenticate("other", first(token(sub="bob"))),
        closed("other"),
        # another mechanism
        handshake("mech"),
        authenticate("mech", first(token())),
        handshake("mech", "PLAIN"),  # answered NONE; the token after it closes the connection
        authenticate_unanswered("mech", lambda ctx: SaslAuthenticateRequest(b"\x00alice\x00alice-secret")),
    ]
    differential(*oauth_targets, steps)
