"""Fixture start-up benchmark: how long the in-process test fixture takes from "start" to a broker
that answers, and to stop again. Not a test (no assertion on speed anywhere in tests/).

    python bench/fixture_startup.py            # prints the table
    python bench/fixture_startup.py --write    # also appends a dated section to bench/RESULTS.md

Measured, each as the median of ``--runs`` runs (after warm-up runs), in one process:
  * fixture: ``mockbroker.testing.start_cluster(brokers=N)`` (new thread, new loop, listeners,
    request log on) until an ApiVersions request on a fresh socket to every broker is answered;
  * in-loop: ``MockCluster(brokers=N).start()`` on an already running loop, same readiness check:
    the peer in the same run, so the ratio says what the thread and loop cost on this machine;
  * close: ``KafkaCluster.close()`` including the teardown checks (thread joined, sockets and
    tasks checked).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import socket
import statistics
import struct
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mockbroker import MockCluster  # noqa: E402
from mockbroker.testing import start_cluster  # noqa: E402
from mockbroker_protocol import registry  # noqa: E402
from mockbroker_protocol.headers import RequestHeader  # noqa: E402
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest  # noqa: E402

API_VERSIONS = registry.encode_request(RequestHeader(18, 3, 1, "bench"), ApiVersionsRequest("bench", "1"))


def answered(bootstrap: str) -> None:
    """Block until every broker answers ApiVersions on a new connection."""
    for address in bootstrap.split(","):
        host, port = address.rsplit(":", 1)
        with socket.create_connection((host, int(port))) as s:
            s.sendall(API_VERSIONS)
            size = struct.unpack(">i", s.recv(4, socket.MSG_WAITALL))[0]
            s.recv(size, socket.MSG_WAITALL)


async def in_loop_once(brokers: int) -> float:
    t0 = time.perf_counter()
    cluster = await MockCluster(brokers=brokers).start()
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, answered, cluster.bootstrap_servers)
    elapsed = time.perf_counter() - t0
    await cluster.stop()
    return elapsed


def fixture_once(brokers: int) -> tuple[float, float]:
    t0 = time.perf_counter()
    kafka = start_cluster(brokers=brokers)
    answered(kafka.bootstrap_servers)
    ready = time.perf_counter() - t0
    t1 = time.perf_counter()
    problems = kafka.close(check=False)
    closed = time.perf_counter() - t1
    if problems:
        raise SystemExit(f"the fixture reported problems: {problems}")
    return ready, closed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="append the results to bench/RESULTS.md")
    args = parser.parse_args()

    rows = []
    for brokers in (1, 3):
        for _ in range(args.warmup):
            fixture_once(brokers)
            asyncio.run(in_loop_once(brokers))
        fixture, close, in_loop = [], [], []
        for _ in range(args.runs):  # alternate, so load drift hits both alike
            ready, closed = fixture_once(brokers)
            fixture.append(ready)
            close.append(closed)
            in_loop.append(asyncio.run(in_loop_once(brokers)))
        rows.append((brokers, statistics.median(fixture), statistics.median(in_loop), statistics.median(close)))

    lines = [
        "| brokers | fixture start to ready | in-loop start to ready (peer) | fixture / in-loop | fixture close + checks |",
        "|---|---|---|---|---|",
    ]
    for brokers, fixture_s, in_loop_s, close_s in rows:
        lines.append(
            f"| {brokers} | {fixture_s * 1000:.2f} ms | {in_loop_s * 1000:.2f} ms | {fixture_s / in_loop_s:.2f}x | {close_s * 1000:.2f} ms |"
        )
    table = "\n".join(lines)
    print(table)
    if args.write:
        stamp = dt.date.today().isoformat()
        section = (
            f"\n## Fixture start-up ({stamp})\n\n"
            f"`python bench/fixture_startup.py` (median of {args.runs} runs after {args.warmup} warm-up runs; Python "
            f"{sys.version.split()[0]}). Ready = every broker answered ApiVersions on a new socket.\n\n{table}\n"
        )
        with (ROOT / "bench" / "RESULTS.md").open("a", encoding="utf-8") as out:
            out.write(section)


if __name__ == "__main__":
    main()
