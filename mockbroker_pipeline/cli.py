"""``mockbroker analyze`` and ``mockbroker assignor-lab``: the Spark pipeline's commands.

mockbroker's own CLI hands these words over here, so that ``mockbroker serve`` never imports
pyspark. Exit status: 0 done; 1 the job failed (Spark, Java); 2 bad arguments or unreadable input.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from mockbroker_pipeline.jars import MissingJars

EXIT_USAGE = 2
GRIDS = ("small", "medium", "large")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", metavar="DIR", required=True, help="directory for the Parquet tables and report.html")
    parser.add_argument(
        "--master", metavar="URL",
        help="Spark master (default local[*]; e.g. spark://host:7077, yarn). Under spark-submit the session "
        "spark-submit made is used and this is ignored",
    )  # fmt: skip


def build_parser(command: str) -> argparse.ArgumentParser:
    if command == "analyze":
        parser = _Parser(
            prog="mockbroker analyze",
            description="Rebalance analytics over mockbroker event logs (JSON Lines, docs/events.md) on Spark: "
            "one row per (run, group, generation), per-group and per-run summaries, Parquet and report.html.",
        )
        parser.add_argument("events", nargs="*", metavar="EVENTS",
                            help="event-log files, directories (every *.jsonl below) or globs; one file per run")  # fmt: skip
        parser.add_argument(
            "--bootstrap", metavar="HOST:PORT",
            help="instead of files, stream the broker's __mockbroker_events topic (serve --events-topic) with "
            "Spark's Kafka source, updating the tables and report.html batch by batch",
        )  # fmt: skip
        parser.add_argument(
            "--events-partitions", metavar="N", type=int, default=1,
            help="with --bootstrap: the event topic's partition count (the broker's events_topic_partitions; default 1)",
        )  # fmt: skip
        parser.add_argument("--checkpoint", metavar="DIR", help="with --bootstrap: the query's checkpoint (default OUT/_checkpoint)")
        parser.add_argument(
            "--idle-timeout", metavar="SECONDS", type=float,
            help="with --bootstrap: stop once no event has arrived for this long (default: run until SIGINT/SIGTERM)",
        )  # fmt: skip
    elif command == "assignor-lab":
        parser = _Parser(
            prog="mockbroker assignor-lab",
            description="Run every registered assignor over a grid of scenarios on Spark executors; "
            "balance, movement and timing as Parquet and report.html.",
        )
        parser.add_argument("--grid", choices=GRIDS, default="small", help="scenario grid size (default: small)")
        parser.add_argument(
            "--assignor", metavar="NAME", dest="assignors", action="append", default=[],
            help="run only this assignor (repeatable): a client-side protocol name, 'NAME (KIP-848)' or "
            "server:NAME for a server-side one, or a module:attr reference (default: every registered assignor)",
        )  # fmt: skip
    else:
        raise ValueError(command)
    _common(parser)
    return parser


def main(argv: Sequence[str]) -> int:
    """``argv`` starts with the command word (``analyze`` or ``assignor-lab``)."""
    command, rest = argv[0], list(argv[1:])
    args = build_parser(command).parse_args(rest)
    try:
        return _run(command, args)
    except ValueError as exc:  # EventLogError, bad grids: the user's input
        print(f"mockbroker {command}: error: {exc}", file=sys.stderr, flush=True)
        return EXIT_USAGE
    except MissingJars as exc:  # Spark's Kafka source not fetched (make spark-kafka)
        print(f"mockbroker {command}: error: {exc}", file=sys.stderr, flush=True)
        return EXIT_USAGE
    except ImportError as exc:
        print(f"mockbroker {command}: error: {exc}; install mockbroker with its pipeline extra (pip install 'CHECKOUT[pipeline]'; README, Install)",
              file=sys.stderr, flush=True)  # fmt: skip
        return EXIT_USAGE


def _run(command: str, args: Any) -> int:
    if command == "analyze":
        if args.bootstrap is not None:
            if args.events:
                raise ValueError("give event-log files or --bootstrap, not both")
            from mockbroker_pipeline.stream import run as run_stream

            run_stream(args.bootstrap, args.out, args.master, checkpoint=args.checkpoint, idle_timeout_s=args.idle_timeout,
                       partitions=args.events_partitions)  # fmt: skip
            return 0
        if not args.events:
            raise ValueError("give event-log files (EVENTS) or --bootstrap HOST:PORT")
        from mockbroker_pipeline.analyze import run

        run(args.events, args.out, args.master)
    else:
        from mockbroker_pipeline.lab import run as run_lab

        run_lab(args.grid, args.out, args.master, assignors=args.assignors or None)
    return 0


def analyze(argv: Sequence[str]) -> int:
    """Rebalance analytics over event logs, on Spark.

    ``mockbroker analyze`` (entry point group ``mockbroker.commands``): ``argv[0]`` is the word."""
    return main(argv)


def assignor_lab(argv: Sequence[str]) -> int:
    """Run every assignor over a scenario grid, on Spark.

    ``mockbroker assignor-lab`` (entry point group ``mockbroker.commands``): ``argv[0]`` is the word."""
    return main(argv)

