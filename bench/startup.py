"""Scenario 1, startup: from process launch to the first answered ApiVersions, and in-process start.

- process: launch ``mockbroker serve --port 0`` (ours) or bench/rdkafka_mock.py (a Python process
  that loads librdkafka through ctypes and starts its mock cluster: the same interpreter start-up
  cost on both sides), read the READY line for the port, connect, send ApiVersions v2, time its
  answer. Cold means a fresh process each time (bytecode already compiled: ``make bytecode``).
- in-process: inside this already-warm interpreter, ``MockCluster(...).start()`` until a client
  gets an ApiVersions answer, vs ``rd_kafka_mock_cluster_new`` until the same. Each client runs on
  a thread that exists before the clock starts (the mock's: the main thread; ours: one started
  once, as the broker's loop holds the main thread).
Repeats alternate between the brokers; medians and the median of per-repeat ratios are reported.

``--peers kfake,kafka`` adds the process row for franz-go's kfake (a Go binary: no interpreter to
start) and the real Kafka (bench/kafka_peer.py: a Python launcher, StorageTool format, the JVM's
start, until Metadata answers; ``--kafka-repeats``, as each start takes seconds). Their ratios are
ours' median over theirs. Neither has an in-process form here.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _rawclient as rc
from _common import (
    BROKERS,
    COMMANDS,
    KAFKA,
    LABELS,
    MOCKBROKER,
    RDKAFKA,
    ROOT,
    Run,
    broker_env,
    fmt,
    markdown_table,
    median,
    peer_list,
    ratio,
)


def process_start(kind: str) -> float:
    cmd = COMMANDS[kind]()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT, env=broker_env(kind))
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        bootstrap = dict(f.split("=", 1) for f in line.split()[2:])["bootstrap"]
        host, port = bootstrap.split(",")[0].rsplit(":", 1)
        return rc.first_answer_s((host, int(port))) - t0
    finally:
        proc.terminate()
        proc.wait()


# The in-process client of our broker: a thread started once, before any timing. The mock's client
# runs on the main thread, which exists already; ours cannot (the broker's loop runs there), and
# asyncio.to_thread would time a new thread pool and its thread's start on every repeat, a cost of
# this harness rather than of either broker.
_CLIENT_THREAD = ThreadPoolExecutor(1, thread_name_prefix="startup-client")


def in_process_start(kind: str) -> float:
    if kind == MOCKBROKER:
        from mockbroker.cluster import MockCluster

        _CLIENT_THREAD.submit(lambda: None).result()  # started before t0

        async def go() -> float:
            t0 = time.perf_counter()
            cluster = await MockCluster(port=0).start()
            node = next(iter(cluster.brokers.values()))
            loop = asyncio.get_running_loop()
            answered = await loop.run_in_executor(_CLIENT_THREAD, rc.first_answer_s, (node.host, node.port))
            await cluster.stop()
            return answered - t0

        return asyncio.run(go())
    from rdkafka_mock import MockCluster as RdMock

    t0 = time.perf_counter()
    mock = RdMock(1)
    host, port = mock.bootstrap_servers.split(",")[0].rsplit(":", 1)
    answered = rc.first_answer_s((host, int(port)))
    mock.destroy()
    return answered - t0


def main(argv: list[str] | None = None) -> Run:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--peers", default="", help="also kfake and/or kafka (comma-separated)")
    parser.add_argument("--kafka-repeats", type=int, default=3, help="repeats of the real Kafka's start")
    args = parser.parse_args(argv)
    peers = peer_list(args.peers)
    run = Run("startup", vars(args))
    samples: dict[tuple[str, str], list[float]] = {}
    for what, fn in (("process launch to first answer", process_start), ("in-process start to first answer", in_process_start)):
        for kind in BROKERS:  # one unmeasured warm-up each (page cache, .pyc)
            fn(kind)
        for rep in range(args.repeats):
            for kind in BROKERS if rep % 2 == 0 else BROKERS[::-1]:
                samples.setdefault((what, kind), []).append(fn(kind))
        ours, theirs = samples[(what, MOCKBROKER)], samples[(what, RDKAFKA)]
        row = {
            "what": what, "ours_s": median(ours), "mock_s": median(theirs),
            "ratio": median([ratio(a, b) for a, b in zip(ours, theirs, strict=True)]),
            "ours_samples": ours, "mock_samples": theirs,
        }  # fmt: skip
        if fn is process_start:
            for peer in peers:
                fn(peer)  # warm-up
                got = [fn(peer) for _ in range(min(args.repeats, args.kafka_repeats) if peer == KAFKA else args.repeats)]
                row[f"{peer}_s"], row[f"{peer}_samples"] = median(got), got
                row[f"ratio_{peer}"] = ratio(row["ours_s"], row[f"{peer}_s"])
                print(what, peer, fmt(row[f"{peer}_s"]), flush=True)
        run.rows.append(row)
        print(run.rows[-1]["what"], fmt(run.rows[-1]["ours_s"]), fmt(run.rows[-1]["mock_s"]), flush=True)
    return run.finish()


def markdown(run: Run) -> str:
    peers = peer_list(run.params.get("peers", ""))
    rows = []
    for r in run.rows:
        row = [r["what"], fmt(r["ours_s"] * 1e3), fmt(r["mock_s"] * 1e3), f"**{fmt(r['ratio'])}x**",
               "yes" if r["ratio"] <= 1.0 else "no"]  # fmt: skip
        for peer in peers:
            has = f"{peer}_s" in r
            row += [fmt(r[f"{peer}_s"] * 1e3) if has else "-", f"**{fmt(r[f'ratio_{peer}'])}x**" if has else "-"]
        rows.append(row)
    headers = ["what", "ours ms", "mock ms", "ours / mock", "<= 1.0x"]
    for peer in peers:
        headers += [f"{LABELS[peer]} ms", f"ours / {LABELS[peer]}"]
    note = f"; {LABELS[KAFKA]}: {run.params['kafka_repeats']} repeats" if KAFKA in peers else ""
    return f"### Startup (median of {run.params['repeats']} alternating repeats{note})\n\n" + markdown_table(
        headers, rows
    )


if __name__ == "__main__":
    print(markdown(main()))
