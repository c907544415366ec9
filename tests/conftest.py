"""Fixtures shared by every test directory: ``kafka_broker``, the one real Apache Kafka of a session."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from mockbroker_conformance.kafka import launcher


def in_ci() -> bool:
    """True when the environment says CI (as tests/integration/support.py reads it)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="session")
def kafka_broker() -> Iterator[launcher.KafkaBroker]:
    """One real Kafka node (mockbroker_conformance/kafka/launcher.py) for the whole session, started
    on first use and stopped at the end. Without java or mvn (``make kafka`` installs both) the
    tests using it skip on a user's machine and fail under CI=true."""
    try:
        broker = launcher.start()
    except (launcher.KafkaLaunchError, FileNotFoundError) as exc:
        message = f"real Kafka unavailable: {exc}"
        if in_ci():
            pytest.fail(message + " (CI must run the differential suite; `make kafka`)")
        pytest.skip(message)
    try:
        yield broker
    finally:
        broker.stop()
