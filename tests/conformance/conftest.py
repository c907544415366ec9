"""The conformance suite's runs, shared by the tests of this directory: the whole matrix against an
embedded mockbroker, against a real Apache Kafka (the reference: `make kafka` fetches it) and
against librdkafka's mock, each run once per session, their files written to build/conformance/
(kept by CI as the run's matrix)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mockbroker_conformance import Matrix, report, run_suite
from mockbroker_conformance.clients import CLIENTS
from mockbroker_conformance.scenarios import SCENARIOS
from tests.integration.support import in_ci

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "build" / "conformance"


def require_all_clients() -> None:
    """Every client must run in CI (`make clients` installs them); a user's machine may skip."""
    missing = {name: m for name, spec in CLIENTS.items() if (m := spec.missing())}
    if missing:
        message = "conformance clients missing: " + "; ".join(f"{n}: {m}" for n, m in missing.items())
        if in_ci():
            pytest.fail(message + " (CI must run the whole matrix; `make clients`)")
        pytest.skip(message)


# Clients librdkafka's mock cannot serve at all: kafka-clients 4.3, franz-go and the newest sarama
# (Config.Version 4.3.1) open with ApiVersions v4, and the mock (librdkafka 2.16) answers in a shape
# they cannot read ("response did not contain enough data to be valid", franz-go says; sarama "has
# run out of available brokers"), so every cell would only fail or wait out its deadlines (about
# 4.5 minutes of CI for nothing). docs/conformance.md says so.
# Kafka Streams (kafka-clients 4.3 inside) likewise; and the mock serves no streams groups (KIP-1071).
NOT_ON_RDKAFKA_MOCK = ("java", "java/consumer", "franz-go", "franz-go/consumer", "ibm-sarama", "kafka-streams", "kafka-streams/streams")


def _run(target: str, stem: str, jobs: int, scenarios: list[str] | None = None,
         clients: list[str] | None = None) -> Callable[[], Matrix]:  # fmt: skip
    cache: list[Matrix] = []

    def get() -> Matrix:
        if not cache:
            require_all_clients()
            matrix = run_suite(target, jobs=jobs, scenarios=scenarios, clients=clients)
            report.write_all(matrix, OUT, stem)
            cache.append(matrix)
        return cache[0]

    return get


@pytest.fixture(scope="session")
def mockbroker_matrix() -> Matrix:
    return _run("mockbroker", "matrix", 4)()


@pytest.fixture(scope="session")
def kafka_matrix() -> Matrix:
    """Every client and scenario against one real Kafka, fault scenarios aside (Kafka has no fault
    injection: they would only say "not supported"). Its runs share the one broker and mostly wait
    on group timing, so more go at a time than against mockbroker."""
    missing = launcher_missing()
    if missing:
        if in_ci():
            pytest.fail(f"real Kafka unavailable: {missing} (CI must run the Kafka column; `make kafka`)")
        pytest.skip(f"real Kafka unavailable: {missing}")
    return _run("kafka", "matrix-kafka", 6, [s.id for s in SCENARIOS if not s.fault])()


def launcher_missing() -> str | None:
    """What the Kafka target lacks on this machine (java, or the jars `make kafka` fetches), or None."""
    import shutil

    from mockbroker_conformance.kafka import launcher

    if shutil.which(launcher.JAVA) is None:
        return "java"
    home = launcher.kafka_home()
    if not (home / launcher.STAMP).is_file() and shutil.which("mvn") is None:
        return f"the Kafka jars under {home} and mvn to fetch them"
    return None


@pytest.fixture(scope="session")
def rdkafka_matrix() -> Matrix:
    # Most of a run against the mock is waiting (its failures end at deadlines): more at a time.
    return _run("rdkafka-mock", "matrix-rdkafka-mock", 8, clients=[c for c in CLIENTS if c not in NOT_ON_RDKAFKA_MOCK])()
