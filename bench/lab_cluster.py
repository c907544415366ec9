"""The assignor lab's large grid on a Spark standalone cluster (a master and two one-core workers on
loopback, started from the installed PySpark's classes as tests/pipeline/standalone.py does) against
``local[1]``: the same scenarios, the same run, and the speed-up as the ratio of the two times.
Not a test.

    python bench/lab_cluster.py                # the whole large grid (168 scenarios x 6 assignors)
    python bench/lab_cluster.py --every 5      # every 5th scenario (quicker)
    python bench/lab_cluster.py --write        # also append a dated section to bench/RESULTS.md

Each master gets its own session (started, then a warm-up lab of the small grid's first four
scenarios so the Python workers and Parquet writers are up), then the timed lab writes its tables.
Session start-up is reported apart. The cluster has two executors of one core each against
``local[1]``'s one core: on a machine whose two cores are shared with other work the ratio stays
well below 2, and it is what this machine gave, not a property of the job.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RESULTS_PATH = Path(__file__).with_name("RESULTS.md")


def measure(master: str, scenarios: list[Any], out: Path) -> dict[str, float]:
    """Session start-up and the timed lab on ``master`` (after a warm-up)."""
    from mockbroker_pipeline.lab import lab
    from mockbroker_pipeline.scenarios import grid
    from mockbroker_pipeline.session import get_session

    started = time.perf_counter()
    spark = get_session(master, {"spark.sql.shuffle.partitions": "4", "spark.default.parallelism": "4"})
    startup = time.perf_counter() - started
    try:
        lab(spark, grid("small")[:4], str(out / "warm"))
        started = time.perf_counter()
        result = lab(spark, scenarios, str(out / "lab"))
        lab_s = time.perf_counter() - started
        rows = result.steps.count()
    finally:
        spark.stop()
    return {"startup_s": startup, "lab_s": lab_s, "rows": float(rows)}


def section(every: int, scenarios: int, runs: int, local: dict[str, float], cluster: dict[str, float]) -> str:
    from bench.pipeline import cpu, versions

    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    speedup = local["lab_s"] / cluster["lab_s"]
    which = "the whole large grid" if every == 1 else f"one scenario in {every} of the large grid"
    return "\n".join([
        f"## Assignor lab, large grid: standalone cluster vs local[1], {when}",
        "",
        f"- `python bench/lab_cluster.py --every {every}`: {which}, "
        f"{scenarios} scenarios x every registered assignor = {runs} runs, {int(local['rows'])} `lab_steps` rows "
        "(the same on both masters)",
        f"- {versions()}",
        f"- CPU: {cpu()}",
        "",
        "| master | session start-up (s) | lab (s) |",
        "|---|---|---|",
        f"| local[1] | {local['startup_s']:.1f} | {local['lab_s']:.1f} |",
        f"| standalone, 2 workers x 1 core | {cluster['startup_s']:.1f} | {cluster['lab_s']:.1f} |",
        "",
        f"Speed-up of the standalone cluster over local[1]: **{speedup:.2f}x** (local[1] time / cluster time, same run).",
        "",
    ])  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--every", type=int, default=1, help="take every Nth scenario of the large grid (default 1: all)")
    ap.add_argument("--write", action="store_true", help=f"append a dated section to {RESULTS_PATH.name}")
    args = ap.parse_args(argv)

    from mockbroker_pipeline.scenarios import assignor_names, grid
    from tests.pipeline.standalone import standalone_cluster

    # The executors run this interpreter; everything stays on loopback (as tests/pipeline/test_standalone.py).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    scenarios = grid("large")[:: args.every]
    runs = len(scenarios) * len(assignor_names())
    print(f"{len(scenarios)} scenarios of the large grid x {len(assignor_names())} assignors = {runs} runs", flush=True)
    with tempfile.TemporaryDirectory(prefix="lab-cluster-") as tmp:
        work = Path(tmp)
        local = measure("local[1]", scenarios, work / "local")
        print(f"local[1]: {local}", flush=True)
        with standalone_cluster(work) as master:
            cluster = measure(master, scenarios, work / "cluster")
        print(f"standalone: {cluster}", flush=True)
    if local["rows"] != cluster["rows"]:
        raise SystemExit(f"the two masters gave different lab_steps row counts: {local['rows']} and {cluster['rows']}")
    text = section(args.every, len(scenarios), runs, local, cluster)
    text += f"Load average (1, 5, 15 min) at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())} (the machine's other work).\n"
    print(text)
    if args.write:
        with RESULTS_PATH.open("a") as results:
            results.write("\n" + text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
