"""Spark pipeline benchmark: assignor-lab scenarios per second on local[1] vs local[2], and event-log
rows per second for the rebalance analytics job. Not a test.

    python bench/pipeline.py            # full run, prints the table
    python bench/pipeline.py --quick    # small inputs, one repeat
    python bench/pipeline.py --write    # also append a dated section to bench/RESULTS.md

The lab runs the ``medium`` grid (every scenario through every registered assignor: one *run* is a
(scenario, assignor) pair) and writes its Parquet tables; the analytics job reads event logs made
here by the real group coordinator on a ManualClock (``tests/mockbroker/coordinators/groups_support.Harness``:
groups forming, members joining, leaving and rejoining, offsets committed), one file per run, and
writes its four tables. Each repeat starts a Spark session per master (interleaved), runs a warm-up job so the Python
workers are up, then times the lab and the analytics job; session start-up is reported apart (it
is not in the rates). Figures are medians over the repeats. The scaling figure is local[2] / local[1] for the same
work in the same run: on a machine whose two cores are shared with other work it stays well below 2.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RESULTS_PATH = Path(__file__).with_name("RESULTS.md")
MASTERS = ("local[1]", "local[2]")


def make_event_logs(directory: Path, runs: int, groups: int) -> int:
    """``runs`` JSON Lines files of ``groups`` groups each, recorded by the coordinator; returns rows."""
    from tests.mockbroker.coordinators.groups_support import Harness, assignment

    rows = 0
    for run in range(runs):
        path = directory / f"run-{run:03d}.jsonl"
        h = Harness(events_path=str(path))
        for g in range(groups):
            group = f"g{g:04d}"
            ids = h.stable_group(group, members=3)
            h.advance(50)
            # A fourth member joins; everyone rejoins; the leader hands out four partitions each.
            newcomer = h.join_new(group, client_id="c3")
            for m in ids:
                h.join(group, m)
            joined = newcomer.result()
            members = [*ids, joined.member_id]
            h.advance(20)
            h.sync(group, joined.leader, joined.generation_id,
                   {m: assignment(t=list(range(i * 4, i * 4 + 4))) for i, m in enumerate(members)})  # fmt: skip
            h.commit(group, {("t", p): 100 + p for p in range(4)}, generation=joined.generation_id, member_id=members[0])
            h.advance(1000)
            h.leave(group, members[1])  # one leaves; the rest follow when they are done
            h.advance(30)
            h.leave(group, *[m for m in members if m != members[1]])
        h.cluster.events.close()
        rows += sum(1 for _ in path.open())
    return rows


def timed(fn: Callable[[], Any]) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def measure_once(master: str, scenarios: list[Any], logs: Path, out: Path) -> dict[str, float]:
    """One repeat on ``master``: a session, a warm-up, the lab and the analytics job, timed apart."""
    from mockbroker_pipeline.analyze import analyze
    from mockbroker_pipeline.lab import lab
    from mockbroker_pipeline.session import get_session

    started = time.perf_counter()
    spark = get_session(master, {"spark.sql.shuffle.partitions": "4", "spark.default.parallelism": "4"})
    startup = time.perf_counter() - started
    try:
        lab(spark, scenarios[:4], str(out / "warm-lab"))  # warm-up: Python workers, Parquet writers
        analyze(spark, [str(sorted(logs.glob("*.jsonl"))[0])], str(out / "warm-analysis"))
        lab_s = timed(lambda: lab(spark, scenarios, str(out / "lab")))
        analytics_s = timed(lambda: analyze(spark, [str(logs)], str(out / "analysis")))
    finally:
        spark.stop()
    return {"startup_s": startup, "lab_s": lab_s, "analytics_s": analytics_s}


def versions() -> str:
    import pandas
    import pyarrow
    import pyspark

    java = os.popen("java -version 2>&1").read().splitlines()
    return (f"Python {platform.python_version()}; pyspark {pyspark.__version__}; pandas {pandas.__version__}; "
            f"pyarrow {pyarrow.__version__}; Java: {java[0] if java else 'unknown'}")  # fmt: skip


def cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()} ({os.cpu_count()} logical CPUs)"
    except OSError:
        pass
    return f"{platform.processor() or platform.machine()} ({os.cpu_count()} logical CPUs)"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small grid and logs, one repeat")
    ap.add_argument("--write", action="store_true", help=f"append a dated section to {RESULTS_PATH.name}")
    args = ap.parse_args(argv)

    from mockbroker_pipeline.scenarios import assignor_names, grid

    load_before = os.getloadavg()
    scenarios = grid("small" if args.quick else "medium")
    repeats = 1 if args.quick else 3
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-pipeline-") as tmp:
        logs = Path(tmp) / "logs"
        logs.mkdir()
        rows = make_event_logs(logs, runs=4 if args.quick else 20, groups=20 if args.quick else 100)
        # Repeats interleave the masters (the JVM stays up; a session restarts in well under a
        # second), so load that comes and goes from other work hits both alike.
        runs: dict[str, list[dict[str, float]]] = {m: [] for m in MASTERS}
        for _ in range(repeats):
            for m in MASTERS:
                runs[m].append(measure_once(m, scenarios, logs, Path(tmp) / m.strip("]").replace("[", "-")))
    results = {m: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for m, rs in runs.items()}
    ratios = {k: statistics.median(a[k] / b[k] for a, b in zip(runs[MASTERS[0]], runs[MASTERS[1]], strict=True))
              for k in ("lab_s", "analytics_s")}  # fmt: skip
    pairs = len(scenarios) * len(assignor_names())
    load_after = os.getloadavg()
    lines = [
        f"## Spark pipeline, {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M:%S} UTC ({'quick' if args.quick else 'full'} run)",
        "",
        f"- {versions()}",
        f"- CPU: {cpu()}; load average (1/5/15 min) before: {' / '.join(f'{x:.2f}' for x in load_before)}; "
        f"after: {' / '.join(f'{x:.2f}' for x in load_after)}",
        "- the machine is shared with other developers' builds and tests while this runs: the absolute rates move "
        "with their load; the local[2] / local[1] ratio is the figure to read, and even it is bounded by what the "
        "other work leaves of the two cores",
        f"- lab: the {'small' if args.quick else 'medium'} grid, {len(scenarios)} scenarios x every registered "
        f"assignor = {pairs} runs (scenario, assignor), Parquet written; analytics: {rows} event-log rows "
        f"in {4 if args.quick else 20} files, four tables written; median of "
        f"{repeats} interleaved repeat(s); whole benchmark {time.perf_counter() - began:.0f} s",
        "",
        "| master | session start (s)* | lab (s) | lab runs/s | analytics (s) | event rows/s |",
        "|---|---|---|---|---|---|",
    ]
    for m in MASTERS:
        r = results[m]
        lines.append(f"| {m} | {r['startup_s']:.1f} | {r['lab_s']:.2f} | {pairs / r['lab_s']:.0f} | "
                     f"{r['analytics_s']:.2f} | {rows / r['analytics_s']:.0f} |")  # fmt: skip
    lines += [
        "",
        "\\* median; the first session of the run also starts the JVM, later ones reuse it.",
        "",
        f"Scaling local[2] / local[1] (median of the per-repeat ratios): lab {ratios['lab_s']:.2f}x, "
        f"analytics {ratios['analytics_s']:.2f}x.",
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        existing = RESULTS_PATH.read_text() if RESULTS_PATH.exists() else ""
        lead = "" if not existing or existing.endswith("\n\n") else ("\n" if existing.endswith("\n") else "\n\n")
        with RESULTS_PATH.open("a") as f:
            f.write(lead + text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
