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

Credentials are kept as Kafka keeps them: PLAIN's passwords as its JAAS ``user_<name>`` options
(PlainServerCallbackHandler), SCRAM's salted (mockbroker.security.scram), per mechanism.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mockbroker.security.scram import MECHANISMS as SCRAM_MECHANISMS
from mockbroker.security.scram import (
    MIN_ITERATIONS,
    ScramCredential,
    ScramError,
    ScramServer,
    credential_from_salted,
    make_credential,
)

PLAIN = "PLAIN"
SUPPORTED_MECHANISMS = (PLAIN, "SCRAM-SHA-256", "SCRAM-SHA-512")


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


class SaslSession:
    """One connection's authenticator (SaslServerAuthenticator)."""

    __slots__ = ("_scram", "enabled_mechanisms", "mechanism", "principal", "raw_tokens", "state")

    def __init__(self, enabled_mechanisms: tuple[str, ...]) -> None:
        self.enabled_mechanisms = enabled_mechanisms
        self.state = "HANDSHAKE_OR_VERSIONS_REQUEST"
        self.mechanism: str | None = None
        self.principal: str | None = None  # "User:<name>" once COMPLETE
        self.raw_tokens = False  # after a v0 SaslHandshake: tokens without Kafka headers
        self._scram: ScramServer | None = None

    @property
    def authenticated(self) -> bool:
        return self.state == "COMPLETE"

    def handshake(self, mechanism: str, version: int) -> bool:
        """SaslHandshake: True when the mechanism is enabled (state AUTHENTICATE), else FAILED."""
        if mechanism not in self.enabled_mechanisms:
            self.state = "FAILED"
            return False
        self.mechanism = mechanism
        self.state = "AUTHENTICATE"
        self.raw_tokens = version == 0
        return True

    def authenticate(self, token: bytes, credentials: Credentials) -> bytes:
        """One token of the exchange: the server's answer; raises SaslFailure (state FAILED)."""
        mechanism = self.mechanism
        assert mechanism is not None and self.state == "AUTHENTICATE"
        try:
            if mechanism == PLAIN:
                answer = self._plain(token, credentials)
            else:
                answer = self._scram_step(mechanism, token, credentials)
        except SaslFailure:
            self.state = "FAILED"
            raise
        return answer

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
