"""A Spark standalone cluster on loopback for the pipeline's tests: a master and two workers
started from the installed PySpark's own classes (``org.apache.spark.deploy.master.Master`` and
``...worker.Worker`` on PySpark's jars, as ``sbin/start-master.sh`` and ``start-worker.sh`` run them),
one core and 1 GiB each (an executor asks 1 GiB by default), stopped at the end."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.integration.support import DEADLINE_S, wait_for

WORKERS = 2


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _java(main: str, args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    import pyspark

    home = Path(pyspark.__file__).resolve().parent
    java = shutil.which("java") or "java"
    argv = [java, "-Xmx256m", "-cp", f"{home / 'conf'}:{home / 'jars'}/*", main, *args]
    return subprocess.Popen(argv, stdout=log.open("wb"), stderr=subprocess.STDOUT, env=env)


def _wait_for(log: Path, text: str, count: int, proc: subprocess.Popen[bytes]) -> None:
    def seen() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"{log.name}: the process exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        return log.read_text(errors="replace").count(text) >= count

    wait_for(seen, f"{text!r} x{count} in {log.name}", lambda: log.read_text(errors="replace")[-3000:], DEADLINE_S * 2)


@contextmanager
def standalone_cluster(workdir: Path) -> Iterator[str]:
    """Yields the master URL (spark://127.0.0.1:PORT) once both workers registered."""
    import pyspark

    from mockbroker_pipeline.jars import scala_binary_version

    # SPARK_HOME and SPARK_SCALA_VERSION: a worker builds each executor's command from
    # $SPARK_HOME/jars, and the launcher (AbstractCommandBuilder.getScalaVersion) looks for a source
    # build's directories unless the Scala version is given; the PySpark package is that home.
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=sys.executable,
               SPARK_HOME=str(Path(pyspark.__file__).resolve().parent),
               SPARK_SCALA_VERSION=scala_binary_version())  # fmt: skip
    port = _free_port()
    url = f"spark://127.0.0.1:{port}"
    procs: list[subprocess.Popen[bytes]] = []
    try:
        master_log = workdir / "master.log"
        master = _java("org.apache.spark.deploy.master.Master",
                       ["--host", "127.0.0.1", "--port", str(port), "--webui-port", "0"], master_log, env)  # fmt: skip
        procs.append(master)
        _wait_for(master_log, "I have been elected leader", 1, master)
        for i in range(WORKERS):
            procs.append(_java(
                "org.apache.spark.deploy.worker.Worker",
                ["--host", "127.0.0.1", "--cores", "1", "--memory", "1g", "--webui-port", "0",
                 "--work-dir", str(workdir / f"work-{i}"), url],
                workdir / f"worker-{i}.log", env,
            ))  # fmt: skip
        _wait_for(master_log, "Registering worker", WORKERS, master)
        yield url
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
