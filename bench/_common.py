"""Shared parts of the broker benchmarks (bench/startup.py ... bench/scale.py, bench/run.py).

- Start a broker in its own process and learn its bootstrap address: mockbroker through
  ``mockbroker serve --port 0``, librdkafka's mock cluster through bench/rdkafka_mock.py (ctypes on
  the librdkafka that confluent-kafka's wheel bundles), and the peers: kfake (franz-go's fake
  cluster, bench/kfake built by ``make bench-peers``) and the real Kafka (bench/kafka_peer.py, the
  jars of ``make kafka``). Each prints one READY line on stdout.
- Read a process's CPU seconds and RSS from /proc (Linux; the benchmarks target it).
- Record the machine: versions, CPU, load average (the machine is shared: every result carries it).
- Write JSON to bench/out/ and append Markdown sections to bench/RESULTS.md.

Benchmarks, never tests: nothing here asserts on speed.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
OUT_DIR = BENCH_DIR / "out"
RESULTS = BENCH_DIR / "RESULTS.md"
PYTHON = sys.executable
MOCKBROKER = "mockbroker"
RDKAFKA = "librdkafka-mock"
BROKERS = (MOCKBROKER, RDKAFKA)
KFAKE = "kfake"
KAFKA = "kafka"
# The peers bench/run.py adds to the startup, requests, rebalance and data scenarios (--peers).
PEERS = (KFAKE, KAFKA)
# Short column names in the Markdown tables.
LABELS = {MOCKBROKER: "ours", RDKAFKA: "mock", KFAKE: "kfake", KAFKA: "kafka"}
KFAKE_BINARY = ROOT / "build" / "bench-peers" / "kfake"
_CLK_TCK = os.sysconf("SC_CLK_TCK")
_PAGE = os.sysconf("SC_PAGE_SIZE")


# -- processes -------------------------------------------------------------------------------------


def mockbroker_command(topics: Sequence[str] = (), extra: Sequence[str] = ()) -> list[str]:
    exe = shutil.which("mockbroker", path=str(Path(PYTHON).parent)) or "mockbroker"
    cmd = [exe, "serve", "--port", "0", "--log-level", "warning"]
    for t in topics:
        cmd += ["--topic", t]
    return cmd + list(extra)


def rdkafka_command(topics: Sequence[str] = (), extra: Sequence[str] = ()) -> list[str]:
    cmd = [PYTHON, str(BENCH_DIR / "rdkafka_mock.py")]
    for t in topics:
        cmd += ["--topic", t]
    return cmd + list(extra)


def kfake_command(topics: Sequence[str] = (), extra: Sequence[str] = ()) -> list[str]:
    if not KFAKE_BINARY.exists():
        raise FileNotFoundError(f"{KFAKE_BINARY} is missing: run `make bench-peers`")
    cmd = [str(KFAKE_BINARY)]
    for t in topics:
        cmd += ["--topic", t]
    return cmd + list(extra)


def kafka_command(topics: Sequence[str] = (), extra: Sequence[str] = ()) -> list[str]:
    cmd = [PYTHON, str(BENCH_DIR / "kafka_peer.py")]
    for t in topics:
        cmd += ["--topic", t]
    return cmd + list(extra)


def broker_env(kind: str, env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: ours) without the Kafka launcher's MOCKBROKER_KAFKA_* variables except for
    Kafka itself: ``mockbroker serve`` warns of every MOCKBROKER_* variable it does not know."""
    base = os.environ if env is None else env
    return {k: v for k, v in base.items() if kind == KAFKA or not k.startswith("MOCKBROKER_KAFKA")}


COMMANDS = {MOCKBROKER: mockbroker_command, RDKAFKA: rdkafka_command, KFAKE: kfake_command, KAFKA: kafka_command}


def peer_list(text: str) -> list[str]:
    """The --peers argument: a comma-separated subset of PEERS ("" for none)."""
    peers = [p for p in text.split(",") if p]
    unknown = set(peers) - set(PEERS)
    if unknown:
        raise SystemExit(f"unknown peers {sorted(unknown)}; known: {', '.join(PEERS)}")
    return peers


@dataclass
class BrokerProcess:
    """A broker in its own process; ``bootstrap`` from its READY line. Stop with ``stop()``.

    ``server_pid`` is the process doing the broker's work when the READY line names another
    (bench/kafka_peer.py's Java child); CPU and RSS are read from it."""

    kind: str
    proc: subprocess.Popen[str]
    bootstrap: str
    started_s: float  # launch to READY line
    server_pid: int | None = None

    @property
    def pid(self) -> int:
        return self.server_pid or self.proc.pid

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.bootstrap.split(",")[0].rsplit(":", 1)
        return host, int(port)

    def cpu_s(self) -> float:
        return process_cpu_s(self.pid)

    def rss(self) -> int:
        return process_rss(self.pid)

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close() if self.proc.stdin else None
            # Closing stdin asks for a stop; Kafka's orderly shutdown takes seconds.
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(30 if self.kind == KAFKA else 0)
            self.proc.terminate()
            try:
                self.proc.wait(30 if self.kind == KAFKA else 10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_broker(
    kind: str,
    topics: Sequence[str] = (),
    *,
    initial_rebalance_delay_ms: int | None = None,
    extra: Sequence[str] = (),
    env: dict[str, str] | None = None,
) -> BrokerProcess:
    """Launch ``kind`` (one of BROKERS or PEERS) with ``topics`` ("name:partitions"), wait for READY.

    ``initial_rebalance_delay_ms`` None leaves each broker at its own default (ours 0, librdkafka's
    mock and Kafka 3000, kfake has none); a number sets group.initial.rebalance.delay.ms."""
    args = list(extra)
    if initial_rebalance_delay_ms is not None:
        if kind == MOCKBROKER:
            args += ["--set", f"group.initial.rebalance.delay.ms={initial_rebalance_delay_ms}"]
        else:
            args += ["--initial-rebalance-delay-ms", str(initial_rebalance_delay_ms)]
    cmd = COMMANDS[kind](topics, args)
    env = broker_env(kind, env)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env, bufsize=1
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    started = time.perf_counter() - t0
    if "READY" not in line:
        proc.kill()
        raise RuntimeError(f"{kind} did not start: {line!r} (exit {proc.wait()})")
    fields = dict(f.split("=", 1) for f in line.split()[2:] if "=" in f)
    server_pid = int(fields["pid"]) if "pid" in fields else None
    return BrokerProcess(kind, proc, fields["bootstrap"], started, server_pid)


@contextlib.contextmanager
def broker(kind: str, topics: Sequence[str] = (), **kwargs: Any) -> Iterator[BrokerProcess]:
    b = start_broker(kind, topics, **kwargs)
    try:
        yield b
    finally:
        b.stop()


def process_cpu_s(pid: int) -> float:
    """utime + stime of every thread of ``pid`` so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


def process_rss(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * _PAGE


def raise_nofile(want: int) -> int:
    """Raise RLIMIT_NOFILE's soft limit towards ``want`` (up to the hard limit); the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if target > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


# -- numbers ---------------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ratio(ours: float, theirs: float) -> float:
    return ours / theirs if theirs else float("nan")


def fmt(x: float | None, digits: int = 3) -> str:
    if x is None or x != x:
        return "-"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}"


# -- the machine -----------------------------------------------------------------------------------


def loadavg() -> tuple[float, float, float]:
    return os.getloadavg()


def _cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _git_head() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "mockbroker", "mockbroker_protocol"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()  # fmt: skip
        return out + (" (modified)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine() -> dict[str, Any]:
    import confluent_kafka

    info: dict[str, Any] = {
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "confluent_kafka": confluent_kafka.version()[0],
        "librdkafka": confluent_kafka.libversion()[0],
        "cpu": f"{_cpu_model()} ({os.cpu_count()} logical CPUs)",
        "platform": platform.platform(),
        "mockbroker_head": _git_head(),
    }
    with contextlib.suppress(ImportError):
        import importlib.metadata

        info["uvloop"] = importlib.metadata.version("uvloop")
    info["kfake"] = next((line.split()[-1] for line in (BENCH_DIR / "kfake" / "go.mod").read_text().splitlines()
                          if "franz-go/pkg/kfake " in line), "unknown")  # fmt: skip
    info["kafka"] = next((line.split('"')[1] for line in (ROOT / "mockbroker_conformance" / "kafka" / "launcher.py")
                          .read_text().splitlines() if line.startswith("KAFKA_VERSION")), "unknown")  # fmt: skip
    return info


@dataclass
class Run:
    """One scenario's run: what it measured and under which conditions."""

    scenario: str
    params: dict[str, Any] = field(default_factory=dict)
    load_before: tuple[float, float, float] = field(default_factory=loadavg)
    started_utc: str = field(default_factory=lambda: _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"))
    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    load_after: tuple[float, float, float] | None = None
    elapsed_s: float = 0.0
    _t0: float = field(default_factory=time.perf_counter)

    def finish(self) -> Run:
        self.load_after = loadavg()
        self.elapsed_s = time.perf_counter() - self._t0
        return self

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "started_utc": self.started_utc,
            "machine": machine(),
            "params": self.params,
            "load_before": self.load_before,
            "load_after": self.load_after,
            "elapsed_s": self.elapsed_s,
            "rows": self.rows,
            "notes": self.notes,
        }


def write_json(run: Run, path: Path | None = None) -> Path:
    OUT_DIR.mkdir(exist_ok=True)
    if path is None:
        stamp = _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        path = OUT_DIR / f"{run.scenario}-{stamp}.json"
    path.write_text(json.dumps(run.to_json(), indent=2, default=str) + "\n")
    return path


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def run_header(runs: Sequence[Run]) -> str:
    m = machine()
    first, last = runs[0], runs[-1]
    la = lambda t: " / ".join(f"{x:.2f}" for x in t) if t else "-"  # noqa: E731
    return "\n".join(
        [
            f"- machine: {m['cpu']}, {m['platform']}",
            f"- {m['python']}; mockbroker HEAD {m['mockbroker_head']}; uvloop {m.get('uvloop', '-')}; "
            f"confluent-kafka {m['confluent_kafka']}; librdkafka {m['librdkafka']}; "
            f"kfake {m['kfake']}; Apache Kafka {m['kafka']}",
            f"- load average (1/5/15 min) before: {la(first.load_before)}; after: {la(last.load_after)}",
        ]
    )


def append_results(markdown: str) -> None:
    with RESULTS.open("a") as f:
        f.write("\n" + markdown.rstrip() + "\n")
