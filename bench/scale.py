"""Scenario 5, scale: memory with 1 GiB retained, 10,000 idle connections, a 500-member group.

- retained: confluent-kafka produces 1 GiB (16,384 x 64 KiB into 256 partitions: librdkafka's
  mock keeps at most 5 MiB per partition) and the broker's RSS is read before and after.
- idle connections: 10,000 sockets connect (RLIMIT_NOFILE raised here and, inherited, in the
  brokers); each sends one ApiVersions so it is a served connection, then stays idle. RSS growth
  per connection and the time to open them all.
- group: 500 raw-protocol members (bench/_rawclient.py, one connection each) join one group until
  all have synced the same generation (Stable); the time from the first JoinGroup.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _rawclient as rc
from _common import (
    BROKERS,
    MOCKBROKER,
    RDKAFKA,
    Run,
    broker,
    fmt,
    markdown_table,
    raise_nofile,
)

GIB = 1 << 30


def retained(kind: str, total: int) -> dict[str, Any]:
    from confluent_kafka import Producer

    size, partitions = 64 * 1024, 256
    with broker(kind, [f"big:{partitions}"]) as b:
        before = b.rss()
        p = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 5, "log_level": 3})
        payload = b"r" * size
        failed: list[Any] = []
        for i in range(total // size):
            while True:
                try:
                    p.produce("big", payload, partition=i % partitions,
                              on_delivery=lambda err, _m: failed.append(err) if err else None)  # fmt: skip
                    break
                except BufferError:
                    p.poll(0.01)
        if p.flush(300) != 0 or failed:
            raise RuntimeError(f"produce did not finish: {failed[:3]}")
        time.sleep(0.5)  # let the broker's allocator settle before reading RSS (a benchmark, not a test)
        after = b.rss()
    return {"rss_before_mb": before / 1e6, "rss_after_mb": after / 1e6, "rss_per_retained": (after - before) / total}


def idle_connections(kind: str, count: int, budget_s: float) -> dict[str, Any]:
    """Stops opening after ``budget_s`` (librdkafka's mock accepts slowly); reports how many."""
    request = rc.frame(rc.API_VERSIONS, rc.api_versions_request(), 1)
    with broker(kind) as b:
        before = b.rss()
        socks = []
        t0 = time.perf_counter()
        try:
            for _ in range(count):
                if time.perf_counter() - t0 > budget_s:
                    break
                s = socket.create_connection(b.address)
                s.sendall(request)
                socks.append(s)
            for s in socks:
                rc.read_frame(s)
            opened = time.perf_counter() - t0
            after = b.rss()
            # still serving: a fresh connection gets its answer
            t1 = time.perf_counter()
            rc.first_answer_s(b.address)
            answer_ms = (time.perf_counter() - t1) * 1e3
        finally:
            for s in socks:
                s.close()
    n = len(socks)
    return {"opened": n, "open_s": opened, "conn_per_s": n / opened, "rss_per_conn_kb": (after - before) / n / 1e3, "rss_with_conns_mb": after / 1e6,
            "fresh_answer_ms": answer_ms}  # fmt: skip


def big_group(kind: str, members: int) -> dict[str, Any]:
    with broker(kind, ["grp:64"], initial_rebalance_delay_ms=0) as b:

        async def go() -> float:
            _, took, conns = await rc.join_group(b.address, "big-group", members, "grp", 64, timeout_s=600)
            for _, w in conns:
                w.close()
            return took

        return {"stable_s": asyncio.run(go())}


def main(argv: list[str] | None = None) -> Run:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--retained-mb", type=int, default=1024)
    parser.add_argument("--connections", type=int, default=10_000)
    parser.add_argument("--members", type=int, default=500)
    parser.add_argument("--connect-budget-s", type=float, default=60.0)
    args = parser.parse_args(argv)
    limit = raise_nofile(args.connections * 2 + 1024)
    run = Run("scale", {**vars(args), "nofile": limit})
    for kind in BROKERS:
        row: dict[str, Any] = {"broker": kind}
        row.update(retained(kind, args.retained_mb * (1 << 20)))
        row.update(idle_connections(kind, min(args.connections, limit // 2 - 100), args.connect_budget_s))
        row.update(big_group(kind, args.members))
        run.rows.append(row)
        print(row, flush=True)
    return run.finish()


def markdown(run: Run) -> str:
    by = {r["broker"]: r for r in run.rows}
    p = run.params
    keys = [
        ("rss_after_mb", f"RSS MB with {p['retained_mb']} MiB retained"),
        ("rss_per_retained", "RSS growth / retained bytes"),
        ("opened", f"connections opened (of {p['connections']:,}, within {p['connect_budget_s']:.0f} s)"),
        ("conn_per_s", "connections opened (and answered) per s"),
        ("rss_per_conn_kb", "RSS KB per idle connection"),
        ("fresh_answer_ms", "ms for a new connection's ApiVersions with them open"),
        ("stable_s", f"s until {p['members']} raw members are Stable"),
    ]
    rows = [[label, fmt(by[MOCKBROKER][k]), fmt(by[RDKAFKA][k])] for k, label in keys if MOCKBROKER in by and RDKAFKA in by]
    return "### Scale (one run each)\n\n" + markdown_table(["what", "ours", "mock"], rows)


if __name__ == "__main__":
    print(markdown(main()))
