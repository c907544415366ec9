"""SCRAM-SHA-256/512 (RFC 5802, RFC 7677) as Kafka serves it: credentials stored salted (Kafka's
ScramCredential: salt, stored key, server key, iterations; ScramFormatter), and the server side
of one exchange (Kafka's ScramSaslServer: client-first, server-first, client-final, server-final).

Kafka's ScramSaslServer refuses with a plain ``SaslException`` (an unknown user, a bad proof, a
nonce that does not match), which SaslServerAuthenticator answers with its generic message, so
every failure here is one ``ScramError`` whose text stays on our side (logs, events).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from dataclasses import dataclass

# Kafka's ScramMechanism: mechanism name -> (hash name, minimum iterations). 4096 is the
# minimum Kafka accepts (and what kafka-configs uses by default).
MECHANISMS: dict[str, str] = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
# The ScramMechanism enum's wire values in Describe/AlterUserScramCredentials.
MECHANISM_TYPES: dict[str, int] = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
MIN_ITERATIONS = 4096
MAX_ITERATIONS = 16384  # ScramMechanism.maxIterations


class ScramError(Exception):
    """The exchange failed; the message is for our logs, never the client."""


@dataclass(frozen=True, slots=True)
class ScramCredential:
    """What Kafka stores of a SCRAM password (never the password itself)."""

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int


def _hmac(hash_name: str, key: bytes, data: bytes) -> bytes:
    return hmac.new(key, data, hash_name).digest()


def salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    hash_name = MECHANISMS[mechanism]
    return hashlib.pbkdf2_hmac(hash_name, password.encode(), salt, iterations)


def credential_from_salted(mechanism: str, salted: bytes, salt: bytes, iterations: int) -> ScramCredential:
    """ScramFormatter.generateCredential from a salted password (AlterUserScramCredentials sends one)."""
    hash_name = MECHANISMS[mechanism]
    client_key = _hmac(hash_name, salted, b"Client Key")
    stored_key = hashlib.new(hash_name, client_key).digest()
    server_key = _hmac(hash_name, salted, b"Server Key")
    return ScramCredential(salt, stored_key, server_key, iterations)


def make_credential(mechanism: str, password: str, iterations: int = MIN_ITERATIONS, salt: bytes | None = None) -> ScramCredential:
    salt = os.urandom(32) if salt is None else salt
    return credential_from_salted(mechanism, salted_password(mechanism, password, salt, iterations), salt, iterations)


def _attributes(message: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in message.split(","):
        if len(part) < 2 or part[1] != "=":
            raise ScramError(f"invalid SCRAM attribute {part!r}")
        out[part[0]] = part[2:]
    return out


def _username(saslname: str) -> str:
    # RFC 5802 5.1: "=2C" is ",", "=3D" is "="; any other "=" is invalid.
    name = saslname.replace("=2C", ",").replace("=3D", "=")
    if "=" in saslname.replace("=2C", "").replace("=3D", ""):
        raise ScramError("invalid username encoding")
    return name


class ScramServer:
    """One SCRAM exchange, server side: ``evaluate(token)`` per client message."""

    def __init__(self, mechanism: str, lookup: dict[tuple[str, str], ScramCredential]) -> None:
        self.mechanism = mechanism
        self.hash_name = MECHANISMS[mechanism]
        self._lookup = lookup
        self.state = "RECEIVE_CLIENT_FIRST_MESSAGE"  # ScramSaslServer.State
        self.username: str | None = None
        self._credential: ScramCredential | None = None
        self._client_first_bare = ""
        self._server_first = ""
        self._nonce = ""

    @property
    def complete(self) -> bool:
        return self.state == "COMPLETE"

    def evaluate(self, token: bytes) -> bytes:
        try:
            text = token.decode()
        except UnicodeDecodeError:
            raise ScramError("the SCRAM message is not UTF-8") from None
        if self.state == "RECEIVE_CLIENT_FIRST_MESSAGE":
            return self._client_first(text)
        if self.state == "RECEIVE_CLIENT_FINAL_MESSAGE":
            return self._client_final(text)
        raise ScramError(f"unexpected SCRAM message in state {self.state}")

    def _client_first(self, text: str) -> bytes:
        # gs2-header: "n,," (no channel binding; Kafka refuses "p=" and "y" is fine), optional authzid.
        parts = text.split(",", 2)
        if len(parts) != 3 or parts[0] not in ("n", "y"):
            raise ScramError("invalid SCRAM client-first message")
        authzid = parts[1]
        bare = parts[2]
        attrs = _attributes(bare)
        if "n" not in attrs or "r" not in attrs:
            raise ScramError("the client-first message lacks a username or a nonce")
        if "e" in attrs:  # extensions (the "ext" of tokenauth): Kafka reads them; we accept none
            pass
        username = _username(attrs["n"])
        if authzid and _username(authzid.removeprefix("a=")) != username:
            raise ScramError("authorization id does not match the username")
        credential = self._lookup.get((username, self.mechanism))
        if credential is None:
            raise ScramError(f"no {self.mechanism} credential for user {username!r}")
        self.username, self._credential = username, credential
        self._client_first_bare = bare
        self._nonce = attrs["r"] + base64.b64encode(os.urandom(24)).decode()
        salt = base64.b64encode(credential.salt).decode()
        self._server_first = f"r={self._nonce},s={salt},i={credential.iterations}"
        self.state = "RECEIVE_CLIENT_FINAL_MESSAGE"
        return self._server_first.encode()

    def _client_final(self, text: str) -> bytes:
        credential = self._credential
        assert credential is not None
        without_proof, sep, proof_b64 = text.rpartition(",p=")
        if not sep:
            raise ScramError("the client-final message lacks a proof")
        attrs = _attributes(without_proof)
        # Kafka's ScramSaslServer checks that the final nonce *ends with* the server's (older
        # librdkafka, kcat's, sends the client nonce again in front of it), not equality.
        if not attrs.get("r", "").endswith(self._nonce):
            raise ScramError("invalid nonce")
        auth_message = f"{self._client_first_bare},{self._server_first},{without_proof}".encode()
        client_signature = _hmac(self.hash_name, credential.stored_key, auth_message)
        try:
            proof = base64.b64decode(proof_b64, validate=True)
        except ValueError:
            raise ScramError("invalid client proof encoding") from None
        if len(proof) != len(client_signature):
            raise ScramError("invalid client proof")
        client_key = bytes(a ^ b for a, b in zip(proof, client_signature, strict=True))
        if not hmac.compare_digest(hashlib.new(self.hash_name, client_key).digest(), credential.stored_key):
            raise ScramError("invalid client credentials")
        server_signature = _hmac(self.hash_name, credential.server_key, auth_message)
        self.state = "COMPLETE"
        return b"v=" + base64.b64encode(server_signature)
