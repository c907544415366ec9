"""Kafka's limit on a string field: 32,767 bytes (0x7fff), at the boundary, in both encodings.

Kafka's generated readers (MessageDataGenerator) refuse a compact string, nullable or not, whose
length is over 0x7fff: "string field X had invalid length N", and the request fails to parse.
A classic string's int16 length cannot say more than 32,767; its 0x8000 reads as -32,768, a null,
which a non-nullable field refuses ("non-nullable field X was serialized as null").

The generated decoders read a one-byte compact length inline and leave longer ones to the
primitives (pure shape) or _wire's cstr/cnstr (compiled shape); `make test` runs this file on
both shapes.
"""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker_protocol import primitives
from mockbroker_protocol.errors import DecodeError
from mockbroker_protocol.messages.find_coordinator import FindCoordinatorRequest
from mockbroker_protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from mockbroker_protocol.messages.metadata import MetadataRequest, MetadataRequestTopic

LIMIT = 0x7FFF


def uvarint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def join_group(group_id: str, instance_id: str | None = None) -> JoinGroupRequest:
    return JoinGroupRequest(
        group_id=group_id,
        session_timeout_ms=10_000,
        rebalance_timeout_ms=10_000,
        member_id="",
        group_instance_id=instance_id,
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol(name="range", metadata=b"")],
    )


def over_by_one(encoded: bytes, value_at: int, compact: bool) -> bytes:
    """``encoded`` with the 32,767-byte string whose length starts at ``value_at`` made one byte
    longer (length and value), everything after it unchanged."""
    if compact:
        old, new = uvarint(LIMIT + 1), uvarint(LIMIT + 2)
    else:
        old, new = LIMIT.to_bytes(2, "big"), (LIMIT + 1).to_bytes(2, "big")
    assert encoded[value_at : value_at + len(old)] == old
    end = value_at + len(old) + LIMIT
    return encoded[:value_at] + new + encoded[value_at + len(old) : end] + b"g" + encoded[end:]


# (message, version, the byte offset of the long string's length, compact, nullable)
def cases() -> list[tuple[str, Any, int, int, bool]]:
    g = "g" * LIMIT
    return [
        ("JoinGroup v9 groupId", join_group(g), 9, 0, True),  # compiled shape when built
        ("JoinGroup v9 groupInstanceId (nullable)", join_group("grp", g), 9, 1 + 3 + 8 + 1, True),
        ("FindCoordinator v3 key", FindCoordinatorRequest(key=g), 3, 0, True),
        ("Metadata v12 name (a topic's, nullable)", MetadataRequest(topics=[MetadataRequestTopic(name=g)]), 12, 1 + 16, True),
        ("JoinGroup v5 groupId (classic)", join_group(g), 5, 0, False),
        ("FindCoordinator v2 key (classic)", FindCoordinatorRequest(key=g), 2, 0, False),
    ]


CASES = cases()
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize(("name", "msg", "version", "at", "compact"), CASES, ids=IDS)
def test_a_string_of_32767_bytes_is_read(name: str, msg: Any, version: int, at: int, compact: bool) -> None:
    data = msg.encode(version)
    back = type(msg).decode(data, version)
    assert back == msg


@pytest.mark.parametrize(("name", "msg", "version", "at", "compact"), CASES, ids=IDS)
def test_a_string_of_32768_bytes_is_refused(name: str, msg: Any, version: int, at: int, compact: bool) -> None:
    data = over_by_one(msg.encode(version), at, compact)
    field = name.split()[2]
    # classic: the int16 0x8000 is -32768, a null, which these fields do not allow
    expected = f"string field {field} had invalid length 32768" if compact else "null"
    with pytest.raises(DecodeError, match=expected):
        type(msg).decode(data, version)


def test_the_primitives_name_the_field_and_allow_32767() -> None:
    ok = uvarint(LIMIT + 1) + b"a" * LIMIT
    assert primitives.read_compact_string(ok, 0, "groupId") == ("a" * LIMIT, len(ok))
    assert primitives.read_compact_nullable_string(ok, 0, "groupId") == ("a" * LIMIT, len(ok))
    bad = uvarint(LIMIT + 2) + b"a" * (LIMIT + 1)
    for read in (primitives.read_compact_string, primitives.read_compact_nullable_string):
        with pytest.raises(DecodeError, match="string field groupId had invalid length 32768"):
            read(bad, 0, "groupId")
    # the length alone decides, before any byte of the value is looked at (a forged 2^31-2)
    with pytest.raises(DecodeError, match="invalid length 2147483646"):
        primitives.read_compact_string(uvarint(2**31 - 1), 0, "key")
