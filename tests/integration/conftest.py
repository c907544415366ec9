"""Fixtures for the real-client tests: a 3-broker cluster on loopback that fails the test when the
broker recorded a bug (an unexpected exception while serving) at any point.

- ``broker_thread``: the cluster on its own thread and event loop, for blocking clients
  (kafka-python, confluent-kafka, kcat). Touch its state only through ``BrokerThread.call``/``run``.
- ``cluster``: the cluster on the test's own loop, for asyncio clients (aiokafka).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from mockbroker import MockCluster
from tests.integration.support import BROKERS, BrokerThread


def _fail_on_broker_bugs(errors: list[BaseException]) -> None:
    if errors:
        details = "\n".join(f"  {type(e).__name__}: {e}" for e in errors)
        pytest.fail(f"the broker recorded {len(errors)} internal error(s) (broker bugs):\n{details}")


@pytest.fixture
def broker_thread() -> Iterator[BrokerThread]:
    broker = BrokerThread(brokers=BROKERS)
    try:
        broker.start()
        yield broker
    finally:
        errors = broker.stop()
    _fail_on_broker_bugs(errors)


@pytest.fixture
async def cluster() -> AsyncIterator[MockCluster]:
    c = MockCluster(brokers=BROKERS)
    await c.start()
    try:
        yield c
    finally:
        await c.stop()
    _fail_on_broker_bugs(c.internal_errors)
