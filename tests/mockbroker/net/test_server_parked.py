"""A request waiting in its task (mockbroker/net/server.py) when its connection closes before the task
has run at all: the request's coroutine is closed, never left "never awaited"."""

from __future__ import annotations

import asyncio

from mockbroker import MockCluster
from mockbroker_protocol import registry
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from tests.mockbroker.datapath import wait_until
from tests.mockbroker.wire import WireClient


async def test_a_request_cancelled_before_its_task_ran_leaves_no_unawaited_coroutine(cluster: MockCluster) -> None:
    await cluster.control.intercept("ApiVersions", lambda seen: None)  # requests now run in tasks
    node = cluster.brokers[1]
    client = await WireClient.connect(node.host, node.port)
    server = cluster._servers[1]
    await wait_until(lambda: bool(server._connections), "the broker's side of the connection")
    (connection,) = server._connections
    frame = registry.encode_request(RequestHeader(18, 3, 1, "t"), ApiVersionsRequest("lib", "1.0"))
    buffer = connection.get_buffer(len(frame))  # a read of the whole frame (asyncio.BufferedProtocol)
    buffer[: len(frame)] = frame
    connection.buffer_updated(len(frame))  # the request goes to a task that has not run yet...
    task = connection.parked
    assert task is not None
    request = task.get_coro().cr_frame.f_locals["coro"]
    assert request.cr_frame is not None  # created, not started
    connection.close()  # ...and the connection closes in the same step (as broker_down does)
    await asyncio.gather(task, return_exceptions=True)
    assert task.cancelled()
    assert request.cr_frame is None, "the request's coroutine was left unstarted and open"
    await client.close()
