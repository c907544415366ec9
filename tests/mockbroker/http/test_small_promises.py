"""The control API's small promises (#26): /metrics carries the Prometheus text format's content
type with its version (the unknown group's offsets 404 is in test_app.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from mockbroker import MockCluster
from mockbroker.http.metrics import CONTENT_TYPE as PROMETHEUS_TEXT
from tests.mockbroker.http.test_app import Api, _started


@pytest.fixture
async def api() -> AsyncIterator[tuple[MockCluster, Api]]:
    cluster = MockCluster()
    server, http = await _started(cluster)
    try:
        yield cluster, Api(http)
    finally:
        await http.close()
        await server.stop()
        await cluster.stop()
    assert not cluster.internal_errors, cluster.internal_errors


async def test_metrics_have_the_prometheus_text_content_type(api: tuple[MockCluster, Api]) -> None:
    _, client = api
    async with client.http.get("/metrics") as response:
        assert response.status == 200
        assert response.headers["Content-Type"] == PROMETHEUS_TEXT == "text/plain; version=0.0.4; charset=utf-8"
        assert "mockbroker_requests_total" in await response.text()
