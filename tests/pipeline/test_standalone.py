"""The pipeline on a Spark standalone cluster (master and two workers on loopback, from the installed
PySpark's own classes): the file ``analyze`` job and the assignor lab run there with
``--master spark://...``, and give what they give on ``local``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.integration.support import require_tool
from tests.pipeline.standalone import standalone_cluster

JOB_TIMEOUT_S = 600


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")
    return subprocess.run([sys.executable, "-m", "mockbroker_pipeline", *args],
                          capture_output=True, text=True, timeout=JOB_TIMEOUT_S, env=env)  # fmt: skip


def test_analyze_and_lab_on_a_standalone_cluster(spark: Any, analysis_out: Path, logs_dir: Path, tmp_path: Path) -> None:
    require_tool("java")
    with standalone_cluster(tmp_path) as master:
        analyzed = _cli("analyze", str(logs_dir), "--out", str(tmp_path / "analysis"), "--master", master)
        assert analyzed.returncode == 0, analyzed.stderr[-4000:]
        lab = _cli("assignor-lab", "--grid", "small", "--out", str(tmp_path / "lab"), "--master", master)
        assert lab.returncode == 0, lab.stderr[-4000:]
    for table in ("rebalances", "group_summary", "run_summary"):
        here = spark.read.parquet(str(tmp_path / "analysis" / table))
        local = spark.read.parquet(str(analysis_out / table))
        assert sorted(map(str, here.collect())) == sorted(map(str, local.collect())), table
    assert spark.read.parquet(str(tmp_path / "lab" / "lab_summary")).count() > 0
    assert (tmp_path / "lab" / "report.html").is_file()
