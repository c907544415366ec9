"""The pipeline on a Spark standalone cluster (master and two workers on loopback, from the installed
PySpark's own classes, one cluster for the module): the file ``analyze`` job and the assignor lab
run there with ``--master spark://...`` and give what they give on ``local``; the streaming job
(``analyze --bootstrap``) runs there through ``spark-submit`` as docs/pipeline.md shows it, reads a
live broker's event topic and gives the file job's tables on the same events."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.integration.groups_support import Members, group_broker
from tests.integration.support import require_tool, wait_until
from tests.pipeline.standalone import standalone_cluster

JOB_TIMEOUT_S = 600
ROOT = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    return dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable, SPARK_LOCAL_IP="127.0.0.1")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mockbroker_pipeline", *args],
                          capture_output=True, text=True, timeout=JOB_TIMEOUT_S, env=_env())  # fmt: skip


@pytest.fixture(scope="module")
def master(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    require_tool("java")
    with standalone_cluster(tmp_path_factory.mktemp("standalone")) as url:
        yield url


def test_analyze_and_lab_on_a_standalone_cluster(spark: Any, master: str, analysis_out: Path, logs_dir: Path, tmp_path: Path) -> None:
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


def _spark_submit(master: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """docs/pipeline.md's spark-submit line: the packages zipped for the executors, the Kafka
    source's jars, ``mockbroker_pipeline/__main__.py`` as the application."""
    import pyspark

    from mockbroker_pipeline.jars import kafka_jars
    from mockbroker_pipeline.session import package_zip

    home = Path(pyspark.__file__).resolve().parent
    argv = [str(home / "bin" / "spark-submit"), "--master", master, "--py-files", str(package_zip()),
            "--jars", ",".join(str(j) for j in kafka_jars()),
            "--conf", "spark.sql.streaming.kafka.useDeprecatedOffsetFetching=true",
            str(ROOT / "mockbroker_pipeline" / "__main__.py"), *args]  # fmt: skip
    return subprocess.run(argv, capture_output=True, text=True, timeout=JOB_TIMEOUT_S, env=dict(_env(), SPARK_HOME=str(home)), cwd=tmp_path)


def test_streaming_analyze_by_spark_submit_on_the_cluster(spark: Any, master: str, tmp_path: Path) -> None:
    """A KIP-848 group of two members and a forced rebalance, streamed from the broker by the job
    spark-submit ran on the cluster; the same tables as the file job on the broker's file log."""
    from mockbroker_pipeline.analyze import analyze
    from tests.pipeline.test_stream import _jars_or_skip, _kip848_stable, _rows

    _jars_or_skip()
    path, out = tmp_path / "events.jsonl", tmp_path / "out"
    with contextmanager(group_broker)(events_path=str(path), events_topic=True) as broker:
        broker.create_topic("t", 4)
        with Members(broker, "g", "t") as group:
            group.start("confluent", "a", group_protocol="consumer")
            group.start("confluent", "b", group_protocol="consumer")
            events = lambda: broker.cluster.events.filter(group_id="g")  # noqa: E731
            wait_until(lambda: broker.call(lambda: _kip848_stable(events())), "the group Stable with both members")
            since = broker.last_event_seq()
            broker.force_rebalance("g")
            wait_until(lambda: broker.call(lambda: any(
                e.seq > since and e.type == "consumer_group.transition" and e.details.get("to_state") == "Stable"
                for e in events())), "Stable after the forced rebalance")  # fmt: skip
        job = _spark_submit(master, tmp_path, "analyze", "--bootstrap", broker.bootstrap_servers,
                            "--out", str(out), "--idle-timeout", "3")  # fmt: skip
        assert job.returncode == 0, job.stderr[-4000:]
        total = broker.call(lambda: len(broker.cluster.events))
    assert f"streamed {total} events" in job.stdout, job.stdout
    files = analyze(spark, [str(path)])
    assert _rows(spark.read.parquet(str(out / "rebalances"))) == _rows(files.rebalances)
    streamed = _rows(spark.read.parquet(str(out / "consumer_group_epochs")))
    assert streamed == _rows(files.epochs)
    assert ("forced_rebalance", True) in [(r["cause"], r["control"]) for r in streamed], streamed
