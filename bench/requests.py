"""Scenario 3, requests: a pipelined raw-protocol client against either broker, in its own process.

For each request type (ApiVersions v2, Metadata v12 for one 8-partition topic, Heartbeat v4 of a
real member of a Stable group) and each connection count (1, 8, 64), the client keeps ``--window``
requests in flight on every connection (frames built ahead of time by our codec, one write per
refill) for ``--seconds``, after a warm-up. Reported: requests/s, p50/p99 latency (send of a
request to the arrival of its whole response; the window's queueing is part of it, the same for
both brokers), and the broker's CPU seconds per 1,000 requests (from /proc, the broker being its
own process). Brokers alternate within each repeat; the ratio is the median of per-repeat ratios.
``--peers kfake,kafka`` adds franz-go's kfake and the real Kafka (its CPU: the Java process's).
"""

from __future__ import annotations

import argparse
import asyncio
import selectors
import socket
import struct
import sys
import time
from collections import deque
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _rawclient as rc
from _common import (
    BROKERS,
    LABELS,
    MOCKBROKER,
    RDKAFKA,
    BrokerProcess,
    Run,
    fmt,
    markdown_table,
    median,
    peer_list,
    percentile,
    ratio,
    start_broker,
)

TOPIC = "bench-requests"
GROUP = "bench-requests-group"
_SIZE = struct.Struct(">i")


def pipelined(address: tuple[str, int], request_frame: bytes, connections: int, window: int, seconds: float,
              warmup: float) -> dict[str, Any]:  # fmt: skip
    """Run the closed-loop pipelined client; returns counts and latencies of the measured part."""
    sel = selectors.DefaultSelector()
    socks = []
    for _ in range(connections):
        s = socket.create_connection(address)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        socks.append(s)
    state: dict[int, tuple[socket.socket, deque[float], bytearray]] = {}
    now = time.perf_counter
    batch = {k: request_frame * k for k in range(1, window + 1)}
    for s in socks:
        q: deque[float] = deque()
        state[s.fileno()] = (s, q, bytearray())
        t = now()
        s.sendall(batch[window])
        q.extend([t] * window)
        sel.register(s, selectors.EVENT_READ)
    latencies: list[float] = []
    done = 0
    start = now()
    measure_from = start + warmup
    end = measure_from + seconds
    measuring = False
    count_at_start = 0
    while True:
        t = now()
        if not measuring and t >= measure_from:
            measuring, count_at_start, measure_t0 = True, done, t
        if t >= end:
            break
        for key, _ in sel.select(1.0):
            s, q, buf = state[key.fd]
            data = s.recv(1 << 20)
            if not data:
                raise ConnectionError("broker closed a connection")
            buf += data
            pos, n, got = 0, len(buf), 0
            t = now()
            while n - pos >= 4:
                size = _SIZE.unpack_from(buf, pos)[0]
                if n - pos - 4 < size:
                    break
                pos += 4 + size
                sent = q.popleft()
                if measuring:
                    latencies.append(t - sent)
                got += 1
            if pos:
                del buf[:pos]
            if got:
                done += got
                s.sendall(batch[got])
                q.extend([t] * got)
    elapsed = now() - measure_t0
    for s in socks:
        sel.unregister(s)
        s.close()
    count = done - count_at_start
    return {
        "requests": count,
        "seconds": elapsed,
        "rps": count / elapsed,
        "p50_ms": percentile(latencies, 0.50) * 1e3,
        "p99_ms": percentile(latencies, 0.99) * 1e3,
    }


def request_frames(b: BrokerProcess) -> dict[str, bytes]:
    members, _, conns = asyncio.run(_setup_group(b))
    del conns
    return {
        "ApiVersions": rc.frame(rc.API_VERSIONS, rc.api_versions_request(), 7),
        "Metadata": rc.frame(rc.METADATA, rc.metadata_request(TOPIC), 7),
        "Heartbeat": rc.frame(rc.HEARTBEAT, rc.heartbeat_request(GROUP, members[0]), 7),
    }


async def _setup_group(b: BrokerProcess) -> tuple[list[rc.Member], float, list[Any]]:
    # One member with a long session: the benchmark's heartbeats keep it alive, and nothing else joins.
    members, took, conns = await rc.join_group(b.address, GROUP, 1, TOPIC, 8, session_timeout_ms=300000)
    for _, writer in conns:
        writer.close()
    return members, took, conns


def main(argv: list[str] | None = None) -> Run:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", default="1,8,64")
    parser.add_argument("--requests", default="ApiVersions,Metadata,Heartbeat")
    parser.add_argument("--window", type=int, default=16, help="requests in flight per connection")
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--warmup", type=float, default=0.5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--brokers", default=",".join(BROKERS))
    parser.add_argument("--peers", default="", help="also kfake and/or kafka (comma-separated)")
    args = parser.parse_args(argv)
    conn_counts = [int(c) for c in args.connections.split(",")]
    kinds = args.brokers.split(",") + peer_list(args.peers)
    names = args.requests.split(",")
    run = Run("requests", vars(args))
    procs = {k: start_broker(k, [f"{TOPIC}:8"], initial_rebalance_delay_ms=0) for k in kinds}
    try:
        frames = {k: request_frames(p) for k, p in procs.items()}
        samples: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
        for rep in range(args.repeats):
            for name in names:
                for conns in conn_counts:
                    order = kinds if rep % 2 == 0 else kinds[::-1]
                    for kind in order:
                        p = procs[kind]
                        cpu0 = p.cpu_s()
                        r = pipelined(p.address, frames[kind][name], conns, args.window, args.seconds, args.warmup)
                        r["cpu_s"] = p.cpu_s() - cpu0
                        # CPU covers warm-up too: scale to the requests of the whole interval.
                        r["cpu_ms_per_1k"] = r["cpu_s"] / (r["rps"] * (args.seconds + args.warmup)) * 1e6
                        samples.setdefault((name, kind, conns), []).append(r)
                        print(f"rep {rep} {name:11} {conns:3} conn {kind:16} {r['rps']:10,.0f} req/s "
                              f"p50 {r['p50_ms']:.3f} ms p99 {r['p99_ms']:.3f} ms cpu {r['cpu_ms_per_1k']:.3f} ms/1k",
                              flush=True)  # fmt: skip
    finally:
        for p in procs.values():
            p.stop()
    for (name, kind, conns), rs in samples.items():
        run.rows.append({
            "request": name, "broker": kind, "connections": conns, "window": args.window,
            "rps": median([r["rps"] for r in rs]), "p50_ms": median([r["p50_ms"] for r in rs]),
            "p99_ms": median([r["p99_ms"] for r in rs]), "cpu_ms_per_1k": median([r["cpu_ms_per_1k"] for r in rs]),
            "samples": rs,
        })  # fmt: skip
    others = [k for k in kinds if k != MOCKBROKER] if MOCKBROKER in kinds else []
    for other in others:
        for name in names:
            for conns in conn_counts:
                ours, theirs = samples[(name, MOCKBROKER, conns)], samples[(name, other, conns)]
                run.rows.append({
                    # "ratio" (vs librdkafka's mock) keeps the name earlier runs' JSON used.
                    "request": name, "broker": "ratio" if other == RDKAFKA else f"ratio:{other}", "connections": conns,
                    "rps": median([ratio(a["rps"], b["rps"]) for a, b in zip(ours, theirs, strict=True)]),
                    "p99_ms": median([ratio(a["p99_ms"], b["p99_ms"]) for a, b in zip(ours, theirs, strict=True)]),
                    "cpu_ms_per_1k": median([ratio(a["cpu_ms_per_1k"], b["cpu_ms_per_1k"]) for a, b in zip(ours, theirs, strict=True)]),
                })  # fmt: skip
    return run.finish()


def markdown(run: Run) -> str:
    return _markdown_mock(run) + "".join("\n\n" + _markdown_peer(run, peer) for peer in peer_list(run.params.get("peers", "")))


def _markdown_peer(run: Run, peer: str) -> str:
    """ours vs one peer: req/s, p99 and CPU side by side with their ratios."""
    by = {(r["request"], r["broker"], r["connections"]): r for r in run.rows}
    label = LABELS[peer]
    rows = []
    for (name, broker, conns), r in by.items():
        if broker != MOCKBROKER or (name, peer, conns) not in by:
            continue
        m, q = by[(name, peer, conns)], by[(name, f"ratio:{peer}", conns)]
        rows.append([
            name, conns, fmt(r["rps"]), fmt(m["rps"]), f"**{fmt(q['rps'])}x**", fmt(r["p99_ms"]), fmt(m["p99_ms"]),
            f"**{fmt(q['p99_ms'])}x**", fmt(r["cpu_ms_per_1k"]), fmt(m["cpu_ms_per_1k"]), f"**{fmt(q['cpu_ms_per_1k'])}x**",
        ])  # fmt: skip
    return f"#### Requests, ours vs {label} (same runs)\n\n" + markdown_table(
        ["request", "conns", "ours req/s", f"{label} req/s", f"req/s ours/{label}", "ours p99 ms", f"{label} p99 ms",
         f"p99 ours/{label}", "ours CPU ms/1k req", f"{label} CPU ms/1k req", f"CPU ours/{label}"],
        rows,
    )  # fmt: skip


def _markdown_mock(run: Run) -> str:
    by = {(r["request"], r["broker"], r["connections"]): r for r in run.rows}
    rows = []
    for (name, broker, conns), r in by.items():
        if broker != MOCKBROKER:
            continue
        m = by.get((name, RDKAFKA, conns))
        q = by.get((name, "ratio", conns))
        rows.append([
            name, conns, fmt(r["rps"]), fmt(m["rps"]) if m else "-", f"**{fmt(q['rps'])}x**" if q else "-",
            fmt(r["p50_ms"]), fmt(m["p50_ms"]) if m else "-", fmt(r["p99_ms"]), fmt(m["p99_ms"]) if m else "-",
            f"**{fmt(q['p99_ms'])}x**" if q else "-", fmt(r["cpu_ms_per_1k"]), fmt(m["cpu_ms_per_1k"]) if m else "-",
        ])  # fmt: skip
    p = run.params
    return (
        f"### Requests ({p['repeats']} interleaved repeats x {p['seconds']} s after {p['warmup']} s warm-up; "
        f"{p['window']} in flight per connection)\n\n"
        + markdown_table(
            ["request", "conns", "ours req/s", "mock req/s", "req/s ours/mock", "ours p50 ms", "mock p50 ms",
             "ours p99 ms", "mock p99 ms", "p99 ours/mock", "ours CPU ms/1k req", "mock CPU ms/1k req"],
            rows,
        )
    )


if __name__ == "__main__":
    result = main()
    print(markdown(result))
