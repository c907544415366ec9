"""Running the non-Python clients of this directory (sarama, kafkajs) as subprocesses.

Each client is a small line-oriented program: messages to produce go in on stdin as JSON lines,
and what it produced or consumed comes out on stdout as JSON lines (see the programs' headers).
The subprocess is started with ``asyncio.create_subprocess_exec`` so that the cluster, which runs
on the test's own event loop, keeps serving while the test waits for the client to finish.

Tools: the tests skip when a tool is missing on a user's machine and fail under CI (CI=true),
which must run every test; ``make clients`` (part of ``make test``) installs and builds them.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, NoReturn

import pytest

from tests.integration.support import DEADLINE_S, Message, in_ci

CLIENTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = CLIENTS_DIR.parents[2]
# Git-ignored (the `build/` entry of .gitignore); `make clients` builds into the same place.
BUILD_DIR = REPO_ROOT / "build" / "integration-clients"
SARAMA_SOURCE = CLIENTS_DIR / "sarama"
NODE_DIR = CLIENTS_DIR / "node"
# Debian's Go library packages (golang-github-shopify-sarama-dev and its dependencies) install
# their sources here, laid out as a GOPATH tree; sarama 1.22 predates Go modules.
DEBIAN_GOPATH = Path("/usr/share/gocode")
SARAMA_PACKAGE = DEBIAN_GOPATH / "src" / "github.com" / "Shopify" / "sarama"
# A client's own deadline is DEADLINE_S; this one only guards against a client that ignores it.
SUBPROCESS_TIMEOUT_S = DEADLINE_S + 30


def missing(what: str, install: str) -> NoReturn:
    """Skip (a user's machine) or fail (CI) because ``what`` is not available."""
    message = (
        f"{what} is not available ({install}; or run `make clients`, as root to apt-get what is missing)"
    )
    if in_ci():
        pytest.fail(f"{message}; CI must run every test")
    pytest.skip(message)


def go_build_env() -> dict[str, str]:
    """GOPATH mode over Debian's packaged sources: no go.mod, no module proxy, no network."""
    return {
        **os.environ,
        "GO111MODULE": "off",
        "GOFLAGS": "",
        "GOPATH": f"{BUILD_DIR / 'gopath'}{os.pathsep}{DEBIAN_GOPATH}",
        "GOCACHE": str(BUILD_DIR / "gocache"),
        # DataDog/zstd (cgo) calls a zstd function deprecated upstream; the warning is noise here.
        "CGO_CFLAGS": "-g -O2 -Wno-deprecated-declarations",
    }


def build_sarama_client() -> Path:
    """Build (incrementally) the sarama driver and return its path. Without Go, a binary already
    built by `make clients` is used as it is."""
    binary = BUILD_DIR / "sarama-client"
    go = shutil.which("go")
    if go is None or not SARAMA_PACKAGE.is_dir():
        if binary.is_file() and not in_ci():
            return binary
        if go is None:
            missing("Go", "Debian: apt-get install -y golang-go")
        missing("sarama 1.22", "Debian: apt-get install -y golang-github-shopify-sarama-dev gcc libc6-dev")
    (BUILD_DIR / "gopath").mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(
        [go, "build", "-o", str(binary), "."],
        cwd=SARAMA_SOURCE,
        env=go_build_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(f"go build of {SARAMA_SOURCE} failed ({proc.returncode}):\n{proc.stderr}")
    return binary


def kafkajs_script() -> tuple[str, Path]:
    """(node, the kafkajs driver script), installing kafkajs from the lockfile if needed."""
    node = shutil.which("node")
    if node is None:
        missing("node", "Debian: apt-get install -y nodejs, or Node.js 20 from nodejs.org")
    installed = NODE_DIR / "node_modules" / ".package-lock.json"
    if (
        not installed.is_file()
        or (NODE_DIR / "package-lock.json").stat().st_mtime > installed.stat().st_mtime
    ):
        npm = shutil.which("npm")
        if npm is None:
            missing("npm (to install kafkajs)", "Debian: apt-get install -y npm")
        proc = subprocess.run(
            [npm, "ci", "--prefer-offline", "--no-audit", "--no-fund"],
            cwd=NODE_DIR,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if proc.returncode != 0:
            pytest.fail(f"npm ci in {NODE_DIR} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return node, NODE_DIR / "kafkajs-produce.js"


async def run_client(argv: list[str], stdin_lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run one client to completion; return its stdout JSON lines. Fails the test, with the tail
    of the client's stderr (its own log), on a non-zero exit or when it outlives its deadline."""
    data = "".join(json.dumps(line) + "\n" for line in stdin_lines).encode()
    proc = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(data), SUBPROCESS_TIMEOUT_S)
    except TimeoutError:
        proc.kill()
        out, err = await proc.communicate()
        pytest.fail(
            f"{Path(argv[0]).name} still running after {SUBPROCESS_TIMEOUT_S:.0f}s; stderr tail:\n{_tail(err)}"
        )
    if proc.returncode != 0:
        command = " ".join([Path(argv[0]).name, *argv[1:]])
        pytest.fail(f"{command} exited {proc.returncode}; stderr tail:\n{_tail(err)}")
    return [json.loads(line) for line in out.decode().splitlines() if line.strip()]


def _tail(stderr: bytes, lines: int = 80) -> str:
    return "\n".join(stderr.decode(errors="replace").splitlines()[-lines:])


def _text(b: bytes | None) -> str | None:
    return None if b is None else b.decode()


def _bytes(s: str | None) -> bytes | None:
    return None if s is None else s.encode()


def to_json(m: Message) -> dict[str, Any]:
    """One stdin line for a client: the message with its partition and (if set) timestamp."""
    line: dict[str, Any] = {
        "partition": m.partition,
        "key": _text(m.key),
        "value": _text(m.value),
        "headers": [[k, _text(v)] for k, v in m.headers],
    }
    if m.timestamp is not None:
        line["timestamp_ms"] = m.timestamp
    return line


def from_json(line: dict[str, Any]) -> Message:
    """A client's "produced"/"consumed" line as a Message (offset set)."""
    headers = tuple((k, _bytes(v)) for k, v in line.get("headers") or ())
    return Message(
        line["partition"],
        _bytes(line["key"]),
        _bytes(line["value"]),
        headers,
        line.get("timestamp_ms"),
        line["offset"],
    )


def events(lines: list[dict[str, Any]], event: str) -> list[dict[str, Any]]:
    return [line for line in lines if line.get("event") == event]


def assert_acks_in_order(sent: list[Message], produced: list[dict[str, Any]]) -> dict[int, int]:
    """Each message was acknowledged on the partition it was sent to, at the next offset of that
    partition (send order kept, nothing lost or duplicated); return the next offset per partition."""
    assert len(produced) == len(sent), f"{len(produced)} acks for {len(sent)} messages"
    next_offset: dict[int, int] = {}
    for i, (m, ack) in enumerate(zip(sent, produced, strict=True)):
        want = (m.partition, next_offset.get(m.partition, 0))
        assert (ack["partition"], ack["offset"]) == want, (
            f"message {i}: acked at {ack}, want (partition, offset) {want}"
        )
        assert (_bytes(ack["key"]), _bytes(ack["value"])) == (m.key, m.value), (
            f"message {i}: ack {ack} is for another message"
        )
        next_offset[m.partition] = want[1] + 1
    return next_offset
