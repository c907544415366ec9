"""``mockbroker conformance``: run the suite against a target, print the matrix, write its files.

Exit status: 0 when no cell failed, 1 when one did, 2 for bad usage or clients that cannot run here.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from mockbroker_conformance.model import FAIL, CellResult, Matrix

DEFAULT_OUT = Path("build") / "conformance"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mockbroker conformance",
        description="Run the conformance scenarios with real clients (kafka-python, aiokafka, confluent-kafka "
        "classic and group.protocol=consumer, kcat, kafkajs, sarama 1.22 and the newest, the Java client and franz-go, "
        "classic and KIP-848) against a broker, and print the matrix.",
        allow_abbrev=False,
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--target", choices=("mockbroker", "rdkafka-mock", "kafka"), default="mockbroker",
                       help="an embedded mockbroker per scenario run (default, with the client audit), librdkafka's mock "
                            "cluster, or a real Apache Kafka started for the run (`make kafka` fetches it; no faults)")  # fmt: skip
    where.add_argument("--bootstrap", metavar="HOST:PORT", help="any Kafka-compatible broker (fault scenarios: not supported)")
    parser.add_argument("--clients", metavar="A,B", help="comma-separated client names (default: all); --list shows them")
    parser.add_argument("--scenarios", metavar="X,Y", help="comma-separated scenario ids (default: all)")
    parser.add_argument("--jobs", type=int, default=4, metavar="N", help="scenario runs at a time (default: 4)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, metavar="DIR",
                        help=f"where matrix.md, matrix.json and matrix.html go (default: {DEFAULT_OUT})")  # fmt: skip
    parser.add_argument("--update-readme", nargs="?", const=Path("README.md"), type=Path, metavar="PATH",
                        help="rewrite the compatibility table of README.md (or PATH) from this run")  # fmt: skip
    parser.add_argument("--list", action="store_true", help="list clients and scenarios, then exit")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    return parser


def main(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    from mockbroker_conformance import report
    from mockbroker_conformance.clients import CLIENTS
    from mockbroker_conformance.runner import UnavailableClients, run_suite
    from mockbroker_conformance.scenarios import SCENARIOS

    if args.list:
        for name, spec in CLIENTS.items():
            missing = spec.missing()
            print(f"client   {name}{'' if missing is None else f'  (cannot run here: needs {missing})'}")
        for s in SCENARIOS:
            print(f"scenario {s.id}: {s.title}")
        return 0

    def progress(cell: CellResult) -> None:
        if not args.quiet:
            print(f"{cell.status:>13}  {cell.client:<26} {cell.scenario:<24} {cell.duration_s:5.1f}s  {cell.detail[:160]}",
                  file=sys.stderr, flush=True)  # fmt: skip

    try:
        matrix = run_suite(
            args.target, bootstrap=args.bootstrap, jobs=args.jobs, progress=progress,
            clients=args.clients.split(",") if args.clients else None,
            scenarios=args.scenarios.split(",") if args.scenarios else None,
        )  # fmt: skip
    except (UnavailableClients, ValueError) as exc:
        print(f"mockbroker conformance: error: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(report.markdown(matrix))
    stem = "matrix" if args.bootstrap is None and args.target == "mockbroker" else f"matrix-{'bootstrap' if args.bootstrap else args.target}"
    for path in report.write_all(matrix, args.out, stem):
        print(f"wrote {path}", file=sys.stderr)
    if args.update_readme is not None:
        pair = _readme_pair(matrix, args.out, args.target if args.bootstrap is None else "bootstrap")
        if pair is None:
            print(f"mockbroker conformance: error: --update-readme with --target kafka needs mockbroker's run in {args.out}/matrix.json",
                  file=sys.stderr)  # fmt: skip
            return 2
        changed = report.update_readme(args.update_readme, *pair)
        print(f"{args.update_readme}: compatibility table {'updated' if changed else 'unchanged'}"
              f"{'' if pair[1] else ' (no Kafka run in ' + str(args.out) + '/matrix-kafka.json: no reference column)'}", file=sys.stderr)  # fmt: skip
    return 1 if any(c.status == FAIL for c in matrix.cells) else 0


def _readme_pair(matrix: Matrix, out: Path, target: str) -> tuple[Matrix, Matrix | None] | None:
    """The README's table is mockbroker's matrix with Kafka's as its reference: this run is one of
    the two, the other is read from its files in ``out`` (the last run against that target)."""

    def load(stem: str) -> Matrix | None:
        path = out / f"{stem}.json"
        return Matrix.from_json(json.loads(path.read_text())) if path.is_file() else None

    if target == "kafka":
        ours = load("matrix")
        return None if ours is None else (ours, matrix)
    return matrix, load("matrix-kafka")


def command(argv: Sequence[str]) -> int:
    """Run the client conformance suite (mockbroker conformance --help).

    ``mockbroker conformance`` (entry point group ``mockbroker.commands``): ``argv[0]`` is the word."""
    return main(argv[1:])

