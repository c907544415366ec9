"""The pytest plugin (entry point ``pytest11``, loaded whenever mockbroker is installed).

Fixtures:
- ``kafka_cluster``: a fresh, started cluster for one test, on its own thread (usable from sync
  tests and from async ones: ``await kafka_cluster.aio.<method>``). Configure it with
  ``@pytest.mark.kafka_cluster(brokers=3, topics={"t": 6}, manual_clock=True, ...)``, and for a
  whole project (or directory) by overriding ``kafka_cluster_options`` in a conftest.py; a
  marker's option replaces the project's option of the same name.
- ``kafka_cluster_options``: the project-wide options of ``kafka_cluster`` (``{}`` here).
- ``kafka_cluster_factory``: ``kafka_cluster_factory(**options)`` starts as many clusters as
  the test wants (options of mockbroker.testing.start_cluster).
- ``kafka_cluster_session``: one cluster for the whole session; ``shared_kafka_cluster`` hands it
  to a test and clears its faults afterwards (topics and groups persist: name them per test).

Each fails the test at teardown when its broker recorded a bug (an unexpected exception while
serving), a strict-mode violation, or left a thread, socket or task behind.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from mockbroker.testing import KafkaCluster, start_cluster


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "kafka_cluster(**options): options for the kafka_cluster fixture (mockbroker.testing.start_cluster)",
    )


def _fail_on(problems: list[str], what: str) -> None:
    if problems:
        pytest.fail(f"{what}:\n" + "\n".join(f"  {p}" for p in problems), pytrace=False)


@pytest.fixture
def kafka_cluster_factory() -> Iterator[Callable[..., KafkaCluster]]:
    """Start clusters with ``kafka_cluster_factory(brokers=3, topics={...}, ...)``; all are
    stopped and checked when the test ends."""
    started: list[KafkaCluster] = []

    def make(**options: Any) -> KafkaCluster:
        kafka = start_cluster(**options)
        started.append(kafka)
        return kafka

    yield make
    problems: list[str] = []
    for kafka in started:
        problems += kafka.close(check=False)
    _fail_on(problems, "the mock Kafka cluster reported problems at teardown")


@pytest.fixture
def kafka_cluster_options() -> dict[str, Any]:
    """The options every ``kafka_cluster`` of this scope starts with (options of
    mockbroker.testing.start_cluster). Override it in a conftest.py for project-wide defaults::

        @pytest.fixture
        def kafka_cluster_options():
            return {"brokers": 3, "topics": {"orders": 6}}
    """
    return {}


@pytest.fixture
def kafka_cluster(
    request: pytest.FixtureRequest,
    kafka_cluster_factory: Callable[..., KafkaCluster],
    kafka_cluster_options: Mapping[str, Any],
) -> KafkaCluster:
    """A fresh cluster for this test: ``kafka_cluster_options``, then the options of
    ``@pytest.mark.kafka_cluster(...)`` (closest marker last, so it wins)."""
    options: dict[str, Any] = dict(kafka_cluster_options)
    for marker in reversed(list(request.node.iter_markers("kafka_cluster"))):
        options.update(marker.kwargs)
    return kafka_cluster_factory(**options)


@pytest.fixture(scope="session")
def kafka_cluster_session() -> Iterator[KafkaCluster]:
    """One cluster for the whole session (1 broker, defaults)."""
    kafka = start_cluster()
    yield kafka
    _fail_on(kafka.close(check=False), "the session's mock Kafka cluster reported problems at teardown")


@pytest.fixture
def shared_kafka_cluster(kafka_cluster_session: KafkaCluster) -> Iterator[KafkaCluster]:
    """The session's cluster for this test: faults cleared afterwards, and the test fails when
    the broker recorded a bug while it ran."""
    before = len(kafka_cluster_session.bug_reports())
    yield kafka_cluster_session
    kafka_cluster_session.clear_faults()
    _fail_on(kafka_cluster_session.bug_reports()[before:], "the shared mock Kafka cluster reported problems")
