"""Request/response headers: round trips, kafka-python differential, header-version rules, fuzzing.

Also checks ApiKey against the Kafka message specs kafka-python ships (names and numbers).
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import kafka.protocol.schemas as kafka_schemas
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.protocol.api_header import RequestHeader as KPRequestHeader
from kafka.protocol.api_header import ResponseHeader as KPResponseHeader

from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import DecodeError, EncodeError, InvalidValueError, TruncatedError
from mockbroker_protocol.headers import (
    RequestHeader,
    decode_request_header,
    decode_response_header,
    encode_request_header,
    encode_response_header,
    peek_api_key_version,
    request_header_version,
    response_header_version,
)

FAST = settings(max_examples=60, deadline=None)

int16 = st.integers(min_value=-(2**15), max_value=2**15 - 1)
int32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
client_ids = st.none() | st.text(max_size=40)
headers = st.builds(RequestHeader, int16, int16, int32, client_ids)


# -- request header -------------------------------------------------------------------------------


def test_v1_layout() -> None:
    header = RequestHeader(18, 3, 7, "abc")
    assert encode_request_header(header, flexible=False) == bytes.fromhex("0012 0003 00000007 0003 616263")


def test_v2_layout_keeps_a_non_compact_client_id() -> None:
    header = RequestHeader(18, 3, 7, "abc")
    assert encode_request_header(header, flexible=True) == bytes.fromhex("0012 0003 00000007 0003 616263 00")


def test_null_client_id() -> None:
    data = encode_request_header(RequestHeader(3, 12, -5, None), flexible=True)
    assert data == bytes.fromhex("0003 000c fffffffb ffff 00")
    assert decode_request_header(data, flexible=True) == (RequestHeader(3, 12, -5, None), len(data))


@FAST
@given(header=headers, flexible=st.booleans(), body=st.binary(max_size=8))
def test_round_trip(header: RequestHeader, flexible: bool, body: bytes) -> None:
    data = encode_request_header(header, flexible) + body
    decoded, pos = decode_request_header(data, flexible)
    assert decoded == header
    assert data[pos:] == body
    assert peek_api_key_version(data) == (
        header.request_api_key,
        header.request_api_version,
        header.correlation_id,
    )


def test_decode_at_offset_and_from_memoryview() -> None:
    data = b"junk" + encode_request_header(RequestHeader(1, 17, 99, "c"), flexible=True) + b"body"
    decoded, pos = decode_request_header(memoryview(data), flexible=True, pos=4)
    assert decoded == RequestHeader(1, 17, 99, "c")
    assert data[pos:] == b"body"
    assert peek_api_key_version(data, 4) == (1, 17, 99)


def test_v2_skips_unknown_tagged_fields() -> None:
    """KIP-482: a reader skips the tags it does not know (header v2 defines none)."""
    fixed = encode_request_header(RequestHeader(11, 9, 1, "cid"), flexible=False)
    tagged = bytes([2, 0, 3]) + b"abc" + bytes([7, 1]) + b"z"  # two tags: 0 (3 bytes), 7 (1 byte)
    decoded, pos = decode_request_header(fixed + tagged + b"BODY", flexible=True)
    assert decoded == RequestHeader(11, 9, 1, "cid")
    assert pos == len(fixed) + len(tagged)


def test_peek_needs_eight_bytes() -> None:
    with pytest.raises(TruncatedError):
        peek_api_key_version(b"\x00\x12\x00\x03\x00\x00\x00")
    with pytest.raises(TruncatedError):
        decode_request_header(b"\x00\x12", flexible=False)


@pytest.mark.parametrize(
    ("data", "flexible", "error"),
    [
        (bytes.fromhex("0012 0003 00000007"), False, TruncatedError),  # no client id length
        (bytes.fromhex("0012 0003 00000007 0005 6162"), False, TruncatedError),  # short client id
        (bytes.fromhex("0012 0003 00000007 fffe"), False, InvalidValueError),  # length -2
        (bytes.fromhex("0012 0003 00000007 0002 ff fe"), False, InvalidValueError),  # not UTF-8
        (bytes.fromhex("0012 0003 00000007 ffff"), True, TruncatedError),  # no tagged fields
        (bytes.fromhex("0012 0003 00000007 ffff 01 00 05 61"), True, TruncatedError),  # short tag
        (bytes.fromhex("0012 0003 00000007 ffff 80808080 80"), True, InvalidValueError),  # long varint
    ],
)
def test_bad_request_headers(data: bytes, flexible: bool, error: type[DecodeError]) -> None:
    with pytest.raises(error):
        decode_request_header(data, flexible)


def test_encode_rejects_out_of_range_values() -> None:
    with pytest.raises(EncodeError):
        encode_request_header(RequestHeader(1 << 15, 0, 0, None), flexible=False)
    with pytest.raises(EncodeError):
        encode_request_header(RequestHeader(0, 0, 0, "x" * 40000), flexible=False)


@FAST
@given(data=st.binary(max_size=64), flexible=st.booleans(), pos=st.integers(min_value=0, max_value=8))
def test_fuzz_decode_request_header(data: bytes, flexible: bool, pos: int) -> None:
    """Any bytes: a header or a DecodeError, nothing else."""
    try:
        _, end = decode_request_header(data, flexible, pos)
    except DecodeError:
        return
    assert pos + 10 <= end <= len(data)


@FAST
@given(header=headers, flexible=st.booleans(), cut=st.integers(min_value=0, max_value=200))
def test_every_truncation_is_a_truncated_error(header: RequestHeader, flexible: bool, cut: int) -> None:
    data = encode_request_header(header, flexible)
    if cut >= len(data):
        return
    with pytest.raises(TruncatedError):
        decode_request_header(data[:cut], flexible)


# -- kafka-python differential ----------------------------------------------------------------------


@FAST
@given(header=headers, flexible=st.booleans())
def test_request_header_matches_kafka_python(header: RequestHeader, flexible: bool) -> None:
    theirs = KPRequestHeader(
        request_api_key=header.request_api_key,
        request_api_version=header.request_api_version,
        correlation_id=header.correlation_id,
        client_id=header.client_id,
    )
    ours = encode_request_header(header, flexible)
    assert ours == theirs.encode(flexible=flexible)
    back = KPRequestHeader.decode(io.BytesIO(ours), flexible=flexible)
    assert (back.request_api_key, back.request_api_version, back.correlation_id, back.client_id) == (
        header.request_api_key,
        header.request_api_version,
        header.correlation_id,
        header.client_id,
    )


@FAST
@given(correlation_id=int32, flexible=st.booleans())
def test_response_header_matches_kafka_python(correlation_id: int, flexible: bool) -> None:
    version = 1 if flexible else 0
    ours = encode_response_header(correlation_id, version)
    assert ours == KPResponseHeader(correlation_id=correlation_id).encode(flexible=flexible)
    assert decode_response_header(ours, version) == (correlation_id, len(ours))
    assert KPResponseHeader.decode(io.BytesIO(ours), flexible=flexible).correlation_id == correlation_id


# -- response header ----------------------------------------------------------------------------------


def test_response_header_layouts() -> None:
    assert encode_response_header(7, 0) == b"\x00\x00\x00\x07"
    assert encode_response_header(7, 1) == b"\x00\x00\x00\x07\x00"
    assert decode_response_header(b"xx\x00\x00\x00\x07\x00body", 1, pos=2) == (7, 7)
    assert decode_response_header(b"\x00\x00\x00\x07\x01\x00\x01zbody", 1) == (7, 8)


def test_bad_response_headers() -> None:
    with pytest.raises(TruncatedError):
        decode_response_header(b"\x00\x00\x00", 0)
    with pytest.raises(TruncatedError):
        decode_response_header(b"\x00\x00\x00\x07", 1)
    with pytest.raises(ValueError):
        decode_response_header(b"\x00\x00\x00\x07", 2)
    with pytest.raises(ValueError):
        encode_response_header(7, 2)
    with pytest.raises(EncodeError):
        encode_response_header(1 << 31, 0)


@FAST
@given(data=st.binary(max_size=16), version=st.sampled_from([0, 1]))
def test_fuzz_decode_response_header(data: bytes, version: int) -> None:
    try:
        correlation_id, pos = decode_response_header(data, version)
    except DecodeError:
        return
    assert correlation_id == int.from_bytes(data[:4], "big", signed=True)
    assert 4 + version <= pos <= len(data)


def test_header_versions() -> None:
    assert request_header_version(False) == 1
    assert request_header_version(True) == 2
    assert response_header_version(ApiKey.JOIN_GROUP, False) == 0
    assert response_header_version(ApiKey.JOIN_GROUP, True) == 1
    assert response_header_version(int(ApiKey.METADATA), True) == 1


def test_api_versions_response_always_uses_header_v0() -> None:
    """KIP-511: the client parses the ApiVersions reply without knowing which version we speak."""
    assert response_header_version(ApiKey.API_VERSIONS, True) == 0
    assert response_header_version(18, False) == 0


# -- ApiKey against the Kafka message specs ----------------------------------------------------------


def _spec_api_keys() -> dict[str, int]:
    """Java's ApiKeys names are the spec names in UPPER_SNAKE case (OffsetForLeaderEpoch ->
    OFFSET_FOR_LEADER_EPOCH)."""
    root = Path(kafka_schemas.__file__).parent / "resources"
    found: dict[str, int] = {}
    for path in root.glob("*Request.json"):
        text = "\n".join(line for line in path.read_text().splitlines() if not line.strip().startswith("//"))
        spec = json.loads(text)
        if "apiKey" in spec:
            snake = re.sub(r"(?<!^)(?=[A-Z])", "_", spec["name"].removesuffix("Request")).upper()
            found[snake] = spec["apiKey"]
    return found


# kafka-python 3.0.12 ships no ConsumerGroupHeartbeat/ConsumerGroupDescribe (KIP-848), no KIP-932
# share-group and no StreamsGroupHeartbeat/StreamsGroupDescribe (KIP-1071) specs; these are checked
# against Java's ApiKeys by hand.
NOT_IN_KAFKA_PYTHON = {
    ApiKey.CONSUMER_GROUP_HEARTBEAT, ApiKey.CONSUMER_GROUP_DESCRIBE,
    ApiKey.SHARE_GROUP_HEARTBEAT, ApiKey.SHARE_GROUP_DESCRIBE, ApiKey.SHARE_FETCH, ApiKey.SHARE_ACKNOWLEDGE,
    ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, ApiKey.ALTER_SHARE_GROUP_OFFSETS, ApiKey.DELETE_SHARE_GROUP_OFFSETS,
    ApiKey.STREAMS_GROUP_HEARTBEAT, ApiKey.STREAMS_GROUP_DESCRIBE,
}


def test_api_keys_match_kafka_specs() -> None:
    specs = _spec_api_keys()
    for key in ApiKey:
        if key in NOT_IN_KAFKA_PYTHON:
            assert key.name not in specs, (
                f"kafka-python now ships {key.name}: drop it from NOT_IN_KAFKA_PYTHON"
            )
        else:
            assert specs.get(key.name) == key.value, key


def test_api_keys_are_the_served_set() -> None:
    assert {k.value for k in ApiKey} == {
        0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 28, 29, 30, 31,
        32, 33, 36, 37, 42, 44, 47, 50, 51, 60, 61, 65, 66, 68, 69, 76, 77, 78, 79, 88, 89, 90, 91, 92,
    }  # fmt: skip
    assert ApiKey(18) is ApiKey.API_VERSIONS
    assert ApiKey.OFFSET_FOR_LEADER_EPOCH.value == 23
    assert ApiKey.CONSUMER_GROUP_DESCRIBE.value == 69
