"""Limits on what a request may ask for (issue #19): an array count larger than the bytes left.

Kafka's generated readers refuse a collection whose count exceeds the bytes remaining ("Tried to
allocate a collection of size N, but there are only M bytes remaining") before allocating
anything; the request fails to parse and the broker closes the connection. Ours refuse it with a
DecodeError from the count alone, whatever the count (up to 2^31-1 or a 5-byte uvarint), and the
broker closes that connection only.
"""

from __future__ import annotations

import pytest

from mockbroker import MockCluster
from mockbroker_protocol import registry
from mockbroker_protocol.errors import DecodeError
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from mockbroker_protocol.messages.metadata import MetadataRequest
from tests.mockbroker.wire import WireClient

METADATA = 3
INT32_MAX_COUNT = b"\x7f\xff\xff\xff"  # an int32 array count of 2^31-1
UVARINT_HUGE_COUNT = b"\xff\xff\xff\xff\x07"  # a compact array count of 2^31-2


def forged_metadata(version: int) -> bytes:
    """A Metadata request (size prefix included) whose topics count is huge and whose topics
    are absent: v1's body is the int32 count alone; v12's starts with the compact count."""
    frame = registry.encode_request(RequestHeader(METADATA, version, 7, "forger"), MetadataRequest(topics=[]))
    if version < 9:
        assert frame.endswith(b"\x00\x00\x00\x00")  # topics: int32 count 0, nothing after
        payload = frame[4:-4] + INT32_MAX_COUNT
    else:
        body = MetadataRequest(topics=[]).encode(version)
        assert body[0] == 1  # topics: compact count 0 (+1), then the booleans and tagged fields
        payload = frame[4 : -len(body)] + UVARINT_HUGE_COUNT + body[1:]
    return len(payload).to_bytes(4, "big") + payload


@pytest.mark.parametrize("version", [1, 12])
def test_an_array_count_larger_than_the_bytes_left_is_refused_by_the_decoder(version: int) -> None:
    frame = forged_metadata(version)
    with pytest.raises(DecodeError, match="elements in"):
        registry.decode_request(frame[4:])


@pytest.mark.parametrize("version", [1, 12])
async def test_a_forged_array_count_closes_only_its_own_connection(version: int) -> None:
    cluster = MockCluster(brokers=1)
    await cluster.start()
    try:
        node = cluster.brokers[cluster.config.node_ids[0]]
        bystander = await WireClient.connect(node.host, node.port)
        forger = await WireClient.connect(node.host, node.port)
        await forger.send_raw(forged_metadata(version))
        assert await forger.closed_by_peer()  # the request does not parse: Kafka closes the socket
        resp = await bystander.request(18, 3, ApiVersionsRequest("t", "1"))
        assert resp.error_code == 0
        await bystander.close()
        await forger.close()
    finally:
        await cluster.stop()
    assert cluster.internal_errors == []
