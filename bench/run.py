"""Runner for the broker benchmarks against librdkafka's mock cluster (issue #7).

``python bench/run.py [--only startup,requests,...] [--quick] [--no-write]``: runs each scenario
(bench/startup.py, rebalance.py, requests.py, data.py, scale.py), writes each run's JSON to
bench/out/ (git-ignored) and appends one dated Markdown section with every table, the machine,
versions and load averages to bench/RESULTS.md. ``--quick`` shortens every scenario (a smoke run;
its numbers are not for comparison). Benchmarks, never tests: nothing asserts on speed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import append_results, raise_nofile, run_header, write_json

SCENARIOS = ("startup", "rebalance", "requests", "data", "scale")
QUICK = {
    "startup": ["--repeats", "3"],
    "rebalance": ["--repeats", "1", "--members", "1,10", "--settings", "defaults"],
    "requests": ["--repeats", "1", "--seconds", "1", "--connections", "1,8"],
    "data": ["--repeats", "1", "--scale", "0.1"],
    "scale": ["--retained-mb", "64", "--connections", "500", "--members", "50", "--connect-budget-s", "10"],
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(SCENARIOS))
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-write", action="store_true", help="do not append to bench/RESULTS.md")
    args = parser.parse_args(argv)
    raise_nofile(1 << 16)  # brokers inherit it (scale opens 10,000 connections)
    runs, sections = [], []
    for name in args.only.split(","):
        module = importlib.import_module(name)
        print(f"== {name}", flush=True)
        run = module.main(QUICK[name] if args.quick else [])
        print(f"   JSON: {write_json(run)}", flush=True)
        runs.append(run)
        sections.append(module.markdown(run))
        print(sections[-1], flush=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    text = (
        f"## Broker benchmark vs librdkafka's mock, {stamp}{' (quick run)' if args.quick else ''}\n\n"
        "`python bench/run.py` (`make bench-broker`); ours = mockbroker (`mockbroker serve`, uvloop), "
        "mock = librdkafka's mock cluster in its own process (bench/rdkafka_mock.py); each broker in its "
        "own process, the client in a third.\n\n" + run_header(runs) + "\n\n" + "\n\n".join(sections)
    )
    if not args.no_write:
        append_results(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
