"""Scenario 2, rebalance: N confluent-kafka consumers join a 64-partition topic, then one leaves.

All N consumers live in this process (librdkafka runs each on its own threads; this thread polls
them in turn). Timed: from the first ``subscribe`` until every partition is owned exactly once and
every consumer owns at least one ("fully assigned"); then one consumer ``close()``s (LeaveGroup)
and the time until the remaining consumers own every partition exactly once again ("settled").
Ownership is read from each consumer's own ``assignment()``, i.e. what the clients believe.

Broker settings: ``defaults`` (ours: group.initial.rebalance.delay.ms 0; the mock: 3000) and
``delay 0`` (both at 0). Client settings, identical on both: session.timeout.ms 6000,
heartbeat.interval.ms 3000 (librdkafka's default), the assignor under test; "consumer" rows run
KIP-848 groups (group.protocol=consumer, the broker's assignor and heartbeat interval: ours 100 ms,
the mock's 3 s), under the defaults only. The classic protocol
tells members of a rebalance only in heartbeat answers, so after a leave the remaining members
learn of it within one heartbeat interval; librdkafka's mock additionally waits out
session.timeout.ms - 1 s before completing a join phase that follows a membership change.

``--peers kfake,kafka`` adds franz-go's kfake (no initial rebalance delay at all; KIP-848
heartbeat interval 5 s) and the real Kafka (defaults: its own 3000 ms delay and 5 s KIP-848
heartbeat interval; "delay0": 0 ms), each in the same alternation.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
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

TOPIC = "rebalance"
PARTITIONS = 64
CLIENT = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 3000}
# An "assignor" of this name (optionally "consumer(uniform)") runs the group with group.protocol=consumer
# (KIP-848) on both brokers, each at its own defaults (heartbeat interval: ours 100 ms, the mock's 3 s).
CONSUMER_PROTOCOL = "consumer"


def _owned(consumers: list[Any]) -> tuple[bool, bool]:
    """(every partition owned exactly once, every consumer owns something)."""
    seen: list[int] = []
    everyone = True
    for c in consumers:
        parts = [tp.partition for tp in c.assignment()]
        everyone = everyone and bool(parts)
        seen += parts
    return len(seen) == PARTITIONS and len(set(seen)) == PARTITIONS, everyone


def _until(consumers: list[Any], want_everyone: bool, timeout_s: float) -> float:
    t0 = time.perf_counter()
    while True:
        for c in consumers:
            c.poll(0)
        exact, everyone = _owned(consumers)
        if exact and (everyone or not want_everyone):
            return time.perf_counter()
        if time.perf_counter() - t0 > timeout_s:
            raise TimeoutError(f"not assigned after {timeout_s} s")
        time.sleep(0.002)


def one(b: BrokerProcess, n: int, assignor: str, timeout_s: float = 120.0) -> dict[str, float]:
    from confluent_kafka import Consumer

    group = f"g-{uuid.uuid4().hex[:8]}"
    conf: dict[str, Any] = {"bootstrap.servers": b.bootstrap, "group.id": group, "enable.auto.commit": False,
                            "log_level": 3}  # fmt: skip
    if assignor.startswith(CONSUMER_PROTOCOL):
        # KIP-848: the broker assigns (group.remote.assignor) and paces heartbeats itself; the
        # classic session, heartbeat and assignor settings do not apply to such a member.
        conf["group.protocol"] = "consumer"
        remote = assignor[len(CONSUMER_PROTOCOL) :].strip("()")
        if remote:
            conf["group.remote.assignor"] = remote
    else:
        conf.update({"partition.assignment.strategy": assignor, **CLIENT})
    consumers = [Consumer(conf) for _ in range(n)]
    try:
        t0 = time.perf_counter()
        for c in consumers:
            c.subscribe([TOPIC])
        assigned = _until(consumers, True, timeout_s) - t0
        leaver = consumers.pop()
        t1 = time.perf_counter()
        leaver.close()
        settled = _until(consumers, True, timeout_s) - t1
    finally:
        for c in consumers:
            c.close()
    return {"assigned_s": assigned, "settled_after_leave_s": settled}


def main(argv: list[str] | None = None) -> Run:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--members", default="1,10,50")
    parser.add_argument("--assignors", default="range,cooperative-sticky,consumer",
                        help="classic assignors, and/or consumer[(ASSIGNOR)] for KIP-848 groups")  # fmt: skip
    parser.add_argument("--settings", default="defaults,delay0")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--heartbeat-ms", type=int, default=CLIENT["heartbeat.interval.ms"],
                        help="the consumers' heartbeat.interval.ms (librdkafka's default: 3000)")  # fmt: skip
    parser.add_argument("--peers", default="", help="also kfake and/or kafka (comma-separated)")
    args = parser.parse_args(argv)
    kinds = [*BROKERS, *peer_list(args.peers)]
    CLIENT["heartbeat.interval.ms"] = args.heartbeat_ms
    run = Run("rebalance", {**vars(args), "client": dict(CLIENT), "partitions": PARTITIONS})
    samples: dict[tuple[str, str, int, str], list[dict[str, float]]] = {}
    for setting in args.settings.split(","):
        delay = None if setting == "defaults" else 0
        procs: dict[str, BrokerProcess] = {}
        try:
            for k in kinds:
                procs[k] = start_broker(k, [f"{TOPIC}:{PARTITIONS}"], initial_rebalance_delay_ms=delay)
            for rep in range(args.repeats):
                for assignor in args.assignors.split(","):
                    if assignor.startswith(CONSUMER_PROTOCOL) and setting != "defaults":
                        continue  # group.initial.rebalance.delay.ms applies to classic groups only
                    for n in (int(x) for x in args.members.split(",")):
                        for kind in kinds if rep % 2 == 0 else kinds[::-1]:
                            if n == 1:
                                r = one(procs[kind], 2, assignor)  # one joins alone, then a second leaves
                                r = {"assigned_s": r["assigned_s"], "settled_after_leave_s": r["settled_after_leave_s"]}
                            else:
                                r = one(procs[kind], n, assignor)
                            samples.setdefault((setting, assignor, n, kind), []).append(r)
                            print(setting, rep, assignor, n, kind, {k: round(v, 3) for k, v in r.items()}, flush=True)
        finally:
            for p in procs.values():
                p.stop()
    for (setting, assignor, n, kind), rs in samples.items():
        if kind != MOCKBROKER:
            continue
        theirs = samples[(setting, assignor, n, RDKAFKA)]
        row: dict[str, Any] = {"settings": setting, "assignor": assignor, "members": n}
        for k in ("assigned_s", "settled_after_leave_s"):
            row[f"ours_{k}"] = median([r[k] for r in rs])
            row[f"mock_{k}"] = median([r[k] for r in theirs])
            row[f"ratio_{k}"] = median([ratio(a[k], b[k]) for a, b in zip(rs, theirs, strict=True)])
        row["samples"] = {"ours": rs, "mock": theirs}
        for peer in kinds[len(BROKERS) :]:
            got = samples[(setting, assignor, n, peer)]
            for k in ("assigned_s", "settled_after_leave_s"):
                row[f"{peer}_{k}"] = median([r[k] for r in got])
                row[f"ratio_{peer}_{k}"] = median([ratio(a[k], b[k]) for a, b in zip(rs, got, strict=True)])
            row["samples"][peer] = got
        run.rows.append(row)
    return run.finish()


def markdown(run: Run) -> str:
    return _markdown_mock(run) + "".join("\n\n" + _markdown_peer(run, peer) for peer in peer_list(run.params.get("peers", "")))


def _markdown_peer(run: Run, peer: str) -> str:
    label = LABELS[peer]
    rows = [[r["settings"], r["assignor"], r["members"], fmt(r["ours_assigned_s"]), fmt(r[f"{peer}_assigned_s"]),
             f"**{fmt(r[f'ratio_{peer}_assigned_s'])}x**", fmt(r["ours_settled_after_leave_s"]),
             fmt(r[f"{peer}_settled_after_leave_s"]), f"**{fmt(r[f'ratio_{peer}_settled_after_leave_s'])}x**"]
            for r in run.rows]  # fmt: skip
    return f"#### Rebalance, ours vs {label} (same runs)\n\n" + markdown_table(
        ["broker settings", "assignor", "members", "ours assigned s", f"{label} assigned s", f"ours/{label}",
         "ours settled s", f"{label} settled s", f"ours/{label}"],
        rows,
    )  # fmt: skip


def _markdown_mock(run: Run) -> str:
    rows = [[r["settings"], r["assignor"], r["members"], fmt(r["ours_assigned_s"]), fmt(r["mock_assigned_s"]),
             f"**{fmt(r['ratio_assigned_s'])}x**", fmt(r["ours_settled_after_leave_s"]), fmt(r["mock_settled_after_leave_s"]),
             f"**{fmt(r['ratio_settled_after_leave_s'])}x**"] for r in run.rows]  # fmt: skip
    return (
        f"### Rebalance ({run.params['repeats']} alternating repeats; {PARTITIONS} partitions; client "
        f"session.timeout.ms {run.params['client']['session.timeout.ms']}, "
        f"heartbeat.interval.ms {run.params['client']['heartbeat.interval.ms']}; "
        "members 1 = one joins, a second joins and leaves; consumer = KIP-848, each broker's own heartbeat interval)\n\n"
        + markdown_table(
            ["broker settings", "assignor", "members", "ours assigned s", "mock assigned s", "ours/mock",
             "ours settled s", "mock settled s", "ours/mock"],
            rows,
        )
    )


if __name__ == "__main__":
    print(markdown(main()))
