"""SASL OAUTHBEARER (KIP-255, RFC 7628) on the server: the client's first message, unsecured JWS
tokens validated as Kafka's OAuthBearerUnsecuredValidatorCallbackHandler does, and a pluggable
validator for real tokens.

A token the validator refuses is not refused at once: the server answers a JSON challenge
(``{"status":"invalid_token"}``, or ``insufficient_scope`` with the required scope), the client
answers ``%x01``, and only then is the exchange failed with SASL_AUTHENTICATION_FAILED carrying that
JSON (OAuthBearerSaslServer.evaluateResponse). A client message that does not parse is refused at
once with the generic message (a SaslException in Kafka).

The validator is a callable ``(token_value, now_ms) -> OAuthBearerToken`` raising
OAuthBearerIllegalTokenError for a token it refuses (the equivalent of Kafka's
``listener.name.<listener>.oauthbearer.sasl.server.callback.handler.class``, given by dotted path
in ``oauthbearer.sasl.server.callback.handler.class``). Without one, UnsecuredValidator checks
unsecured tokens (``alg`` ``none``, no signature) with the options Kafka reads from the listener's
JAAS line (``unsecuredValidatorPrincipalClaimName``, ``unsecuredValidatorScopeClaimName``,
``unsecuredValidatorRequiredScope``, ``unsecuredValidatorAllowableClockSkewMs``).
"""

from __future__ import annotations

import base64
import binascii
import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MECHANISM = "OAUTHBEARER"

# OAuthBearerClientInitialResponse: gs2 header "n," [a=authzid] ",", then %x01-separated key=value
# pairs, ending with %x01%x01 (RFC 7628 section 3.1).
_CLIENT_FIRST = re.compile(r"n,(?:a=(?P<authzid>(?:[\x01-\x2B\x2D-\x3C\x3E-\x7F]|=2C|=3D)+))?,\x01(?P<kvpairs>(?:[A-Za-z]+=[\x21-\x7E \t\r\n]+\x01)*)\x01")
_AUTH = re.compile(r"(?P<scheme>\w+) +(?P<token>[-_.a-zA-Z0-9]+)")
_JAAS_OPTION = re.compile(r"""([A-Za-z0-9_.]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;"]+))""")
CONTROL_A = b"\x01"


class OAuthBearerIllegalTokenError(Exception):
    """A refused token (Kafka's OAuthBearerIllegalTokenException and its OAuthBearerValidationResult):
    ``reason`` stays on the broker (events); ``failure_scope`` makes the challenge's status
    ``insufficient_scope``; ``failure_openid_config`` is added to the challenge."""

    def __init__(self, reason: str, failure_scope: str | None = None, failure_openid_config: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.failure_scope = failure_scope
        self.failure_openid_config = failure_openid_config


class OAuthBearerClientError(Exception):
    """The client's first message does not parse (Kafka: a SaslException, answered generically)."""


class OAuthBearerSchemeError(OAuthBearerClientError):
    """A scheme other than Bearer: Kafka builds this message with a regex group its pattern lacks,
    so an IllegalArgumentException escapes and the connection closes without an answer."""


@dataclass(frozen=True, slots=True)
class OAuthBearerToken:
    """A validated token (Kafka's OAuthBearerToken): the principal's name, the absolute expiry
    (``lifetime_ms``, epoch milliseconds), the scope and the start time if any."""

    value: str
    principal_name: str
    lifetime_ms: int
    scope: frozenset[str] = frozenset()
    start_time_ms: int | None = None


Validator = Callable[[str, int], OAuthBearerToken]


@dataclass(frozen=True, slots=True)
class ClientFirstMessage:
    authorization_id: str
    token: str
    extensions: dict[str, str]


def parse_client_first(message: bytes) -> ClientFirstMessage:
    """OAuthBearerClientInitialResponse's parse; OAuthBearerClientError when it does not parse."""
    try:
        text = message.decode()
    except UnicodeDecodeError:
        raise OAuthBearerClientError("Invalid OAUTHBEARER client first message") from None
    match = _CLIENT_FIRST.fullmatch(text)
    if match is None:
        raise OAuthBearerClientError("Invalid OAUTHBEARER client first message")
    pairs: dict[str, str] = {}
    for item in filter(None, match.group("kvpairs").split("\x01")):
        key, _, value = item.partition("=")
        pairs[key] = value
    auth = pairs.pop("auth", None)
    if auth is None:
        raise OAuthBearerClientError("Invalid OAUTHBEARER client first message: 'auth' not specified")
    auth_match = _AUTH.fullmatch(auth)
    if auth_match is None:
        raise OAuthBearerClientError("Invalid OAUTHBEARER client first message: invalid 'auth' format")
    if auth_match.group("scheme").lower() != "bearer":
        raise OAuthBearerSchemeError(f"Invalid scheme in OAUTHBEARER client first message: {auth_match.group('scheme')}")
    return ClientFirstMessage(match.group("authzid") or "", auth_match.group("token"), pairs)


def json_error(status: str, scope: str | None, openid_config: str | None) -> str:
    """OAuthBearerSaslServer.jsonErrorResponse, byte for byte (its spacing included)."""
    out = f'{{"status":"{status}"'
    if scope is not None:
        out += f', "scope":"{scope}"'
    if openid_config is not None:
        out += f', "openid-configuration":"{openid_config}"'
    return out + "}"


# -- unsecured JWS (OAuthBearerUnsecuredJws) ------------------------------------------------------


# json is imported where a token is read, not at start (a cold serve answers before importing it:
# tests/mockbroker/test_cli.py).


def _as_text(value: Any) -> str:
    # Jackson's JsonNode.asText: strings as they are, booleans and null spelled, containers empty.
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value)
    return ""


def _convert(value: Any) -> Any:
    # OAuthBearerUnsecuredJws.convert: arrays to lists of texts, numbers kept, the rest as text.
    if isinstance(value, list):
        return [_as_text(v) for v in value]
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return _as_text(value)


def _to_map(split: str) -> dict[str, Any]:
    import json

    try:
        raw = base64.urlsafe_b64decode(split + "=" * (-len(split) % 4))
    except (binascii.Error, ValueError):
        raise OAuthBearerIllegalTokenError("malformed Base64 URL encoded value") from None
    try:
        node = json.loads(raw)
    except ValueError:
        raise OAuthBearerIllegalTokenError("malformed JSON") from None
    if not isinstance(node, dict):
        return {}
    return {key: _convert(value) for key, value in node.items()}


def _number(claims: dict[str, Any], name: str) -> float | int | None:
    value = claims.get(name)
    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
        raise OAuthBearerIllegalTokenError(f"The '{name}' claim was not of type Number: {type(value).__name__}")
    return value


def _scope(claims: dict[str, Any], name: str) -> frozenset[str]:
    value = claims.get(name)
    if isinstance(value, str):
        return frozenset((value.strip(),)) if value.strip() else frozenset()
    if value is None:
        return frozenset()
    if not isinstance(value, list):
        raise OAuthBearerIllegalTokenError(f"The '{name}' claim was not of type List: {type(value).__name__}")
    return frozenset(s.strip() for s in value if s.strip())


def parse_unsecured_jws(token: str, principal_claim: str = "sub", scope_claim: str = "scope") -> tuple[OAuthBearerToken, dict[str, Any]]:
    """OAuthBearerUnsecuredJws's constructor: the token and its claims, or
    OAuthBearerIllegalTokenError (a header without ``alg`` is a NullPointerException in Kafka:
    ValueError here, answered generically)."""
    if ".." in token:
        raise OAuthBearerIllegalTokenError("Malformed compact serialization contains '..'")
    splits = token.split(".")
    if len(splits) != 3:
        raise OAuthBearerIllegalTokenError("Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values")
    header, claims = _to_map(splits[0]), _to_map(splits[1])
    if "alg" not in header:
        raise ValueError("JWS header must have an Algorithm value")
    if header["alg"] != "none":
        raise OAuthBearerIllegalTokenError("Unsecured JWS must have 'none' for an algorithm")
    if splits[2]:
        raise OAuthBearerIllegalTokenError("Unsecured JWS must not contain a digital signature")
    scope = _scope(claims, scope_claim)
    expiration = _number(claims, "exp")
    if expiration is None:
        raise OAuthBearerIllegalTokenError("No expiration time in JWT")
    principal = claims.get(principal_claim)
    if principal is not None and not isinstance(principal, str):
        raise OAuthBearerIllegalTokenError(f"The '{principal_claim}' claim was not of type String: {type(principal).__name__}")
    if principal is None or not principal.strip():
        raise OAuthBearerIllegalTokenError(f"No principal name in JWT claim: {principal_claim}")
    issued_at = _number(claims, "iat")
    start = None if issued_at is None else round(issued_at * 1000)
    return OAuthBearerToken(token, principal, round(expiration * 1000), scope, start), claims


@dataclass(frozen=True, slots=True)
class UnsecuredValidator:
    """OAuthBearerUnsecuredValidatorCallbackHandler: its options and its checks, in its order."""

    principal_claim_name: str = "sub"
    scope_claim_name: str = "scope"
    required_scope: tuple[str, ...] = ()
    allowable_clock_skew_ms: int = 0

    @classmethod
    def from_options(cls, options: dict[str, str]) -> UnsecuredValidator:
        """The JAAS options; ValueError for a bad clock skew (Kafka's OAuthBearerConfigException)."""
        skew_text = options.get("unsecuredValidatorAllowableClockSkewMs", "").strip()
        try:
            skew = int(skew_text) if skew_text else 0
        except ValueError:
            raise ValueError(f"unsecuredValidatorAllowableClockSkewMs must be an integer, not {skew_text!r}") from None
        if skew < 0:
            raise ValueError(f"Allowable clock skew millis must not be negative: {skew_text}")
        return cls(
            options.get("unsecuredValidatorPrincipalClaimName", "").strip() or "sub",
            options.get("unsecuredValidatorScopeClaimName", "").strip() or "scope",
            tuple(options.get("unsecuredValidatorRequiredScope", "").split()),
            skew,
        )

    def __call__(self, token_value: str, now_ms: int) -> OAuthBearerToken:
        token, _claims = parse_unsecured_jws(token_value, self.principal_claim_name, self.scope_claim_name)
        skew = self.allowable_clock_skew_ms
        if token.start_time_ms is not None and token.start_time_ms > now_ms + skew:
            raise OAuthBearerIllegalTokenError(
                f"The Issued At value ({token.start_time_ms / 1000:f} seconds) was after the indicated time "
                f"({now_ms} ms) plus allowable clock skew ({skew} ms)"
            )
        if now_ms - skew >= token.lifetime_ms:
            raise OAuthBearerIllegalTokenError(
                f"The indicated time ({now_ms} ms) minus allowable clock skew ({skew} ms) was on or after "
                f"the Expiration Time value ({token.lifetime_ms / 1000:f} seconds)"
            )
        if token.start_time_ms is not None and token.lifetime_ms <= token.start_time_ms:
            raise OAuthBearerIllegalTokenError("The Expiration Time time was not after the Issued At time")
        for element in self.required_scope:
            if element not in token.scope:
                # failureScope is Java's List.toString of the required scope: "[a, b]".
                raise OAuthBearerIllegalTokenError(
                    f"The provided scope ({sorted(token.scope)}) was missing a required scope ({element})",
                    "[" + ", ".join(self.required_scope) + "]",
                )
        return token


def jaas_options(text: str) -> dict[str, str]:
    """The options of a JAAS line (``...OAuthBearerLoginModule required key="value" ...;``)."""
    return {m.group(1): m.group(2) if m.group(2) is not None else m.group(3) for m in _JAAS_OPTION.finditer(text)}


def load_validator(path: str) -> Validator:
    """A callable by dotted path (``package.module.function`` or ``package.module:function``);
    ValueError naming the setting when it cannot be loaded."""
    module_name, sep, attr = path.partition(":")
    if not sep:
        module_name, _, attr = path.rpartition(".")
    try:
        target = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ValueError(f"oauthbearer.sasl.server.callback.handler.class: cannot load {path!r}: {exc}") from None
    if not callable(target):
        raise ValueError(f"oauthbearer.sasl.server.callback.handler.class: {path!r} is not callable")
    return target  # type: ignore[no-any-return]


def validator_of(handler_class: str | Validator, jaas_config: str) -> Validator:
    """The cluster's validator: the callable given (or named) by the setting, else the unsecured one."""
    if callable(handler_class):
        return handler_class
    if handler_class:
        return load_validator(handler_class)
    return UnsecuredValidator.from_options(jaas_options(jaas_config))


def describe_validator(validator: Validator) -> dict[str, Any]:
    """What GET /security shows of the validator: its name, and the unsecured one's options (never
    the JAAS line itself, which may hold secrets in other setups)."""
    if isinstance(validator, UnsecuredValidator):
        return {
            "validator": "unsecured",
            "principal_claim_name": validator.principal_claim_name,
            "scope_claim_name": validator.scope_claim_name,
            "required_scope": list(validator.required_scope),
            "allowable_clock_skew_ms": validator.allowable_clock_skew_ms,
        }
    name = getattr(validator, "__qualname__", type(validator).__qualname__)
    return {"validator": f"{getattr(validator, '__module__', '?')}.{name}"}


def unsecured_token(claims: dict[str, Any]) -> str:
    """An unsecured JWS of these claims (for tests and examples): header ``{"alg":"none"}``."""
    import json

    def part(obj: dict[str, Any]) -> str:
        return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).rstrip(b"=").decode()

    return f"{part({'alg': 'none'})}.{part(claims)}."
