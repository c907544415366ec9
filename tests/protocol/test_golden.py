"""Golden bytes: request frames captured from real clients decode, and re-encode byte for byte.

The frames under tests/data/golden/<client>/ were recorded by tests/data/capture_golden.py (see
the README there): kafka-python, aiokafka, confluent-kafka (librdkafka) and kcat (an older
librdkafka) each produced one compressed message to topic "golden" and consumed it in group
"golden-group". No client is needed here: only the stored files.
"""

from __future__ import annotations

import uuid
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from mockbroker_protocol.consumer_protocol import (
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from mockbroker_protocol.headers import (
    RequestHeader,
    decode_request_header,
    encode_request_header,
    peek_api_key_version,
)
from mockbroker_protocol.records import Compression, decode_batch, iter_batches
from mockbroker_protocol.registry import APIS

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "golden"
FILES = sorted(GOLDEN.glob("*/*.bin"))
TOPIC = "golden"
GROUP = "golden-group"
KEY = b"golden-key"
# The capture peer's fixed topic id (capture_golden.TOPIC_ID): requests by topic id carry it.
TOPIC_ID = uuid.UUID("5f9c7a1e-3b2d-4c8e-9a6f-0d1e2c3b4a59")
# The capture peer's InitProducerId answer, which an idempotent producer stamps on its batches.
PRODUCER_ID = 4000


def message_value(client: str) -> bytes:
    """What each client produced (capture_golden.message_value): compressible, so that the
    clients that skip compression when it does not pay (kafka-python, librdkafka) do compress."""
    return f"golden value from {client}; {'golden ' * 20}".encode()


# Every client went through the same script: these requests must be there for each.
REQUIRED_APIS = {
    "ApiVersions",
    "Metadata",
    "Produce",
    "FindCoordinator",
    "JoinGroup",
    "SyncGroup",
    "Heartbeat",
    "OffsetFetch",
    "ListOffsets",
    "Fetch",
    "OffsetCommit",
    "LeaveGroup",
}

# client -> (client ids seen in its headers, the codec it was told to use, the first assignor it
# offers, its ApiVersions v3+ software name or None, the ConsumerProtocolSubscription version).
CLIENTS: dict[str, tuple[tuple[str, ...], Compression, str, str | None, int]] = {
    "kafka-python": (
        ("kafka-python-producer-", "kafka-python-3."),
        Compression.GZIP,
        "range",
        "kafka-python",
        0,
    ),
    "aiokafka": (("aiokafka-producer-", "aiokafka-0."), Compression.GZIP, "roundrobin", None, 0),
    "confluent-kafka": (("rdkafka",), Compression.LZ4, "range", "confluent-kafka-python", 3),
    "kcat": (("rdkafka",), Compression.SNAPPY, "range", "librdkafka", 1),
}


def decode_file(path: Path) -> tuple[RequestHeader, Any, int, bool]:
    """(header, body, api version, flexible) of one captured frame."""
    frame = path.read_bytes()
    api_key, version, _ = peek_api_key_version(frame)
    api = APIS[api_key]
    flexible = api.request.SPEC.flexible(version)
    header, pos = decode_request_header(frame, flexible)
    body, end = api.request.decode_from(frame, version, pos)
    assert end == len(frame), f"{path.name}: decoded {end} of {len(frame)} bytes"
    return header, body, version, flexible


@cache
def captured(client: str) -> dict[str, tuple[RequestHeader, Any, int]]:
    """The decoded frames of one client, by API name (one file per API for every client here)."""
    out: dict[str, tuple[RequestHeader, Any, int]] = {}
    for path in sorted((GOLDEN / client).glob("*.bin")):
        header, body, version, _ = decode_file(path)
        name = APIS[header.request_api_key].name
        assert name not in out, f"{client}: two {name} files; the assertions below assume one"
        out[name] = (header, body, version)
    return out


def test_every_client_was_captured() -> None:
    assert {path.parent.name for path in FILES} == set(CLIENTS)
    for client in CLIENTS:
        names = {APIS[peek_api_key_version(p.read_bytes())[0]].name for p in (GOLDEN / client).glob("*.bin")}
        assert names >= REQUIRED_APIS, f"{client} lacks {sorted(REQUIRED_APIS - names)}"
        assert len(list((GOLDEN / client).glob("*.bin"))) <= 15


@pytest.mark.parametrize("path", FILES, ids=[f"{p.parent.name}/{p.stem}" for p in FILES])
def test_frame_decodes_and_reencodes_exactly(path: Path) -> None:
    frame = path.read_bytes()
    assert len(frame) <= 64 * 1024
    header, body, version, flexible = decode_file(path)
    api = APIS[header.request_api_key]
    assert path.name.endswith(f"_{api.name}_v{version}.bin")
    assert header.request_api_version == version
    assert encode_request_header(header, flexible) + body.encode(version) == frame


@pytest.mark.parametrize("client", CLIENTS)
def test_client_id_is_the_clients(client: str) -> None:
    prefixes = CLIENTS[client][0]
    for name, (header, _, _) in captured(client).items():
        assert header.client_id is not None and header.client_id.startswith(prefixes), (
            name,
            header.client_id,
        )


@pytest.mark.parametrize("client", CLIENTS)
def test_api_versions_names_the_client_software(client: str) -> None:
    _, body, version = captured(client)["ApiVersions"]
    software = CLIENTS[client][3]
    if software is None:
        assert version < 3  # aiokafka still opens with ApiVersions v0
        return
    assert version >= 3
    assert body.client_software_name == software
    assert body.client_software_version


@pytest.mark.parametrize("client", CLIENTS)
def test_produce_carries_the_message_with_the_configured_codec(client: str) -> None:
    _, body, _ = captured(client)["Produce"]
    assert body.transactional_id is None
    [topic] = body.topic_data
    assert topic.name == TOPIC
    [partition] = topic.partition_data
    assert partition.index == 0
    records = partition.records
    batches = list(iter_batches(records))
    assert len(batches) == 1
    batch_header, view = batches[0]
    assert len(view) == len(records)  # no trailing partial batch
    header, [record] = decode_batch(view)  # checks the CRC-32C too
    assert header.compression == CLIENTS[client][1]
    assert header.base_offset == 0 and header.records_count == 1 and header == batch_header
    assert record.key == KEY
    assert record.value == message_value(client)
    assert record.headers == []
    if client == "kafka-python":
        # Idempotent by default (KIP-679 in kafka-python 3): the id the peer gave, sequence 0.
        assert body.acks == -1
        assert (header.producer_id, header.producer_epoch, header.base_sequence) == (PRODUCER_ID, 0, 0)
    else:
        assert not header.has_producer_id


@pytest.mark.parametrize("client", CLIENTS)
def test_join_group_offers_consumer_subscriptions_to_golden(client: str) -> None:
    header, body, _ = captured(client)["JoinGroup"]
    assert body.group_id == GROUP
    assert body.protocol_type == "consumer"
    # The kept JoinGroup is the one after the KIP-394 handshake: it carries the id the peer gave.
    assert body.member_id.startswith(f"{header.client_id}-")
    assert body.protocols[0].name == CLIENTS[client][2]
    assert {p.name for p in body.protocols} <= {"range", "roundrobin", "sticky", "cooperative-sticky"}
    for protocol in body.protocols:
        metadata = bytes(protocol.metadata)
        declared, subscription = decode_subscription(metadata)
        assert declared == CLIENTS[client][4]
        assert subscription.topics == [TOPIC]
        assert encode_subscription(subscription, declared) == metadata


@pytest.mark.parametrize("client", CLIENTS)
def test_sync_group_leader_assigns_golden_partition_0(client: str) -> None:
    _, join, _ = captured(client)["JoinGroup"]
    _, body, _ = captured(client)["SyncGroup"]
    assert (body.group_id, body.generation_id, body.member_id) == (GROUP, 1, join.member_id)
    [assignment] = body.assignments
    assert assignment.member_id == join.member_id
    blob = bytes(assignment.assignment)
    declared, decoded = decode_assignment(blob)
    assert [(tp.topic, tp.partitions) for tp in decoded.assigned_partitions] == [(TOPIC, [0])]
    assert encode_assignment(decoded, declared) == blob


@pytest.mark.parametrize("client", CLIENTS)
def test_heartbeat_and_leave_group_name_the_member(client: str) -> None:
    _, join, _ = captured(client)["JoinGroup"]
    _, heartbeat, _ = captured(client)["Heartbeat"]
    assert (heartbeat.group_id, heartbeat.generation_id, heartbeat.member_id) == (GROUP, 1, join.member_id)
    _, leave, version = captured(client)["LeaveGroup"]
    assert leave.group_id == GROUP
    if version < 3:
        assert leave.member_id == join.member_id
    else:
        assert [m.member_id for m in leave.members] == [join.member_id]


@pytest.mark.parametrize("client", CLIENTS)
def test_consumer_position_requests_name_golden_partition_0(client: str) -> None:
    _, list_offsets, _ = captured(client)["ListOffsets"]
    [topic] = list_offsets.topics
    assert topic.name == TOPIC
    [partition] = topic.partitions
    assert (partition.partition_index, partition.timestamp) == (0, -2)  # EARLIEST: auto.offset.reset

    _, fetch, version = captured(client)["Fetch"]
    [fetch_topic] = fetch.topics
    if version >= 13:
        assert fetch_topic.topic_id == TOPIC_ID  # KIP-516: the id from our Metadata answer
    else:
        assert fetch_topic.topic == TOPIC
    [fetch_partition] = fetch_topic.partitions
    assert fetch_partition.partition == 0

    _, offset_fetch, version = captured(client)["OffsetFetch"]
    if version >= 8:
        [group] = offset_fetch.groups
        assert group.group_id == GROUP
        assert [(t.name, t.partition_indexes) for t in group.topics] == [(TOPIC, [0])]
    else:
        assert offset_fetch.group_id == GROUP
        assert [(t.name, t.partition_indexes) for t in offset_fetch.topics] == [(TOPIC, [0])]


@pytest.mark.parametrize("client", CLIENTS)
def test_offset_commit_commits_past_the_one_record(client: str) -> None:
    _, join, _ = captured(client)["JoinGroup"]
    _, body, _ = captured(client)["OffsetCommit"]
    assert (body.group_id, body.generation_id_or_member_epoch, body.member_id) == (GROUP, 1, join.member_id)
    [topic] = body.topics
    assert topic.name == TOPIC
    assert [(p.partition_index, p.committed_offset) for p in topic.partitions] == [(0, 1)]


@pytest.mark.parametrize("client", CLIENTS)
def test_metadata_asks_for_golden(client: str) -> None:
    _, body, _ = captured(client)["Metadata"]
    assert [t.name for t in body.topics] == [TOPIC]
