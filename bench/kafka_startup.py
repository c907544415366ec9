"""Start-up of the real Apache Kafka the differential suite uses (mockbroker_conformance/kafka/launcher.py).

- cold: the jar cache (build/kafka/<version>) moved aside first, so the run includes Maven's copy
  (from the local ~/.m2 repository when it holds the jars; a fresh machine also downloads ~45 MB),
  then StorageTool format and the broker's start until it answers Metadata.
- cached: jars already there; format and start only (what each test session pays).
Repeats alternate; medians reported, and a section appended to bench/RESULTS.md unless --no-write.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mockbroker_conformance.kafka import launcher  # noqa: E402


def one(cold: bool) -> tuple[float, float]:
    """Seconds to fetch (0 when cached), seconds from start() to the first Metadata answer."""
    home = launcher.kafka_home()
    fetch_s = 0.0
    if cold:
        shutil.rmtree(home, ignore_errors=True)
        began = time.monotonic()
        launcher.fetch()
        fetch_s = time.monotonic() - began
    with launcher.running() as kafka:
        return fetch_s, kafka.started_s


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    cold: list[tuple[float, float]] = []
    cached: list[tuple[float, float]] = []
    for _ in range(args.repeats):
        cold.append(one(True))
        cached.append(one(False))
    rows = [
        ("cold (Maven copy + format + start)", statistics.median(f + s for f, s in cold),
         statistics.median(f for f, _ in cold)),
        ("jars cached (format + start)", statistics.median(s for _, s in cached), 0.0),
    ]  # fmt: skip
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    lines = [
        f"## Real Kafka start-up (launcher), {stamp}",
        "",
        f"Apache Kafka {launcher.KAFKA_VERSION} from jars (`bench/kafka_startup.py`, {args.repeats} repeats each, "
        "medians): from `launcher.start()` to the first Metadata answer, one KRaft node, -Xmx512m.",
        "",
        "| case | total (s) | of which Maven (s) |",
        "|---|---:|---:|",
        *(f"| {name} | {total:.2f} | {mvn:.2f} |" for name, total, mvn in rows),
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        with open(ROOT / "bench" / "RESULTS.md", "a") as results:
            results.write("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
