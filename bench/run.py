"""Runner for the broker benchmarks against librdkafka's mock cluster and the peers (issues #7, #17).

``python bench/run.py [--only startup,requests,...] [--quick] [--peers kfake,kafka] [--no-write]
[--args SCENARIO='--repeats 1 ...']``: runs each scenario
(bench/startup.py, rebalance.py, requests.py, data.py, scale.py), writes each run's JSON to
bench/out/ (git-ignored) and appends one dated Markdown section with every table, the machine,
versions and load averages to bench/RESULTS.md. ``--quick`` shortens every scenario (a smoke run;
its numbers are not for comparison). ``--peers`` (default: both) adds franz-go's kfake
(``make bench-peers``) and the real Kafka (``make kafka``) to the startup, requests, rebalance and
data scenarios, in the same run; ``--args`` replaces one scenario's arguments (a shorter run than
the full one that is still not --quick). Benchmarks, never tests: nothing asserts on speed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib
import shlex
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import PEERS, append_results, peer_list, raise_nofile, run_header, write_json

SCENARIOS = ("startup", "rebalance", "requests", "data", "scale")
# The scenarios the peers join (scale measures mockbroker's own limits against the mock only).
WITH_PEERS = ("startup", "rebalance", "requests", "data")
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
    parser.add_argument("--peers", default=",".join(PEERS), help="kfake and/or kafka, or '' for neither")
    parser.add_argument("--args", action="append", default=[], metavar="SCENARIO='ARGS'",
                        help="one scenario's own arguments, instead of its defaults (or --quick's)")  # fmt: skip
    args = parser.parse_args(argv)
    peers = peer_list(args.peers)
    own = {name: shlex.split(text) for name, _, text in (a.partition("=") for a in args.args)}
    raise_nofile(1 << 16)  # brokers inherit it (scale opens 10,000 connections)
    runs, sections = [], []
    for name in args.only.split(","):
        module = importlib.import_module(name)
        print(f"== {name}", flush=True)
        scenario_args = own.get(name, QUICK[name] if args.quick else [])
        if peers and name in WITH_PEERS:
            scenario_args = [*scenario_args, "--peers", ",".join(peers)]
        run = module.main(scenario_args)
        print(f"   JSON: {write_json(run)}", flush=True)
        runs.append(run)
        sections.append(module.markdown(run))
        print(sections[-1], flush=True)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    vs = "librdkafka's mock" + (", kfake and Kafka" if set(peers) == set(PEERS) else "".join(f", {p}" for p in peers))
    command = " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:]))
    text = (
        f"## Broker benchmark vs {vs}, {stamp}{' (quick run)' if args.quick else ''}\n\n"
        f"`python bench/run.py {command}` (`make bench-broker`); ours = mockbroker (`mockbroker serve`, uvloop), "
        "mock = librdkafka's mock cluster in its own process (bench/rdkafka_mock.py)"
        + ("; kfake = franz-go's fake cluster (bench/kfake, `make bench-peers`)" if "kfake" in peers else "")
        + ("; kafka = Apache Kafka, one KRaft node from jars (bench/kafka_peer.py)" if "kafka" in peers else "")
        + "; each broker in its own process, the client in another.\n\n" + run_header(runs) + "\n\n"
        + "\n\n".join(sections)
    )
    if not args.no_write:
        append_results(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
