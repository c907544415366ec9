"""A listener out of file descriptors (issue #19): `mockbroker serve` with its RLIMIT_NOFILE
lowered (resource.prlimit on the running process) until accept() fails with EMFILE. The broker
logs the pause and stops accepting for ACCEPT_RETRY_DELAY_S at a time, goes on serving the
connections it has, and accepts the waiting connection once descriptors are free again."""

from __future__ import annotations

import os
import resource
import socket
import struct
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mockbroker.testing import wait_for
from mockbroker_protocol import registry
from tests.mockbroker.net.test_limits import API_VERSIONS, api_versions
from tests.mockbroker.test_cli import Served, clean_env
from tests.sidecar.support import start_serve, stop

DEADLINE_S = 30.0
SPARE = 3  # descriptors left to the broker: that many connections are accepted, the next one is not
PAUSED = "accept failed ([Errno 24]"  # the broker's warning for EMFILE


@pytest.fixture(params=["uvloop", "asyncio"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Served]:
    env = clean_env(MOCKBROKER_UVLOOP=str(request.param == "uvloop").lower())
    argv = [sys.executable, "-m", "mockbroker", "serve", "--port", "0"]
    broker = start_serve(argv, env, tmp_path / "stderr.log", tmp_path)
    try:
        yield broker
    finally:
        stop(broker.proc)


def ask(sock: socket.socket, correlation_id: int) -> int:
    """ApiVersions on ``sock``: the answer's correlation id (the socket's timeout is the deadline)."""
    sock.sendall(api_versions(correlation_id))
    return answer(sock)


def answer(sock: socket.socket) -> int:
    (size,) = struct.unpack(">i", recv_exactly(sock, 4))
    correlation_id, _ = registry.decode_response(API_VERSIONS, 3, recv_exactly(sock, size))
    return int(correlation_id)


def recv_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        assert chunk, f"connection closed after {len(data)} of {n} bytes"
        data += chunk
    return data


def leave_free(pid: int, spare: int) -> None:
    """Lower ``pid``'s soft RLIMIT_NOFILE so that exactly ``spare`` descriptor numbers are free
    below it (a new descriptor takes the lowest free number, and must be below the limit)."""
    used = {int(fd) for fd in os.listdir(f"/proc/{pid}/fd")}
    limit, free = 0, 0
    while free < spare:
        free += limit not in used
        limit += 1
    _, hard = resource.prlimit(pid, resource.RLIMIT_NOFILE)
    resource.prlimit(pid, resource.RLIMIT_NOFILE, (limit, hard))


def wait_for_log(served: Served, text: str) -> None:
    def logged() -> bool:
        assert served.proc.poll() is None, f"the broker exited: {served.stderr()}"
        return text in served.stderr()

    wait_for(logged, f"{text!r} in the broker's log", timeout=DEADLINE_S)


def test_out_of_descriptors_pauses_accepting_and_serves_the_open_connections(served: Served) -> None:
    ((host, port),) = served.addresses

    def connect() -> socket.socket:
        return socket.create_connection((host, port), timeout=DEADLINE_S)

    # One request first, so that what serving it imports is imported before descriptors run out.
    first = connect()
    assert ask(first, 1) == 1
    leave_free(served.proc.pid, SPARE)
    held = [connect() for _ in range(SPARE)]
    for correlation_id, sock in enumerate(held, start=10):  # accepted: each takes the last descriptors
        assert ask(sock, correlation_id) == correlation_id
    waiting = connect()  # the kernel completes it; the broker's accept() fails with EMFILE
    waiting.sendall(api_versions(99))
    wait_for_log(served, PAUSED)
    # Paused, the broker goes on serving what it has; the waiting connection cannot be accepted.
    assert [ask(sock, 20 + i) for i, sock in enumerate([first, *held])] == list(range(20, 21 + SPARE))
    waiting.setblocking(False)
    with pytest.raises(BlockingIOError):
        waiting.recv(1)
    waiting.settimeout(DEADLINE_S)
    # Two connections close: the broker closes their sockets, and its next try accepts the waiting
    # one (and a new one: two descriptors were freed).
    for sock in held[:2]:
        sock.close()
    assert answer(waiting) == 99
    latecomer = connect()
    assert ask(latecomer, 100) == 100
    assert served.proc.poll() is None
    for sock in [first, held[2], waiting, latecomer]:
        sock.close()
    assert "Traceback" not in served.stderr()
