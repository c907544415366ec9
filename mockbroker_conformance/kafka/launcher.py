"""The real Apache Kafka broker on demand: fetch its jars from Maven Central, start one KRaft node, stop it.

``fetch()`` runs Maven on ``pom.xml`` beside this module (``dependency:copy-dependencies``), which
copies the pinned broker, a log4j2 runtime and ``kafka-clients`` into ``build/kafka/<version>/libs``
(git-ignored) and writes a stamp; a second call finds the stamp and does nothing. ``start()``
formats a fresh log directory (``kafka.tools.StorageTool format``, a random cluster id) and runs
``kafka.Kafka`` from those jars, no binary tarball: one node in KRaft combined mode
(``process.roles=broker,controller``), PLAINTEXT on 127.0.0.1 at a free port, the controller
listener at another, internal topics of one partition and replication 1, and
``group.initial.rebalance.delay.ms=0``. It returns once Kafka answers ApiVersions and Metadata
(our own codec over a socket). ``KafkaBroker.stop()`` sends SIGTERM, kills after a deadline and
removes the temporary directory.

``python -m mockbroker_conformance.kafka.launcher fetch`` (``make kafka``) fetches;
``... serve`` starts one and prints its bootstrap address until Ctrl-C.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mockbroker_protocol import registry
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from mockbroker_protocol.messages.metadata import MetadataRequest
from mockbroker_protocol.primitives import INT32

# Pinned with pom.xml's kafka.version: the newest release of the line our codec's specs are from.
KAFKA_VERSION = "4.3.1"
POM = Path(__file__).with_name("pom.xml")
# <checkout>/build/kafka unless MOCKBROKER_KAFKA_HOME says otherwise.
DEFAULT_HOME = Path(__file__).resolve().parents[2] / "build" / "kafka"
JAVA = os.environ.get("MOCKBROKER_KAFKA_JAVA", "java")
HEAP = "-Xmx512m"
STAMP = ".fetched"


class KafkaLaunchError(RuntimeError):
    """Kafka could not be fetched, formatted or started; the message carries its output."""


def kafka_home(version: str = KAFKA_VERSION) -> Path:
    """Where a version's jars live: ``$MOCKBROKER_KAFKA_HOME/<version>`` or ``build/kafka/<version>``."""
    base = os.environ.get("MOCKBROKER_KAFKA_HOME")
    return (Path(base) if base else DEFAULT_HOME) / version


def fetch(version: str = KAFKA_VERSION, *, quiet: bool = True) -> Path:
    """Copy the broker's jars into ``kafka_home(version)/libs`` with Maven, once; that libs folder.

    The stamp is written last, so an interrupted copy is redone next time; it holds the pom's bytes,
    so editing the pom (another log4j, a new dependency) fetches again."""
    home = kafka_home(version)
    libs = home / "libs"
    stamp = home / STAMP
    wanted = f"{version}\n{POM.read_text()}"
    if stamp.is_file() and stamp.read_text() == wanted and any(libs.glob("kafka_2.13-*.jar")):
        return libs
    mvn = shutil.which("mvn")
    if mvn is None:
        raise KafkaLaunchError("mvn is not installed (make kafka installs it: apt-get install -y maven)")
    if libs.exists():
        shutil.rmtree(libs)  # stale jars of an older pom would stay on the classpath
    home.mkdir(parents=True, exist_ok=True)
    command = [mvn, "-B", "-f", str(POM), "dependency:copy-dependencies",
               f"-Dkafka.version={version}", f"-Dkafka.dir={home}"]  # fmt: skip
    if quiet:
        command.insert(2, "-q")
    done = subprocess.run(command, capture_output=quiet, text=True, check=False)
    if done.returncode != 0:
        raise KafkaLaunchError(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    stamp.write_text(wanted)
    return libs


def free_port() -> int:
    """A port the kernel just gave out on 127.0.0.1 (free unless someone takes it in between)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def server_properties(
    log_dir: Path, port: int, controller_port: int, extra: dict[str, str] | None = None
) -> str:
    """The single node's server.properties: KRaft combined mode, internal topics sized for one broker."""
    props = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": str(log_dir),
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "transaction.state.log.num.partitions": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        # KIP-1071 streams groups (served by default from 4.2): no initial delay, and the target
        # assignment computed at once and on the coordinator's thread, so that a sequence of
        # StreamsGroupHeartbeats is answered deterministically (mockbroker computes it so).
        "group.streams.initial.rebalance.delay.ms": "0",
        "group.streams.assignment.interval.ms": "0",
        "group.streams.assignor.offload.enable": "false",
        # "{port}" and "{controller}" in an extra value are the PLAINTEXT and controller ports (chosen
        # here), so that a caller can add a listener beside them (tests/differential/conftest.py).
        **{k: v.replace("{port}", str(port)).replace("{controller}", str(controller_port)) for k, v in (extra or {}).items()},
    }
    return "".join(f"{key}={value}\n" for key, value in props.items())


# Warnings and errors only, plus the line saying the server started (for a reader of the log).
LOG4J2 = """status = error
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.out.ref = OUT
logger.server.name = kafka.server.KafkaRaftServer
logger.server.level = INFO
"""


def random_cluster_id() -> str:
    """A KRaft cluster id: a random UUID in Kafka's URL-safe base64 form (22 characters). It may
    start with "-", so it is passed as ``--cluster-id=ID`` (argparse4j would read ``-t -x...`` as
    an option: "argument --cluster-id/-t: expected one argument")."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


@dataclass
class KafkaBroker:
    """One running Kafka node started by ``start()``; ``stop()`` (or ``with``) ends it."""

    host: str
    port: int
    controller_port: int
    cluster_id: str
    workdir: Path
    process: subprocess.Popen[bytes]
    version: str = KAFKA_VERSION
    started_s: float = 0.0  # seconds from start() to the first Metadata answer
    _stopped: bool = field(default=False, repr=False)

    @property
    def bootstrap_servers(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.workdir / "kafka.out"

    def log_tail(self, lines: int = 40) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def stop(self, timeout_s: float = 20.0) -> int | None:
        """SIGTERM (Kafka shuts down cleanly), SIGKILL after ``timeout_s``; the temp dir removed."""
        if self._stopped:
            return self.process.returncode
        self._stopped = True
        try:
            if self.process.poll() is None:
                self.process.send_signal(signal.SIGTERM)
                try:
                    self.process.wait(timeout_s)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait(10)
        finally:
            shutil.rmtree(self.workdir, ignore_errors=True)
        return self.process.returncode

    def __enter__(self) -> KafkaBroker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _java_command(libs: Path, log4j: Path, *args: str) -> list[str]:
    return [JAVA, HEAP, "-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={log4j}", "-cp", f"{libs}/*", *args]  # fmt: skip


def start(
    version: str = KAFKA_VERSION,
    *,
    deadline_s: float = 90.0,
    properties: dict[str, str] | None = None,
    format_args: tuple[str, ...] = (),
) -> KafkaBroker:
    """Fetch (when needed), format and start one Kafka node; return once it answers Metadata.
    ``format_args`` go to ``StorageTool format`` (``--add-scram`` records SCRAM users, KIP-900)."""
    began = time.monotonic()
    libs = fetch(version)
    workdir = Path(tempfile.mkdtemp(prefix="mockbroker-kafka-"))
    try:
        port, controller_port = free_port(), free_port()
        while controller_port == port:
            controller_port = free_port()
        config = workdir / "server.properties"
        config.write_text(server_properties(workdir / "logs", port, controller_port, properties))
        log4j = workdir / "log4j2.properties"
        log4j.write_text(LOG4J2)
        cluster_id = random_cluster_id()
        formatted = subprocess.run(
            _java_command(libs, log4j, "kafka.tools.StorageTool", "format", f"--cluster-id={cluster_id}", "-c", str(config), *format_args),
            capture_output=True, text=True, check=False, timeout=deadline_s,
        )  # fmt: skip
        if formatted.returncode != 0:
            raise KafkaLaunchError(f"StorageTool format failed:\n{formatted.stdout}{formatted.stderr}")
        with open(workdir / "kafka.out", "wb") as out:
            process = subprocess.Popen(
                _java_command(libs, log4j, "kafka.Kafka", str(config)),
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    broker = KafkaBroker("127.0.0.1", port, controller_port, cluster_id, workdir, process, version)
    try:
        wait_ready(broker, began + deadline_s)
    except KafkaLaunchError as exc:
        tail = broker.log_tail()
        broker.stop()
        raise KafkaLaunchError(f"{exc}\n--- kafka.out ---\n{tail}") from None
    except BaseException:
        broker.stop()
        raise
    broker.started_s = time.monotonic() - began
    return broker


def _call(sock: socket.socket, api_key: int, version: int, request: Any) -> Any:
    sock.sendall(registry.encode_request(RequestHeader(api_key, version, 1, "mockbroker-launcher"), request))
    size = INT32.unpack(_recv(sock, 4))[0]
    _, body = registry.decode_response(api_key, version, _recv(sock, size))
    return body


def _recv(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            raise ConnectionError("Kafka closed the connection")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def wait_ready(broker: KafkaBroker, deadline: float) -> None:
    """Poll (until the monotonic ``deadline``) until Kafka answers ApiVersions and a Metadata naming itself."""
    last: BaseException | None = None
    while time.monotonic() < deadline:
        if broker.process.poll() is not None:
            raise KafkaLaunchError(f"Kafka exited with {broker.process.returncode} before answering")
        try:
            with socket.create_connection((broker.host, broker.port), timeout=5) as sock:
                versions = _call(
                    sock,
                    18,
                    3,
                    ApiVersionsRequest(client_software_name="mockbroker", client_software_version="1"),
                )
                if versions.error_code == 0:
                    metadata = _call(sock, 3, 12, MetadataRequest(topics=[], allow_auto_topic_creation=False))
                    if metadata.brokers and metadata.controller_id >= 0:
                        return
        except OSError as exc:  # refused while it starts, reset while it binds
            last = exc
        time.sleep(0.1)  # poll interval against an external process, not a synchronisation
    raise KafkaLaunchError(f"Kafka did not answer Metadata before the deadline (last error: {last!r})")


@contextlib.contextmanager
def running(version: str = KAFKA_VERSION, **options: Any) -> Iterator[KafkaBroker]:
    """``with running() as kafka:`` — start(), stopped at the end."""
    broker = start(version, **options)
    try:
        yield broker
    finally:
        broker.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mockbroker_conformance.kafka.launcher", description=__doc__.splitlines()[0]
    )
    parser.add_argument("command", choices=["fetch", "serve", "start-time"])
    parser.add_argument("--version", default=KAFKA_VERSION)
    args = parser.parse_args(argv)
    if args.command == "fetch":
        print(fetch(args.version, quiet=False))
        return 0
    with running(args.version) as kafka:
        if args.command == "start-time":
            print(f"{kafka.started_s:.3f}")
            return 0
        print(
            f"Kafka {kafka.version} on {kafka.bootstrap_servers} (cluster {kafka.cluster_id}); Ctrl-C stops it",
            flush=True,
        )
        # SIGTERM ends the wait as Ctrl-C does, so that `running` stops Kafka on the way out
        # (left to the default action, SIGTERM would kill this process and orphan the broker).
        signal.signal(signal.SIGTERM, _interrupt)
        with contextlib.suppress(KeyboardInterrupt):
            kafka.process.wait()
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
