"""Fixtures shared by every test directory: ``kafka_broker``, the one real Apache Kafka of a session."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

import pytest

from mockbroker_conformance.kafka import launcher


def in_ci() -> bool:
    """True when the environment says CI (as tests/integration/support.py reads it)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@contextlib.contextmanager
def real_kafka(**options: Any) -> Iterator[launcher.KafkaBroker]:
    """``with real_kafka(properties=...) as kafka:`` — a real Kafka node (``launcher.start(**options)``),
    stopped at the end. Without java or mvn (``make kafka`` installs both) the test or fixture
    entering it skips on a user's machine and fails under CI=true. Each fixture that starts a Kafka
    (the session's, the secured one, the listeners' and OAUTHBEARER's) starts it through this."""
    try:
        broker = launcher.start(**options)
    except (launcher.KafkaLaunchError, FileNotFoundError) as exc:
        message = f"real Kafka unavailable: {exc}"
        if in_ci():
            pytest.fail(message + " (CI must run the differential suite; `make kafka`)")
        pytest.skip(message)
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(scope="session")
def kafka_broker() -> Iterator[launcher.KafkaBroker]:
    """One real Kafka node (mockbroker_conformance/kafka/launcher.py) for the whole session, started
    on first use and stopped at the end (skipped or failed as ``real_kafka`` says)."""
    with real_kafka() as broker:
        yield broker
