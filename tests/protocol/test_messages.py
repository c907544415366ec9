"""Every generated message at every version: round trips, kafka-python differential, fuzzing."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockbroker_protocol.errors import DecodeError
from tests.protocol import message_strategies as ms

CASES = ms.cases()
IDS = [f"{cls.__name__}-v{v}" for cls, v in CASES]
FAST = settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# The APIs mockbroker serves (issue: wire protocol package).
REQUIRED_KEYS = {0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 28, 29, 30, 31,
                 32, 33, 36, 37, 42, 44, 47, 50, 51, 60, 61, 65, 66, 68, 69, 76, 77, 78, 79, 88, 89, 90, 91, 92}


def test_every_required_api_has_request_and_response() -> None:
    keys: dict[int, set[str]] = {}
    for cls, _ in CASES:
        if cls.SPEC.api_key >= 0:  # type: ignore[attr-defined]
            keys.setdefault(cls.SPEC.api_key, set()).add(cls.__name__)  # type: ignore[attr-defined]
    assert set(keys) == REQUIRED_KEYS
    for names in keys.values():
        assert {n.endswith("Request") for n in names} == {True, False}


@pytest.mark.parametrize(("cls", "version"), CASES, ids=IDS)
def test_default_message_round_trips(cls: type, version: int) -> None:
    msg: Any = cls()
    data = msg.encode(version)
    back = cls.decode(data, version)  # type: ignore[attr-defined]
    assert back == ms.normalise(msg, version)
    assert back.encode(version) == data


@pytest.mark.parametrize(("cls", "version"), CASES, ids=IDS)
@FAST
@given(data=st.data())
def test_random_message_round_trips(cls: type, version: int, data: st.DataObject) -> None:
    """object -> bytes -> object -> identical bytes, and the object survives (fields the version
    lacks come back as defaults)."""
    msg = data.draw(ms.message(cls, version))
    encoded = msg.encode(version)
    back, end = cls.decode_from(encoded, version)  # type: ignore[attr-defined]
    assert end == len(encoded)
    assert back == ms.normalise(msg, version)
    assert back.encode(version) == encoded


PRODUCE_CASES = [(cls, v) for cls, v in CASES if cls.__name__ == "ProduceRequest"]


@pytest.mark.parametrize(("cls", "version"), PRODUCE_CASES, ids=[f"v{v}" for _, v in PRODUCE_CASES])
@FAST
@given(data=st.data())
def test_produce_request_decodes_from_a_bytearray(cls: type, version: int, data: st.DataObject) -> None:
    """Large Produce frames reach their decoder as the bytearray they were read into
    (mockbroker_protocol.framing.OwnedFrame, registry.decode_request): the same message as from bytes, its
    records slices of that very buffer; and bad bytes still raise only DecodeError."""
    msg = data.draw(ms.message(cls, version))
    encoded = msg.encode(version)
    frame = bytearray(encoded)
    back, end = cls.decode_from(frame, version)  # type: ignore[attr-defined]
    assert end == len(encoded)
    assert back == cls.decode_from(encoded, version)[0]  # type: ignore[attr-defined]
    for topic in back.topic_data:
        for partition in topic.partition_data:
            assert partition.records is None or partition.records.obj is frame
    cut = data.draw(st.integers(0, max(0, len(encoded) - 1)))
    with contextlib.suppress(DecodeError):
        cls.decode(bytearray(encoded[:cut]), version)  # type: ignore[attr-defined]


def _has_oracle(cls: type, version: int) -> bool:
    kp_cls = ms.kp_class(cls.__name__)
    return kp_cls is not None and kp_cls.min_version <= version <= kp_cls.max_version


ORACLE_CASES = [(cls, v) for cls, v in CASES if _has_oracle(cls, v)]


def test_only_kip848_messages_lack_a_kafka_python_oracle() -> None:
    """kafka-python 3.0.12 ships no specs for keys 68/69 (test_kio_crosscheck covers those) nor
    88/89 (KIP-1071; test_kio_crosscheck covers those too), nor for the KIP-932 keys 76-79 and 90-92 (their
    layout was read off kafka-clients 4.3.1's schemas; 90-92's checked by tests/differential against Kafka)."""
    missing = {cls.__name__ for cls, v in CASES if not _has_oracle(cls, v)}
    assert missing == {
        "ConsumerGroupHeartbeatRequest", "ConsumerGroupHeartbeatResponse",
        "ConsumerGroupDescribeRequest", "ConsumerGroupDescribeResponse",
        "ShareGroupHeartbeatRequest", "ShareGroupHeartbeatResponse",
        "ShareGroupDescribeRequest", "ShareGroupDescribeResponse",
        "ShareFetchRequest", "ShareFetchResponse", "ShareAcknowledgeRequest", "ShareAcknowledgeResponse",
        "StreamsGroupHeartbeatRequest", "StreamsGroupHeartbeatResponse",
        "StreamsGroupDescribeRequest", "StreamsGroupDescribeResponse",
        "DescribeShareGroupOffsetsRequest", "DescribeShareGroupOffsetsResponse",
        "AlterShareGroupOffsetsRequest", "AlterShareGroupOffsetsResponse",
        "DeleteShareGroupOffsetsRequest", "DeleteShareGroupOffsetsResponse",
    }


@pytest.mark.parametrize(("cls", "version"), ORACLE_CASES, ids=[f"{c.__name__}-v{v}" for c, v in ORACLE_CASES])
@FAST
@given(data=st.data())
def test_same_bytes_as_kafka_python(cls: type, version: int, data: st.DataObject) -> None:
    """Differential: kafka-python (test-only oracle) encodes the same message to the same bytes,
    and decodes our bytes to the same values."""
    kp_cls = ms.kp_class(cls.__name__)
    msg = data.draw(ms.message(cls, version))
    ours = msg.encode(version)
    theirs = bytes(ms.to_kp(msg, kp_cls, version).encode(version=version))
    if cls.SPEC.api_key < 0:  # type: ignore[attr-defined]
        # kafka-python's embedded consumer-protocol classes write the int16 version first;
        # ours leave that to mockbroker_protocol.consumer_protocol.
        assert theirs[:2] == version.to_bytes(2, "big")
        theirs = theirs[2:]
        ours_framed = theirs[:0] + version.to_bytes(2, "big") + ours
    else:
        ours_framed = ours
    assert ours == theirs
    if cls.__name__ == "ApiVersionsResponse" and msg.error_code != 0:
        return  # kafka-python decodes an errored ApiVersionsResponse as v0 (KIP-511 fallback)
    decoded_by_them = kp_cls.decode(ours_framed, version=version)
    assert ms.from_kp(decoded_by_them, cls, version) == ms.normalise(msg, version)


@pytest.mark.parametrize(("cls", "version"), CASES, ids=IDS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_decoders_raise_only_decode_error(cls: type, version: int, data: st.DataObject) -> None:
    """Random bytes, and valid encodings mutated, truncated or extended: a decoder either
    decodes or raises DecodeError; nothing else escapes."""
    valid = data.draw(ms.message(cls, version)).encode(version)
    how = data.draw(st.sampled_from(["random", "truncate", "flip", "insert"]))
    if how == "random":
        blob = data.draw(st.binary(max_size=64))
    elif how == "truncate":
        blob = valid[: data.draw(st.integers(0, max(0, len(valid) - 1)))]
    elif how == "flip" and valid:
        i = data.draw(st.integers(0, len(valid) - 1))
        blob = valid[:i] + bytes([data.draw(st.integers(0, 255))]) + valid[i + 1 :]
    else:
        i = data.draw(st.integers(0, len(valid)))
        blob = valid[:i] + data.draw(st.binary(min_size=1, max_size=4)) + valid[i:]
    with contextlib.suppress(DecodeError):
        cls.decode(blob, version)  # type: ignore[attr-defined]
