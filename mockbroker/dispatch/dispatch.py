"""Dispatch: one request frame in, one framed response (or nothing) out; failure mapping in one place.

- Bad frame or undecodable request: the client's fault; close that connection (Kafka does).
- Unsupported version: ApiVersions gets the KIP-511 v0 reply with our range; any other API closes.
- An API the codec knows but no handler serves: close, as Kafka does for APIs it does not expose.
- Any other exception: a broker bug. Logged, recorded on the cluster (the pytest fixture fails
  the test at teardown), and the connection closed so the client does not hang.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mockbroker.dispatch.context import CloseConnection, RequestContext, answer_key, split_answer
from mockbroker.dispatch.table import HANDLERS, served_versions
from mockbroker_protocol import registry
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import DecodeError, ErrorCode, UnknownApiError, UnsupportedVersionError
from mockbroker_protocol.primitives import Buffer

if TYPE_CHECKING:
    from mockbroker.model import BrokerNode
    from mockbroker.security.sasl import SaslSession
    from mockbroker.state import ClusterState, FastHandler
    from mockbroker_protocol.headers import RequestHeader

log = logging.getLogger("mockbroker.dispatch")

# -- answers kept by request bytes -------------------------------------------------------------------
#
# Clients ask the same questions in the same bytes over and over (every connection starts with
# ApiVersions; producers and consumers poll Metadata for their topics). A handler whose answer
# depends only on the request and on state it can re-check marks it (``registry.Encoded.valid``);
# dispatch then keeps the framed answer under the request's bytes minus the correlation id (api key,
# version, client id, body), and the server answers the same bytes again straight from there, without
# decoding, a context, the handler or encoding, for as long as ``valid()`` holds and the API's version
# cap is what it was. Interceptors and the request log (``cluster.intercepting``) bypass it: they
# always see real request and response objects.
#
# The entries live on the cluster (``ClusterState.answers``, mockbroker.state.AnswerEntry), grouped by
# api key, so that a request of an API with none (Heartbeat, Produce, Fetch) costs one small-int
# lookup, not a key built from its bytes. ``valid(cluster)`` takes the cluster as an argument, so
# that no entry keeps its cluster alive.

ANSWER_CACHE_SIZE = 512  # entries per API and cluster; emptied when full (keys include the client id)


def _remember(
    cluster: ClusterState, frame: bytes, api_key: int, chunks: list[Any], valid: Callable[[Any], bool], listener: str
) -> None:
    answers = cluster.answers_for(listener).setdefault(api_key, {})
    if len(answers) >= ANSWER_CACHE_SIZE:
        answers.clear()
    prefix, rest = split_answer(chunks)
    answers[answer_key(frame)] = (valid, api_key, cluster.version_caps.get(api_key), prefix, rest)


# -- requests kept by their bytes, for fast handlers -------------------------------------------------
#
# Some requests repeat byte for byte (but the correlation id) and cannot be answered from the cache
# above because handling them has effects: a member's heartbeats carry the same group, member id,
# generation and instance id every time, and each moves its session timer. For such an API a
# handler module may define a synchronous ``fast(cluster, broker, version, request)`` doing what
# ``handle`` does in its common case and returning the answer framed (``framed_answer``), or None,
# before any effect, for every other case. Dispatch keeps the decoded request of such an API under
# its bytes minus the correlation id (as the answer cache keys answers: ``ClusterState.fast_requests``,
# mockbroker.state.RequestEntry); the server gives a request with the same bytes to ``fast`` without
# decoding it or building a context, and sends it through dispatch as before when ``fast`` says None.
# The fast path is taken only where dispatch would call the handler directly with that request: not
# while interceptors, the request log or pushed errors are on (they see every request; pushed errors
# are taken on that path: mockbroker/control/faults.py), and only while the API's version cap is
# what it was when the request was kept (so the version is still served). A kept request object is
# shared by every later request with its bytes, so handlers must not mutate their requests (none
# do; interceptors, which may, never see a kept one).


def _remember_request(
    cluster: ClusterState, frame: bytes, api_key: int, version: int, fast: FastHandler, request: Any
) -> None:
    requests = cluster.fast_requests.setdefault(api_key, {})
    key = answer_key(frame)
    if key in requests:
        return
    if len(requests) >= ANSWER_CACHE_SIZE:
        requests.clear()
    requests[key] = (fast, api_key, cluster.version_caps.get(api_key), version, request)


# Before a SASL connection has authenticated, only these are served (SaslServerAuthenticator).
_SASL_APIS = frozenset((ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE))
_BEFORE_AUTHENTICATION = frozenset((registry.API_VERSIONS_KEY, ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE))


async def dispatch(
    cluster: ClusterState,
    broker: BrokerNode,
    frame: bytes | bytearray,
    client: tuple[str, int],
    session: SaslSession | None = None,
    principal: str = "User:ANONYMOUS",
    listener: str = "",
) -> list[Buffer] | None:
    """One request frame in, the framed response out (None: no response); CloseConnection ends the
    connection. ``session``: a SASL listener's authenticator; ``principal``: who the connection is;
    ``listener``: the name of the listener it came in on ("": the first)."""
    try:
        header, request = registry.decode_request(frame)
    except DecodeError as exc:  # UnsupportedVersionError and UnknownApiError among them
        return _undecodable(cluster, client, exc)

    api_key, version = header.request_api_key, header.request_api_version
    if session is not None:
        if session.state == "AUTHENTICATE" and api_key not in _SASL_APIS and api_key in HANDLERS:
            return _unexpected_during_authentication(cluster, broker, client, session, header, request)
        principal = _sasl_principal(cluster, broker, client, session, api_key, principal)
    handler = HANDLERS.get(api_key)
    if handler is None:
        log.info("closing %s: api key %d is not served", client, api_key)
        raise CloseConnection(f"api key {api_key} is not served")
    lo, hi = handler.versions  # served_versions, inlined: this is every request's path
    cap = cluster.version_caps.get(api_key)
    if cap is not None and cap < hi:
        hi = cap
    if not lo <= version <= hi:
        return _outside_versions(client, handler.name, header, lo, hi)

    intercepting = cluster.intercepting
    ctx = RequestContext(cluster, broker, header, version, cluster.clock.now_ms(), client[0], client[1], intercepting, listener=listener)
    if session is not None or principal != "User:ANONYMOUS":
        ctx.session, ctx.principal = session, principal
    if intercepting:  # interceptors, the request log or pushed errors (mockbroker/control/)
        response: Any = await cluster.request_hooks.handle(ctx, handler, request)
    else:  # call_handler inlined: the common path pays for no extra coroutine
        try:
            response = await handler.handle(ctx, request)
        except CloseConnection:
            raise
        except Exception as exc:  # a broker bug: fail loudly, hurt only this connection
            cluster.record_internal_error(exc)
            raise CloseConnection(f"internal error in {handler.name}") from exc
    if response is None:
        return None
    try:
        chunks = registry.encode_response(api_key, version, header.correlation_id, response)
    except Exception as exc:
        cluster.record_internal_error(exc)
        raise CloseConnection(f"internal error encoding {handler.name}") from exc
    if not intercepting and type(frame) is bytes and cluster.authorizer is None:  # bytes keys; answers by principal never kept
        if type(response) is registry.Encoded and response.valid is not None:
            _remember(cluster, frame, api_key, chunks, response.valid, listener)
        elif handler.fast is not None:
            _remember_request(cluster, frame, api_key, version, handler.fast, request)
    return chunks


def _undecodable(cluster: ClusterState, client: tuple[str, int], exc: DecodeError) -> list[Buffer]:
    """A frame that does not decode: an ApiVersions request of a version not served gets Kafka's
    v0-encoded UNSUPPORTED_VERSION answer with the served range (KIP-511); anything else closes
    the connection (CloseConnection)."""
    if isinstance(exc, UnsupportedVersionError):
        handler = HANDLERS.get(exc.api_key)
        if exc.api_key == registry.API_VERSIONS_KEY and handler is not None:
            lo, hi = served_versions(cluster, handler)
            return registry.unsupported_api_versions_response(exc.correlation_id, lo, hi)
        log.info("closing %s: %s (client %r)", client, exc, exc.client_id)
    elif isinstance(exc, UnknownApiError):
        log.info("closing %s: %s", client, exc)
    else:
        log.info("closing %s: undecodable request: %s", client, exc)
    raise CloseConnection(str(exc)) from None


def _sasl_principal(
    cluster: ClusterState, broker: BrokerNode, client: tuple[str, int], session: SaslSession, api_key: int, principal: str
) -> str:
    """Who a SASL listener's connection is once authenticated. Before that only ApiVersions and
    the SASL APIs are served: anything else is SaslServerAuthenticator's IllegalSaslStateException,
    and the connection closes."""
    if session.authenticated:
        return session.principal or principal
    if api_key in _BEFORE_AUTHENTICATION:
        return principal
    phase = "handshake" if session.state == "HANDSHAKE_OR_VERSIONS_REQUEST" else "authentication"
    name = ApiKey(api_key).name if api_key in ApiKey._value2member_map_ else str(api_key)
    message = f"Unexpected Kafka request of type {name} during SASL {phase}."
    cluster.events.record("authentication.failed", broker_id=broker.node_id, reason=message, client=f"{client[0]}:{client[1]}")
    raise CloseConnection(message)


def _unexpected_during_authentication(
    cluster: ClusterState, broker: BrokerNode, client: tuple[str, int], session: SaslSession, header: RequestHeader, request: Any
) -> list[Buffer]:
    """A request other than SaslAuthenticate after a v1 SaslHandshake (SaslServerAuthenticator.
    handleSaslToken): answered with its own error response, ILLEGAL_SASL_STATE, and the exchange
    fails (the connection closes once the answer is out); an API whose error response is not built
    here closes the connection unanswered (D24)."""
    from mockbroker.control.error_answers import request_error_answer  # its codecs load on first use

    api_key, version = header.request_api_key, header.request_api_version
    message = f"Unexpected Kafka request of type {ApiKey(api_key).name} during SASL authentication."
    cluster.events.record("authentication.failed", broker_id=broker.node_id, reason=message, client=f"{client[0]}:{client[1]}")
    session.state = "FAILED"
    answer = request_error_answer(api_key, version, request, ErrorCode.ILLEGAL_SASL_STATE)
    if answer is None:
        raise CloseConnection(message)
    return registry.encode_response(api_key, version, header.correlation_id, answer)


def _outside_versions(client: tuple[str, int], name: str, header: RequestHeader, lo: int, hi: int) -> list[Buffer]:
    """A version outside the served range: ApiVersions answers with the range (KIP-511), any other
    API closes the connection as Kafka's RequestContext does."""
    if header.request_api_key == registry.API_VERSIONS_KEY:
        return registry.unsupported_api_versions_response(header.correlation_id, lo, hi)
    log.info("closing %s: %s v%d is outside the served range %d-%d", client, name, header.request_api_version, lo, hi)
    raise CloseConnection(f"{name} v{header.request_api_version} is not served")
