"""docker/compose.yaml end to end, unchanged, with the images `make container-images` built on the
Debian base: docker-compose (Debian's, 1.29) drives podman through podman's Docker-compatible API
(`podman system service`), on a compose network where the service names resolve (netavark +
aardvark-dns). The test runner's assertions (docker/example/drive_faults.py) must pass, and the
consumer must have started only once mockbroker was healthy (`depends_on: condition: service_healthy`).

podman runs a container's HEALTHCHECK from a systemd timer (`podman healthcheck run`), and these
machines have no systemd: HealthTicker stands in for that timer. podman-compose is not used: it
skips service_healthy conditions on podman older than 4.6, and Debian bookworm has 4.3.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.integration.support import in_ci, wait_until
from tests.sidecar.podman import (
    BASE_IMAGE,
    EXAMPLE_IMAGE,
    IMAGE,
    REPO,
    podman,
    podman_env,
    require_images,
    unique,
)

COMPOSE_DEADLINE_S = 180.0
# The image's HEALTHCHECK --interval is 2 s; the ticker runs a little more often.
TICK_S = 1.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class HealthTicker(threading.Thread):
    """Runs `podman healthcheck run` on the project's running containers every TICK_S, as podman's
    systemd timer would, and notes when each first passed (wall clock, before the check began)."""

    def __init__(self, project: str) -> None:
        super().__init__(daemon=True)
        self.project = project
        self.stopping = threading.Event()
        self.first_pass: dict[str, float] = {}

    def run(self) -> None:
        while not self.stopping.is_set():
            names = podman(
                "ps", "--filter", f"label=com.docker.compose.project={self.project}", "--format", "{{.Names}}", check=False
            ).stdout.split()
            for name in names:
                began = time.time()
                if podman("healthcheck", "run", name, check=False).returncode == 0:
                    self.first_pass.setdefault(name, began)
            self.stopping.wait(TICK_S)  # the timer's period, not a wait for a condition

    def stop(self) -> None:
        self.stopping.set()
        self.join(30)


def require_docker_compose() -> str:
    path = shutil.which("docker-compose")
    if path is None:
        message = "docker-compose is not installed (`make container-images` as root installs it)"
        if in_ci():
            pytest.fail(f"{message}; CI must run every test")
        pytest.skip(message)
    return path


@contextlib.contextmanager
def compose_project(tmp_path: Path, prefix: str, *options: str) -> Iterator[tuple[list[str], dict[str, str], HealthTicker]]:
    """docker-compose on docker/compose.yaml against podman's API for one project: the command's
    start (with ``options``, e.g. a profile), its environment and the health ticker, running; the
    project is taken down and its containers and network removed afterwards."""
    require_images(IMAGE, EXAMPLE_IMAGE)
    compose = require_docker_compose()
    sock = tmp_path / "podman.sock"
    service_log = open(tmp_path / "podman-service.log", "w")  # noqa: SIM115
    service = subprocess.Popen(
        ["podman", "system", "service", "--time=0", f"unix://{sock}"], env=podman_env(), stdout=service_log, stderr=service_log
    )
    project = unique(prefix)
    env = {
        **podman_env(),
        "DOCKER_HOST": f"unix://{sock}",
        "BASE_IMAGE": BASE_IMAGE,  # what the images were built on (compose.yaml's build args)
        "MOCKBROKER_HOST_PORT": str(free_port()),  # not 9092/8092: the machine is shared
        "MOCKBROKER_HOST_ADMIN_PORT": str(free_port()),
    }
    base = [compose, "--project-name", project, "--file", str(REPO / "docker" / "compose.yaml"), *options]
    ticker = HealthTicker(project)
    try:
        wait_until(sock.exists, "podman's API socket")
        ticker.start()
        yield base, env, ticker
    finally:
        ticker.stop()
        subprocess.run([*base, "down", "--volumes", "--timeout", "10"], env=env, capture_output=True, timeout=120)
        service.terminate()
        try:
            service.wait(30)
        except subprocess.TimeoutExpired:
            service.kill()
            service.wait(30)
        service_log.close()
        leftover = podman("ps", "--all", "--filter", f"label=com.docker.compose.project={project}", "--format", "{{.Names}}")
        for name in leftover.stdout.split():
            podman("rm", "--force", "--time", "0", name, check=False)
        podman("network", "rm", "--force", f"{project}_default", check=False)


def test_the_compose_example_passes_its_test_runner(tmp_path: Path) -> None:
    with compose_project(tmp_path, "mbexample") as (base, env, ticker):
        project = base[2]
        up = subprocess.run(
            [*base, "up", "--no-build", "--abort-on-container-exit", "--exit-code-from", "test-runner"],
            env=env, capture_output=True, text=True, timeout=COMPOSE_DEADLINE_S,
        )  # fmt: skip
        assert up.returncode == 0, f"{up.stdout[-6000:]}\n{up.stderr[-3000:]}"
        passed = [line for line in up.stdout.splitlines() if '"result": "passed"' in line]
        assert passed and "test-runner" in passed[0], up.stdout[-6000:]

        # depends_on: condition: service_healthy held: the consumer started after mockbroker's
        # first passing health check began.
        broker, consumer = f"{project}_mockbroker_1", f"{project}_consumer_1"
        assert broker in ticker.first_pass, up.stdout[-3000:]
        started_ns = int(podman("inspect", "--format", "{{.State.StartedAt.UnixNano}}", consumer).stdout)
        assert started_ns / 1e9 > ticker.first_pass[broker]
        states = json.loads(podman("inspect", broker, consumer).stdout)
        assert [s["State"]["ExitCode"] for s in states] == [0, 0]  # both stopped cleanly by SIGTERM


def test_the_sasl_profile_serves_an_application_over_sasl_ssl(tmp_path: Path) -> None:
    """`--profile sasl`: mockbroker-sasl with a PLAINTEXT and a SASL_SSL listener; sasl-client
    (docker/example/sasl_client.py) produces and consumes in a group over SASL_SSL with SCRAM-SHA-512,
    trusting the CA that GET /security hands out, and reads the records back over PLAINTEXT, each
    client given its own listener's addresses (mockbroker-sasl:9093, mockbroker-sasl:9092)."""
    with compose_project(tmp_path, "mbsasl", "--profile", "sasl") as (base, env, _):
        up = subprocess.run(
            [*base, "up", "--no-build", "--abort-on-container-exit", "--exit-code-from", "sasl-client",
             "mockbroker-sasl", "sasl-client"],
            env=env, capture_output=True, text=True, timeout=COMPOSE_DEADLINE_S,
        )  # fmt: skip
        assert up.returncode == 0, f"{up.stdout[-6000:]}\n{up.stderr[-3000:]}"
        lines = [line for line in up.stdout.splitlines() if "sasl-client" in line and "{" in line]
        reports = [json.loads(line[line.index("{"):]) for line in lines]
        assert {"result": "passed", "runner": "sasl-client"} in reports, up.stdout[-6000:]
        by_listener = {r["listener"]: r for r in reports if "listener" in r}
        assert by_listener["SASL_SSL"]["brokers"] == [["mockbroker-sasl", 9093]]
        assert by_listener["PLAINTEXT"]["brokers"] == [["mockbroker-sasl", 9092]]
