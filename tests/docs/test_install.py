"""Installing as the README says: a wheel built from a checkout leaves the checkout as it was, and a
fresh project whose own packages are called ``protocol`` and ``pipeline`` installs that wheel into
a fresh virtualenv and runs its tests, fixture included, with ``python -m pytest``.

Bounded: one wheel build (pip's cache serves the build requirements and the dependencies), one
venv; every subprocess has a timeout that guards against a hang, never a speed assertion.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.snippets import ROOT

STEP_TIMEOUT_S = 900.0


def _run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command, cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=STEP_TIMEOUT_S
    )
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _status(checkout: Path) -> str:
    return _run(["git", "status", "--porcelain", "--ignored", "--untracked-files=all"], checkout).stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A copy of this checkout (its tracked and untracked, not ignored, files, committed to a
    fresh repository), its ``git status`` before and after ``pip wheel``, and the wheel."""
    top = tmp_path_factory.mktemp("install")
    checkout = top / "mockbroker"
    listed = _run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], ROOT).stdout
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, checkout / name)
    _run(["git", "init", "-q"], checkout)
    _run(["git", "add", "-A"], checkout)
    _run(["git", "-c", "user.name=test", "-c", "user.email=test@localhost", "commit", "-qm", "copy"], checkout)
    before = _status(checkout)
    wheels = top / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(checkout)], top,
         MOCKBROKER_BUILD_DIR=str(top / "build-dir"))  # fmt: skip
    after = _status(checkout)
    (wheel,) = wheels.glob("mockbroker-*.whl")
    return wheel, before, after


def test_a_wheel_build_leaves_the_checkout_clean(built: tuple[Path, str, str]) -> None:
    _, before, after = built
    assert after == before, f"the build left these in the checkout:\n{after}"


PROJECT = {
    "protocol/__init__.py": "",
    "protocol/errors.py": "class OrderError(Exception):\n    pass\n",
    "pipeline/__init__.py": "",
    "pipeline/orders.py": "def total(values):\n    return sum(int(v) for v in values)\n",
    "tests/test_orders.py": '''
from pipeline.orders import total
from protocol.errors import OrderError


def test_orders_through_the_broker(kafka_cluster):
    kafka_cluster.create_topic("orders", 3)
    kafka_cluster.produce("orders", [b"1", b"2", b"3"], partition=0)
    values = [record.value for record in kafka_cluster.read("orders", 0)]
    assert total(values) == 6
    assert issubclass(OrderError, Exception)
''',
}


def test_a_project_with_its_own_protocol_and_pipeline_packages_runs_its_tests(
    built: tuple[Path, str, str], tmp_path: Path
) -> None:
    wheel, _, _ = built
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], tmp_path)
    python = str(venv / "bin" / "python")
    _run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel), "pytest"], tmp_path)
    project = tmp_path / "project"
    for name, text in PROJECT.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    done = _run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], project)
    assert "1 passed" in done.stdout, done.stdout
    # The old top-level names are not installed any more (they would shadow the project's).
    missing = subprocess.run([python, "-c", "import protocol"], cwd=tmp_path, capture_output=True, text=True)
    assert missing.returncode != 0 and "No module named 'protocol'" in missing.stderr
