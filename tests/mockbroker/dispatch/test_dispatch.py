"""Broker core over loopback: ApiVersions, Metadata, failure mapping per connection."""

from __future__ import annotations

import uuid

from mockbroker import MockCluster
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.hashing import java_string_hash, kafka_abs, partition_for, to_int32
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest, ApiVersionsResponse
from mockbroker_protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from mockbroker_protocol.primitives import INT32
from tests.mockbroker.wire import WireClient


async def connect(cluster: MockCluster, index: int = 0) -> WireClient:
    node = list(cluster.brokers.values())[index]
    return await WireClient.connect(node.host, node.port)


async def test_api_versions_lists_the_served_apis(cluster: MockCluster) -> None:
    client = await connect(cluster)
    resp: ApiVersionsResponse = await client.request(18, 4, ApiVersionsRequest("mockbroker-test", "1.0"))
    assert resp.error_code == ErrorCode.NONE
    advertised = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    assert advertised[18] == (0, 4)
    assert advertised[3] == (0, 13)
    # Produce advertises 0 though it serves 3+ (KAFKA-18659: librdkafka 2.0 looks for 0 before
    # it compresses); APIs that also serve versions Kafka 4 removed (sarama sends them without
    # asking) advertise Kafka 4's minimum, as negotiating clients expect.
    assert advertised[0] == (0, 13)
    assert advertised[19] == (2, 7)
    assert advertised[20] == (1, 6)
    assert advertised[32] == (1, 4)
    await client.close()


async def test_api_versions_checks_client_software_name(cluster: MockCluster) -> None:
    client = await connect(cluster)
    resp = await client.request(18, 3, ApiVersionsRequest("bad name!", "1.0"))
    assert resp.error_code == ErrorCode.INVALID_REQUEST
    await client.close()


async def test_unknown_api_versions_version_gets_the_kip511_v0_reply(cluster: MockCluster) -> None:
    client = await connect(cluster)
    # ApiVersions v99: header v1 (api key, version, correlation id, client id), no body.
    payload = (18).to_bytes(2, "big") + (99).to_bytes(2, "big") + (5).to_bytes(4, "big") + b"\x00\x01c"
    await client.send_raw(INT32.pack(len(payload)) + payload)
    frame = await client.read_frame()
    assert frame[:4] == (5).to_bytes(4, "big")
    body = ApiVersionsResponse.decode(frame, 0, 4)
    assert body.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert [(k.api_key, k.min_version, k.max_version) for k in body.api_keys] == [(18, 0, 4)]
    await client.close()


async def test_metadata_lists_brokers_and_spreads_leaders(cluster: MockCluster) -> None:
    topic = cluster.create_topic("spread", 6)
    client = await connect(cluster)
    resp = await client.request(3, 12, MetadataRequest(topics=None))
    assert {b.node_id for b in resp.brokers} == {1, 2, 3}
    assert resp.cluster_id == cluster.config.cluster_id
    (t,) = resp.topics
    assert t.name == "spread" and t.topic_id == topic.topic_id
    assert {p.leader_id for p in t.partitions} == {1, 2, 3}
    await client.close()


async def test_metadata_by_topic_id_and_unknowns(cluster: MockCluster) -> None:
    topic = cluster.create_topic("by-id", 1)
    client = await connect(cluster)
    resp = await client.request(
        3, 12, MetadataRequest(topics=[MetadataRequestTopic(topic.topic_id, None), MetadataRequestTopic(uuid.uuid4(), None)])
    )
    assert [(t.error_code, t.name) for t in resp.topics] == [(0, "by-id"), (ErrorCode.UNKNOWN_TOPIC_ID, None)]
    resp = await client.request(3, 9, MetadataRequest(topics=[MetadataRequestTopic(name="bad/name")], allow_auto_topic_creation=True))
    assert resp.topics[0].error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    resp = await client.request(3, 9, MetadataRequest(topics=[MetadataRequestTopic(name="nope")], allow_auto_topic_creation=False))
    assert resp.topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert "nope" not in cluster.topics
    resp = await client.request(3, 9, MetadataRequest(topics=[MetadataRequestTopic(name="auto")], allow_auto_topic_creation=True))
    assert resp.topics[0].error_code == 0 and "auto" in cluster.topics
    await client.close()


async def test_garbage_closes_only_that_connection(cluster: MockCluster) -> None:
    bystander = await connect(cluster)
    bad = await connect(cluster)
    await bad.send_raw(INT32.pack(7) + b"\x00\x03garbage"[:7])
    assert await bad.closed_by_peer()
    oversized = await connect(cluster)
    await oversized.send_raw(INT32.pack(cluster.config.socket_request_max_bytes + 1))
    assert await oversized.closed_by_peer()
    resp = await bystander.request(18, 3, ApiVersionsRequest("still-here", "1"))
    assert resp.error_code == 0
    await bystander.close()


def test_coordinator_partition_vectors() -> None:
    """The semantics doc's worked values (50 partitions)."""
    c = MockCluster(brokers=3)
    for group, partition in [("", 0), ("a", 47), ("my-group", 12), ("test-group", 12), ("group1", 40)]:
        assert c.coordinator_partition(group) == partition
    assert to_int32(java_string_hash("my-group")) == -1906497762
    assert partition_for("my-group", 50) == 1906497762 % 50
    assert kafka_abs(to_int32(java_string_hash("polygenelubricants"))) == 0
