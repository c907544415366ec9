"""A minimal raw-protocol client for broker tests: frames requests with our codec, reads replies."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from mockbroker_protocol import registry
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.primitives import INT32


class WireClient:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, client_id: str) -> None:
        self.reader = reader
        self.writer = writer
        self.client_id = client_id
        self._correlation = itertools.count(1)

    @classmethod
    async def connect(cls, host: str, port: int, client_id: str = "wire-test") -> WireClient:
        reader, writer = await asyncio.open_connection(host, port)
        return cls(reader, writer, client_id)

    async def send_raw(self, data: bytes) -> None:
        self.writer.write(data)
        await self.writer.drain()

    async def read_frame(self, timeout: float = 10.0) -> bytes:
        size_bytes = await asyncio.wait_for(self.reader.readexactly(4), timeout)
        (size,) = INT32.unpack(size_bytes)
        return await asyncio.wait_for(self.reader.readexactly(size), timeout)

    async def request(self, api_key: int, version: int, body: Any, timeout: float = 10.0) -> Any:
        correlation_id = next(self._correlation)
        await self.send_raw(registry.encode_request(RequestHeader(api_key, version, correlation_id, self.client_id), body))
        got, response = registry.decode_response(api_key, version, await self.read_frame(timeout))
        assert got == correlation_id
        return response

    async def closed_by_peer(self, timeout: float = 10.0) -> bool:
        """True once the broker has closed this connection (reads EOF)."""
        data = await asyncio.wait_for(self.reader.read(1), timeout)
        return data == b""

    async def close(self) -> None:
        self.writer.close()
        await self.writer.wait_closed()
