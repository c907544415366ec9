"""The embedded consumer protocol: version prefix, newer versions tolerated, kafka-python agreement."""

from __future__ import annotations

import pytest
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment as KPAssignment
from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription as KPSubscription

from mockbroker_protocol.consumer_protocol import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    OwnedTopicPartition,
    TopicPartition,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from mockbroker_protocol.errors import DecodeError


def full_subscription() -> ConsumerProtocolSubscription:
    return ConsumerProtocolSubscription(
        topics=["a", "b"],
        user_data=b"\x01\x02",
        owned_partitions=[OwnedTopicPartition("a", [0, 2])],
        generation_id=7,
        rack_id="rack-1",
    )


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_subscription_round_trip_with_version_prefix(version: int) -> None:
    blob = encode_subscription(full_subscription(), version)
    assert blob[:2] == version.to_bytes(2, "big")
    declared, sub = decode_subscription(blob)
    assert declared == version
    assert sub.topics == ["a", "b"]
    assert sub.generation_id == (7 if version >= 2 else -1)
    assert sub.rack_id == ("rack-1" if version >= 3 else None)


def test_a_newer_subscription_is_read_with_our_highest_layout() -> None:
    # A v9 blob from a future client: our v3 fields, then fields we do not know.
    blob = (9).to_bytes(2, "big") + full_subscription().encode(3) + b"\x00\x00\x00\x05future"
    declared, sub = decode_subscription(blob)
    assert declared == 9
    assert sub == full_subscription()


def test_subscription_bytes_match_kafka_python() -> None:
    theirs = KPSubscription(topics=["a", "b"], user_data=b"\x01\x02", owned_partitions=[
        KPSubscription.TopicPartition(topic="a", partitions=[0, 2])], generation_id=7, rack_id="rack-1")
    assert encode_subscription(full_subscription(), 3) == bytes(theirs.encode(version=3))


def test_assignment_round_trip_and_kafka_python() -> None:
    ours = ConsumerProtocolAssignment([TopicPartition("t", [0, 1, 5])], None)
    blob = encode_assignment(ours, 1)
    assert decode_assignment(blob) == (1, ours)
    theirs = KPAssignment(assigned_partitions=[KPAssignment.TopicPartition(topic="t", partitions=[0, 1, 5])], user_data=None)
    assert blob == bytes(theirs.encode(version=1))


def test_empty_assignment_bytes_mean_nothing_assigned() -> None:
    version, assignment = decode_assignment(b"")
    assert version == -1
    assert assignment.assigned_partitions == []


@pytest.mark.parametrize("blob", [b"", b"\x00", b"\xff\xff", b"\x00\x01\x00\x00\x00\x05"])
def test_bad_subscription_blobs_raise_decode_error(blob: bytes) -> None:
    with pytest.raises(DecodeError):
        decode_subscription(blob)
