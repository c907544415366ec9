"""Differential: SASL as Kafka 4.3.1 serves it on a SASL_PLAINTEXT listener with PLAIN,
SCRAM-SHA-256 and SCRAM-SHA-512 (``secured_targets``, tests/differential/conftest.py; the SCRAM users
made by StorageTool format's --add-scram on Kafka's side): SaslHandshake v0-1 with an enabled and an
unknown mechanism, SaslAuthenticate v0-2 and each failure (PLAIN's wrong password and unknown user,
SCRAM's unknown user and bad proof), the SASL APIs after authentication (ILLEGAL_SASL_STATE), a
request other than ApiVersions and the SASL ones before authentication (the connection closes),
and the v0 flow's raw tokens (SaslServerAuthenticator, KafkaApis)."""

from __future__ import annotations

import base64
import hashlib
import hmac
from typing import Any

from mockbroker_protocol import registry
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from mockbroker_protocol.messages.describe_configs import DescribeConfigsRequest, DescribeConfigsResource
from mockbroker_protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from mockbroker_protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from mockbroker_protocol.messages.sasl_handshake import SaslHandshakeRequest
from tests.differential.conftest import SASL_USERS
from tests.differential.harness import Context, Item, Raw, Step, Target, differential

SASL_HANDSHAKE, SASL_AUTHENTICATE, API_VERSIONS, METADATA, DESCRIBE_CONFIGS = 17, 36, 18, 3, 32
CLIENT_NONCE = "fyko+d2lbbFgONRv9qkxdawL"  # RFC 5802's example client nonce


def _frame(api_key: int, version: int, request: Any) -> Any:
    def build(ctx: Context) -> bytes:
        return registry.encode_request(RequestHeader(api_key, version, 99, "differential"), request)

    return build


def _token(token: bytes | Any) -> Any:
    """A raw SASL token after a v0 handshake: size-prefixed, no Kafka header."""

    def build(ctx: Context) -> bytes:
        data = token(ctx) if callable(token) else token
        return len(data).to_bytes(4, "big") + data

    return build


def closed(conn: str) -> Raw:
    """An ApiVersions request on ``conn``: compares whether the broker has closed the connection."""
    return Raw(_frame(API_VERSIONS, 3, ApiVersionsRequest("differential", "1")), conn=conn, label=f"closed-{conn}")


def handshake(mechanism: str, conn: str, version: int = 1) -> Step:
    return Step(SASL_HANDSHAKE, version, SaslHandshakeRequest(mechanism), conn=conn, label=f"handshake-{conn}")


def plain(user: str, password: str) -> bytes:
    return f"\x00{user}\x00{password}".encode()


def authenticate(token: Any, conn: str, version: int = 2, label: str = "", **kwargs: Any) -> Step:
    request = (lambda ctx: SaslAuthenticateRequest(token(ctx))) if callable(token) else SaslAuthenticateRequest(token)
    return Step(SASL_AUTHENTICATE, version, request, conn=conn, label=label or f"auth-{conn}-v{version}", **kwargs)


def served(conn: str) -> Step:
    """A Metadata request (no topics): answered only once the connection is authenticated."""
    return Step(METADATA, 12, MetadataRequest(topics=[], allow_auto_topic_creation=False), conn=conn, label=f"metadata-{conn}")


# -- SCRAM (RFC 5802, RFC 7677): the client side --------------------------------------------------


def _hash(mechanism: str) -> str:
    return "sha256" if mechanism == "SCRAM-SHA-256" else "sha512"


def scram_first(user: str) -> bytes:
    return f"n,,n={user},r={CLIENT_NONCE}".encode()


def scram_final(mechanism: str, user: str, password: str, server_first: bytes, bad_proof: bool = False) -> bytes:
    """The client-final message answering ``server_first`` (its proof spoiled with ``bad_proof``)."""
    algorithm = _hash(mechanism)
    fields = dict(part.split("=", 1) for part in server_first.decode().split(","))
    salted = hashlib.pbkdf2_hmac(algorithm, password.encode(), base64.b64decode(fields["s"]), int(fields["i"]))
    client_key = hmac.new(salted, b"Client Key", algorithm).digest()
    stored_key = hashlib.new(algorithm, client_key).digest()
    without_proof = f"c=biws,r={fields['r']}"
    auth_message = f"n={user},r={CLIENT_NONCE},{server_first.decode()},{without_proof}".encode()
    signature = hmac.new(stored_key, auth_message, algorithm).digest()
    proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
    if bad_proof:
        proof = bytes([proof[0] ^ 1]) + proof[1:]
    return f"{without_proof},p={base64.b64encode(proof).decode()}".encode()


def _scram_message(data: bytes) -> str:
    """A server SCRAM message with its random parts named: the server nonce (after the client's,
    which it must start with), the salt and the server signature; the iterations are compared."""
    if not data:
        return ""
    parts = []
    for part in data.decode().split(","):
        key, value = part.split("=", 1)
        if key == "r":
            value = "<client nonce><server nonce>" if value.startswith(CLIENT_NONCE) and value != CLIENT_NONCE else value
        elif key in ("s", "v"):
            value = f"<{'salt' if key == 's' else 'server signature'}>"
        parts.append(f"{key}={value}")
    return ",".join(parts)


def _scram_answer(tree: Any, ctx: Context) -> Any:
    tree["auth_bytes"] = _scram_message(bytes.fromhex(tree["auth_bytes"]))
    return tree


def _scram_raw(frame: bytes, ctx: Context) -> Any:
    return _scram_message(frame)


def _server_first(label: str) -> Any:
    """The server-first message of an earlier step (a SaslAuthenticate answer or a raw v0 frame)."""

    def get(ctx: Context) -> bytes:
        answer = ctx.answers[label]
        return answer if isinstance(answer, bytes) else bytes(answer.auth_bytes)

    return get


def scram_login(mechanism: str, user: str, conn: str, version: int = 2, password: str | None = None, bad_proof: bool = False) -> list[Item]:
    """Handshake, client-first, client-final over SaslAuthenticate ``version``."""
    secret = SASL_USERS.get(user, "x") if password is None else password
    first_label = f"scram-first-{conn}"
    server_first = _server_first(first_label)
    return [
        handshake(mechanism, conn),
        authenticate(scram_first(user), conn, version, label=first_label, normalise=_scram_answer),
        authenticate(lambda ctx: scram_final(mechanism, user, secret, server_first(ctx), bad_proof), conn, version,
                     label=f"scram-final-{conn}", normalise=_scram_answer),
    ]  # fmt: skip


# -- the sequences ----------------------------------------------------------------------------------


def _error_code_only(tree: Any, ctx: Context) -> Any:
    return {"error_code": tree["error_code"]}  # the API list is D1's


def test_handshake_and_what_is_served_before_authentication(secured_targets: tuple[Target, Target]) -> None:
    steps: list[Item] = [
        handshake("SCRAM-SHA-512", "v1"),
        handshake("PLAIN", "v0", version=0),
        # an unknown mechanism (or an enabled one spelled otherwise): the enabled list, then closed
        handshake("GSSAPI", "unknown1"),
        closed("unknown1"),
        handshake("OAUTHBEARER", "unknown0", version=0),
        closed("unknown0"),
        handshake("plain", "lowercase"),
        closed("lowercase"),
        # before authentication: ApiVersions is served, anything else closes the connection
        Step(API_VERSIONS, 3, ApiVersionsRequest("differential", "1"), conn="before", normalise=_error_code_only),
        Raw(_frame(METADATA, 12, MetadataRequest(topics=[])), conn="before", label="metadata-before-handshake"),
        # after a v1 handshake, another request gets its own error response (ILLEGAL_SASL_STATE),
        # then the connection closes
        handshake("PLAIN", "between"),
        Raw(_frame(METADATA, 12, MetadataRequest(topics=[MetadataRequestTopic(name="t")])), conn="between",
            label="metadata-before-authenticate", decode=(METADATA, 12)),
        closed("between"),
        handshake("PLAIN", "versions"),
        Raw(_frame(API_VERSIONS, 3, ApiVersionsRequest("differential", "1")), conn="versions",
            label="api-versions-before-authenticate", decode=(API_VERSIONS, 3)),
        closed("versions"),
        handshake("PLAIN", "configs"),
        Raw(_frame(DESCRIBE_CONFIGS, 4, DescribeConfigsRequest([DescribeConfigsResource(2, "t", None)])), conn="configs",
            label="describe-configs-before-authenticate", divergences={"D24": ["closed"]}),
        Raw(_frame(SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(plain("alice", "alice-secret"))), conn="nohandshake",
            label="authenticate-before-handshake"),
        # a second handshake in the middle of an exchange
        handshake("PLAIN", "twice"),
        Step(SASL_HANDSHAKE, 1, SaslHandshakeRequest("PLAIN"), conn="twice", label="handshake-again"),
        closed("twice"),
    ]  # fmt: skip
    differential(*secured_targets, steps)


def test_plain(secured_targets: tuple[Target, Target]) -> None:
    steps: list[Item] = []
    for version in (0, 1, 2):
        conn = f"ok{version}"
        steps += [handshake("PLAIN", conn), authenticate(plain("alice", "alice-secret"), conn, version), served(conn)]
    steps += [
        # after authentication: KafkaApis answers the SASL APIs with ILLEGAL_SASL_STATE, the connection stays
        authenticate(plain("alice", "alice-secret"), "ok2", 2, label="auth-again"),
        Step(SASL_HANDSHAKE, 1, SaslHandshakeRequest("PLAIN"), conn="ok2", label="handshake-after"),
        Step(SASL_HANDSHAKE, 0, SaslHandshakeRequest("SCRAM-SHA-256"), conn="ok2", label="handshake-v0-after"),
        served("ok2"),
    ]
    failures = {
        "wrong": plain("alice", "wrong"), "unknown": plain("mallory", "alice-secret"), "nouser": plain("", "alice-secret"),
        "nopassword": plain("alice", ""), "authzid": b"admin\x00alice\x00alice-secret", "onetoken": b"alice",
        "fivetokens": b"\x00alice\x00alice-secret\x00\x00",
    }  # fmt: skip
    for name, token in failures.items():
        for version in (0, 2) if name == "wrong" else (2,):
            conn = f"{name}{version}"
            steps += [handshake("PLAIN", conn), authenticate(token, conn, version), closed(conn)]
    differential(*secured_targets, steps)


def test_scram(secured_targets: tuple[Target, Target]) -> None:
    steps: list[Item] = []
    for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
        short = mechanism[-3:]
        for version in (0, 1, 2):
            conn = f"ok{short}v{version}"
            steps += [*scram_login(mechanism, "alice", conn, version), served(conn)]
        steps += [
            *scram_login(mechanism, "alice", f"badproof{short}", password="wrong"),
            closed(f"badproof{short}"),
            *scram_login(mechanism, "alice", f"spoilt{short}", bad_proof=True),
            closed(f"spoilt{short}"),
            handshake(mechanism, f"unknown{short}"),
            authenticate(scram_first("mallory"), f"unknown{short}"),
            closed(f"unknown{short}"),
            handshake(mechanism, f"garbage{short}"),
            authenticate(b"not a scram message", f"garbage{short}"),
            closed(f"garbage{short}"),
        ]
    steps += [
        authenticate(b"n,,n=alice,r=x", "ok256v2", label="scram-again"),
        Step(SASL_HANDSHAKE, 1, SaslHandshakeRequest("SCRAM-SHA-512"), conn="ok512v1", label="handshake-after"),
    ]
    differential(*secured_targets, steps)


def test_v0_raw_tokens(secured_targets: tuple[Target, Target]) -> None:
    """After a v0 handshake the tokens travel size-prefixed without a Kafka header, both ways; a
    refused one closes the connection (a v0 client has no way to be told why)."""
    first = _server_first("raw-first")
    steps: list[Item] = [
        handshake("PLAIN", "plain", version=0),
        Raw(_token(plain("alice", "alice-secret")), conn="plain", label="raw-plain", read_frame=True),
        served("plain"),
        handshake("PLAIN", "wrong", version=0),
        Raw(_token(plain("alice", "wrong")), conn="wrong", label="raw-wrong"),
        handshake("SCRAM-SHA-256", "scram", version=0),
        Raw(_token(scram_first("alice")), conn="scram", label="raw-first", read_frame=True, normalise=_scram_raw),
        Raw(_token(lambda ctx: scram_final("SCRAM-SHA-256", "alice", "alice-secret", first(ctx))), conn="scram",
            label="raw-final", read_frame=True, normalise=_scram_raw),
        served("scram"),
        handshake("SCRAM-SHA-512", "unknown", version=0),
        Raw(_token(scram_first("mallory")), conn="unknown", label="raw-unknown"),
    ]  # fmt: skip
    differential(*secured_targets, steps)
