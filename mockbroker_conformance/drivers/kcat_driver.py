#!/usr/bin/env python3
"""Conformance driver for kcat: a shell-level wrapper that runs the kcat binary (``kcat -P``, ``kcat
-C``, ``kcat -G``) for each command and turns its output into the JSON-lines events of
docs/conformance.md. kcat's rebalance lines on stderr ("% Group g rebalanced ...") become
assignment events, its ``-J`` lines on stdout records.

Usage: python kcat_driver.py --bootstrap HOST:PORT[,...] --client-id ID   (standard library only)

What kcat cannot do is said in the hello: it has no commit on demand (a ``-G`` consumer commits
automatically, every auto.commit.interval.ms), no seek or pause of a running consumer, and its
librdkafka predates KIP-848 in the Debian package.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import subprocess
import sys
import threading
from typing import Any

PROTOCOL_VERSION = 1
_lock = threading.Lock()
_PARTITIONS = re.compile(r"\[(\d+)\]")
# librdkafka's rebalance as kcat prints it: eager ("assigned: t [0], t [1]") or cooperative
# ("incremental assignment of 2 partition(s) (...): t [0], t [1]").
_EAGER = re.compile(r"% Group \S+ rebalanced \(memberid ([^)]*)\): (assigned|revoked): (.*)$")
_INCREMENTAL = re.compile(r"% Group \S+ rebalanced: incremental (assignment|revoke) of \d+ partition\(s\) \(memberid ([^,)]*)[^)]*\): (.*)$")

UNSUPPORTED = {
    "commit": "kcat has no commit on demand: its -G consumer commits only automatically (enable.auto.commit)",
    "seek": "kcat cannot seek a running consumer (only -o at start)",
    "pause": "kcat cannot pause or resume partitions of a running consumer",
}


def emit(event: str, **fields: Any) -> None:
    with _lock:
        sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
        sys.stdout.flush()


def kcat_version() -> str:
    try:
        out = subprocess.run(["kcat", "-V"], capture_output=True, text=True, timeout=10).stdout
    except OSError as exc:
        return f"unavailable ({exc})"
    kcat = re.search(r"Version (\S+)", out)
    lib = re.search(r"librdkafka (?:version )?(\d[^ ,)]*)", out)
    return f"{kcat.group(1) if kcat else '?'} (librdkafka {lib.group(1) if lib else '?'})"


class Kcat:
    def __init__(self, bootstrap: str, client_id: str) -> None:
        self.bootstrap = bootstrap
        self.client_id = client_id
        self.consumers: list[subprocess.Popen[bytes]] = []
        self.assignment: set[int] = set()

    def base(self, *args: str) -> list[str]:
        return ["kcat", "-b", self.bootstrap, "-X", f"client.id={self.client_id}", *args]

    def produce(self, cmd: dict[str, Any]) -> dict[str, Any]:
        # One kcat -P per partition, keys and values split by a tab: kcat reports no offsets.
        records = cmd["records"]
        partitions = sorted({r.get("partition") for r in records}, key=lambda p: -1 if p is None else p)
        options = ["-z", cmd.get("compression", "none"), "-X", "acks=all"]
        if cmd.get("idempotent"):
            options += ["-X", "enable.idempotence=true"]
        for p in partitions:
            lines = "".join(f"{r.get('key') or ''}\t{r['value']}\n" for r in records if r.get("partition") == p)
            where = [] if p is None else ["-p", str(p)]
            proc = subprocess.run(
                self.base("-P", "-t", cmd["topic"], *where, "-K", "\t", *options),
                input=lines.encode(), capture_output=True, timeout=cmd.get("timeout_ms", 30000) / 1000 + 10,
            )  # fmt: skip
            errors = [line for line in proc.stderr.decode(errors="replace").splitlines() if "ERROR" in line or "ailed" in line]
            if proc.returncode != 0 or errors:
                raise RuntimeError(f"kcat -P exited {proc.returncode}: {' | '.join(errors[-3:])}")
        return {"offsets": [[r.get("partition"), None] for r in records]}

    def _start(self, argv: list[str]) -> None:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.consumers.append(proc)
        threading.Thread(target=self._records, args=(proc,), daemon=True).start()
        threading.Thread(target=self._stderr, args=(proc,), daemon=True).start()

    def _records(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            try:
                m = json.loads(raw)
            except ValueError:
                emit("client_error", error="output", message=raw.decode(errors="replace").strip())
                continue
            emit("record", partition=m["partition"], offset=m["offset"], key=m.get("key"), value=m.get("payload"))

    def _stderr(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stderr is not None
        for raw in proc.stderr:
            line = raw.decode(errors="replace").rstrip()
            sys.stderr.write(line + "\n")
            if m := _EAGER.search(line):
                parts = {int(p) for p in _PARTITIONS.findall(m.group(3))}
                if m.group(2) == "assigned":
                    self.assignment = parts
                    emit("assigned", added=sorted(parts), partitions=sorted(self.assignment), member_id=m.group(1))
                else:
                    self.assignment -= parts
                    emit("revoked", removed=sorted(parts), partitions=sorted(self.assignment), member_id=m.group(1))
            elif m := _INCREMENTAL.search(line):
                parts = {int(p) for p in _PARTITIONS.findall(m.group(3))}
                if m.group(1) == "assignment":
                    self.assignment |= parts
                    emit("assigned", added=sorted(parts), partitions=sorted(self.assignment), member_id=m.group(2))
                else:
                    self.assignment -= parts
                    emit("revoked", removed=sorted(parts), partitions=sorted(self.assignment), member_id=m.group(2))
            elif "ERROR" in line:
                emit("client_error", error="kcat", message=line)

    def subscribe(self, cmd: dict[str, Any]) -> None:
        options = [
            "-X", f"session.timeout.ms={cmd.get('session_timeout_ms', 10000)}",
            "-X", f"heartbeat.interval.ms={cmd.get('heartbeat_interval_ms', 300)}",
            "-X", f"partition.assignment.strategy={cmd.get('assignor', 'range')}",
            "-X", "auto.commit.interval.ms=200",
        ]  # fmt: skip
        if cmd.get("instance_id"):
            options += ["-X", f"group.instance.id={cmd['instance_id']}"]
        self._start(self.base("-G", cmd["group"], "-J", "-u", "-o", "beginning", *options, cmd["topic"]))

    def assign(self, cmd: dict[str, Any]) -> None:
        for p in cmd["partitions"]:
            self._start(self.base("-C", "-t", cmd["topic"], "-p", str(p), "-o", "beginning", "-J", "-u"))
        self.assignment = set(cmd["partitions"])

    def close(self) -> None:
        # SIGTERM: kcat closes its consumer (LeaveGroup, final commit) and exits.
        for proc in self.consumers:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.consumers:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--client-id", required=True)
    args = parser.parse_args()
    client = Kcat(args.bootstrap, args.client_id)
    emit("hello", protocol=PROTOCOL_VERSION, client="kcat", version=kcat_version(), unsupported=UNSUPPORTED)
    for line in sys.stdin:
        if not line.strip():
            continue
        cmd = json.loads(line)
        name = cmd.get("cmd")
        try:
            if name == "close":
                break
            if name == "produce":
                emit("produced", **client.produce(cmd))
            elif name == "subscribe":
                client.subscribe(cmd)
                emit("subscribed")
            elif name == "assign":
                client.assign(cmd)
                emit("assigned", added=sorted(client.assignment), partitions=sorted(client.assignment))
            elif name in UNSUPPORTED or name in ("resume",):
                emit("unsupported", cmd=name, reason=UNSUPPORTED.get(name, UNSUPPORTED["pause"]))
            else:
                emit("unsupported", cmd=name, reason=f"unknown command {name!r}")
        except Exception as exc:
            emit(f"{name}_failed", error=type(exc).__name__, message=str(exc))
    client.close()
    emit("closed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
