"""podman for the container tests: the images docker/ci/podman.sh builds (`make container-images`),
podman's settings for this machine (docker/ci/containers.conf), and containers that are removed
whatever happens to the test.

A missing podman or image skips on a user's machine and fails under CI=true, like every tool the
suite needs (tests/integration/support.py: require_tool).
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.integration.support import in_ci

REPO = Path(__file__).resolve().parents[2]
CONTAINERS_CONF = REPO / "docker" / "ci" / "containers.conf"
BASE_IMAGE = "localhost/debian-python:bookworm"
IMAGE = "localhost/mockbroker:dev"
EXAMPLE_IMAGE = "localhost/mockbroker-example:dev"
# Upper bound on one podman command (a guard against a hang, not a speed assertion).
PODMAN_DEADLINE_S = 120.0


def podman_env() -> dict[str, str]:
    """The environment podman runs in: this machine's settings unless the user has their own."""
    env = dict(os.environ)
    env.setdefault("CONTAINERS_CONF", str(CONTAINERS_CONF))
    return env


def podman(*args: str, check: bool = True, timeout: float = PODMAN_DEADLINE_S) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(["podman", *args], env=podman_env(), capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"podman {' '.join(args)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def _missing(message: str) -> None:
    message += " (`make container-images` as root installs podman and builds the images: docker/README.md)"
    if in_ci():
        pytest.fail(f"{message}; CI must run every test")
    pytest.skip(message)


def require_images(*images: str) -> None:
    """Fail under CI, skip elsewhere, when podman or one of ``images`` is missing."""
    try:
        podman("version", "--format", "{{.Client.Version}}", timeout=30)
    except (OSError, AssertionError) as exc:
        _missing(f"podman does not run here: {exc}")
    for image in images:
        if podman("image", "exists", image, check=False).returncode != 0:
            _missing(f"no image {image}")


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@contextmanager
def removed_after(*names: str) -> Iterator[None]:
    """Remove the containers ``names`` on the way out, whether the test passed or not."""
    try:
        yield
    finally:
        for name in names:
            podman("rm", "--force", "--time", "0", name, check=False)
