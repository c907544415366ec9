"""Fixtures for the Spark pipeline's tests: one local Spark session for the whole run (starting one
costs seconds), and the event logs of the recorded real-client scenarios (tests/pipeline/recorded.py),
recorded once per run."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.integration.support import in_ci, require_tool
from tests.pipeline import recorded

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _require_pyspark() -> None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        if in_ci():
            pytest.fail("pyspark is not installed; CI must run every test (pip install -e '.[test]')")
        pytest.skip("pyspark is not installed (pip install 'mockbroker[pipeline]')")


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    _require_pyspark()
    require_tool("java")
    from mockbroker_pipeline.session import get_session

    session = get_session("local[2]", {"spark.sql.shuffle.partitions": "2", "spark.default.parallelism": "2"})
    yield session
    session.stop()


@pytest.fixture(scope="session")
def logs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("event-logs")


@pytest.fixture(scope="session")
def eager_run(logs_dir: Path) -> recorded.Eager:
    return recorded.record_eager(logs_dir / "eager.jsonl")


@pytest.fixture(scope="session")
def cooperative_run(logs_dir: Path) -> recorded.Cooperative:
    return recorded.record_cooperative(logs_dir / "cooperative.jsonl")


@pytest.fixture(scope="session")
def static_run(logs_dir: Path) -> recorded.StaticRestart:
    return recorded.record_static_restart(logs_dir / "static.jsonl")


@pytest.fixture(scope="session")
def analysis_out(
    spark: SparkSession,
    logs_dir: Path,
    eager_run: recorded.Eager,
    cooperative_run: recorded.Cooperative,
    static_run: recorded.StaticRestart,
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    """``mockbroker analyze`` over the directory of the three recorded runs; returns --out."""
    from mockbroker.cli import main

    out = tmp_path_factory.mktemp("analysis")
    assert main(["analyze", str(logs_dir), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="session")
def lab_out(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``mockbroker assignor-lab --grid small``; returns --out."""
    from mockbroker.cli import main

    out = tmp_path_factory.mktemp("lab")
    assert main(["assignor-lab", "--grid", "small", "--out", str(out)]) == 0
    return out
