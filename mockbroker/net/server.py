"""The broker's listener: the only module that touches sockets.

Requests on one connection are handled one at a time and answered in order, as Kafka does
(it mutes a channel while a request is in flight): a parked JoinGroup or a long-poll Fetch
holds its own connection while every other connection goes on. Responses go out with
``writelines`` so record batches are written from the log's own buffers.

The request path is the broker's hot loop (bench/requests.py measures it), so a connection is an
``asyncio.Protocol`` (no StreamReader/StreamWriter, no task per connection):
- Reads go where the FrameBuffer says (an ``asyncio.BufferedProtocol``): into one receive buffer
  shared by the server's connections, or straight into the buffer of a large frame still arriving
  (a produce request's record batches then reach the log without a copy after the read).
  ``buffer_updated`` cuts the bytes into frames and handles every complete one before anything is
  written; their responses leave in one ``writelines`` (one system call for a pipelining client's
  whole batch, not one each).
- A request whose handler never waits is run to completion without the event loop: its dispatch
  coroutine is stepped once by hand. One that parks (a JoinGroup, a long-poll Fetch) continues in
  a task of its own, after the responses before it have been written; the connection's later
  frames wait, buffered, until it is answered. While interceptors or the request log are on
  (``cluster.intercepting``), every request runs in a task, so that a test's async interceptor
  runs inside a task as it would anywhere else.
- A request whose bytes (all but the correlation id) were answered before, with an answer still
  valid, is answered from the cluster's answers (``ClusterState.answers``) without being decoded
  (mockbroker.dispatch.dispatch).
  One of an API with a fast handler (Heartbeat) whose bytes were seen before goes to that handler
  with the request decoded then; where it declines, to dispatch.
- Backpressure: above the transport's high-water mark (``pause_writing``) no more frames are
  handled until the client has read (``resume_writing``); while frames wait, reading pauses once
  ``PAUSE_READING_AT`` bytes are buffered.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Generator
from typing import TYPE_CHECKING, Any, cast

from mockbroker.dispatch.context import CloseConnection
from mockbroker.dispatch.dispatch import dispatch
from mockbroker.security.sasl import SaslFailure, SaslSession
from mockbroker_protocol.errors import DecodeError
from mockbroker_protocol.framing import RECEIVE_BUFFER_SIZE, FrameBuffer
from mockbroker_protocol.primitives import Buffer

if TYPE_CHECKING:
    import ssl

    from mockbroker.model import BrokerNode
    from mockbroker.state import ClusterState

log = logging.getLogger("mockbroker.server")

# While a connection's frames wait (a parked request, a slow reader), reading pauses once this
# many bytes are buffered (a StreamReader's pause point was 2 x 64 KiB).
PAUSE_READING_AT = 256 * 1024


class BrokerServer:
    def __init__(self, cluster: ClusterState, node: BrokerNode, ssl_context: ssl.SSLContext | None = None) -> None:
        self.cluster = cluster
        self.node = node
        self.ssl_context = ssl_context  # SSL and SASL_SSL listeners (mockbroker/security/tls.py)
        self.sasl = cluster.listener.sasl  # SASL_PLAINTEXT and SASL_SSL: each connection authenticates
        self._server: asyncio.Server | None = None
        self._connections: set[Connection] = set()
        self.answers = cluster.answers  # answers by request bytes (mockbroker.dispatch.dispatch)
        # Every read of the server's connections goes here first (one at a time, on one event
        # loop); the FrameBuffer leaves nothing in it (mockbroker_protocol.framing).
        self.receive_buffer = bytearray(RECEIVE_BUFFER_SIZE)
        self.requests = cluster.fast_requests  # requests by their bytes, for fast handlers (the same)

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: Connection(self), self.node.host, self.node.port, reuse_address=True, ssl=self.ssl_context
        )
        port = self._server.sockets[0].getsockname()[1]
        if self.node.advertised_port in (0, self.node.port):
            self.node.advertised_port = port
        self.node.port = port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        await self.close_connections()
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def close_connections(self) -> int:
        """Drop every open connection, leaving the listener open (control.disconnect_all);
        returns how many were dropped. Parked requests are cancelled; answers already written
        are flushed before the socket closes."""
        connections = list(self._connections)
        for connection in connections:
            connection.close()
        for connection in connections:
            await connection.wait_closed()
        return len(connections)


class Connection(asyncio.BufferedProtocol):
    """One client connection: frames in, responses out, in order."""

    __slots__ = (
        "_closed",
        "_eof",
        "_paused_reading",
        "_paused_writing",
        "answers",
        "client",
        "cluster",
        "frames",
        "node",
        "parked",
        "principal",
        "server",
        "session",
        "transport",
    )

    def __init__(self, server: BrokerServer) -> None:
        self.server = server
        self.cluster = server.cluster
        self.node = server.node
        self.answers = server.answers
        self.frames = FrameBuffer(server.cluster.config.socket_request_max_bytes, server.receive_buffer)
        self.transport: asyncio.Transport | None = None
        self.client: tuple[str, int] = ("?", 0)
        self.parked: asyncio.Task[None] | None = None  # the request being waited for, if any
        # SASL listeners: the connection's authenticator; until it completes, no fast lane is
        # taken and dispatch serves nothing but ApiVersions and the SASL APIs.
        self.session: SaslSession | None = SaslSession(server.cluster.sasl_mechanisms) if server.sasl else None
        self.principal = "User:ANONYMOUS"  # a client certificate's subject on SSL (set once connected)
        self._paused_writing = False  # above the transport's high-water mark
        self._paused_reading = False
        self._eof = False  # the client sent EOF while frames were waiting
        self._closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    # -- asyncio.Protocol -------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport (uvloop's does not subclass asyncio.Transport, hence no isinstance).
        self.transport = transport = cast(asyncio.Transport, transport)
        peer = transport.get_extra_info("peername") or ("?", 0)
        self.client = (str(peer[0]), int(peer[1]))
        self.server._connections.add(self)
        if self.server.ssl_context is not None and self.session is None:
            # An SSL listener: the principal is the client certificate's subject (asyncio calls
            # connection_made once the TLS handshake is done).
            from mockbroker.security.tls import certificate_principal

            self.principal = certificate_principal(transport.get_extra_info("peercert"))

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.frames.get_buffer(sizehint)

    def buffer_updated(self, nbytes: int) -> None:
        try:
            self.frames.buffer_updated(nbytes)
        except DecodeError as exc:  # the stream was already broken (the connection is closing)
            self._close_for(exc)
            return
        if self.parked is None and not self._paused_writing:
            self._process()
        elif self.frames.buffered >= PAUSE_READING_AT and not self._paused_reading:
            assert self.transport is not None
            self._paused_reading = True
            self.transport.pause_reading()

    def eof_received(self) -> bool:
        if self.parked is None and not self._paused_writing:
            return False  # every frame before EOF is answered: close (pending writes are flushed)
        self._eof = True  # close once the waiting frames are answered
        return True

    def pause_writing(self) -> None:
        self._paused_writing = True

    def resume_writing(self) -> None:
        self._paused_writing = False
        if self.parked is None:
            self._process()

    def connection_lost(self, exc: Exception | None) -> None:
        self.server._connections.discard(self)
        if self.parked is not None:
            # Nobody is left to answer; the coordinator may still complete it later, harmlessly.
            self.parked.cancel()
        if not self._closed.done():
            self._closed.set_result(None)

    # -- closing ----------------------------------------------------------------------------------

    def close(self) -> None:
        if self.parked is not None:
            self.parked.cancel()
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    async def wait_closed(self) -> None:
        parked = self.parked
        if parked is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await parked
        with contextlib.suppress(asyncio.CancelledError):
            await self._closed

    def _close_for(self, exc: BaseException) -> None:
        log.info("closing connection from %s: %s", self.client, exc)
        self.close()

    # -- requests ---------------------------------------------------------------------------------

    def _process(self) -> None:
        """Handle every complete frame buffered, answering in order, until one parks."""
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        frames, cluster, node, client = self.frames, self.cluster, self.node, self.client
        answers, caps = self.answers, cluster.version_caps
        requests = self.server.requests
        pending: list[Buffer] = []  # responses not yet handed to the transport, in order
        try:
            while (frame := frames.next_frame()) is not None:
                # Requests seen before, by their bytes but the correlation id (answer_key, inlined),
                # kept only from bytes frames (a large frame read into its own buffer,
                # mockbroker_protocol.framing.OwnedFrame, is a bytearray) and never while interceptors or the
                # request log see requests. The api key's low byte picks the API's entries (for the
                # keys Kafka has, the key). Anything else, and any entry no longer usable, goes to
                # dispatch.
                session = self.session
                unauthenticated = session is not None and not session.authenticated
                if unauthenticated:
                    assert session is not None
                    if session.raw_tokens and session.state == "AUTHENTICATE":
                        # After a SaslHandshake v0: the token is the whole frame, answered raw.
                        token = self._raw_token(session, bytes(frame))
                        pending += (len(token).to_bytes(4, "big"), token)
                        continue
                if type(frame) is bytes and len(frame) >= 10 and not cluster.intercepting and not unauthenticated:
                    if (by_api := answers.get(frame[1])) is not None:
                        # An answer still valid: sent again with this request's correlation id.
                        hit = by_api.get(frame[:4] + frame[8:])
                        if hit is not None and caps.get(hit[1]) == hit[2] and hit[0](cluster):
                            pending += (hit[3], frame[4:8], hit[4])
                            continue
                    elif (by_key := requests.get(frame[1])) is not None:
                        # An API with a fast handler: called with the request decoded back then;
                        # None from it, dispatch.
                        seen = by_key.get(frame[:4] + frame[8:])
                        if seen is not None and caps.get(seen[1]) == seen[2]:
                            answer = seen[0](cluster, node, seen[3], seen[4])
                            if answer is not None:
                                pending += (answer[0], frame[4:8], answer[1])
                                continue
                coro = dispatch(cluster, node, frame, client, session, self.principal)
                if cluster.intercepting:  # interceptors run inside a task (see the module docstring)
                    step: Any = _NOT_STEPPED
                else:
                    try:
                        step = coro.send(None)
                    except StopIteration as done:
                        if done.value is not None:
                            pending += done.value
                        if unauthenticated and session is not None and session.state == "FAILED":
                            # A refused SASL exchange: the answer goes out, then the connection closes.
                            raise CloseConnection("SASL authentication failed") from None
                        continue
                # The request waits: answer what came before it, then wait for it in a task.
                if pending:
                    transport.writelines(pending)
                    pending = []
                self.parked = parked = asyncio.get_running_loop().create_task(self._finish(coro, step))
                if step is _NOT_STEPPED:
                    # Cancelled before its first step (the connection closed, a broker went down),
                    # the task never starts _finish, so nothing would ever run or close the
                    # request's coroutine ("coroutine 'dispatch' was never awaited").
                    parked.add_done_callback(_closer(coro))
                return
        except (DecodeError, CloseConnection) as exc:
            if pending:  # the answers to the requests before the bad one still go out
                transport.writelines(pending)
            self._close_for(exc)
            return
        except Exception as exc:  # a broker bug outside any handler: fail loudly, hurt only this connection
            if pending:
                transport.writelines(pending)
            self.cluster.record_internal_error(exc)
            self._close_for(exc)
            return
        if pending:
            transport.writelines(pending)
        if self._paused_reading:
            self._paused_reading = False
            transport.resume_reading()
        if self._eof:
            transport.close()

    def _raw_token(self, session: SaslSession, token: bytes) -> bytes:
        """One raw SASL token (the v0 flow): the server's token, or CloseConnection when refused
        (Kafka has no way to tell a v0 client why: it closes the connection)."""
        events, node, client = self.cluster.events, self.node, f"{self.client[0]}:{self.client[1]}"
        try:
            answer = session.authenticate(token, self.cluster.credentials)
        except SaslFailure as failure:
            events.record("authentication.failed", broker_id=node.node_id, reason=failure.reason, client=client, mechanism=session.mechanism)
            raise CloseConnection(failure.client_message) from None
        if session.authenticated:
            events.record("authentication.succeeded", broker_id=node.node_id, principal=session.principal, client=client, mechanism=session.mechanism)
        return answer

    async def _finish(self, coro: Coroutine[Any, Any, list[Buffer] | None], step: Any) -> None:
        """Wait for a request that parked, answer it, and go on with the frames behind it."""
        try:
            chunks = await (coro if step is _NOT_STEPPED else _Resume(coro, step))
        except CloseConnection as exc:
            self.parked = None
            self._close_for(exc)
            return
        except asyncio.CancelledError:  # the connection closed (or the cluster stopped)
            self.parked = None
            return
        except Exception as exc:  # a broker bug outside any handler
            self.parked = None
            self.cluster.record_internal_error(exc)
            self._close_for(exc)
            return
        self.parked = None
        transport = self.transport
        if transport is None or transport.is_closing():
            return
        if chunks is not None:
            transport.writelines(chunks)
        if self.session is not None and self.session.state == "FAILED":
            self._close_for(CloseConnection("SASL authentication failed"))
            return
        if not self._paused_writing:
            self._process()


_NOT_STEPPED: Any = object()


def _closer(coro: Coroutine[Any, Any, Any]) -> Callable[[asyncio.Task[None]], None]:
    """A done callback closing ``coro`` (a no-op once it has run to its end)."""

    def close(_task: asyncio.Task[None]) -> None:
        coro.close()

    return close


class _Resume:
    """Await the rest of a coroutine that has already been stepped once (and yielded ``step``):
    exactly what ``await coro`` would have done from there, sends and throws (cancellation)
    passed through, so the parked handler waits inside its task as if awaited from the start."""

    __slots__ = ("_coro", "_step")

    def __init__(self, coro: Coroutine[Any, Any, list[Buffer] | None], step: Any) -> None:
        self._coro = coro
        self._step = step

    def __await__(self) -> Generator[Any, Any, list[Buffer] | None]:
        coro, step = self._coro, self._step
        while True:
            try:
                sent = yield step
            except BaseException as exc:
                try:
                    step = coro.throw(exc)
                except StopIteration as done:
                    return done.value  # type: ignore[no-any-return]
            else:
                try:
                    step = coro.send(sent)
                except StopIteration as done:
                    return done.value  # type: ignore[no-any-return]
