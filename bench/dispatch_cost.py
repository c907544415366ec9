"""The broker's per-request cost without sockets: frames fed to a connection, answers collected.

A ``Connection`` of a started cluster (the bench's topic and one Stable group member, as
bench/requests.py sets up) gets ``--batch`` pipelined request frames per read (the
bench client keeps 16 in flight), through the same path a socket's bytes take: framing, header
decode, dispatch, the handler, encoding, ``writelines`` (to a transport that only counts).
Use it to count instructions per request, which the machine's load does not change:

    python bench/dispatch_cost.py --instructions            # each request type, under valgrind
    python bench/dispatch_cost.py --request Metadata -n 2000  # one run (valgrind's own command)

Instructions per request = (run with N requests - run with 0) / N, both after the same warm-up,
with PYTHONHASHSEED=0 (cachegrind's `I refs`).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import re
import struct
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mockbroker import MockCluster
from mockbroker.net.server import Connection
from mockbroker_protocol import registry

# The broker runs in this process: bench/ leaves the path (Python puts a script's directory first),
# so that bench/assignors.py does not shadow the assignors package; _rawclient is loaded by file.
_BENCH = Path(__file__).resolve().parent
sys.path = [p for p in sys.path if Path(p or ".").resolve() != _BENCH]
_spec = importlib.util.spec_from_file_location("_rawclient", _BENCH / "_rawclient.py")
assert _spec is not None and _spec.loader is not None
rc = sys.modules["_rawclient"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rc)

TOPIC = "bench-requests"
GROUP = "bench-requests-group"
REQUESTS = ("ApiVersions", "Metadata", "Heartbeat")


class CountingTransport:
    """A transport that counts what would be written (enough of one for a Connection)."""

    def __init__(self) -> None:
        self.writes = 0
        self.chunks = 0
        self.closed = False
        self.seconds = 0.0
        self.last: list[Any] = []
        self.protocol: Connection | None = None

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 40000) if name == "peername" else default

    def writelines(self, chunks: list[Any]) -> None:
        self.writes += 1
        self.chunks += len(chunks)
        self.last = chunks

    def write(self, data: Any) -> None:
        self.writes += 1
        self.chunks += 1

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        if not self.closed and self.protocol is not None:
            self.closed = True
            self.protocol.connection_lost(None)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def run(request: str, n: int, warmup: int, batch: int) -> CountingTransport:
    cluster = MockCluster(group_initial_rebalance_delay_ms=0)
    await cluster.start()
    try:
        cluster.create_topic(TOPIC, 8)
        node = next(iter(cluster.brokers.values()))
        members, _, conns = await rc.join_group(
            (node.host, node.port), GROUP, 1, TOPIC, 8, session_timeout_ms=300000
        )
        for _, writer in conns:
            writer.close()
        frame = {
            "ApiVersions": rc.frame(rc.API_VERSIONS, rc.api_versions_request(), 7),
            "Metadata": rc.frame(rc.METADATA, rc.metadata_request(TOPIC), 7),
            "Heartbeat": rc.frame(rc.HEARTBEAT, rc.heartbeat_request(GROUP, members[0]), 7),
        }[request]
        connection = Connection(cluster._servers[node.node_id])
        transport = CountingTransport()
        transport.protocol = connection
        connection.connection_made(transport)  # type: ignore[arg-type]
        chunk = frame * batch
        for _ in range(warmup // batch):
            rc.feed(connection, chunk)
        t0 = time.perf_counter()
        for _ in range(n // batch):
            rc.feed(connection, chunk)
        transport.seconds = time.perf_counter() - t0
        if transport.closed or cluster.internal_errors or connection.parked is not None:
            raise SystemExit(f"the connection closed or parked: {cluster.internal_errors}")
        check_answers(b"".join(transport.last), frame, batch)
        return transport
    finally:
        await cluster.stop()


def check_answers(written: bytes, request_frame: bytes, count: int) -> None:
    """The last write holds ``count`` answers to ``request_frame``, each decodable and error-free."""
    api_key, version, correlation_id = struct.unpack_from(">hhi", request_frame, 4)
    pos = 0
    for _ in range(count):
        (size,) = struct.unpack_from(">i", written, pos)
        cid, body = registry.decode_response(api_key, version, written[pos + 4 : pos + 4 + size])
        if cid != correlation_id or getattr(body, "error_code", 0) != 0:
            raise SystemExit(f"bad answer: correlation id {cid}, {body}")
        pos += 4 + size
    if pos != len(written):
        raise SystemExit(f"{len(written) - pos} bytes written after {count} answers")


def count_instructions(request: str, n: int, warmup: int, batch: int) -> int:
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null", sys.executable,
           str(Path(__file__).resolve()), "--request", request, "-n", str(n), "--warmup", str(warmup),
           "--batch", str(batch)]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"}, check=True)
    m = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
    if not m:
        raise SystemExit(f"no instruction count in valgrind's output:\n{out.stderr[-2000:]}")
    return int(m.group(1).replace(",", ""))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--request", choices=REQUESTS, default="ApiVersions")
    parser.add_argument("-n", type=int, default=2000, help="requests measured")
    parser.add_argument("--warmup", type=int, default=512)
    parser.add_argument("--batch", type=int, default=16, help="frames per read")
    parser.add_argument("--instructions", action="store_true", help="instructions per request, under valgrind")
    args = parser.parse_args(argv)
    if args.instructions:
        for request in REQUESTS:
            base = count_instructions(request, 0, args.warmup, args.batch)
            total = count_instructions(request, args.n, args.warmup, args.batch)
            print(f"{request:12} {(total - base) / args.n:10,.0f} instructions per request", flush=True)
        return
    transport = asyncio.run(run(args.request, args.n, args.warmup, args.batch))
    expected = (args.warmup // args.batch + args.n // args.batch) * args.batch
    if transport.chunks < expected:
        raise SystemExit(f"{transport.chunks} chunks written for {expected} requests")
    if args.n:
        print(f"{args.request}: {transport.seconds / args.n * 1e6:.2f} us per request (wall clock)")


if __name__ == "__main__":
    main()
