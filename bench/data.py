"""Scenario 4, data: confluent-kafka produces, then consumes, through either broker.

Two workloads: 200,000 x 100 B and 20,000 x 10 KiB messages into a 64-partition topic (a fresh
topic per sample). 64 partitions because librdkafka's mock keeps at most 5 MiB (and 100,000
messages) per partition and drops older batches: 205 MB in 8 partitions could never be read back. Produce: from the first ``produce()`` to ``flush()`` returning, every message
acknowledged (acks=all, librdkafka's defaults otherwise, linger.ms 5). Consume: a consumer assigned
every partition from the beginning (no group rebalance in the timing; fetch.queue.backoff.ms 10, see
produce_consume) until it has every message.
Reported: payload MB/s each way and the broker process's CPU seconds per MB (from /proc). The two
brokers alternate within each repeat; the ratios are medians of per-repeat ratios.
``--peers kfake,kafka`` adds franz-go's kfake and the real Kafka (its CPU: the Java process's;
its log on disk in a temporary directory, as Kafka keeps it).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

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
    ratio,
    start_broker,
)

PARTITIONS = 64
WORKLOADS = {"200,000 x 100 B": (200_000, 100), "20,000 x 10 KiB": (20_000, 10 * 1024)}


def produce_consume(b: BrokerProcess, topic: str, count: int, size: int) -> dict[str, Any]:
    from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

    payload = b"x" * size
    producer = Producer({"bootstrap.servers": b.bootstrap, "linger.ms": 5, "acks": "all"})
    producer.list_topics(topic, timeout=10)  # connect and learn leaders before timing
    failed = []

    def on_delivery(err: Any, _msg: Any) -> None:
        if err is not None:
            failed.append(err)

    cpu0, t0 = b.cpu_s(), time.perf_counter()
    for i in range(count):
        while True:
            try:
                producer.produce(topic, payload, partition=i % PARTITIONS, on_delivery=on_delivery)
                break
            except BufferError:
                producer.poll(0.005)
    if producer.flush(120) != 0 or failed:
        raise RuntimeError(f"produce failed: {failed[:3]} ({len(failed)} errors)")
    produce_s, produce_cpu = time.perf_counter() - t0, b.cpu_s() - cpu0

    # fetch.queue.backoff.ms (librdkafka >= 2.4, default 1000): once the client's own queue holds
    # queued.max.messages.kbytes (64 MiB), it stops fetching for that long. A Fetch answered up to
    # fetch.max.bytes (50 MiB, as Kafka and mockbroker answer; librdkafka's mock returns one batch per
    # partition) fills it in one or two answers, so at the default the 10 KiB consume time came out
    # as whole seconds of client sleep (2.8 s, 1.8 s or 0.8 s for either broker, run to run) rather
    # than broker work. 10 ms on both brokers' consumers keeps the client fetching.
    consumer = Consumer({"bootstrap.servers": b.bootstrap, "group.id": f"{topic}-reader", "enable.auto.commit": False,
                         "fetch.wait.max.ms": 10, "fetch.queue.backoff.ms": 10})  # fmt: skip
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(PARTITIONS)])
    got = 0
    cpu0, t0 = b.cpu_s(), time.perf_counter()
    deadline = time.monotonic() + 120
    while got < count:
        msgs = consumer.consume(10000, 1.0)
        for m in msgs:
            if m.error() is None:
                got += 1
        if time.monotonic() > deadline:
            raise RuntimeError(f"consumed {got} of {count}")
    consume_s, consume_cpu = time.perf_counter() - t0, b.cpu_s() - cpu0
    consumer.close()
    mb = count * size / 1e6
    return {
        "produce_mb_s": mb / produce_s, "consume_mb_s": mb / consume_s,
        "produce_cpu_s_per_mb": produce_cpu / mb, "consume_cpu_s_per_mb": consume_cpu / mb,
        "produce_s": produce_s, "consume_s": consume_s,
    }  # fmt: skip


def main(argv: list[str] | None = None) -> Run:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the message counts (quick runs)")
    parser.add_argument("--peers", default="", help="also kfake and/or kafka (comma-separated)")
    args = parser.parse_args(argv)
    kinds = [*BROKERS, *peer_list(args.peers)]
    run = Run("data", vars(args))
    topics = [f"data-{w}-{r}:{PARTITIONS}" for w in range(len(WORKLOADS)) for r in range(args.repeats)]
    samples: dict[tuple[str, str], list[dict[str, Any]]] = {}
    procs: dict[str, BrokerProcess] = {}
    try:
        for k in kinds:
            procs[k] = start_broker(k, topics)
        for rep in range(args.repeats):
            for w, (name, (count, size)) in enumerate(WORKLOADS.items()):
                for kind in kinds if rep % 2 == 0 else kinds[::-1]:
                    r = produce_consume(procs[kind], f"data-{w}-{rep}", max(1, int(count * args.scale)), size)
                    samples.setdefault((name, kind), []).append(r)
                    print(rep, name, kind, {k: round(v, 4) for k, v in r.items()}, flush=True)
    finally:
        for p in procs.values():
            p.stop()
    keys = ("produce_mb_s", "consume_mb_s", "produce_cpu_s_per_mb", "consume_cpu_s_per_mb")
    for name in WORKLOADS:
        ours, theirs = samples[(name, MOCKBROKER)], samples[(name, RDKAFKA)]
        row: dict[str, Any] = {"workload": name}
        for k in keys:
            row[f"ours_{k}"] = median([s[k] for s in ours])
            row[f"mock_{k}"] = median([s[k] for s in theirs])
            row[f"ratio_{k}"] = median([ratio(a[k], b[k]) for a, b in zip(ours, theirs, strict=True)])
        row["samples"] = {"ours": ours, "mock": theirs}
        for peer in kinds[len(BROKERS) :]:
            got = samples[(name, peer)]
            for k in keys:
                row[f"{peer}_{k}"] = median([s[k] for s in got])
                row[f"ratio_{peer}_{k}"] = median([ratio(a[k], b[k]) for a, b in zip(ours, got, strict=True)])
            row["samples"][peer] = got
        run.rows.append(row)
    return run.finish()


def markdown(run: Run) -> str:
    return _markdown_mock(run) + "".join("\n\n" + _markdown_peer(run, peer) for peer in peer_list(run.params.get("peers", "")))


def _markdown_peer(run: Run, peer: str) -> str:
    label = LABELS[peer]
    rows = []
    for r in run.rows:
        for way in ("produce", "consume"):
            rows.append([
                r["workload"], way, fmt(r[f"ours_{way}_mb_s"]), fmt(r[f"{peer}_{way}_mb_s"]),
                f"**{fmt(r[f'ratio_{peer}_{way}_mb_s'])}x**", fmt(r[f"ours_{way}_cpu_s_per_mb"]),
                fmt(r[f"{peer}_{way}_cpu_s_per_mb"]), f"**{fmt(r[f'ratio_{peer}_{way}_cpu_s_per_mb'])}x**",
            ])  # fmt: skip
    return f"#### Data, ours vs {label} (same runs)\n\n" + markdown_table(
        ["workload", "way", "ours MB/s", f"{label} MB/s", f"MB/s ours/{label}", "ours CPU s/MB", f"{label} CPU s/MB",
         f"CPU/MB ours/{label}"],
        rows,
    )  # fmt: skip


def _markdown_mock(run: Run) -> str:
    rows = []
    for r in run.rows:
        for way in ("produce", "consume"):
            rows.append([
                r["workload"], way, fmt(r[f"ours_{way}_mb_s"]), fmt(r[f"mock_{way}_mb_s"]),
                f"**{fmt(r[f'ratio_{way}_mb_s'])}x**", fmt(r[f"ours_{way}_cpu_s_per_mb"]), fmt(r[f"mock_{way}_cpu_s_per_mb"]),
                f"**{fmt(r[f'ratio_{way}_cpu_s_per_mb'])}x**",
            ])  # fmt: skip
    scale = run.params["scale"]
    return (
        f"### Data ({run.params['repeats']} alternating repeats{'' if scale == 1 else f', counts x {scale}'}; "
        f"{PARTITIONS} partitions, acks=all, linger.ms 5)\n\n"
        + markdown_table(
            ["workload", "way", "ours MB/s", "mock MB/s", "MB/s ours/mock", "ours CPU s/MB", "mock CPU s/MB", "CPU/MB ours/mock"],
            rows,
        )
    )


if __name__ == "__main__":
    print(markdown(main()))
