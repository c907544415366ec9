"""The control API's small promises (#26): an unknown group's offsets are a 404 like its other
endpoints, and /metrics carries the Prometheus text format's content type with its version."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from mockbroker import MockCluster
from mockbroker.admin_http import PROMETHEUS_TEXT
from tests.sidecar.test_admin_http import Api, _started


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


async def test_offsets_of_an_unknown_group_are_a_404(api: tuple[MockCluster, Api]) -> None:
    _, client = api
    status, body = await client.get("/groups/nobody/offsets")
    assert status == 404, body
    assert "no group 'nobody'" in body["error"]
    assert (await client.get("/groups/nobody"))[0] == 404


async def test_metrics_have_the_prometheus_text_content_type(api: tuple[MockCluster, Api]) -> None:
    _, client = api
    async with client.http.get("/metrics") as response:
        assert response.status == 200
        assert response.headers["Content-Type"] == PROMETHEUS_TEXT == "text/plain; version=0.0.4; charset=utf-8"
        assert "mockbroker_requests_total" in await response.text()
