"""What a handler is given and may raise: RequestContext and CloseConnection; and the framing of
the answers the request path keeps by request bytes (``answer_key``, ``framed_answer``).

Below the handlers and control in the layering (docs/architecture.md): both import it, while the
dispatcher (mockbroker.dispatch.dispatch), which calls the handlers, sits above them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from mockbroker_protocol import registry
from mockbroker_protocol.errors import ErrorCode

if TYPE_CHECKING:
    from mockbroker.dispatch.table import Handler
    from mockbroker.model import BrokerNode
    from mockbroker.security.sasl import SaslSession
    from mockbroker.state import ClusterState
    from mockbroker_protocol.headers import RequestHeader


class RequestFaults(Protocol):
    """The pushed errors one request meets (mockbroker.control.faults.RequestFaults, which control
    sets as ``ctx.faults``): a whole-request error its handler places itself (Metadata), and each
    partition's, taken by the per-partition handlers' fault point."""

    request_error: int | None

    def partition(self, topic: str, partition: int) -> ErrorCode | None: ...


class CloseConnection(Exception):
    """Raised to end a connection after a request that cannot be answered."""


@dataclass(slots=True)
class RequestContext:
    cluster: ClusterState
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
    # The connection's SASL authenticator on a SASL listener (mockbroker/security/sasl.py), else None.
    session: SaslSession | None = None
    # Who is asking (Kafka's KafkaPrincipal as "User:name"): the SASL user, the client
    # certificate's subject on SSL, User:ANONYMOUS otherwise.
    principal: str = "User:ANONYMOUS"
    # The name of the listener the request came in on: Metadata, FindCoordinator and
    # DescribeCluster answer with the brokers' addresses on it (BrokerNode.address). "": a
    # request made without a connection (tests), answered with the first listener's.
    listener: str = ""

    @property
    def client_id(self) -> str:
        return self.header.client_id or ""


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


def answer_key(frame: bytes) -> bytes:
    """A request frame without its correlation id (bytes 4-8), as the server looks it up.
    Entries are made only from frames that decoded (at least 10 bytes: a header v1+ has a client
    id length), so a shorter frame whose key happens to match cannot exist among them."""
    return frame[:4] + frame[8:]


def split_answer(chunks: list[Any]) -> tuple[bytes, bytes]:
    """A framed answer (encode_response's chunks: the size prefix, then the correlation id, the
    header's tagged fields if any and the body) as (size prefix, everything after the correlation
    id): the server sends them around a request's own correlation id bytes."""
    return chunks[0], b"".join([chunks[1][4:], *chunks[2:]])


def framed_answer(api_key: int, version: int, response: Any) -> tuple[bytes, bytes]:
    """``response`` framed as dispatch frames it, as (size prefix, all after the correlation id),
    for a fast handler's answers (built once and kept: the bytes are the same for every request)."""
    return split_answer(registry.encode_response(api_key, version, 0, response))
