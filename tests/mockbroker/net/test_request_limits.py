"""Limits on what a request may ask for (issue #19): an array count larger than the bytes left.

Kafka's generated readers refuse a collection whose count exceeds the bytes remaining ("Tried to
allocate a collection of size N, but there are only M bytes remaining") before allocating
anything; the request fails to parse and the broker closes the connection. Ours refuse it with a
DecodeError from the count alone, whatever the count (up to 2^31-1 or a 5-byte uvarint), and the
broker closes that connection only.
"""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker import MockCluster
from mockbroker_protocol import registry
from mockbroker_protocol.errors import DecodeError
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from mockbroker_protocol.messages.find_coordinator import FindCoordinatorRequest
from mockbroker_protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
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


# -- a string field over Kafka's 32,767 bytes (MessageDataGenerator: "string field X had invalid
# length N"): the request does not parse, and Kafka's SocketServer closes that connection only.

FIND_COORDINATOR, JOIN_GROUP = 10, 11
STRING_LIMIT = 0x7FFF
MEMBER_ID_REQUIRED = 79


def long_group_request(api_key: int, length: int) -> Any:
    group = "g" * length
    if api_key == FIND_COORDINATOR:
        return FindCoordinatorRequest(key_type=0, coordinator_keys=[group])
    return JoinGroupRequest(
        group_id=group,
        session_timeout_ms=10_000,
        rebalance_timeout_ms=10_000,
        member_id="",
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")],
    )


@pytest.mark.parametrize(("api_key", "version"), [(FIND_COORDINATOR, 4), (JOIN_GROUP, 9)], ids=["FindCoordinator", "JoinGroup"])
async def test_a_group_id_over_32767_bytes_closes_only_its_connection(cluster: MockCluster, api_key: int, version: int) -> None:
    node = cluster.brokers[cluster.config.node_ids[0]]
    bystander = await WireClient.connect(node.host, node.port)
    sender = await WireClient.connect(node.host, node.port)
    frame = registry.encode_request(RequestHeader(api_key, version, 1, "long"), long_group_request(api_key, STRING_LIMIT + 1))
    await sender.send_raw(frame)
    assert await sender.closed_by_peer()
    found = await bystander.request(FIND_COORDINATOR, 4, FindCoordinatorRequest(key_type=0, coordinator_keys=["ok"]))
    assert [c.error_code for c in found.coordinators] == [0]
    await bystander.close()
    await sender.close()
    assert cluster.internal_errors == []


async def test_a_group_id_of_32767_bytes_is_served(cluster: MockCluster) -> None:
    """Kafka refuses only an empty group id (GroupCoordinatorService: INVALID_GROUP_ID); a long one
    is a group like any other: found, and joined through KIP-394's member-id handshake."""
    node = cluster.brokers[cluster.config.node_ids[0]]
    client = await WireClient.connect(node.host, node.port)
    found = await client.request(FIND_COORDINATOR, 4, long_group_request(FIND_COORDINATOR, STRING_LIMIT))
    (coordinator,) = found.coordinators
    assert (coordinator.key, coordinator.error_code) == ("g" * STRING_LIMIT, 0)
    await client.close()
    client = await WireClient.connect(coordinator.host, coordinator.port)
    first = await client.request(JOIN_GROUP, 9, long_group_request(JOIN_GROUP, STRING_LIMIT))
    assert first.error_code == MEMBER_ID_REQUIRED and first.member_id
    request = long_group_request(JOIN_GROUP, STRING_LIMIT)
    request.member_id = first.member_id
    joined = await client.request(JOIN_GROUP, 9, request)
    assert (joined.error_code, joined.leader, joined.generation_id) == (0, first.member_id, 1)
    await client.close()
    assert cluster.internal_errors == []
