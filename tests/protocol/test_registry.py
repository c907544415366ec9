"""Whole-frame request decode and response encode, checked against kafka-python."""

from __future__ import annotations

import pytest
from kafka.protocol.consumer.group import JoinGroupRequest as KPJoinGroupRequest
from kafka.protocol.consumer.group import JoinGroupResponse as KPJoinGroupResponse
from kafka.protocol.metadata.api_versions import ApiVersionsResponse as KPApiVersionsResponse

from mockbroker_protocol import registry
from mockbroker_protocol.errors import DecodeError, ErrorCode, UnknownApiError, UnsupportedVersionError
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.heartbeat import HeartbeatRequest
from mockbroker_protocol.messages.join_group import (
    JoinGroupRequest,
    JoinGroupResponse,
    JoinGroupResponseMember,
)
from mockbroker_protocol.primitives import INT32
from tests.protocol.message_strategies import normalise


def kp_join_frame(version: int) -> bytes:
    req = KPJoinGroupRequest[version](
        group_id="g", session_timeout_ms=10000, rebalance_timeout_ms=30000, member_id="",
        group_instance_id=None, protocol_type="consumer",
        protocols=[KPJoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"\x00\x01")], reason=None,
    )
    req.with_header(correlation_id=42, client_id="kp-client")
    return bytes(req.encode(version=version, header=True))


@pytest.mark.parametrize("version", range(0, 10))
def test_decode_request_reads_kafka_python_frames(version: int) -> None:
    header, body = registry.decode_request(kp_join_frame(version))
    assert (header.request_api_key, header.request_api_version, header.correlation_id) == (11, version, 42)
    assert header.client_id == "kp-client"
    assert isinstance(body, JoinGroupRequest)
    assert body.group_id == "g" and body.protocols[0].name == "range"


def test_every_api_has_both_classes() -> None:
    assert len(registry.APIS) == 51
    for key, api in registry.APIS.items():
        assert api.request.SPEC.api_key == api.response.SPEC.api_key == key


def test_unknown_api_and_version_carry_what_a_reply_needs() -> None:
    frame = INT32.pack(0)[:0] + (999).to_bytes(2, "big") + (0).to_bytes(2, "big") + (7).to_bytes(4, "big") + b"\xff\xff"
    with pytest.raises(UnknownApiError) as unknown:
        registry.decode_request(frame)
    assert (unknown.value.api_key, unknown.value.correlation_id) == (999, 7)
    frame = (18).to_bytes(2, "big") + (99).to_bytes(2, "big") + (8).to_bytes(4, "big") + b"\x00\x02cl"
    with pytest.raises(UnsupportedVersionError) as unsupported:
        registry.decode_request(frame)
    assert (unsupported.value.api_version, unsupported.value.correlation_id, unsupported.value.client_id) == (99, 8, "cl")


@pytest.mark.parametrize("version", [0, 4, 9])
def test_encode_response_is_what_kafka_python_reads(version: int) -> None:
    resp = JoinGroupResponse(error_code=0, generation_id=3, protocol_type="consumer", protocol_name="range",
                             leader="m-1", member_id="m-1", members=[JoinGroupResponseMember("m-1", None, b"\x00\x01")])
    frame = b"".join(registry.encode_response(11, version, 5, resp))
    (size,) = INT32.unpack_from(frame)
    assert size == len(frame) - 4
    theirs = KPJoinGroupResponse.decode(frame[4:], version=version, header=True)
    assert theirs.header.correlation_id == 5
    assert theirs.generation_id == 3 and theirs.members[0].member_id == "m-1"
    assert registry.decode_response(11, version, frame[4:]) == (5, normalise(resp, version))


def test_api_versions_response_header_is_always_v0() -> None:
    """KIP-511: even at flexible v3+, no tagged-fields byte after the correlation id."""
    frame = b"".join(registry.unsupported_api_versions_response(9, 0, 4))
    payload = frame[4:]
    assert payload[:4] == (9).to_bytes(4, "big")
    # kafka-python parses it as v0, which is what it falls back to
    theirs = KPApiVersionsResponse.decode(payload[4:], version=0)
    assert theirs.error_code == ErrorCode.UNSUPPORTED_VERSION
    assert [(k.api_key, k.min_version, k.max_version) for k in theirs.api_keys] == [(18, 0, 4)]


def test_request_round_trip_through_frames() -> None:
    header = RequestHeader(12, 4, 77, "me")
    frame = registry.encode_request(header, HeartbeatRequest("g", 1, "m", None))
    decoded_header, body = registry.decode_request(frame[4:])
    assert decoded_header == header
    assert body == HeartbeatRequest("g", 1, "m", None)


def test_truncated_frame_is_a_decode_error() -> None:
    frame = kp_join_frame(9)
    for cut in range(len(frame)):
        with pytest.raises(DecodeError):
            registry.decode_request(frame[:cut])


@pytest.mark.parametrize("client_id", [None, "", "me", "kafka-python-2.0.2", "cliënt-ünïcode", "x" * 300])
def test_request_header_client_ids(client_id: str | None) -> None:
    """The header's one-pass read (ASCII, UTF-8, null, empty, over 255 bytes) agrees with the general one."""
    header = RequestHeader(12, 4, 77, client_id)
    frame = registry.encode_request(header, HeartbeatRequest("g", 1, "m", None))
    decoded_header, body = registry.decode_request(frame[4:])
    assert decoded_header == header and body == HeartbeatRequest("g", 1, "m", None)


@pytest.mark.parametrize(
    "client_id_field",
    [b"\x00\x02\xff\xfe", b"\xff\xfe", b"\x00\x09short", b"\x80\x00"],
    ids=["not-utf8", "negative-length", "beyond-the-frame", "very-negative"],
)
def test_bad_client_ids_are_decode_errors(client_id_field: bytes) -> None:
    frame = (12).to_bytes(2, "big") + (0).to_bytes(2, "big") + (7).to_bytes(4, "big") + client_id_field
    with pytest.raises(DecodeError):
        registry.decode_request(frame)


@pytest.mark.parametrize("version", [0, 9])
def test_a_bytearray_frame_of_any_api_but_produce_is_decoded_as_bytes(version: int) -> None:
    """Large frames come from the frame buffer as bytearrays (OwnedFrame); decoders other than
    Produce's take bytes (JoinGroup's may be compiled), and bytes fields come back as bytes."""
    header, body = registry.decode_request(bytearray(kp_join_frame(version)))
    assert header.correlation_id == 42
    assert body.protocols[0].metadata == b"\x00\x01"
    assert type(body.protocols[0].metadata) is bytes


def test_a_bytearray_produce_frame_keeps_its_records_in_place() -> None:
    from mockbroker_protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData

    request = ProduceRequest(acks=-1, timeout_ms=1000, topic_data=[
        TopicProduceData("t", partition_data=[PartitionProduceData(0, b"batch bytes")])
    ])  # fmt: skip
    frame = bytearray(registry.encode_request(RequestHeader(0, 9, 5, "p"), request)[4:])
    _, body = registry.decode_request(frame)
    records = body.topic_data[0].partition_data[0].records
    assert records == b"batch bytes"
    assert records.obj is frame  # a slice of the caller's buffer, not a copy
