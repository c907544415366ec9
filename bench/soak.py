"""Soak (issue #19, "must show" 2): a ``mockbroker serve`` of three brokers under mixed load, client
kills and faults for a configurable time, sampled as it goes.

Load: idempotent confluent-kafka producers (threads) on topic ``soak``; consumers in separate
processes, half in a classic group, half in a KIP-848 consumer group, committing as they go; an
admin thread creating and deleting topics. Every ``--kill-every`` seconds a random consumer
process is SIGKILLed and replaced; every ``--fault-every`` seconds a fault comes through the HTTP
control API, in turn: every connection closed, a broker taken down (and brought up two seconds
later), a partition's leader moved.

Sampled every ``--sample-every`` seconds: the broker process's RSS, open descriptors and threads,
its established TCP connections, ApiVersions latency (p50/p99 of 20 on a fresh connection), and
the broker bugs counter of /metrics. Checked at the end: every acknowledged record is in the log
(the end offsets add up to the acknowledged count: none lost, none doubled), no committed offset
moved backwards between samples, no broker bug.

    python bench/soak.py --minutes 30 --write     # the issue's run
    python bench/soak.py --minutes 2              # a short look

Benchmarks, never tests: nothing here asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import (
    PYTHON,
    append_results,
    loadavg,
    markdown_table,
    mockbroker_command,
    percentile,
    process_rss,
)
from mockbroker_protocol import registry
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest

TOPIC, PARTITIONS = "soak", 6
GROUPS = {"classic": "soak-classic", "consumer": "soak-consumer"}


# -- the broker ---------------------------------------------------------------------------------------


def start_serve() -> tuple[subprocess.Popen[str], str, str]:
    # Retention keeps the log (and so RSS) bounded: Kafka deletes by size every
    # log.retention.check.interval.ms (5 minutes), so RSS is a saw-tooth with that period.
    extra = ["--brokers", "3", "--admin-port", "0", "--set", "log.retention.bytes=8388608"]
    cmd = mockbroker_command([f"{TOPIC}:{PARTITIONS}"], extra)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    fields = dict(f.split("=", 1) for f in line.split()[2:] if "=" in f)
    return proc, fields["bootstrap"], fields["admin"]


def http(admin: str, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(admin + path, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        raw = resp.read()
    if not raw:
        return None
    return raw.decode() if path == "/metrics" else json.loads(raw)


def api_versions_latencies(bootstrap: str, count: int = 20) -> list[float]:
    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    out = []
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        for i in range(count):
            frame = registry.encode_request(RequestHeader(18, 3, i, "soak"), ApiVersionsRequest("soak", "1"))
            t0 = time.perf_counter()
            sock.sendall(frame)
            size = struct.unpack(">i", _read(sock, 4))[0]
            _read(sock, size)
            out.append(time.perf_counter() - t0)
    return out


def _read(sock: socket.socket, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return buf


def established(pid: int) -> int:
    """The broker's established TCP sockets (its descriptors that are sockets, from /proc)."""
    return sum(1 for fd in os.listdir(f"/proc/{pid}/fd") if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"))


def threads(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return int(next(line for line in f if line.startswith("Threads:")).split()[1])


# -- clients ---------------------------------------------------------------------------------------------


class Producers:
    def __init__(self, bootstrap: str, count: int) -> None:
        self.acked = 0
        self.failed = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(bootstrap, i), daemon=True) for i in range(count)]

    def start(self) -> None:
        for t in self._threads:
            t.start()

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(60)

    def _delivered(self, err: Any, _msg: Any) -> None:
        with self._lock:
            if err is None:
                self.acked += 1
            else:
                self.failed += 1

    def _run(self, bootstrap: str, n: int) -> None:
        import confluent_kafka

        producer = confluent_kafka.Producer(
            {"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5, "message.timeout.ms": 120000}
        )
        seq = 0
        while not self._stop.is_set():
            try:
                producer.produce(TOPIC, key=b"%d" % (seq % 97), value=b"p%d-%d" % (n, seq), on_delivery=self._delivered)
                seq += 1
            except BufferError:
                producer.poll(0.05)
            producer.poll(0)
            if seq % 100 == 0:
                time.sleep(0.1)  # a steady load (about 1,000 records/s per producer), not a flood
        producer.flush(120)


def consumer_main(bootstrap: str, protocol: str) -> None:
    """A consumer process (killed by the soak at random)."""
    import confluent_kafka

    config = {
        "bootstrap.servers": bootstrap,
        "group.id": GROUPS[protocol],
        "group.protocol": protocol,
        "auto.offset.reset": "earliest",
        "enable.auto.commit": False,
    }
    if protocol == "classic":
        config["session.timeout.ms"] = 6000
    consumer = confluent_kafka.Consumer(config)
    consumer.subscribe([TOPIC])
    seen = 0
    while True:
        msg = consumer.poll(0.5)
        if msg is None or msg.error() is not None:
            continue
        seen += 1
        if seen % 50 == 0:
            consumer.commit(asynchronous=False)


def spawn_consumer(bootstrap: str, protocol: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [PYTHON, __file__, "--consumer", protocol, "--bootstrap", bootstrap],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def admin_churn(bootstrap: str, stop: threading.Event) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    n = 0
    while not stop.wait(2.0):
        name = f"churn-{n}"
        try:
            admin.create_topics([NewTopic(name, 3, 1)])[name].result(10)
            admin.list_topics(timeout=10)
            admin.delete_topics([name])[name].result(10)
        except Exception:  # a fault may fail a call; the soak goes on
            pass
        n += 1


# -- the run ---------------------------------------------------------------------------------------------


def fault(admin: str, n: int) -> str:
    kind = n % 3
    try:
        if kind == 0:
            http(admin, "POST", "/faults/close-connections", {})
            return "close-connections"
        if kind == 1:
            broker = 1 + (n // 3) % 3
            http(admin, "POST", f"/brokers/{broker}/down", {})
            time.sleep(2.0)
            http(admin, "POST", f"/brokers/{broker}/up", {})
            return f"broker {broker} down 2 s"
        partition = n % PARTITIONS
        topic = http(admin, "GET", f"/topics/{TOPIC}")
        leader = topic["partitions"][partition]["leader_id"]
        http(admin, "POST", f"/topics/{TOPIC}/partitions/{partition}/leader", {"broker_id": 1 + leader % 3})
        return f"leader of {partition} moved"
    except Exception as exc:  # reported, not fatal
        return f"fault failed: {exc}"


def bugs(admin: str) -> int:
    for line in http(admin, "GET", "/metrics").splitlines():
        if line.startswith("mockbroker_broker_bugs_total"):
            return int(float(line.split()[-1]))
    return -1


def committed(admin: str) -> dict[tuple[str, int], int]:
    out = {}
    for group in GROUPS.values():
        try:
            offsets = http(admin, "GET", f"/groups/{group}/offsets")["offsets"].get(TOPIC, {})
        except Exception:
            continue
        for p, o in offsets.items():
            out[(group, int(p))] = int(o)
    return out


def run(args: argparse.Namespace) -> tuple[list[list[Any]], dict[str, Any]]:
    proc, bootstrap, admin = start_serve()
    pid = proc.pid
    producers = Producers(bootstrap, args.producers)
    producers.start()
    consumers = [spawn_consumer(bootstrap, "classic" if i % 2 == 0 else "consumer") for i in range(args.consumers)]
    stop = threading.Event()
    churn = threading.Thread(target=admin_churn, args=(bootstrap, stop), daemon=True)
    churn.start()
    rng = random.Random(19)
    samples: list[list[Any]] = []
    last_commits: dict[tuple[str, int], int] = {}
    backwards: list[str] = []
    faults: list[str] = []
    kills = 0
    t0 = time.monotonic()
    end = t0 + args.minutes * 60
    next_kill, next_fault, next_sample = t0 + args.kill_every, t0 + args.fault_every, t0
    while time.monotonic() < end:
        now = time.monotonic()
        if now >= next_kill:
            victim = rng.randrange(len(consumers))
            consumers[victim].send_signal(signal.SIGKILL)
            consumers[victim].wait()
            consumers[victim] = spawn_consumer(bootstrap, "classic" if victim % 2 == 0 else "consumer")
            kills += 1
            next_kill += args.kill_every
        if now >= next_fault:
            faults.append(fault(admin, len(faults)))
            next_fault += args.fault_every
        if now >= next_sample:
            lat = api_versions_latencies(bootstrap)
            commits = committed(admin)
            for key, offset in commits.items():
                if offset < last_commits.get(key, -1):
                    backwards.append(f"{key}: {last_commits[key]} -> {offset}")
            last_commits.update(commits)
            samples.append([
                f"{now - t0:.0f}", f"{process_rss(pid) / 2**20:.1f}", len(os.listdir(f"/proc/{pid}/fd")),
                established(pid), threads(pid), f"{percentile(lat, 0.5) * 1000:.2f}",
                f"{percentile(lat, 0.99) * 1000:.2f}", producers.acked, bugs(admin),
            ])  # fmt: skip
            print(" ".join(str(x) for x in samples[-1]), flush=True)
            next_sample += args.sample_every
        time.sleep(0.2)
    stop.set()
    producers.stop()
    for c in consumers:
        c.send_signal(signal.SIGKILL)
        c.wait()
    topic = http(admin, "GET", f"/topics/{TOPIC}")
    in_log = sum(p["log_end_offset"] for p in topic["partitions"])  # retention moves only the start
    summary = {
        "acknowledged": producers.acked,
        "delivery failures": producers.failed,
        "records appended (end offsets)": in_log,
        "consumer kills": kills,
        "faults": len(faults),
        "fault kinds": sorted(set(f.split(" ")[0] for f in faults)),
        "failed faults": [f for f in faults if f.startswith("fault failed")],
        "backward commits": backwards,
        "broker bugs": bugs(admin),
    }
    proc.send_signal(signal.SIGTERM)
    try:
        _, stderr = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, stderr = proc.communicate()
    summary["tracebacks in the broker's log"] = stderr.count("Traceback")
    return samples, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--producers", type=int, default=3)
    parser.add_argument("--consumers", type=int, default=6)
    parser.add_argument("--kill-every", type=float, default=10.0)
    parser.add_argument("--fault-every", type=float, default=15.0)
    parser.add_argument("--sample-every", type=float, default=30.0)
    parser.add_argument("--write", action="store_true", help="append the result to bench/RESULTS.md")
    parser.add_argument("--consumer", help=argparse.SUPPRESS)
    parser.add_argument("--bootstrap", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.consumer:
        consumer_main(args.bootstrap, args.consumer)
        return
    samples, summary = run(args)
    headers = ["s", "RSS MB", "fds", "sockets", "threads", "ApiVersions p50 ms", "p99 ms", "acked", "bugs"]
    table = markdown_table(headers, samples)
    text = table + "\n\n" + "\n".join(f"- {k}: {v}" for k, v in summary.items())
    print(text)
    if args.write:
        load = " ".join(f"{x:.2f}" for x in loadavg())
        append_results(
            f"\n## Soak (bench/soak.py), {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}\n\n"
            f"{args.minutes} min, 3 brokers, {args.producers} producers, {args.consumers} consumers "
            f"(classic and KIP-848 groups), a kill every {args.kill_every} s, a fault every "
            f"{args.fault_every} s; load average at the end {load}.\n\n{text}\n"
        )


if __name__ == "__main__":
    main()
