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
  handled and reading pauses until the client has read (``resume_writing``); while frames wait
  (a parked request), reading pauses once ``PAUSE_READING_AT`` bytes or ``MAX_REQUESTS_IN_FLIGHT``
  frames are buffered: a pipelining client is muted, not queued for without limit.

Accepting: each listener's socket is served by an accept loop of the broker's own (as Kafka's
SocketServer has an Acceptor per listener), not by the event loop's server, which accepts every
pending connection in one callback (uvloop: ~100 us each, all before any other connection is
read). KIP-402: Kafka's Acceptor hands new connections to a Processor through a bounded queue and
a Processor configures at most ``Processor.ConnectionQueueSize`` (20) of them per poll; here at
most ``CONNECTION_QUEUE_SIZE`` are accepted per event-loop turn, the rest wait in the listening
socket's backlog, so a burst of connects delays the other connections by one batch at a time.
That backlog is ``socket.listen.backlog.size`` (KIP-764; Kafka's default 50), given to listen() as
Kafka's Acceptor gives it to ServerSocketChannel.bind: the kernel completes that many connections
(Linux: one more) ahead of accept(), and drops the SYNs of any beyond them, which the clients send
again (after 1 s, then 3 s...). A listener out of descriptors (EMFILE, ENFILE) or kernel memory
stops accepting for ``ACCEPT_RETRY_DELAY_S`` and logs it; its backlog fills meanwhile.

Limits, with Kafka's names and meanings (SocketServer, ConnectionQuotas, Selector):
- ``queued.max.request.bytes``: the broker's MemoryPool; a large frame takes its announced size
  from it when its prefix arrives, a connection refused is muted (reading paused) until memory is
  released, the rest of the broker goes on (mockbroker_protocol.framing). A frame's buffer grows
  with the bytes that arrive, so an announced size costs nothing by itself.
- ``max.connections``: connections beyond it are held unread (Kafka stops accepting: the client's
  connect succeeds in the kernel's backlog and nothing is answered) until one closes. A
  listener's own ``listener.name.<name>.max.connections`` (KIP-402) holds that listener's
  connections beyond it the same way while the other listeners still accept.
- ``max.connections.per.ip``: a connection beyond it is closed at once (TooManyConnections).
- ``connections.max.idle.ms``: a connection with nothing read for that long, and no request of
  its own waiting, is closed (Kafka's Selector idle expiry).
A muted connection is not read, so a client that closes it meanwhile is seen when it is unmuted,
or at the latest when connections.max.idle.ms closes it (as with Kafka's muted channels).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import socket
from collections import deque
from collections.abc import Callable, Coroutine, Generator
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from mockbroker.clock import client_clock_ms
from mockbroker.config.listeners import connections_max_reauth_ms, listener_max_connections
from mockbroker.dispatch.context import CloseConnection
from mockbroker.dispatch.dispatch import dispatch
from mockbroker.model import Endpoint
from mockbroker.security.sasl import OAuthBearerChallenge, SaslAbort, SaslFailure, SaslSession
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import DecodeError
from mockbroker_protocol.framing import RECEIVE_BUFFER_SIZE, FrameBuffer, MemoryPool
from mockbroker_protocol.primitives import Buffer

if TYPE_CHECKING:
    import ssl
    from collections.abc import Mapping

    from mockbroker.model import BrokerNode
    from mockbroker.state import ClusterState

log = logging.getLogger("mockbroker.server")

# While a connection's frames wait (a parked request, a slow reader), reading pauses once this
# many bytes are buffered (a StreamReader's pause point was 2 x 64 KiB).
PAUSE_READING_AT = 256 * 1024
# ... or once this many complete frames wait (tiny pipelined requests; Kafka itself reads one
# request per connection at a time and mutes the channel until it is answered).
MAX_REQUESTS_IN_FLIGHT = 128

# KIP-402: new connections set up per event-loop turn and listening socket (Kafka's
# Processor.ConnectionQueueSize: the Acceptor-to-Processor queue's capacity, and the most
# connections a Processor configures per poll).
CONNECTION_QUEUE_SIZE = 20
# accept() out of descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM): accepting pauses this
# long, as asyncio's own accept loop does (Linux keeps reporting the listening socket readable).
ACCEPT_RETRY_DELAY_S = 1.0

# Why a connection's reading is paused (a bit each; reading resumes when none is left).
_BACKLOG = 1  # frames wait behind a parked request
_MEMORY = 2  # queued.max.request.bytes: waiting for the pool
_WRITING = 4  # the client does not read its answers (above the write high-water mark)
_HELD = 8  # max.connections: waiting for a slot
_FAILED = 16  # a failed authentication: closing after connection.failed.authentication.delay.ms


class ListenerSocket:
    """One listener of a broker as served: its endpoint (mockbroker.model.Endpoint), its TLS
    context (SSL and SASL_SSL), its SASL mechanisms (SASL_PLAINTEXT and SASL_SSL: each connection
    authenticates) and the answers kept for requests that came in on it (the brokers' addresses in
    them are this listener's)."""

    __slots__ = (
        "admitted", "answers", "endpoint", "listening", "max_connections", "mechanisms", "name", "sasl", "ssl_context"
    )

    def __init__(self, cluster: ClusterState, endpoint: Endpoint, ssl_context: ssl.SSLContext | None) -> None:
        self.endpoint = endpoint
        self.name = endpoint.listener
        self.ssl_context = ssl_context
        self.sasl = endpoint.security_protocol in ("SASL_PLAINTEXT", "SASL_SSL")
        self.mechanisms = cluster.listener_mechanisms.get(self.name, cluster.sasl_mechanisms)
        self.answers = cluster.answers_for(self.name)
        self.listening: list[socket.socket] = []  # the bound sockets (one per address of the host)
        # listener.name.<name>.max.connections, else max.connections (ConnectionQuotas'
        # ListenerConnectionQuota, KIP-402), and the connections counted against it.
        self.max_connections = listener_max_connections(cluster.config, self.name)
        self.admitted = 0


class BrokerServer:
    """One broker's listeners (one socket each, as Kafka's SocketServer has an acceptor per
    listener) and the connections they accepted; the connection limits count them together."""

    def __init__(
        self, cluster: ClusterState, node: BrokerNode, ssl_contexts: Mapping[str, ssl.SSLContext] | None = None
    ) -> None:
        self.cluster = cluster
        self.node = node
        if not node.endpoints:  # a node made by hand: its one address is the first listener's
            spec = cluster.listener
            node.endpoints[spec.name] = Endpoint(
                spec.name, spec.security_protocol, node.host, node.port, node.advertised_host, node.advertised_port
            )
        contexts = ssl_contexts or {}
        self.sockets = [ListenerSocket(cluster, e, contexts.get(e.listener)) for e in node.endpoints.values()]
        self._connections: set[Connection] = set()
        # Every read of the server's connections goes here first (one at a time, on one event
        # loop); the FrameBuffer leaves nothing in it (mockbroker_protocol.framing).
        self.receive_buffer = bytearray(RECEIVE_BUFFER_SIZE)
        self.requests = cluster.fast_requests  # requests by their bytes, for fast handlers (the same)
        config = cluster.config
        # queued.max.request.bytes (SocketServer: a SimpleMemoryPool when positive, else none)
        self.pool = (
            MemoryPool(config.queued_max_request_bytes) if config.queued_max_request_bytes > 0 else None
        )
        self.admitted = 0  # connections counted against max.connections
        self.held: deque[Connection] = deque()  # connections waiting for a slot (max.connections)
        self.per_ip: dict[str, int] = {}  # open connections by client address (max.connections.per.ip)
        self._idle_check: asyncio.TimerHandle | None = None
        self._setting_up: set[asyncio.Task[Any]] = set()  # accepted, transport (TLS handshake) not ready
        self._accept_retries: dict[socket.socket, asyncio.TimerHandle] = {}  # paused: out of descriptors
        # Counted for tests and benchmarks: connections accepted, and the accept callbacks (one per
        # event-loop turn at most) that accepted any: at most CONNECTION_QUEUE_SIZE each.
        self.accepted = 0
        self.accept_calls = 0
        self.accept_pauses = 0  # accept() out of descriptors or memory: paused ACCEPT_RETRY_DELAY_S

    @property
    def started(self) -> bool:
        return any(listener.listening for listener in self.sockets)

    def bound_sockets(self) -> list[socket.socket]:
        """The listening sockets (none once stopped)."""
        return [s for listener in self.sockets for s in listener.listening]

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            for listener in self.sockets:
                endpoint = listener.endpoint
                listener.listening = await _bind(endpoint.host, endpoint.port, self.cluster.config.socket_listen_backlog_size)
                for sock in listener.listening:
                    loop.add_reader(sock.fileno(), self._accept, listener, sock)
                port = listener.listening[0].getsockname()[1]
                if endpoint.advertised_port in (0, endpoint.port):
                    endpoint.advertised_port = port
                endpoint.port = port
        except BaseException:
            self._close_listeners()
            raise
        first = self.sockets[0].endpoint  # the node's own address is its first listener's
        self.node.port = first.port
        self.node.advertised_port = first.advertised_port if first.advertised_host is not None else first.port
        self._schedule_idle_check()

    async def stop(self) -> None:
        if self._idle_check is not None:
            self._idle_check.cancel()
            self._idle_check = None
        self._close_listeners()
        if self._setting_up:  # accepted, transport not ready yet (a TLS handshake under way)
            # One turn first: a task cancelled before its first step would never hand its socket
            # to a transport, and nothing would close it; cancelled in connect_accepted_socket,
            # the transport closes it.
            await asyncio.sleep(0)
            setting_up = list(self._setting_up)
            for task in setting_up:
                task.cancel()
            await asyncio.gather(*setting_up, return_exceptions=True)
        await self.close_connections()

    def _close_listeners(self) -> None:
        """Stop accepting and close the listening sockets (connections already accepted stay)."""
        loop = asyncio.get_running_loop()
        for listener in self.sockets:
            listening, listener.listening = listener.listening, []
            for sock in listening:
                if sock.fileno() != -1:
                    loop.remove_reader(sock.fileno())
                sock.close()
        for retry in self._accept_retries.values():
            retry.cancel()
        self._accept_retries.clear()

    # -- accepting (Kafka's Acceptor and Processor.configureNewConnections, KIP-402) --------------

    def _accept(self, listener: ListenerSocket, sock: socket.socket) -> None:
        """The listening socket is readable: accept at most CONNECTION_QUEUE_SIZE connections and
        hand each to the event loop as a Connection, then yield to the loop (the reader stays
        registered: the next turn takes the next batch from the backlog, after the other
        connections' reads of this turn)."""
        loop = asyncio.get_running_loop()
        for taken in range(CONNECTION_QUEUE_SIZE):
            try:
                conn, _address = sock.accept()
            except (BlockingIOError, InterruptedError, ConnectionAbortedError):
                return  # the backlog is empty (or the client gave up before it was accepted)
            except OSError as exc:
                if exc.errno not in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                    raise  # the event loop logs it; the listener goes on
                log.warning("listener %s: accept failed (%s): retrying in %.0f s", listener.name, exc, ACCEPT_RETRY_DELAY_S)
                self.accept_pauses += 1
                loop.remove_reader(sock.fileno())
                retry = loop.call_later(ACCEPT_RETRY_DELAY_S, self._resume_accepting, listener, sock)
                self._accept_retries[sock] = retry
                return
            self.accepted += 1
            self.accept_calls += taken == 0
            conn.setblocking(False)
            # connect_accepted_socket is a coroutine (the transport, and the TLS handshake on SSL
            # listeners, complete in later turns): one task per connection, as asyncio's own accept
            # loop has (BaseSelectorEventLoop._accept_connection2).
            setup = loop.create_task(
                loop.connect_accepted_socket(partial(Connection, self, listener), conn, ssl=listener.ssl_context)
            )
            self._setting_up.add(setup)
            setup.add_done_callback(self._set_up)
        # More may wait in the backlog: the listening socket is still readable, and the next turn
        # takes them, after the reads of the other connections ready in this one.

    def _resume_accepting(self, listener: ListenerSocket, sock: socket.socket) -> None:
        del self._accept_retries[sock]
        if sock in listener.listening:
            asyncio.get_running_loop().add_reader(sock.fileno(), self._accept, listener, sock)

    def _set_up(self, task: asyncio.Task[Any]) -> None:
        """A connection's set-up ended: a failure (a TLS handshake refused or timed out, the
        client gone first) only closes that socket, as the event loop's own server does."""
        self._setting_up.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.debug("connection set-up failed: %r", exc)

    async def close_connections(self) -> int:
        """Drop every open connection, leaving the listeners open (control.disconnect_all);
        returns how many were dropped. Parked requests are cancelled; answers already written
        are flushed before the socket closes."""
        connections = list(self._connections)
        for connection in connections:
            connection.close()
        for connection in connections:
            await connection.wait_closed()
        return len(connections)

    # -- connection limits ------------------------------------------------------------------------

    def admit(self, connection: Connection) -> bool:
        """Count a new connection (ConnectionQuotas): False if its address has too many (it is to
        be closed); held unread when the broker has max.connections."""
        config = self.cluster.config
        ip = connection.client[0]
        if self.per_ip.get(ip, 0) >= config.max_connections_per_ip:
            log.info(
                "closing connection from %s: max.connections.per.ip (%d) reached",
                connection.client,
                config.max_connections_per_ip,
            )
            return False
        self.per_ip[ip] = self.per_ip.get(ip, 0) + 1
        self._connections.add(connection)
        if not self._slot_free(connection.listener):
            self.held.append(connection)
            connection.mute(_HELD)
        else:
            self._count(connection, 1)
        return True

    def _slot_free(self, listener: ListenerSocket) -> bool:
        """ConnectionQuotas.connectionSlotAvailable: room on the listener and on the broker."""
        return listener.admitted < listener.max_connections and self.admitted < self.cluster.config.max_connections

    def _count(self, connection: Connection, n: int) -> None:
        self.admitted += n
        connection.listener.admitted += n

    def release(self, connection: Connection) -> None:
        """A counted connection is gone: its slot goes to the longest held one."""
        if connection not in self._connections:
            return
        self._connections.discard(connection)
        ip = connection.client[0]
        left = self.per_ip.get(ip, 1) - 1
        if left:
            self.per_ip[ip] = left
        else:
            self.per_ip.pop(ip, None)
        if connection in self.held:
            self.held.remove(connection)
            return
        self._count(connection, -1)
        # Each listener's acceptor waits for a slot of its own (ConnectionQuotas.waitForConnectionSlot):
        # the longest held connection whose listener has room goes first.
        for held in list(self.held):
            if not self._slot_free(held.listener):
                continue
            self.held.remove(held)
            self._count(held, 1)
            held.unmute(_HELD)

    def _schedule_idle_check(self) -> None:
        idle_ms = self.cluster.config.connections_max_idle_ms
        if idle_ms < 0:
            return
        # Checked a few times per idle period (at most every second), as Kafka's Selector checks on
        # its polls: a connection goes between idle_ms and about 1.5 x idle_ms after its last read
        # (the check notes a read at its next pass, up to a quarter period late).
        interval = min(max(idle_ms / 4000, 0.005), 1.0)
        self._idle_check = asyncio.get_running_loop().call_later(interval, self._close_idle)

    def _close_idle(self) -> None:
        """connections.max.idle.ms: close connections with nothing read for that long."""
        now = asyncio.get_running_loop().time()
        deadline = now - self.cluster.config.connections_max_idle_ms / 1000
        for connection in list(self._connections):
            if connection.reads != connection.idle_seen:
                connection.idle_seen, connection.idle_since = connection.reads, now
            elif connection.idle_since < deadline and connection.parked is None:
                connection._close_for(TimeoutError("connections.max.idle.ms passed without a request"))
        self._schedule_idle_check()


async def _bind(host: str, port: int, backlog: int) -> list[socket.socket]:
    """Non-blocking listening sockets on ``host`` (every address it resolves to, "" every
    interface) and ``port``, made as asyncio's create_server makes them (SO_REUSEADDR; an IPv6
    socket IPv6-only), with its error message for an address that cannot be bound, listening
    with ``backlog`` (socket.listen.backlog.size). With port 0, the addresses after the first take
    the port the first was given."""
    infos = await asyncio.get_running_loop().getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if port == 0 and len(sockets) > 1:
                address = (address[0], sockets[0].getsockname()[1], *address[2:])
            try:
                sock.bind(address)
            except OSError as exc:
                reason = (exc.strerror or str(exc)).lower()
                raise OSError(exc.errno, f"error while attempting to bind on address {address!r}: {reason}") from None
            sock.listen(backlog)
            sock.setblocking(False)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


class Connection(asyncio.BufferedProtocol):
    """One client connection: frames in, responses out, in order."""

    __slots__ = (
        "_closed",
        "_eof",
        "_muted",
        "_paused_writing",
        "answers",
        "authenticating",
        "client",
        "cluster",
        "frames",
        "idle_seen",
        "idle_since",
        "listener",
        "node",
        "parked",
        "pool",
        "principal",
        "reads",
        "server",
        "session",
        "transport",
    )

    def __init__(self, server: BrokerServer, listener: ListenerSocket | None = None) -> None:
        self.server = server
        self.cluster = server.cluster
        self.node = server.node
        self.listener = listener = listener or server.sockets[0]  # None: the first (bench/ makes them so)
        self.answers = listener.answers
        self.frames = FrameBuffer(
            server.cluster.config.socket_request_max_bytes, server.receive_buffer, server.pool
        )
        self.transport: asyncio.Transport | None = None
        self.client: tuple[str, int] = ("?", 0)
        self.parked: asyncio.Task[None] | None = None  # the request being waited for, if any
        # SASL listeners: the connection's authenticator; until it completes, no fast lane is
        # taken and dispatch serves nothing but ApiVersions and the SASL APIs.
        self.session: SaslSession | None = (
            SaslSession(listener.mechanisms, server.cluster.oauth_validator) if listener.sasl else None
        )
        # until the SASL exchange completes, and while the session has an expiry (KIP-368)
        self.authenticating = self.session is not None
        self.principal = "User:ANONYMOUS"  # a client certificate's subject on SSL (set once connected)
        self._paused_writing = False  # above the transport's high-water mark
        self._muted = 0  # why reading is paused (_BACKLOG, _MEMORY, _WRITING, _HELD, _FAILED bits)
        self._eof = False  # the client sent EOF while frames were waiting
        loop = asyncio.get_running_loop()
        self._closed: asyncio.Future[None] = loop.create_future()
        self.pool = server.pool  # queued.max.request.bytes; None: unbounded (Kafka's default)
        # connections.max.idle.ms: reads are counted (no clock read per read); the idle check notes
        # when it last saw the count move.
        self.reads = 0
        self.idle_seen = 0
        self.idle_since = loop.time()

    # -- asyncio.Protocol -------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport (uvloop's does not subclass asyncio.Transport, hence no isinstance).
        self.transport = transport = cast(asyncio.Transport, transport)
        peer = transport.get_extra_info("peername") or ("?", 0)
        self.client = (str(peer[0]), int(peer[1]))
        if not self.server.admit(self):
            transport.abort()
            return
        if self.listener.ssl_context is not None and self.session is None:
            # An SSL listener: the principal is the client certificate's subject (asyncio calls
            # connection_made once the TLS handshake is done).
            from mockbroker.security.tls import certificate_principal

            self.principal = certificate_principal(transport.get_extra_info("peercert"))

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.frames.get_buffer(sizehint)

    def buffer_updated(self, nbytes: int) -> None:
        frames = self.frames
        try:
            frames.buffer_updated(nbytes)
        except DecodeError as exc:  # the stream was already broken (the connection is closing)
            self._close_for(exc)
            return
        self.reads += 1
        if (pool := self.pool) is not None and frames.memory_wanted and not self._muted & _MEMORY:
            self.mute(_MEMORY)
            pool.wait(self._memory_freed)
        if self.parked is None and not self._paused_writing:
            self._process()
        elif frames.buffered >= PAUSE_READING_AT or frames.ready >= MAX_REQUESTS_IN_FLIGHT:
            self.mute(_BACKLOG)

    def eof_received(self) -> bool:
        parked = self.parked
        if parked is not None:
            # The client is gone (Kafka's Selector closes a channel that reads EOF): the request it
            # waits for (a long-poll Fetch, a JoinGroup or SyncGroup, a delayed answer) is dropped
            # and the socket closed now, not left half-closed (CLOSE_WAIT) until the wait ends.
            # Answers already written are still flushed; the frames behind it are dropped.
            parked.cancel()
            return False
        if not self._paused_writing:
            return False  # every frame before EOF is answered: close (pending writes are flushed)
        # The client shut its side but may still read (the write buffer is full): answer the
        # waiting frames as it reads, then close.
        self._eof = True
        return True

    def pause_writing(self) -> None:
        self._paused_writing = True
        self.mute(_WRITING)

    def resume_writing(self) -> None:
        self._paused_writing = False
        self.unmute(_WRITING)
        if self.parked is None:
            self._process()

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.release(self)
        if self.server.pool is not None:
            self.server.pool.forget(self._memory_freed)
        self.frames.close()  # its memory goes back to the pool
        if self.parked is not None:
            # Nobody is left to answer; the coordinator may still complete it later, harmlessly.
            self.parked.cancel()
        if not self._closed.done():
            self._closed.set_result(None)

    # -- muting (reading paused) ------------------------------------------------------------------

    def mute(self, reason: int) -> None:
        if not self._muted and self.transport is not None and not self.transport.is_closing():
            self.transport.pause_reading()
        self._muted |= reason

    def unmute(self, reason: int) -> None:
        if not self._muted & reason:
            return
        self._muted &= ~reason
        if not self._muted and self.transport is not None and not self.transport.is_closing():
            self.transport.resume_reading()

    def _memory_freed(self) -> None:
        """The pool has memory again (a MemoryPool waiter, called as it is released)."""
        self.frames.retry()
        if self.frames.memory_wanted:  # another stream took it first
            assert self.server.pool is not None
            self.server.pool.wait(self._memory_freed)
            return
        asyncio.get_running_loop().call_soon(self._memory_granted)

    def _memory_granted(self) -> None:
        self.unmute(_MEMORY)
        if self.parked is None and not self._paused_writing:
            self._process()

    # -- closing ----------------------------------------------------------------------------------

    def close(self) -> None:
        if self.parked is not None:
            self.parked.cancel()
        if self.transport is not None and not self.transport.is_closing():
            if self._muted & _FAILED:
                # A TLS transport's close reads the peer's close_notify: not while reading is paused.
                self._muted = 0
                self.transport.resume_reading()
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
        delay_ms = self.cluster.config.connection_failed_authentication_delay_ms
        transport = self.transport
        if isinstance(exc, AuthenticationFailed) and delay_ms > 0 and transport is not None and not transport.is_closing():
            # connection.failed.authentication.delay.ms: Kafka answers a failed authentication at
            # once but closes the channel later (muted meanwhile), so the client reads the answer
            # before it sees the connection go (kafka-python reads EOF first otherwise).
            self.mute(_FAILED)
            asyncio.get_running_loop().call_later(delay_ms / 1000, self.close)
            return
        self.close()

    # -- requests ---------------------------------------------------------------------------------

    def _process(self) -> None:
        """Handle every complete frame buffered, answering in order, until one parks."""
        transport = self.transport
        if transport is None or transport.is_closing() or self._muted & _FAILED:
            return  # closed, or closing after a failed authentication (KIP-306's delay)
        frames, cluster, node, client = self.frames, self.cluster, self.node, self.client
        answers, caps, requests = self.answers, cluster.version_caps, self.server.requests
        pending: list[Buffer] = []  # responses not yet handed to the transport, in order
        try:
            while (frame := frames.next_frame()) is not None:
                if self.authenticating:  # a SASL listener's connection: nothing is cached until done
                    if self._sasl_frame(frame, pending):
                        continue
                # Requests seen before, by their bytes but the correlation id (answer_key, inlined),
                # kept only from bytes frames (a large frame read into its own buffer, OwnedFrame, is
                # a bytearray) and never while interceptors or the request log see requests. The api
                # key's low byte picks the API's entries: an answer still valid is sent again with
                # this request's correlation id; an API with a fast handler is called with the
                # request decoded back then (None from it: dispatch).
                elif type(frame) is bytes and len(frame) >= 10 and not cluster.intercepting:
                    if (by_api := answers.get(frame[1])) is not None:
                        hit = by_api.get(frame[:4] + frame[8:])
                        if hit is not None and caps.get(hit[1]) == hit[2] and hit[0](cluster):
                            pending += (hit[3], frame[4:8], hit[4])
                            continue
                    elif (by_key := requests.get(frame[1])) is not None:
                        seen = by_key.get(frame[:4] + frame[8:])
                        if seen is not None and caps.get(seen[1]) == seen[2]:
                            answer = seen[0](cluster, node, seen[3], seen[4])
                            if answer is not None:
                                pending += (answer[0], frame[4:8], answer[1])
                                continue
                coro = dispatch(cluster, node, frame, client, self.session, self.principal, self.listener.name)
                if cluster.intercepting:  # interceptors run inside a task (see the module docstring)
                    step: Any = _NOT_STEPPED
                else:
                    try:
                        step = coro.send(None)
                    except StopIteration as done:
                        if done.value is not None:
                            pending += done.value
                        if self.authenticating:
                            self._sasl_progress()
                        continue
                self._park(coro, step, pending)
                return
        except Exception as exc:  # CloseConnection, DecodeError, or a broker bug outside any handler
            self._fail(exc, pending)
            return
        if pending:
            transport.writelines(pending)
        if self._muted:
            self.unmute(_BACKLOG)
        if self._eof:
            transport.close()

    def _sasl_frame(self, frame: Buffer, pending: list[Buffer]) -> bool:
        """A frame while a SASL listener's connection authenticates, or has a session that expires:
        after a SaslHandshake v0 the token is the whole frame, answered raw here (True); otherwise
        it goes to dispatch (False). A lapsed session (KIP-368) closes the connection on any
        request but the SaslHandshake that begins a re-authentication (SocketServer's Processor:
        KafkaChannel.serverAuthenticationSessionExpired)."""
        session = self.session
        assert session is not None
        if session.authenticated:
            expires = session.expires_at_ms
            if (
                expires is not None
                and int.from_bytes(frame[0:2], "big") != ApiKey.SASL_HANDSHAKE
                and self.cluster.clock.now_ms() > expires
            ):
                self.cluster.events.record(
                    "authentication.session_expired",
                    broker_id=self.node.node_id,
                    principal=session.principal,
                    client=f"{self.client[0]}:{self.client[1]}",
                    mechanism=session.mechanism,
                )
                raise CloseConnection("SASL session expired without re-authentication")
            return False
        if session.raw_tokens and session.state in ("AUTHENTICATE", "REAUTH_BAD_MECHANISM"):
            token = self._raw_token(session, bytes(frame))
            pending += (len(token).to_bytes(4, "big"), token)
            self._sasl_progress()
            return True
        return False

    def _sasl_progress(self) -> None:
        """After a request of an authenticating connection: done once authenticated (unless the
        session expires: then each frame is checked); a refused exchange closes the connection
        once its answer is out (CloseConnection)."""
        session = self.session
        assert session is not None
        self.authenticating = not session.authenticated or session.expires_at_ms is not None
        if session.state == "FAILED":
            raise AuthenticationFailed("SASL authentication failed")

    def _fail(self, exc: Exception, pending: list[Buffer]) -> None:
        """The answers to the requests before the bad one still go out, then the connection
        closes; an exception other than CloseConnection or DecodeError is a broker bug: recorded
        (it fails the test that caused it) and hurts only this connection."""
        transport = self.transport
        if pending and transport is not None:
            transport.writelines(pending)
        if not isinstance(exc, (DecodeError, CloseConnection)):
            self.cluster.record_internal_error(exc)
        self._close_for(exc)

    def _park(self, coro: Coroutine[Any, Any, list[Buffer] | None], step: Any, pending: list[Buffer]) -> None:
        """The request waits: answer what came before it, then wait for it in a task."""
        transport = self.transport
        assert transport is not None
        if pending:
            transport.writelines(pending)
        if self._eof:  # the client has gone (eof_received): nobody to wait for
            coro.close()
            transport.close()
            return
        self.parked = parked = asyncio.get_running_loop().create_task(self._finish(coro, step))
        if step is _NOT_STEPPED:
            # Cancelled before its first step (the connection closed, a broker went down), the
            # task never starts _finish, so nothing would ever run or close the request's
            # coroutine ("coroutine 'dispatch' was never awaited").
            parked.add_done_callback(_closer(coro))

    def _raw_token(self, session: SaslSession, token: bytes) -> bytes:
        """One raw SASL token (the v0 flow): the server's token, or CloseConnection when refused
        (Kafka has no way to tell a v0 client why: it closes the connection)."""
        cluster, node, client = self.cluster, self.node, f"{self.client[0]}:{self.client[1]}"
        events, now_ms = cluster.events, cluster.clock.now_ms()
        reauthenticating = session.reauthenticating
        try:
            answer = session.authenticate(token, cluster.credentials, client_clock_ms(cluster.clock, now_ms))
        except SaslFailure as failure:
            events.record("authentication.failed", broker_id=node.node_id, reason=failure.reason, client=client, mechanism=session.mechanism)
            raise AuthenticationFailed(failure.client_message) from None
        except SaslAbort as abort:
            events.record("authentication.failed", broker_id=node.node_id, reason=abort.reason, client=client, mechanism=session.mechanism)
            raise CloseConnection(abort.reason) from None
        except OAuthBearerChallenge as challenge:
            events.record("authentication.failed", broker_id=node.node_id, reason=challenge.reason, client=client, mechanism=session.mechanism)
            return challenge.challenge.encode()
        if session.authenticated:
            max_reauth_ms = connections_max_reauth_ms(cluster.config, self.listener.name, session.mechanism)
            lifetime = session.complete(now_ms, client_clock_ms(cluster.clock, now_ms), max_reauth_ms)
            events.record(
                "authentication.succeeded",
                broker_id=node.node_id,
                principal=session.principal,
                client=client,
                mechanism=session.mechanism,
                reauthentication=reauthenticating,
                session_lifetime_ms=lifetime,
            )
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
            self._close_for(AuthenticationFailed("SASL authentication failed"))
            return
        if not self._paused_writing:
            self._process()


class AuthenticationFailed(CloseConnection):
    """A failed SASL exchange: the connection closes after connection.failed.authentication.delay.ms."""


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
