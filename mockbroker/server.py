"""The broker's listener: the only module that touches sockets.

Requests on one connection are handled one at a time and answered in order, as Kafka does
(it mutes a channel while a request is in flight): a parked JoinGroup or a long-poll Fetch
holds its own connection while every other connection goes on. Responses go out with
``writelines`` so record batches are written from the log's own buffers; ``drain`` gives slow
readers backpressure before the next request is read.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from mockbroker.dispatch import CloseConnection, dispatch
from protocol.errors import DecodeError
from protocol.framing import FrameBuffer

if TYPE_CHECKING:
    from mockbroker.cluster import BrokerNode, MockCluster

log = logging.getLogger("mockbroker.server")

READ_SIZE = 256 * 1024


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
        try:
            while True:
                data = await reader.read(READ_SIZE)
                if not data:
                    return
                frames.feed(data)
                while (frame := frames.next_frame()) is not None:
                    chunks = await dispatch(self.cluster, self.node, frame, client)
                    if chunks is not None:
                        writer.writelines(chunks)
                        await writer.drain()
        except (DecodeError, CloseConnection) as exc:
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
