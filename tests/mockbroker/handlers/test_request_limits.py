"""Limits on what one request may ask for (issue #19), with the errors Kafka gives (the same
answers are checked against a real Kafka in tests/differential/test_topic_admin.py, bar the
CreatePartitions to 2^31-1, which the real Kafka's placer would take minutes over)."""

from __future__ import annotations

from mockbroker import MockCluster
from mockbroker_protocol import registry
from mockbroker_protocol.errors import ErrorCode, TruncatedError
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.create_partitions import CreatePartitionsRequest, CreatePartitionsTopic
from mockbroker_protocol.messages.create_topics import CreatableReplicaAssignment, CreatableTopic
from mockbroker_protocol.messages.metadata import MetadataRequest
from tests.mockbroker.handlers.test_admin import connect, create, new_topic
from tests.mockbroker.wire import WireClient

INT32_MAX = 2**31 - 1
METADATA, CREATE_PARTITIONS = 3, 37


async def test_create_topics_beyond_the_controller_batch_is_refused_whole(cluster: MockCluster) -> None:
    client = await connect(cluster)
    for validate_only in (False, True):
        resp = await create(client, new_topic("huge", INT32_MAX, 1), new_topic("small", 1, 1), validate_only=validate_only)
        assert [(t.name, t.error_code, t.error_message) for t in resp.topics] == [
            ("huge", ErrorCode.POLICY_VIOLATION, "Excessively large number of partitions per request."),
            ("small", ErrorCode.POLICY_VIOLATION, "Excessively large number of partitions per request."),
        ]
    # 10,000 partitions are 10,001 records with the topic's own: one too many.
    resp = await create(client, new_topic("records", 10_000, 1), validate_only=True)
    assert resp.topics[0].error_message == "Unable to perform excessively large batch operation."
    resp = await create(client, new_topic("fits", 9_999, 1), validate_only=True)
    assert resp.topics[0].error_code == ErrorCode.NONE and resp.topics[0].num_partitions == 9_999
    assert not {"huge", "small", "records", "fits"} & set(cluster.topics)
    await client.close()


async def test_manual_assignments_count_as_partitions_for_the_controller_batch(cluster: MockCluster) -> None:
    """ControllerApis.validateTotalNumberOfPartitions counts a topic's manual assignments, not its
    (then -1) partition count: 10,001 of them refuse the whole request."""
    client = await connect(cluster)
    many = CreatableTopic("many", -1, -1, [CreatableReplicaAssignment(i, [1]) for i in range(10_001)], [])
    resp = await create(client, many, new_topic("small", 1, 1))
    assert [(t.name, t.error_code, t.error_message) for t in resp.topics] == [
        ("many", ErrorCode.POLICY_VIOLATION, "Excessively large number of partitions per request."),
        ("small", ErrorCode.POLICY_VIOLATION, "Excessively large number of partitions per request."),
    ]
    assert not {"many", "small"} & set(cluster.topics)
    await client.close()


async def test_replicas_beyond_the_brokers_are_refused(cluster: MockCluster) -> None:
    """The largest replication factor the wire allows (int16), and one manual assignment naming a
    broker 100,000 times: refused as Kafka's ReplicationControlManager refuses them, and cheaply."""
    client = await connect(cluster)
    repeated = CreatableTopic("repeated", -1, -1, [CreatableReplicaAssignment(0, [1] * 100_000)], [])
    resp = await create(client, new_topic("wide", 1, 32_767), repeated)
    assert [(t.name, t.error_code, t.error_message) for t in resp.topics] == [
        (
            "wide",
            ErrorCode.INVALID_REPLICATION_FACTOR,
            "Unable to replicate the partition 32767 time(s): The target replication factor of 32767 cannot be "
            "reached because only 3 broker(s) are registered or some brokers have all their log directories cordoned.",
        ),
        ("repeated", ErrorCode.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes the broker 1 more than once."),
    ]
    assert not {"wide", "repeated"} & set(cluster.topics)
    await client.close()


async def test_create_partitions_beyond_the_controller_batch_fails_that_topic(cluster: MockCluster) -> None:
    cluster.create_topic("a", 1)
    cluster.create_topic("b", 1)
    client = await connect(cluster)
    req = CreatePartitionsRequest(
        [CreatePartitionsTopic("a", 3, None), CreatePartitionsTopic("b", INT32_MAX, None)], 1000, False
    )
    resp = await client.request(CREATE_PARTITIONS, 3, req)
    assert [(r.name, r.error_code, r.error_message) for r in resp.results] == [
        ("a", ErrorCode.NONE, None),
        ("b", ErrorCode.UNKNOWN_SERVER_ERROR, None),
    ]
    assert len(cluster.topics["a"].partitions) == 3 and len(cluster.topics["b"].partitions) == 1
    await client.close()


def metadata_with_forged_count() -> bytes:
    """Metadata v12 whose topics array claims 2^31-1 elements in a few bytes."""
    frame = registry.encode_request(RequestHeader(METADATA, 12, 1, "forger"), MetadataRequest(topics=[]))
    body = 4 + 2 + 2 + 4 + 2 + len("forger") + 1  # size, key, version, correlation id, client id, tags
    assert frame[body] == 1  # the compact array's count + 1
    forged = frame[:body] + bytes([0x80, 0x80, 0x80, 0x80, 0x08]) + frame[body + 1 :]  # uvarint 2^31
    return len(forged[4:]).to_bytes(4, "big") + forged[4:]


def test_the_decoder_refuses_an_array_count_beyond_the_bytes_left() -> None:
    try:
        registry.decode_request(metadata_with_forged_count()[4:])
    except TruncatedError as exc:
        assert "elements in" in str(exc)
    else:
        raise AssertionError("a forged array count was decoded")


async def test_a_forged_array_count_closes_only_that_connection(cluster: MockCluster) -> None:
    forger = await connect(cluster)
    await forger.send_raw(metadata_with_forged_count())
    assert await forger.closed_by_peer()
    await forger.close()
    other: WireClient = await connect(cluster)
    resp = await other.request(METADATA, 12, MetadataRequest(topics=[]))
    assert resp.topics == []
    await other.close()
