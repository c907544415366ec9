"""The Spark session the pipeline's jobs run in: offline, quiet, small.

Only what the pyspark distribution bundles is used (no ``spark.jars.packages``, so no Maven or ivy
download ever starts). The UI is off, shuffles use few partitions (event logs and lab grids are
small per run; raise ``spark.sql.shuffle.partitions`` on a real cluster with ``--conf`` or
spark-submit), and the Python workers run the driver's own interpreter so that they see the same
packages (assignors, pandas, pyarrow) unless PYSPARK_PYTHON says otherwise.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
APP_NAME = "mockbroker-pipeline"

# Settings for an embedded (local) session; a --master cluster keeps its own defaults for the rest.
BASE_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.driver.bindAddress": "127.0.0.1",
    "spark.driver.host": "127.0.0.1",
    # Small driver for tests and laptops; spark-submit --driver-memory overrides it.
    "spark.driver.memory": "1g",
}


def get_session(master: str | None = None, conf: Mapping[str, str] | None = None) -> SparkSession:
    """A Spark session on ``master`` (default ``local[*]``). Reuses the active session when there
    is one (spark-submit, a notebook, a test fixture): its master and settings win."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    # Workers must import what the driver imports: run them on this interpreter.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder.appName(APP_NAME).master(master or DEFAULT_MASTER)
    settings = dict(BASE_CONF)
    if master and not master.startswith("local"):
        # On a cluster, bind and advertise the driver as Spark would by default.
        settings.pop("spark.driver.bindAddress")
        settings.pop("spark.driver.host")
    settings.update(conf or {})
    for key, value in settings.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
