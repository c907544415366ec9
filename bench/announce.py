"""Hostile frame announcements (issue #19, "must show" 1): many connections each announce a large
frame (a 4-byte size prefix) and send only part of it, while a bystander times ApiVersions.

mockbroker runs in its own process (``mockbroker serve``) so that its RSS is its own. Reported:
the broker's RSS before, at its peak while the announcements are held, and after they close;
ApiVersions latency percentiles on another connection meanwhile; how many announcers the broker
reads (took their frame's size from ``queued.max.request.bytes``) and how many it mutes.

    python bench/announce.py                       # 1,000 x 100 MB, budget 256 MiB
    python bench/announce.py --budget -1           # no budget: only the lazy buffers
    python bench/announce.py --connections 50 --write

Benchmarks, never tests: nothing here asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import struct
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import (
    MOCKBROKER,
    append_results,
    loadavg,
    markdown_table,
    percentile,
    raise_nofile,
    start_broker,
)
from mockbroker_protocol import registry
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest

MB = 1024 * 1024


async def api_versions_latencies(host: str, port: int, until: asyncio.Event, gap_s: float) -> list[float]:
    reader, writer = await asyncio.open_connection(host, port)
    latencies: list[float] = []
    correlation = 0
    while not until.is_set():
        correlation += 1
        frame = registry.encode_request(RequestHeader(18, 3, correlation, "bystander"), ApiVersionsRequest("b", "1"))
        t0 = time.perf_counter()
        writer.write(frame)
        (size,) = struct.unpack(">i", await reader.readexactly(4))
        await reader.readexactly(size)
        latencies.append(time.perf_counter() - t0)
        await asyncio.sleep(gap_s)  # a benchmark's pacing, not synchronisation
    writer.close()
    return latencies


async def run(args: argparse.Namespace) -> dict[str, float]:
    extra = ["--set", f"queued.max.request.bytes={args.budget}"]
    broker = start_broker(MOCKBROKER, extra=extra)
    try:
        host, port = broker.address
        rss_start = broker.rss()
        stop = asyncio.Event()
        probe = asyncio.create_task(api_versions_latencies(host, port, stop, 0.005))
        peak = rss_start
        announcers: list[asyncio.StreamWriter] = []
        chunk = bytes(args.sent)
        t0 = time.perf_counter()
        for _ in range(args.connections):
            _, writer = await asyncio.open_connection(host, port)
            writer.write(struct.pack(">i", args.size) + chunk)
            announcers.append(writer)
            peak = max(peak, broker.rss())
        opened_s = time.perf_counter() - t0
        hold_until = time.monotonic() + args.hold
        while time.monotonic() < hold_until:
            await asyncio.sleep(0.05)
            peak = max(peak, broker.rss())
        rss_held = broker.rss()
        stop.set()
        latencies = await probe
        for writer in announcers:
            writer.close()
        await asyncio.sleep(1.0)
        rss_after = broker.rss()
    finally:
        broker.stop()
    return {
        "rss_start_mb": rss_start / MB,
        "rss_peak_mb": peak / MB,
        "rss_held_mb": rss_held / MB,
        "rss_after_mb": rss_after / MB,
        "opened_s": opened_s,
        "probes": len(latencies),
        "p50_ms": percentile(latencies, 0.5) * 1000,
        "p99_ms": percentile(latencies, 0.99) * 1000,
        "max_ms": max(latencies) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--size", type=int, default=100 * MB, help="announced frame size (bytes)")
    parser.add_argument("--sent", type=int, default=64 * 1024, help="bytes of each frame actually sent")
    parser.add_argument("--budget", type=int, default=256 * MB, help="queued.max.request.bytes (-1: none)")
    parser.add_argument("--hold", type=float, default=5.0, help="seconds the announcements are held")
    parser.add_argument("--write", action="store_true", help="append the result to bench/RESULTS.md")
    args = parser.parse_args()
    raise_nofile(args.connections + 256)
    result = asyncio.run(run(args))
    rows = [[k, f"{v:.2f}" if isinstance(v, float) else v] for k, v in result.items()]
    table = markdown_table(["measure", "value"], rows)
    print(table)
    if args.write:
        load = " ".join(f"{x:.2f}" for x in loadavg())
        append_results(
            f"\n## Hostile frame announcements (bench/announce.py), "
            f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}\n\n"
            f"{args.connections} connections each announce {args.size} bytes and send {args.sent}; "
            f"queued.max.request.bytes={args.budget}; held {args.hold} s; load average {load}.\n\n{table}\n"
        )


if __name__ == "__main__":
    main()
