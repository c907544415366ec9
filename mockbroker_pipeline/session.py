"""The Spark session the pipeline's jobs run in: offline, quiet, small.

Only what the pyspark distribution bundles is used (no ``spark.jars.packages``, so no Maven or ivy
download ever starts). For an embedded ``local[...]`` master the UI is off, shuffles use few
partitions (one run's log or a lab grid is small; raise ``spark.sql.shuffle.partitions`` on a
cluster), the driver binds to loopback, and the Python workers run the driver's own interpreter so
that they import the same packages (assignors, pandas, pyarrow) unless PYSPARK_PYTHON says otherwise.

On a cluster (``--master spark://...``, ``yarn``, ``k8s://...``) the executors need Python with
pandas and pyarrow; the pure-Python packages the jobs run there (``pipeline``, ``assignors``) are
zipped and shipped with ``addPyFile``. Under spark-submit the session spark-submit configured is used
as it is (its master, its settings); ship the packages with ``--py-files`` (docs/pipeline.md).
"""

from __future__ import annotations

import os
import sys
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
APP_NAME = "mockbroker-pipeline"

# Settings every session gets (they change results' presentation, not where things run).
COMMON_CONF: dict[str, str] = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
}
# Settings for an embedded (local) session.
LOCAL_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    "spark.driver.memory": "1g",
}
SHIPPED_PACKAGES = ("mockbroker_pipeline", "mockbroker_assignors")
# What the assignors import from the codec package: Java's String.hashCode (mockbroker_protocol/hashing.py).
# Only these files, not the whole codec (generated modules the executors never use).
SHIPPED_MODULES = ("mockbroker_protocol/__init__.py", "mockbroker_protocol/hashing.py")


def under_spark_submit() -> bool:
    """True when spark-submit started this Python (it hands over its JVM through this variable)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def get_session(master: str | None = None, conf: Mapping[str, str] | None = None) -> SparkSession:
    """A Spark session on ``master`` (default ``local[*]``). An active session (a test fixture, a
    notebook) is reused as it is; under spark-submit, spark-submit's master and settings win."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.appName(APP_NAME)
    settings = dict(COMMON_CONF)
    local = False
    if not (master is None and under_spark_submit()):
        master = master or DEFAULT_MASTER
        local = master.startswith("local")
        builder = builder.master(master)
    if local:
        # Workers must import what the driver imports: run them on this interpreter.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # loopback only, and no warning about it
        settings.update(LOCAL_CONF)
    settings.update(conf or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    if master is not None and not local:
        session.sparkContext.addPyFile(str(package_zip()))
    return session


def package_zip() -> Path:
    """``mockbroker_pipeline`` and ``mockbroker_assignors`` (with the hashing module the assignors use)
    as one zip for executors (pure Python, no compiled files)."""
    root = Path(__file__).resolve().parents[1]
    target = Path(tempfile.mkdtemp(prefix="mockbroker-pipeline-")) / "mockbroker_pipeline.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as bundle:
        for package in SHIPPED_PACKAGES:
            for path in sorted((root / package).rglob("*")):
                if path.is_file() and path.suffix in (".py", ".typed"):
                    bundle.write(path, path.relative_to(root).as_posix())
        for module in SHIPPED_MODULES:
            bundle.write(root / module, module)
    return target


def is_remote(location: str | Path) -> bool:
    """A path with a URI scheme (hdfs://, s3a://, file://) goes to Spark as it is."""
    return "://" in str(location)


def prepare_out(out: str | Path) -> str:
    """``--out`` as Spark should see it; a local directory is created."""
    if is_remote(out):
        return str(out).rstrip("/")
    Path(out).mkdir(parents=True, exist_ok=True)
    return str(Path(out).resolve())


def table_path(out: str, name: str) -> str:
    return f"{out}/{name}"


def report_path(out: str | Path) -> Path:
    """Where report.html goes: in ``--out`` when it is local, else in the working directory (the
    driver writes it, and it cannot write to hdfs:// with plain file I/O)."""
    return Path("report.html") if is_remote(out) else Path(out) / "report.html"
