"""Fixtures for broker tests: a started cluster on loopback, failing the test on broker bugs."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from mockbroker import MockCluster


@pytest.fixture
async def cluster() -> AsyncIterator[MockCluster]:
    c = MockCluster(brokers=3)
    await c.start()
    try:
        yield c
    finally:
        await c.stop()
    assert c.internal_errors == [], f"the broker hit internal errors: {c.internal_errors!r}"
