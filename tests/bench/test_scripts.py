"""The benchmark scripts still start: `--help` for each, and librdkafka's mock and kfake (franz-go's
fake cluster, a peer of bench/run.py, built by `make bench-peers`) serve (bench/ is not run by CI,
so a moved module would otherwise break it unnoticed, as the restructure once did)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from mockbroker_protocol import registry
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from mockbroker_protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from mockbroker_protocol.primitives import INT32
from tests.conftest import in_ci

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"
KFAKE = ROOT / "build" / "bench-peers" / "kfake"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if not p.name.startswith("_"))


@pytest.mark.parametrize("script", SCRIPTS)
def test_script_starts(script: str) -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH / script), "--help"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage:" in done.stdout


def test_rdkafka_mock_serves_until_stdin_closes() -> None:
    proc = subprocess.Popen(
        [sys.executable, str(BENCH / "rdkafka_mock.py"), "--brokers", "2"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdin is not None
        line = proc.stdout.readline()  # blocks until the mock serves or the process dies (EOF)
        assert line.startswith("MOCK READY bootstrap="), (line, proc.stderr.read() if proc.stderr else "")
        assert len(line.split("=", 1)[1].strip().split(",")) == 2
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _call(sock: socket.socket, api_key: int, version: int, request: object) -> object:
    sock.sendall(registry.encode_request(RequestHeader(api_key, version, 1, "bench-smoke"), request))
    size = INT32.unpack(_recv(sock, 4))[0]
    return registry.decode_response(api_key, version, _recv(sock, size))[1]


def _recv(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        assert chunk, "kfake closed the connection"
        data += chunk
    return data


def test_kfake_serves_until_stdin_closes() -> None:
    if not KFAKE.exists():
        message = f"{KFAKE} is not built (`make bench-peers`: Go and the module proxy)"
        if in_ci():
            pytest.fail(message + "; CI must run every test")
        pytest.skip(message)
    proc = subprocess.Popen(
        [str(KFAKE), "--brokers", "2", "--topic", "smoke:3"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdin is not None
        line = proc.stdout.readline()  # blocks until kfake listens or the process dies (EOF)
        assert line.startswith("KFAKE READY bootstrap="), (line, proc.stderr.read() if proc.stderr else "")
        addresses = line.split("=", 1)[1].strip().split(",")
        assert len(addresses) == 2
        host, port = addresses[0].rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=30) as sock:
            versions = _call(sock, 18, 3, ApiVersionsRequest(client_software_name="bench", client_software_version="1"))
            assert versions.error_code == 0 and versions.api_keys  # type: ignore[attr-defined]
            request = MetadataRequest(topics=[MetadataRequestTopic(name="smoke")], allow_auto_topic_creation=False)
            metadata = _call(sock, 3, 12, request)
        assert len(metadata.brokers) == 2  # type: ignore[attr-defined]
        (topic,) = metadata.topics  # type: ignore[attr-defined]
        assert (topic.name, topic.error_code, len(topic.partitions)) == ("smoke", 0, 3)
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
