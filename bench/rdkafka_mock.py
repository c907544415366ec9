"""librdkafka's mock cluster as a stand-alone process, the peer every broker benchmark compares with.

confluent-kafka's wheel bundles librdkafka, and its mock cluster (rdkafka_mock.h) is exported from
that shared object; the ctypes binding is mockbroker_conformance/rdkafka_mock.py (``MockCluster``),
shared with the conformance suite. The mock serves on its own thread.

Run as a script it prints ``MOCK READY bootstrap=HOST:PORT[,...]`` once serving (the same shape as
mockbroker's READY line) and serves until stdin closes or a signal arrives.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path

# The ctypes binding lives in the package (the conformance suite's second target); loaded by path so
# that this process does not import mockbroker (the startup benchmark times it).
_spec = importlib.util.spec_from_file_location(
    "_rdkafka_mock", Path(__file__).resolve().parents[1] / "mockbroker_conformance" / "rdkafka_mock.py"
)
assert _spec is not None and _spec.loader is not None
_binding = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_binding)
MockCluster = _binding.MockCluster
librdkafka_path = _binding.librdkafka_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brokers", type=int, default=1)
    parser.add_argument("--topic", action="append", default=[], metavar="NAME:PARTITIONS")
    parser.add_argument("--initial-rebalance-delay-ms", type=int, default=None,
                        help="group.initial.rebalance.delay.ms (the mock's default: 3000)")  # fmt: skip
    args = parser.parse_args(argv)
    cluster = MockCluster(args.brokers)
    for spec in args.topic:
        name, _, partitions = spec.partition(":")
        cluster.create_topic(name, int(partitions or 1))
    if args.initial_rebalance_delay_ms is not None:
        cluster.set_initial_rebalance_delay_ms(args.initial_rebalance_delay_ms)
    sys.stdout.write(f"MOCK READY bootstrap={cluster.bootstrap_servers}\n")
    sys.stdout.flush()
    # Serve until whoever started us closes our stdin (or signals us).
    try:
        while os.read(0, 4096):
            pass
    except KeyboardInterrupt:
        pass
    os._exit(0)  # the mock's threads need no orderly stop; a destroy can take a second or more


if __name__ == "__main__":
    sys.exit(main())
