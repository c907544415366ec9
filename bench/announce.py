"""Hostile frame announcements (issue #19, "must show" 1): many connections each announce a large
frame (a 4-byte size prefix) and send only part of it, while a bystander times ApiVersions.

mockbroker runs in its own process (``mockbroker serve``) so that its RSS is its own. Reported:
the broker's RSS before, at its peak while the announcements are held, and after they close;
the broker's CPU time while the announcers connect (per announcer); ApiVersions latency
percentiles on another connection meanwhile; and how each announcer is served: after the hold
every announcer sends ``--more`` bytes of its frame, and the broker's side of each connection
(/proc/net/tcp) tells whether the broker reads it (its receive queue empties: it took its frame's
size from ``queued.max.request.bytes``), mutes it (the bytes stay queued in the kernel) or closed it.

    python bench/announce.py                       # 1,000 x 100 MB, budget 256 MiB
    python bench/announce.py --budget -1           # no budget: only the lazy buffers
    python bench/announce.py --connections 50 --write
    python bench/announce.py --probe-in-process    # the bystander on the announcers' event loop

The bystander runs in a process of its own (blocking socket, nothing else to do), so that what it
measures is the broker: on the announcers' own event loop its latency also counted the client's
work between the broker's answer and the probe's resumption (opening connections, writing their
64 KiB, reading the broker's RSS), which is not the broker's. ``--probe-in-process`` keeps the old
arrangement for comparison.

Benchmarks, never tests: nothing here asserts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import select
import socket
import struct
import subprocess
import sys
import time
from collections import Counter
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


async def api_versions_latencies(host: str, port: int, until: asyncio.Event, gap_s: float) -> list[tuple[float, float]]:
    reader, writer = await asyncio.open_connection(host, port)
    latencies: list[tuple[float, float]] = []  # (sent at, seconds to the answer)
    correlation = 0
    while not until.is_set():
        correlation += 1
        frame = registry.encode_request(RequestHeader(18, 3, correlation, "bystander"), ApiVersionsRequest("b", "1"))
        t0 = time.perf_counter()
        writer.write(frame)
        (size,) = struct.unpack(">i", await reader.readexactly(4))
        await reader.readexactly(size)
        latencies.append((t0, time.perf_counter() - t0))
        await asyncio.sleep(gap_s)  # a benchmark's pacing, not synchronisation
    writer.close()
    return latencies


def probe_main(address: str, gap_s: float) -> None:
    """The bystander process: ApiVersions on one blocking connection every ``gap_s`` until a line
    arrives on stdin, then (sent at, seconds to the answer) pairs as JSON on stdout (perf_counter is
    CLOCK_MONOTONIC on Linux: the parent's clock too)."""
    host, port = address.rsplit(":", 1)
    sock = socket.create_connection((host, int(port)))
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    print("ready", flush=True)
    latencies: list[tuple[float, float]] = []
    correlation = 0
    while not select.select([sys.stdin], [], [], 0)[0]:
        correlation += 1
        frame = registry.encode_request(RequestHeader(18, 3, correlation, "bystander"), ApiVersionsRequest("b", "1"))
        t0 = time.perf_counter()
        sock.sendall(frame)
        (size,) = struct.unpack(">i", _recv_exactly(sock, 4))
        _recv_exactly(sock, size)
        latencies.append((t0, time.perf_counter() - t0))
        time.sleep(gap_s)  # a benchmark's pacing, not synchronisation
    sock.close()
    print(json.dumps(latencies), flush=True)


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            raise ConnectionError("broker closed the bystander's connection")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


class ProbeProcess:
    """``probe_main`` in a child process; ``stop()`` returns its latencies."""

    def __init__(self, host: str, port: int, gap_s: float) -> None:
        cmd = [sys.executable, __file__, "--probe-at", f"{host}:{port}", "--gap", str(gap_s)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError("the bystander process did not connect")

    async def stop(self) -> list[tuple[float, float]]:
        out, _ = await asyncio.to_thread(self.proc.communicate, "stop\n")
        return [(float(t), float(x)) for t, x in json.loads(out)]


def receive_queues(port: int) -> dict[int, tuple[int, int]]:
    """The broker's side of its connections on ``port``: client port -> (TCP state, receive queue)."""
    queues: dict[int, tuple[int, int]] = {}
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote, state, queue = fields[1], fields[2], int(fields[3], 16), fields[4]
        if int(local.split(":")[1], 16) == port and state != 0x0A:  # not the listener itself
            queues[int(remote.split(":")[1], 16)] = (state, int(queue.split(":")[1], 16))
    return queues


async def served(port: int, announcers: list[asyncio.StreamWriter], more: int) -> Counter[str]:
    """Send ``more`` bytes on every announcer, wait for the broker to read what it will, and say
    for each one whether it was read, left unread (muted) or closed."""
    chunk = bytes(more)
    for writer in announcers:
        writer.write(chunk)
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:  # a benchmark's settling time, not synchronisation
        await asyncio.sleep(0.1)
    queues = receive_queues(port)
    outcome: Counter[str] = Counter()
    for writer in announcers:
        local = writer.get_extra_info("sockname")[1]
        state, queued = queues.get(local, (0, 0))
        if writer.transport.is_closing() or state not in (0x01,):  # not ESTABLISHED: closed by the broker
            outcome["closed"] += 1
        else:
            outcome["muted (bytes left unread)" if queued else "read"] += 1
    return outcome


async def run(args: argparse.Namespace) -> dict[str, object]:
    extra = ["--set", f"queued.max.request.bytes={args.budget}"]
    if args.backlog is not None:
        extra += ["--set", f"socket.listen.backlog.size={args.backlog}"]
    broker = start_broker(MOCKBROKER, extra=extra)
    try:
        host, port = broker.address
        rss_start = broker.rss()
        stop = asyncio.Event()
        if args.probe_in_process:
            probe = asyncio.create_task(api_versions_latencies(host, port, stop, 0.005))
        else:
            bystander = ProbeProcess(host, port, 0.005)
        peak = rss_start
        announcers: list[asyncio.StreamWriter] = []
        chunk = bytes(args.sent)
        cpu0 = broker.cpu_s()
        t0 = time.perf_counter()
        for _ in range(args.connections):
            _, writer = await asyncio.open_connection(host, port)
            writer.write(struct.pack(">i", args.size) + chunk)
            announcers.append(writer)
            peak = max(peak, broker.rss())
        opened_s = time.perf_counter() - t0
        settle = time.monotonic() + 0.5  # the broker's reads of the last announcers
        while time.monotonic() < settle:
            await asyncio.sleep(0.05)
        burst_end = time.perf_counter()
        burst_cpu = broker.cpu_s() - cpu0
        hold_until = time.monotonic() + args.hold
        while time.monotonic() < hold_until:
            await asyncio.sleep(0.05)
            peak = max(peak, broker.rss())
        rss_held = broker.rss()
        stop.set()
        probed = await (probe if args.probe_in_process else bystander.stop())
        outcome = await served(port, announcers, args.more)
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
        "broker_cpu_s": burst_cpu,
        "broker_cpu_us_per_announcer": burst_cpu / max(1, args.connections) * 1e6,
        **latency_figures(probed, t0, burst_end),
        **{f"announcers {k}": v for k, v in sorted(outcome.items())},
    }


def latency_figures(probed: list[tuple[float, float]], burst_start: float, burst_end: float) -> dict[str, object]:
    """Percentiles of all probes, and apart: those sent during the burst (the announcers connecting,
    and 0.5 s after) and those of the hold that follows (announcers connected, sending nothing)."""
    everything = [x for _, x in probed]
    burst = [x for t, x in probed if burst_start <= t < burst_end]
    hold = [x for t, x in probed if t >= burst_end]
    return {
        "probes": len(everything),
        "p50_ms": percentile(everything, 0.5) * 1000,
        "p99_ms": percentile(everything, 0.99) * 1000,
        "max_ms": max(everything) * 1000,
        "burst_probes": len(burst),
        "burst_p99_ms": percentile(burst, 0.99) * 1000,
        "hold_p99_ms": percentile(hold, 0.99) * 1000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--size", type=int, default=100 * MB, help="announced frame size (bytes)")
    parser.add_argument("--sent", type=int, default=64 * 1024, help="bytes of each frame actually sent")
    parser.add_argument("--budget", type=int, default=256 * MB, help="queued.max.request.bytes (-1: none)")
    parser.add_argument("--more", type=int, default=128 * 1024, help="bytes each announcer sends after the hold")
    parser.add_argument(
        "--backlog", type=int, help="socket.listen.backlog.size (default: the broker's, Kafka's 50; earlier runs had 100)"
    )
    parser.add_argument("--hold", type=float, default=5.0, help="seconds the announcements are held")
    parser.add_argument("--write", action="store_true", help="append the result to bench/RESULTS.md")
    parser.add_argument("--probe-in-process", action="store_true", help="the bystander on the announcers' loop (the old way)")
    parser.add_argument("--probe-at", help=argparse.SUPPRESS)  # the bystander process itself
    parser.add_argument("--gap", type=float, default=0.005, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe_at:
        probe_main(args.probe_at, args.gap)
        return
    raise_nofile(args.connections + 256)
    result = asyncio.run(run(args))
    rows = [[k, f"{v:.2f}" if isinstance(v, float) else v] for k, v in result.items()]
    table = markdown_table(["measure", "value"], rows)
    print(table)
    if args.write:
        load = " ".join(f"{x:.2f}" for x in loadavg())
        where = "on the announcers' event loop" if args.probe_in_process else "in its own process"
        append_results(
            f"\n## Hostile frame announcements (bench/announce.py), "
            f"{time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}\n\n"
            f"{args.connections} connections each announce {args.size} bytes and send {args.sent}; "
            f"queued.max.request.bytes={args.budget}; socket.listen.backlog.size="
            f"{args.backlog if args.backlog is not None else 'default (50)'}; held {args.hold} s; bystander {where}; "
            f"load average {load}.\n\n{table}\n"
        )


if __name__ == "__main__":
    main()
