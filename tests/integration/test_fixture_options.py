"""``kafka_cluster_options``: a project's conftest.py sets the options of every ``kafka_cluster``,
and a ``@pytest.mark.kafka_cluster(...)`` option replaces the project's option of the same name.
Run as a user's project would be: a fresh directory, ``python -m pytest``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CONFTEST = """
import pytest


@pytest.fixture
def kafka_cluster_options():
    return {"brokers": 3, "topics": {"orders": 6}, "group_min_session_timeout_ms": 1000}
"""

TESTS = """
import pytest


def test_project_options(kafka_cluster):
    assert kafka_cluster.broker_ids == [1, 2, 3]
    assert len(kafka_cluster.topic("orders").partitions) == 6
    assert kafka_cluster.cluster.config.group_min_session_timeout_ms == 1000


@pytest.mark.kafka_cluster(brokers=1, topics={"audit": 2})
def test_a_marker_replaces_an_option(kafka_cluster):
    assert kafka_cluster.broker_ids == [1]
    assert list(kafka_cluster.topics()) == ["audit"]
    assert kafka_cluster.cluster.config.group_min_session_timeout_ms == 1000
"""


def test_project_wide_options_and_a_marker_over_them(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_options.py").write_text(TESTS)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
