"""Shared pieces of the sidecar tests: a `mockbroker serve` subprocess with its control API, and
a small JSON client for it (urllib, like `mockbroker ctl`).

Served brokers use free ports (never 9092/8092), so the suite runs next to a `make serve` and
next to other test runs on a shared machine.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from mockbroker.ctl import Client
from tests.mockbroker.test_cli import READY_DEADLINE_S, Served, clean_env, read_line

EXIT_DEADLINE_S = 15.0


@dataclass
class Sidecar:
    served: Served

    @property
    def admin(self) -> str:
        return self.served.fields["admin"]

    @property
    def bootstrap(self) -> str:
        return self.served.fields["bootstrap"]

    def client(self, token: str | None = None) -> Client:
        return Client(self.admin, token, timeout=30.0)


def start_serve(argv: list[str], env: dict[str, str], stderr_path: Path, cwd: Path) -> Served:
    """Run ``argv`` (a `mockbroker serve` command line), wait for its READY line."""
    with open(stderr_path, "wb") as stderr:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr, env=env, cwd=cwd)
    try:
        data = read_line(proc, time.monotonic() + READY_DEADLINE_S)
    except AssertionError as exc:
        proc.kill()
        proc.wait(EXIT_DEADLINE_S)
        raise AssertionError(f"{exc}\nstderr:\n{stderr_path.read_text()}") from None
    return Served(proc, data.decode().rstrip("\n"), stderr_path)


def stop(proc: subprocess.Popen[bytes]) -> int:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(EXIT_DEADLINE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(EXIT_DEADLINE_S)
    if proc.stdout is not None:
        proc.stdout.close()
    return proc.returncode


def run_cli(args: list[str], env: dict[str, str] | None = None, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mockbroker", *args], env=clean_env(**(env or {})), capture_output=True, text=True, timeout=timeout
    )


def ctl_json(args: list[str], env: dict[str, str] | None = None) -> Any:
    result = run_cli(["ctl", *args], env)
    assert result.returncode == 0, f"mockbroker ctl {' '.join(args)} exited {result.returncode}: {result.stderr}"
    return json.loads(result.stdout)


def conforms(doc: dict[str, Any], schema: dict[str, Any], body: Any) -> Any:
    """Check ``body`` against ``schema`` (a schema of the served OpenAPI document ``doc``, its
    ``$ref`` pointing into the document) with jsonschema, a validator independent of the
    server's own request checker; OpenAPI 3.0's ``nullable`` is read as JSON Schema's null type.
    Returns ``body``; raises jsonschema.ValidationError."""
    root = _json_schema({"components": doc["components"], **schema})
    jsonschema.Draft202012Validator(root).validate(body)
    return body


def _json_schema(node: Any) -> Any:
    if isinstance(node, list):
        return [_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {k: _json_schema(v) for k, v in node.items() if k not in ("nullable", "discriminator")}
    if node.get("nullable"):
        return {"anyOf": [out, {"type": "null"}]}
    return out
