"""Answers kept by request bytes (mockbroker/dispatch/dispatch.py): the same bytes but the correlation id get
the same answer without a decode, only while the answer is still valid and its version still served."""

from __future__ import annotations

import gc
import weakref

from mockbroker import MockCluster
from mockbroker_protocol import registry
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from mockbroker_protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from tests.mockbroker.wire import WireClient

API_VERSIONS, METADATA = 18, 3


def entries(cluster: MockCluster) -> int:
    return sum(len(by_key) for by_key in cluster.answers.values())


async def connect(cluster: MockCluster, node_id: int = 1) -> WireClient:
    node = cluster.brokers[node_id]
    return await WireClient.connect(node.host, node.port)


def frame(api_key: int, version: int, correlation_id: int, body: object, client_id: str = "wire-test") -> bytes:
    return registry.encode_request(RequestHeader(api_key, version, correlation_id, client_id), body)  # type: ignore[arg-type]


async def test_pipelined_repeats_get_their_own_correlation_ids(cluster: MockCluster) -> None:
    cluster.create_topic("t", 3, 2)
    client = await connect(cluster)
    req = MetadataRequest(topics=[MetadataRequestTopic(name="t")])
    await client.send_raw(b"".join(frame(METADATA, 12, cid, req) for cid in (5, 6, 7, 1 << 30)))
    answers = [registry.decode_response(METADATA, 12, await client.read_frame()) for _ in range(4)]
    assert [cid for cid, _ in answers] == [5, 6, 7, 1 << 30]
    assert all(body == answers[0][1] for _, body in answers)
    assert [p.partition_index for p in answers[0][1].topics[0].partitions] == [0, 1, 2]
    assert entries(cluster) == 1  # the later three came from the entry the first made
    await client.close()


async def test_another_client_id_is_another_question(cluster: MockCluster) -> None:
    client = await connect(cluster)
    for client_id in ("a", "b"):
        await client.send_raw(frame(API_VERSIONS, 3, 1, ApiVersionsRequest("lib", "1.0"), client_id))
        _, body = registry.decode_response(API_VERSIONS, 3, await client.read_frame())
        assert body.error_code == ErrorCode.NONE
    # KIP-511's software name check is part of the answer: a bad name, in the same header, is refused.
    await client.send_raw(frame(API_VERSIONS, 3, 2, ApiVersionsRequest("-bad-", "1.0"), "a"))
    _, body = registry.decode_response(API_VERSIONS, 3, await client.read_frame())
    assert body.error_code == ErrorCode.INVALID_REQUEST
    assert entries(cluster) == 3
    await client.close()


async def test_a_version_capped_away_is_not_answered_from_the_cache(cluster: MockCluster) -> None:
    cluster.create_topic("t", 1, 1)
    client = await connect(cluster)
    req = MetadataRequest(topics=[MetadataRequestTopic(name="t")])
    assert (await client.request(METADATA, 12, req)).topics[0].error_code == 0
    assert (await client.request(METADATA, 12, req)).topics[0].error_code == 0
    await cluster.control.cap_api_version("Metadata", 9)
    await client.send_raw(frame(METADATA, 12, 3, req))
    assert await client.closed_by_peer()  # v12 is no longer served: the connection closes, as before
    await client.close()


async def test_cached_answers_do_not_keep_their_cluster_alive() -> None:
    cluster = MockCluster()
    await cluster.start()
    cluster.create_topic("t", 1, 1)
    client = await connect(cluster)
    await client.request(API_VERSIONS, 3, ApiVersionsRequest("lib", "1.0"))
    await client.request(METADATA, 12, MetadataRequest(topics=[MetadataRequestTopic(name="t")]))
    assert entries(cluster) == 2
    await client.close()
    await cluster.stop()
    ref = weakref.ref(cluster)
    del cluster
    gc.collect()
    assert ref() is None


async def test_short_frames_are_the_clients_fault_with_answers_cached(cluster: MockCluster) -> None:
    """Frames too short for a header close their connection (no broker bug recorded: the fixture
    checks), as they did before any answer was cached."""
    client = await connect(cluster)
    await client.request(API_VERSIONS, 3, ApiVersionsRequest("lib", "1.0"))
    for payload in (b"", b"\x00", b"\x00\x12", b"\x00\x12\x00\x03\x00\x00\x00"):
        other = await connect(cluster)
        await other.send_raw(len(payload).to_bytes(4, "big") + payload)
        assert await other.closed_by_peer()
        await other.close()
    await client.close()
