"""The broker's listener: the only module that touches sockets.

Requests on one connection are handled one at a time and answered in order, as Kafka does
(it mutes a channel while a request is in flight): a parked JoinGroup or a long-poll Fetch
holds its own connection while every other connection goes on. Responses go out with
``writelines`` so record batches are written from the log's own buffers.

The request path is the broker's hot loop (bench/requests.py measures it):
- Every complete frame of one read is handled before anything is written, and their responses
  leave in one ``writelines`` (one system call for a pipelining client's whole batch, not one each).
- A request whose handler never waits is run to completion without the event loop: its coroutine
  is stepped once by hand (``_run``); only one that parks (a JoinGroup, a long-poll Fetch) is
  awaited, after the responses before it have been written.
- ``drain`` (backpressure for slow readers) is awaited only when the transport's buffer is above
  its high-water mark, not after every response.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine, Generator
from typing import TYPE_CHECKING, Any

from mockbroker.dispatch import CloseConnection, dispatch
from protocol.errors import DecodeError
from protocol.framing import FrameBuffer
from protocol.primitives import Buffer

if TYPE_CHECKING:
    from mockbroker.cluster import BrokerNode, MockCluster

log = logging.getLogger("mockbroker.server")

READ_SIZE = 256 * 1024
# Above this many unsent bytes a connection waits for its reader before reading more requests
# (asyncio's own default high-water mark for a transport).
WRITE_HIGH_WATER = 64 * 1024


class BrokerServer:
    def __init__(self, cluster: MockCluster, node: BrokerNode) -> None:
        self.cluster = cluster
        self.node = node
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, self.node.host, self.node.port, reuse_address=True)
        port = self._server.sockets[0].getsockname()[1]
        if self.node.advertised_port in (0, self.node.port):
            self.node.advertised_port = port
        self.node.port = port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._connections):
            task.cancel()
        for task in list(self._connections):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None

    async def close_connections(self) -> int:
        """Drop every open connection, leaving the listener open (control.disconnect_all);
        returns how many were dropped."""
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        return len(tasks)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        peer = writer.get_extra_info("peername") or ("?", 0)
        client = (str(peer[0]), int(peer[1]))
        frames = FrameBuffer(self.cluster.config.socket_request_max_bytes)
        cluster, node = self.cluster, self.node
        transport = writer.transport
        pending: list[Buffer] = []  # responses not yet handed to the transport, in order
        try:
            while True:
                data = await reader.read(READ_SIZE)
                if not data:
                    return
                frames.feed(data)
                while (frame := frames.next_frame()) is not None:
                    coro = dispatch(cluster, node, frame, client)
                    try:
                        step = coro.send(None)
                    except StopIteration as done:
                        chunks = done.value
                    else:
                        # The handler parked: answer what came before it, then wait for it.
                        if pending:
                            writer.writelines(pending)
                            pending = []
                        chunks = await _Resume(coro, step)
                    if chunks is not None:
                        pending += chunks
                if pending:
                    writer.writelines(pending)
                    pending = []
                    if transport.get_write_buffer_size() > WRITE_HIGH_WATER:
                        await writer.drain()
        except (DecodeError, CloseConnection) as exc:
            if pending:  # the answers to the requests before the bad one still go out
                writer.writelines(pending)
            log.info("closing connection from %s: %s", client, exc)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            # Only stop() cancels a connection. End normally: on Python 3.11 a handler task that
            # ends cancelled makes asyncio's stream callback log a spurious error (gh-113538).
            pass
        finally:
            writer.close()
            # Still in _connections until the socket is closed, so stop() waits for it (the
            # fixture's teardown checks that no task outlives the cluster); a cancel while
            # closing ends it normally too (gh-113538, above).
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await writer.wait_closed()
            self._connections.discard(task)


class _Resume:
    """Await the rest of a coroutine that has already been stepped once (and yielded ``step``):
    exactly what ``await coro`` would have done from there, sends and throws (cancellation)
    passed through, so a parked handler waits inside the connection's task as before."""

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
