"""SASL on one connection, as Kafka's SaslServerAuthenticator serves it, and the users' credentials.

The authenticator's states (SaslServerAuthenticator.SaslState): a connection on a SASL listener
starts in HANDSHAKE_OR_VERSIONS_REQUEST, where only ApiVersions and SaslHandshake are served (any
other request: "Unexpected Kafka request of type X during SASL handshake.", and the connection
closes). SaslHandshake picks an enabled mechanism (else UNSUPPORTED_SASL_MECHANISM with the
enabled list, and the connection closes) and moves to AUTHENTICATE. From SaslHandshake v1 the
tokens come in SaslAuthenticate requests (KIP-152); after a v0 handshake they come as raw
size-prefixed tokens without a Kafka header (the server answers them the same way). A refused
token gets SASL_AUTHENTICATION_FAILED with Kafka's message, then the connection closes; a
completed exchange moves to COMPLETE and every API is served.

OAUTHBEARER (KIP-255) takes one client message and a validator's verdict
(mockbroker.security.oauthbearer); a refused token is answered with a JSON challenge first.

Re-authentication (KIP-368): a session gets an expiry when ``connections.max.reauth.ms`` is set or
the credential has one (an OAUTHBEARER token's ``exp``), as ReauthInfo.calcCompletionTimesAndReturnSessionLifetimeMs
computes it. A SaslHandshake on an authenticated connection whose session has an expiry begins a
re-authentication (KafkaChannel.maybeBeginServerReauthentication): same mechanism
(else REAUTH_BAD_MECHANISM, failed at the next token) and same principal, else
SASL_AUTHENTICATION_FAILED and the connection closes.

Credentials are kept as Kafka keeps them: PLAIN's passwords as its JAAS ``user_<name>`` options
(PlainServerCallbackHandler), SCRAM's salted (mockbroker.security.scram), per mechanism.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from mockbroker.security.oauthbearer import (
    CONTROL_A,
    OAuthBearerClientError,
    OAuthBearerIllegalTokenError,
    OAuthBearerSchemeError,
    Validator,
    json_error,
    parse_client_first,
)
from mockbroker.security.scram import MECHANISMS as SCRAM_MECHANISMS
from mockbroker.security.scram import (
    MIN_ITERATIONS,
    ScramCredential,
    ScramError,
    ScramServer,
    credential_from_salted,
    make_credential,
)
from mockbroker_protocol.hashing import java_hash_map_order

PLAIN = "PLAIN"
OAUTHBEARER = "OAUTHBEARER"
SUPPORTED_MECHANISMS = (PLAIN, "SCRAM-SHA-256", "SCRAM-SHA-512", OAUTHBEARER)
# KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS: a re-authentication begun sooner after the
# previous one is not one (the SaslHandshake reaches KafkaApis: ILLEGAL_SASL_STATE).
MIN_REAUTH_INTERVAL_MS = 1000


@functools.cache
def kafka_mechanism_order(mechanisms: tuple[str, ...]) -> tuple[str, ...]:
    """The enabled mechanisms in the order Kafka's SaslHandshake lists them: its authenticator takes
    them from a HashMap's key set (mechanism -> JAAS context, 16 buckets for a few), so they come
    by bucket (String.hashCode, spread as HashMap.hash does), ties in the configured order
    (PLAIN before OAUTHBEARER whatever sasl.enabled.mechanisms says; checked against Kafka 4.3.1)."""
    return tuple(java_hash_map_order(mechanisms))


@dataclass(slots=True)
class Credentials:
    """Every user's credentials: PLAIN passwords and SCRAM salted credentials (user, mechanism)."""

    plain: dict[str, str] = field(default_factory=dict)
    scram: dict[tuple[str, str], ScramCredential] = field(default_factory=dict)

    def add_user(self, user: str, password: str, iterations: int = MIN_ITERATIONS) -> None:
        """A user for PLAIN and both SCRAM mechanisms (what tests want: one password, any mechanism)."""
        self.plain[user] = password
        for mechanism in SCRAM_MECHANISMS:
            self.scram[(user, mechanism)] = make_credential(mechanism, password, iterations)

    def remove_user(self, user: str) -> bool:
        found = self.plain.pop(user, None) is not None
        for mechanism in SCRAM_MECHANISMS:
            found = self.scram.pop((user, mechanism), None) is not None or found
        return found

    def upsert_scram(self, user: str, mechanism: str, salt: bytes, salted: bytes, iterations: int) -> None:
        """AlterUserScramCredentials' upsertion: kept as stored key and server key, as Kafka keeps it."""
        self.scram[(user, mechanism)] = credential_from_salted(mechanism, salted, salt, iterations)

    def delete_scram(self, user: str, mechanism: str) -> bool:
        return self.scram.pop((user, mechanism), None) is not None

    def scram_users(self) -> dict[str, dict[str, int]]:
        """User -> SCRAM mechanism -> iterations (what DescribeUserScramCredentials tells)."""
        out: dict[str, dict[str, int]] = {}
        for (user, mechanism), credential in self.scram.items():
            out.setdefault(user, {})[mechanism] = credential.iterations
        return out

    def users(self) -> dict[str, list[str]]:
        """User -> the mechanisms it can use (never a password nor a salted credential)."""
        out: dict[str, list[str]] = {user: [PLAIN] for user in self.plain}
        for user, mechanism in self.scram:
            out.setdefault(user, []).append(mechanism)
        return {user: sorted(mechs) for user, mechs in sorted(out.items())}


class SaslFailure(Exception):
    """A refused token: ``client_message`` is what Kafka tells the client; ``reason`` is ours."""

    def __init__(self, client_message: str, reason: str) -> None:
        super().__init__(reason)
        self.client_message = client_message
        self.reason = reason


class SaslAbort(Exception):
    """An exchange Kafka ends by closing the connection without an answer: a re-authentication
    with another mechanism (REAUTH_BAD_MECHANISM: the exception is thrown before any answer is
    built), and the runtime errors OAUTHBEARER's server lets escape (a scheme other than Bearer,
    whose message Kafka builds from a group its pattern lacks; a token header without ``alg``; a
    validator's own failure). ``reason`` is ours, for events."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class OAuthBearerChallenge(Exception):
    """A refused OAUTHBEARER token: ``challenge`` (JSON) goes back as the server's token with
    NONE, the exchange goes on (the client answers %x01); ``reason`` is ours, for events."""

    def __init__(self, challenge: str, reason: str) -> None:
        super().__init__(reason)
        self.challenge = challenge
        self.reason = reason


class SaslSession:
    """One connection's authenticator (SaslServerAuthenticator, with its ReauthInfo)."""

    __slots__ = (
        "_oauth_error",
        "_scram",
        "credential_lifetime_ms",
        "enabled_mechanisms",
        "expires_at_ms",
        "last_reauth_start_ms",
        "mechanism",
        "previous",
        "principal",
        "raw_tokens",
        "state",
        "validator",
    )

    def __init__(self, enabled_mechanisms: tuple[str, ...], validator: Validator | None = None) -> None:
        self.enabled_mechanisms = kafka_mechanism_order(enabled_mechanisms)
        self.validator = validator  # OAUTHBEARER's (mockbroker.security.oauthbearer)
        self.state = "HANDSHAKE_OR_VERSIONS_REQUEST"
        self.mechanism: str | None = None
        self.principal: str | None = None  # "User:<name>" once COMPLETE
        self.raw_tokens = False  # after a v0 SaslHandshake: tokens without Kafka headers
        self._scram: ScramServer | None = None
        self._oauth_error: str | None = None  # the JSON challenge sent for a refused token
        self.credential_lifetime_ms: int | None = None  # an OAUTHBEARER token's exp (epoch ms)
        self.expires_at_ms: int | None = None  # the session's end (cluster clock), KIP-368
        self.last_reauth_start_ms = 0
        self.previous: tuple[str, str] | None = None  # (mechanism, principal) while re-authenticating

    @property
    def authenticated(self) -> bool:
        return self.state == "COMPLETE"

    @property
    def reauthenticating(self) -> bool:
        return self.previous is not None

    def handshake(self, mechanism: str, version: int) -> bool:
        """SaslHandshake: True when the mechanism is enabled (state AUTHENTICATE, or
        REAUTH_BAD_MECHANISM when a re-authentication asks for another), else FAILED."""
        if mechanism not in self.enabled_mechanisms:
            self.state = "FAILED"
            return False
        self.raw_tokens = version == 0
        self.mechanism = mechanism
        self.state = "AUTHENTICATE"
        if self.previous is not None and mechanism != self.previous[0]:
            self.state = "REAUTH_BAD_MECHANISM"
        return True

    def begin_reauthentication(self, now_ms: int) -> bool:
        """A SaslHandshake on an authenticated connection: True when it begins a re-authentication
        (the session has an expiry and the last one began at least a second ago)."""
        if self.expires_at_ms is None or (self.last_reauth_start_ms and now_ms - self.last_reauth_start_ms < MIN_REAUTH_INTERVAL_MS):
            return False
        assert self.mechanism is not None and self.principal is not None
        self.last_reauth_start_ms = now_ms
        self.previous = (self.mechanism, self.principal)
        self.state = "HANDSHAKE_OR_VERSIONS_REQUEST"
        self._scram, self._oauth_error, self.credential_lifetime_ms = None, None, None
        return True

    def complete(self, now_ms: int, wall_ms: int, max_reauth_ms: int) -> int:
        """The exchange completed: the session lifetime sent to the client (SaslAuthenticate v1+),
        min of connections.max.reauth.ms and the credential's remaining life, 0 when neither is
        set; the session's expiry is noted on the cluster clock."""
        expiry = self.credential_lifetime_ms
        lifetime: int | None = None
        if expiry is not None:
            lifetime = max(0, expiry - wall_ms)
            if max_reauth_ms > 0:
                lifetime = min(lifetime, max_reauth_ms)
        elif max_reauth_ms > 0:
            lifetime = max_reauth_ms
        self.expires_at_ms = None if lifetime is None else now_ms + lifetime
        self.previous = None
        return lifetime or 0

    def authenticate(self, token: bytes, credentials: Credentials, wall_ms: int = 0) -> bytes:
        """One token of the exchange: the server's answer; raises SaslFailure (state FAILED).
        ``wall_ms`` is the time tokens are checked against (OAUTHBEARER's exp and iat)."""
        mechanism = self.mechanism
        try:
            if self.state == "REAUTH_BAD_MECHANISM":
                assert self.previous is not None
                raise SaslAbort(
                    f"SASL mechanism '{mechanism}' requested by client is not supported for re-authentication of mechanism '{self.previous[0]}'"
                )
            assert mechanism is not None and self.state == "AUTHENTICATE"
            if mechanism == PLAIN:
                answer = self._plain(token, credentials)
            elif mechanism == OAUTHBEARER:
                answer = self._oauthbearer(token, wall_ms)
            else:
                answer = self._scram_step(mechanism, token, credentials)
            self._check_reauthenticated_principal()
        except (SaslFailure, SaslAbort):
            self.state = "FAILED"
            raise
        return answer

    def _check_reauthenticated_principal(self) -> None:
        # ReauthInfo.ensurePrincipalUnchanged, once the re-authentication's exchange completes.
        previous = self.previous
        if previous is None or self.state != "COMPLETE" or self.principal == previous[1]:
            return
        was, now = (p.replace(":", ".", 1) for p in (previous[1], self.principal or ""))
        raise SaslFailure(f"Cannot change principals during re-authentication from {was}: {now}", "principal changed on re-authentication")

    def _oauthbearer(self, token: bytes, wall_ms: int) -> bytes:
        # OAuthBearerSaslServer.evaluateResponse: %x01 after our challenge fails with its JSON.
        generic = f"Authentication failed during authentication due to invalid credentials with SASL mechanism {OAUTHBEARER}"
        if token == CONTROL_A and self._oauth_error is not None:
            raise SaslFailure(self._oauth_error, "client acknowledged the error challenge")
        self._oauth_error = None
        try:
            first = parse_client_first(token)
        except OAuthBearerSchemeError as exc:
            raise SaslAbort(str(exc)) from None
        except OAuthBearerClientError as exc:
            raise SaslFailure(generic, str(exc)) from None
        validator = self.validator
        assert validator is not None
        try:
            validated = validator(first.token, wall_ms)
        except OAuthBearerIllegalTokenError as exc:
            status = "insufficient_scope" if exc.failure_scope is not None else "invalid_token"
            self._oauth_error = json_error(status, exc.failure_scope, exc.failure_openid_config)
            raise OAuthBearerChallenge(self._oauth_error, exc.reason) from None
        except Exception as exc:  # a RuntimeException out of Kafka's callback handler: closed
            raise SaslAbort(f"validator failed: {exc!r}") from None
        if first.authorization_id and first.authorization_id != validated.principal_name:
            raise SaslFailure(
                "Authentication failed: Client requested an authorization id "
                f"({first.authorization_id}) that is different from the token's principal name ({validated.principal_name})",
                "authorization id differs from the token's principal",
            )
        self.principal = f"User:{validated.principal_name}"
        self.credential_lifetime_ms = validated.lifetime_ms
        self.state = "COMPLETE"
        return b""

    def _plain(self, token: bytes, credentials: Credentials) -> bytes:
        # PlainSaslServer.evaluateResponse: authzid NUL authcid NUL passwd, UTF-8.
        parts = token.split(b"\x00")
        generic = f"Authentication failed during authentication due to invalid credentials with SASL mechanism {PLAIN}"
        if len(parts) != 3:
            # PlainSaslServer.extractTokens stops counting at 4 tokens
            message = f"Invalid SASL/PLAIN response: expected 3 tokens, got {min(len(parts), 4)}"
            raise SaslFailure(message, "invalid PLAIN token: expected authorization id, username and password")
        try:
            authzid, username, password = (p.decode() for p in parts)
        except UnicodeDecodeError:
            raise SaslFailure(generic, "PLAIN token is not UTF-8") from None
        if not username:
            raise SaslFailure("Authentication failed: username not specified", "no username")
        if not password:
            raise SaslFailure("Authentication failed: password not specified", "no password")
        expected = credentials.plain.get(username)
        if expected is None or expected != password:
            raise SaslFailure("Authentication failed: Invalid username or password", f"bad PLAIN credentials for {username!r}")
        if authzid and authzid != username:
            raise SaslFailure(
                "Authentication failed: Client requested an authorization id that is different from username",
                "authorization id differs from the username",
            )
        self.principal = f"User:{username}"
        self.state = "COMPLETE"
        return b""

    def _scram_step(self, mechanism: str, token: bytes, credentials: Credentials) -> bytes:
        server = self._scram
        if server is None:
            server = self._scram = ScramServer(mechanism, credentials.scram)
        try:
            answer = server.evaluate(token)
        except ScramError as exc:
            # SaslServerAuthenticator answers a SaslException with its generic message only (the
            # cause may tell whether the user exists).
            raise SaslFailure(
                f"Authentication failed during authentication due to invalid credentials with SASL mechanism {mechanism}",
                str(exc),
            ) from None
        if server.complete:
            self.principal = f"User:{server.username}"
            self.state = "COMPLETE"
        return answer
