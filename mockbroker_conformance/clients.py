"""The clients the suite drives: one entry per (client, configuration), each a driver program.

Adding a client is adding one driver (docs/conformance.md) and one ``ClientSpec`` here: how to
start the driver, and what it needs on this machine (``missing`` says what is not there).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

DRIVERS = Path(__file__).resolve().parent / "drivers"
REPO_ROOT = Path(__file__).resolve().parents[1]  # a source checkout (editable install)
# Built by `make clients` (or by ``build_sarama``); MOCKBROKER_SARAMA_DRIVER overrides.
SARAMA_BINARY = REPO_ROOT / "build" / "integration-clients" / "sarama-conformance"
# kafkajs comes from npm (tests/integration/clients/node, `make clients`); MOCKBROKER_NODE_MODULES overrides.
NODE_MODULES = REPO_ROOT / "tests" / "integration" / "clients" / "node" / "node_modules"
DEBIAN_GOPATH = Path("/usr/share/gocode")
# The Java client's driver, built by `make java-driver` (classes and kafka-clients' jars);
# MOCKBROKER_JAVA_DRIVER overrides the folder.
JAVA_DRIVER = REPO_ROOT / "build" / "java-driver"
# A short-lived client process: start fast (C1 only, the serial collector, a small heap).
JAVA_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m", "-Djava.awt.headless=true",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dorg.slf4j.simpleLogger.showDateTime=true")  # fmt: skip


@dataclass(frozen=True)
class ClientSpec:
    name: str  # the matrix's column
    argv: Callable[[str, str], list[str]]  # (bootstrap, client id) -> the driver's command line
    missing: Callable[[], str | None]  # None when it can run here, else what is missing
    env: Callable[[], dict[str, str] | None] = lambda: None
    # client ids must be unique per process; some clients (kafkajs) want no spaces in them
    short: str = ""
    # "client": driven command by command (scenarios.py); "streams": a Kafka Streams application,
    # which runs the streams_scenarios.py scenarios only.
    kind: str = "client"


def _python(client: str) -> Callable[[str, str], list[str]]:
    return lambda bootstrap, client_id: [
        sys.executable, str(DRIVERS / "python_clients.py"), "--client", client, "--bootstrap", bootstrap, "--client-id", client_id,
    ]  # fmt: skip


def _importable(module: str) -> Callable[[], str | None]:
    def check() -> str | None:
        import importlib.util

        return None if importlib.util.find_spec(module) else f"the Python package {module} (pip install -e '.[test]')"

    return check


def _kcat_missing() -> str | None:
    return None if shutil.which("kcat") else "the kcat binary (Debian: apt-get install -y kcat)"


def node_modules() -> Path:
    return Path(os.environ.get("MOCKBROKER_NODE_MODULES", NODE_MODULES))


def _kafkajs_missing() -> str | None:
    if shutil.which("node") is None:
        return "node (Debian: apt-get install -y nodejs)"
    if not (node_modules() / "kafkajs").is_dir():
        return f"kafkajs under {node_modules()} (`make clients`, or set MOCKBROKER_NODE_MODULES)"
    return None


def sarama_binary() -> Path:
    return Path(os.environ.get("MOCKBROKER_SARAMA_DRIVER", SARAMA_BINARY))


def _sarama_missing() -> str | None:
    if sarama_binary().is_file():
        return None
    return f"the sarama driver binary {sarama_binary()} (`make clients` builds it with Go and Debian's golang-github-shopify-sarama-dev)"


# The Go module drivers (franz-go), built by `make go-drivers`; MOCKBROKER_GO_DRIVERS overrides the folder.
GO_DRIVERS = REPO_ROOT / "build" / "go-drivers"


def go_driver(name: str) -> Path:
    return Path(os.environ.get("MOCKBROKER_GO_DRIVERS", GO_DRIVERS)) / f"{name}-conformance"


def _go_missing(name: str) -> Callable[[], str | None]:
    def check() -> str | None:
        path = go_driver(name)
        return None if path.is_file() else f"the {name} driver binary {path} (`make go-drivers`: Go >= 1.26 and the module proxy)"

    return check


def _go(name: str, group_protocol: str) -> Callable[[str, str], list[str]]:
    return lambda b, c: [str(go_driver(name)), "--bootstrap", b, "--client-id", c, "--group-protocol", group_protocol]


def java_driver() -> Path:
    return Path(os.environ.get("MOCKBROKER_JAVA_DRIVER", JAVA_DRIVER))


def _java_missing() -> str | None:
    if shutil.which("java") is None:
        return "java (Debian: apt-get install -y openjdk-17-jre-headless)"
    if not (java_driver() / ".built").is_file():
        return f"the Java driver under {java_driver()} (`make java-driver`: Maven and javac)"
    return None


def _java(group_protocol: str) -> Callable[[str, str], list[str]]:
    return lambda bootstrap, client_id: [
        "java", *JAVA_OPTIONS, "-cp", f"{java_driver() / 'classes'}:{java_driver() / 'libs'}/*", "mockbroker.conformance.Driver",
        "--bootstrap", bootstrap, "--client-id", client_id, "--group-protocol", group_protocol,
    ]  # fmt: skip


# The Kafka Streams word count and its driver (drivers/streams, `make streams-app`);
# MOCKBROKER_STREAMS_APP overrides the folder.
STREAMS_APP = REPO_ROOT / "build" / "streams-app"


def streams_app() -> Path:
    return Path(os.environ.get("MOCKBROKER_STREAMS_APP", STREAMS_APP))


def _streams_missing() -> str | None:
    if shutil.which("java") is None:
        return "java (Debian: apt-get install -y openjdk-17-jre-headless)"
    if not (streams_app() / ".built").is_file():
        return f"the Kafka Streams app under {streams_app()} (`make streams-app`: Maven and javac)"
    return None


def _streams(group_protocol: str) -> Callable[[str, str], list[str]]:
    return lambda bootstrap, client_id: [
        "java", *JAVA_OPTIONS, "-cp", f"{streams_app() / 'classes'}:{streams_app() / 'libs'}/*", "mockbroker.streams.StreamsDriver",
        "--bootstrap", bootstrap, "--client-id", client_id, "--group-protocol", group_protocol,
    ]  # fmt: skip


CLIENTS: dict[str, ClientSpec] = {
    spec.name: spec
    for spec in (
        ClientSpec("kafka-python", _python("kafka-python"), _importable("kafka"), short="kp"),
        ClientSpec("aiokafka", _python("aiokafka"), _importable("aiokafka"), short="aio"),
        ClientSpec("confluent-kafka", _python("confluent"), _importable("confluent_kafka"), short="ck"),
        ClientSpec("confluent-kafka/consumer", _python("confluent-consumer"), _importable("confluent_kafka"), short="ck848"),
        ClientSpec(
            "kcat",
            lambda b, c: [sys.executable, str(DRIVERS / "kcat_driver.py"), "--bootstrap", b, "--client-id", c],
            _kcat_missing, short="kcat",
        ),
        ClientSpec(
            "kafkajs",
            lambda b, c: ["node", str(DRIVERS / "kafkajs_driver.js"), "--bootstrap", b, "--client-id", c],
            _kafkajs_missing, env=lambda: {**os.environ, "NODE_PATH": str(node_modules())}, short="kjs",
        ),
        ClientSpec(
            "sarama",
            lambda b, c: [str(sarama_binary()), "--bootstrap", b, "--client-id", c],
            _sarama_missing, short="sarama",
        ),
        # The reference client: group.protocol=classic (eager range, or cooperative-sticky when a
        # scenario asks) and group.protocol=consumer (KIP-848).
        ClientSpec("java", _java("classic"), _java_missing, short="java"),
        ClientSpec("java/consumer", _java("consumer"), _java_missing, short="java848"),
        # franz-go's kgo: classic (client-side balancers) and KIP-848 (kgo.ServerSideBalancer).
        ClientSpec("franz-go", _go("franz-go", "classic"), _go_missing("franz-go"), short="kgo"),
        ClientSpec("franz-go/consumer", _go("franz-go", "consumer"), _go_missing("franz-go"), short="kgo848"),
        # The newest IBM/sarama (Config.Version 4.3.1), beside Debian's 1.22 above.
        ClientSpec("ibm-sarama", lambda b, c: [str(go_driver("ibm-sarama")), "--bootstrap", b, "--client-id", c],
                   _go_missing("ibm-sarama"), short="isarama"),
        # Kafka Streams (kafka-streams 4.3.1): group.protocol=classic and streams (KIP-1071).
        ClientSpec("kafka-streams", _streams("classic"), _streams_missing, short="kst", kind="streams"),
        ClientSpec("kafka-streams/streams", _streams("streams"), _streams_missing, short="kst1071", kind="streams"),
    )
}
