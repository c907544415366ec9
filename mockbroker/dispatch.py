"""Dispatch: one request frame in, one framed response (or nothing) out; failure mapping in one place.

- Bad frame or undecodable request: the client's fault; close that connection (Kafka does).
- Unsupported version: ApiVersions gets the KIP-511 v0 reply with our range; any other API closes.
- An API the codec knows but no handler serves: close, as Kafka does for APIs it does not expose.
- Any other exception: a broker bug. Logged, recorded on the cluster (the pytest fixture fails
  the test at teardown), and the connection closed so the client does not hang.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mockbroker.handlers import HANDLERS, Handler
from mockbroker_protocol import registry
from mockbroker_protocol.errors import DecodeError, UnknownApiError, UnsupportedVersionError
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.primitives import Buffer

if TYPE_CHECKING:
    from mockbroker.cluster import MockCluster
    from mockbroker.control.faults import RequestFaults
    from mockbroker.model import BrokerNode

log = logging.getLogger("mockbroker.dispatch")


class CloseConnection(Exception):
    """Raised to end a connection after a request that cannot be answered."""


# -- answers kept by request bytes -------------------------------------------------------------------
#
# Clients ask the same questions in the same bytes over and over (every connection starts with
# ApiVersions; producers and consumers poll Metadata for their topics). A handler whose answer
# depends only on the request and on state it can re-check marks it (``registry.Encoded.valid``);
# dispatch then keeps the framed answer under the request's bytes minus the correlation id (api key,
# version, client id, body), and the server answers the same bytes again straight from here, without
# decoding, a context, the handler or encoding, for as long as ``valid()`` holds and the API's version
# cap is what it was. Interceptors and the request log (``cluster.intercepting``) bypass it: they
# always see real request and response objects.
#
# Entries are grouped by api key, so that a request of an API with none (Heartbeat, Produce, Fetch)
# costs one small-int lookup, not a key built from its bytes. An entry: (valid, api key, version cap
# when stored, size prefix, the rest after the correlation id); ``valid(cluster)`` takes the cluster
# as an argument, so that no entry keeps its cluster alive.

AnswerEntry = tuple[Callable[[Any], bool], int, "int | None", bytes, bytes]
ANSWER_CACHE_SIZE = 512  # entries per API and cluster; emptied when full (keys include the client id)
_ANSWERS: weakref.WeakKeyDictionary[MockCluster, dict[int, dict[bytes, AnswerEntry]]] = weakref.WeakKeyDictionary()


def answer_cache(cluster: MockCluster) -> dict[int, dict[bytes, AnswerEntry]]:
    """The cluster's answers by api key, then by request bytes (``answer_key``), for the server."""
    answers = _ANSWERS.get(cluster)
    if answers is None:
        answers = _ANSWERS[cluster] = {}
    return answers


def answer_key(frame: bytes) -> bytes:
    """A request frame without its correlation id (bytes 4-8), as the server looks it up.
    Entries are made only from frames that decoded (at least 10 bytes: a header v1+ has a client
    id length), so a shorter frame whose key happens to match cannot exist among them."""
    return frame[:4] + frame[8:]


def _split(chunks: list[Any]) -> tuple[bytes, bytes]:
    """A framed answer (encode_response's chunks: the size prefix, then the correlation id, the
    header's tagged fields if any and the body) as (size prefix, everything after the correlation
    id): the server sends them around a request's own correlation id bytes."""
    return chunks[0], b"".join([chunks[1][4:], *chunks[2:]])


def _remember(cluster: MockCluster, frame: bytes, api_key: int, chunks: list[Any], valid: Callable[[Any], bool]) -> None:
    answers = answer_cache(cluster).setdefault(api_key, {})
    if len(answers) >= ANSWER_CACHE_SIZE:
        answers.clear()
    prefix, rest = _split(chunks)
    answers[answer_key(frame)] = (valid, api_key, cluster.version_caps.get(api_key), prefix, rest)


# -- requests kept by their bytes, for fast handlers -------------------------------------------------
#
# Some requests repeat byte for byte (but the correlation id) and cannot be answered from the cache
# above because handling them has effects: a member's heartbeats carry the same group, member id,
# generation and instance id every time, and each moves its session timer. For such an API a
# handler module may define a synchronous ``fast(cluster, broker, version, request)`` doing what
# ``handle`` does in its common case and returning the answer framed (``framed_answer``), or None,
# before any effect, for every other case. Dispatch keeps the decoded request of such an API under
# its bytes minus the correlation id (as the answer cache keys answers); the server gives a request
# with the same bytes to ``fast`` without decoding it or building a context, and sends it through
# dispatch as before when ``fast`` says None. The fast path is taken only where dispatch would call
# the handler directly with that request: not while interceptors or the request log are on (they
# see every request, and pushed errors are taken on that path: mockbroker/control/faults.py), and
# only while the API's version cap is what it was when the request was kept (so the version is
# still served). A kept request object is shared by every later request with its bytes, so
# handlers must not mutate their requests (none do; interceptors, which may, never see a kept one).
#
# An entry: (fast, api key, version cap when kept, api version, the decoded request).

FastHandler = Callable[[Any, Any, int, Any], "tuple[bytes, bytes] | None"]
RequestEntry = tuple[FastHandler, int, "int | None", int, Any]
_REQUESTS: weakref.WeakKeyDictionary[MockCluster, dict[int, dict[bytes, RequestEntry]]] = weakref.WeakKeyDictionary()


def request_cache(cluster: MockCluster) -> dict[int, dict[bytes, RequestEntry]]:
    """The cluster's decoded requests of APIs with a fast handler, by api key, then by request
    bytes (``answer_key``), for the server."""
    requests = _REQUESTS.get(cluster)
    if requests is None:
        requests = _REQUESTS[cluster] = {}
    return requests


def framed_answer(api_key: int, version: int, response: Any) -> tuple[bytes, bytes]:
    """``response`` framed as dispatch frames it, as (size prefix, all after the correlation id),
    for a fast handler's answers (built once and kept: the bytes are the same for every request)."""
    return _split(registry.encode_response(api_key, version, 0, response))


def _remember_request(
    cluster: MockCluster, frame: bytes, api_key: int, version: int, fast: FastHandler, request: Any
) -> None:
    requests = request_cache(cluster).setdefault(api_key, {})
    key = answer_key(frame)
    if key in requests:
        return
    if len(requests) >= ANSWER_CACHE_SIZE:
        requests.clear()
    requests[key] = (fast, api_key, cluster.version_caps.get(api_key), version, request)


@dataclass(slots=True)
class RequestContext:
    cluster: MockCluster
    broker: BrokerNode
    header: RequestHeader
    api_version: int
    now_ms: int  # read once per request
    client_host: str
    client_port: int
    # True when interceptors or the request log will see the response object (and may edit it):
    # a handler then returns a real message, never an already-encoded answer (registry.Encoded).
    inspected: bool = False
    # The pushed errors this request meets (mockbroker/control/faults.py), set on the slow path
    # only: the per-partition handlers' fault point reads it, None on the common path.
    faults: RequestFaults | None = None

    @property
    def client_id(self) -> str:
        return self.header.client_id or ""


def served_versions(cluster: MockCluster, handler: Handler) -> tuple[int, int]:
    """The versions this cluster serves for an API: the handler's range under any configured cap."""
    lo, hi = handler.versions
    cap = cluster.version_caps.get(handler.api_key)
    if cap is not None:
        hi = min(hi, cap)
    return lo, hi


def advertised_versions(cluster: MockCluster, handler: Handler) -> tuple[int, int] | None:
    """What ApiVersions advertises (None: not advertised, when a cap is below the minimum).

    The advertised minimum is the handler's own statement and may differ from what it serves:
    Produce advertises 0 but serves 3+ (KAFKA-18659: librdkafka needs to see 0), and APIs that
    still serve versions Kafka 4 removed (for sarama, which never asks) advertise Kafka 4's
    minimum, so negotiating clients see the same ranges as against Kafka."""
    lo, hi = served_versions(cluster, handler)
    if hi < lo:
        return None
    return (handler.advertised_min, hi)


async def dispatch(
    cluster: MockCluster, broker: BrokerNode, frame: bytes | bytearray, client: tuple[str, int]
) -> list[Buffer] | None:
    """Handle one request frame; return the framed response, None for no response.

    Raises CloseConnection when the connection must end.
    """
    try:
        header, request = registry.decode_request(frame)
    except UnsupportedVersionError as exc:
        handler = HANDLERS.get(exc.api_key)
        if exc.api_key == registry.API_VERSIONS_KEY and handler is not None:
            lo, hi = served_versions(cluster, handler)
            return registry.unsupported_api_versions_response(exc.correlation_id, lo, hi)
        log.info("closing %s: %s (client %r)", client, exc, exc.client_id)
        raise CloseConnection(str(exc)) from None
    except UnknownApiError as exc:
        log.info("closing %s: %s", client, exc)
        raise CloseConnection(str(exc)) from None
    except DecodeError as exc:
        log.info("closing %s: undecodable request: %s", client, exc)
        raise CloseConnection(str(exc)) from None

    api_key, version = header.request_api_key, header.request_api_version
    handler = HANDLERS.get(api_key)
    if handler is None:
        log.info("closing %s: api key %d is not served", client, api_key)
        raise CloseConnection(f"api key {api_key} is not served")
    lo, hi = handler.versions  # served_versions, inlined: this is every request's path
    cap = cluster.version_caps.get(api_key)
    if cap is not None and cap < hi:
        hi = cap
    if not lo <= version <= hi:
        if api_key == registry.API_VERSIONS_KEY:
            return registry.unsupported_api_versions_response(header.correlation_id, lo, hi)
        log.info("closing %s: %s v%d is outside the served range %d-%d", client, handler.name, version, lo, hi)
        raise CloseConnection(f"{handler.name} v{version} is not served")

    intercepting = cluster.intercepting
    ctx = RequestContext(cluster, broker, header, version, cluster.clock.now_ms(), client[0], client[1], intercepting)
    if intercepting:  # interceptors, the request log or pushed errors (mockbroker/control/)
        response: Any = await cluster.control.hooks.handle(ctx, handler, request)
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
    if not intercepting and type(frame) is bytes:  # a key must be hashable bytes
        if type(response) is registry.Encoded and response.valid is not None:
            _remember(cluster, frame, api_key, chunks, response.valid)
        elif handler.fast is not None:
            _remember_request(cluster, frame, api_key, version, handler.fast, request)
    return chunks


async def call_handler(ctx: RequestContext, handler: Handler, request: Any) -> Any:
    """Run the handler; any exception but CloseConnection is a broker bug: recorded (the pytest
    fixture fails the test), and the connection closed so the client does not hang."""
    try:
        return await handler.handle(ctx, request)
    except CloseConnection:
        raise
    except Exception as exc:  # a broker bug: fail loudly, hurt only this connection
        ctx.cluster.record_internal_error(exc)
        raise CloseConnection(f"internal error in {handler.name}") from exc
