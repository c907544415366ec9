"""Capture golden request frames from real Kafka clients (run by hand, never by the test suite).

    .venv/bin/python tests/data/capture_golden.py                  # every client
    .venv/bin/python tests/data/capture_golden.py kcat aiokafka    # some of them

Needs kafka-python, aiokafka and confluent-kafka in the venv, and kcat on PATH.

For each client the tool starts a minimal scripted Kafka peer on 127.0.0.1 (a free port), built
on our own codec, that answers just enough for the client to reach the requests we want:
ApiVersions, Metadata (one broker, itself; one topic "golden" with one partition it leads),
FindCoordinator, InitProducerId, JoinGroup (KIP-394 member id handshake, then the member is the
leader of generation 1), SyncGroup, Heartbeat, LeaveGroup, Produce, Fetch, ListOffsets,
OffsetForLeaderEpoch, OffsetFetch, OffsetCommit. Anything else gets no answer (the client times
out; we only need its requests). Then it drives the client with a short script (a producer that
sends one compressed message to "golden", then a consumer in group "golden-group" that
subscribes, polls, commits and closes), each in its own process with a time limit.

Every request frame is recorded (raw bytes after the 4-byte size prefix); for each
(api key, api version) pair the largest frame of at most MAX_FILE_BYTES is kept, and at most
MAX_FILES_PER_CLIENT pairs, numbered in order of first appearance:
tests/data/golden/<client>/<NN>_<ApiName>_v<version>.bin. Frames the codec cannot decode are
kept too and reported (they are codec bugs); frames at API keys or versions outside the codec's
ranges are only reported. tests/data/golden/README.md is rewritten with what was captured.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import DecodeError, ErrorCode
from mockbroker_protocol.framing import FrameBuffer
from mockbroker_protocol.headers import RequestHeader, peek_api_key_version
from mockbroker_protocol.messages.api_versions import ApiVersion, ApiVersionsResponse
from mockbroker_protocol.messages.fetch import FetchableTopicResponse, FetchResponse, PartitionData
from mockbroker_protocol.messages.find_coordinator import Coordinator, FindCoordinatorResponse
from mockbroker_protocol.messages.heartbeat import HeartbeatResponse
from mockbroker_protocol.messages.init_producer_id import InitProducerIdResponse
from mockbroker_protocol.messages.join_group import JoinGroupResponse, JoinGroupResponseMember
from mockbroker_protocol.messages.leave_group import LeaveGroupResponse, MemberResponse
from mockbroker_protocol.messages.list_offsets import (
    ListOffsetsPartitionResponse,
    ListOffsetsResponse,
    ListOffsetsTopicResponse,
)
from mockbroker_protocol.messages.metadata import (
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from mockbroker_protocol.messages.offset_commit import (
    OffsetCommitResponse,
    OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
)
from mockbroker_protocol.messages.offset_fetch import (
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartition,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic,
    OffsetFetchResponseTopics,
)
from mockbroker_protocol.messages.offset_for_leader_epoch import (
    EpochEndOffset,
    OffsetForLeaderEpochResponse,
    OffsetForLeaderTopicResult,
)
from mockbroker_protocol.messages.produce import (
    PartitionProduceResponse,
    ProduceResponse,
    TopicProduceResponse,
)
from mockbroker_protocol.messages.sync_group import SyncGroupResponse
from mockbroker_protocol.records import iter_batches, patch_base_offset, validate_batch
from mockbroker_protocol.registry import (
    APIS,
    decode_request,
    encode_response,
    unsupported_api_versions_response,
)

HOST = "127.0.0.1"
NODE_ID = 1
CLUSTER_ID = "golden-cluster"
TOPIC = "golden"
GROUP = "golden-group"
# A fixed topic id, so that the topic-id-bearing requests (Fetch v13+, Produce v13, OffsetCommit
# v10, ...) carry the same bytes run after run.
TOPIC_ID = uuid.UUID("5f9c7a1e-3b2d-4c8e-9a6f-0d1e2c3b4a59")
ZERO_UUID = uuid.UUID(int=0)
PRODUCER_ID = 4000
LEADER_EPOCH = 0
KEY = b"golden-key"

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"
CAPTURE_DATE = "2026-11-22"  # the date of the stored capture; a new run writes its own date
MAX_FILE_BYTES = 64 * 1024
MAX_FILES_PER_CLIENT = 15
MAX_FRAME_BYTES = 1024 * 1024
MAX_FRAMES_PER_RUN = 5000  # every client run is bounded in frames as well as in time
MAX_FETCH_WAIT_S = 0.5  # an empty Fetch is held at most this long, so that clients do not spin
DRIVER_TIMEOUT_S = 60.0


def message_value(client: str) -> bytes:
    # Compressible on purpose: kafka-python and librdkafka send a batch uncompressed when the codec
    # does not make it smaller, and a one-word value never gets smaller.
    return f"golden value from {client}; {'golden ' * 20}".encode()


# -- the scripted peer --------------------------------------------------------------------------


@dataclass
class Captured:
    api_key: int
    api_version: int
    first_seen: int  # index of the first frame of this (api, version) in the run
    frame: bytes
    count: int = 1
    error: str | None = None  # our codec could not decode the kept frame


@dataclass
class Peer:
    """A one-broker, one-topic, one-partition Kafka peer that records what clients send."""

    port: int = 0
    frames_seen: int = 0
    captured: dict[tuple[int, int], Captured] = field(default_factory=dict)
    out_of_range: list[str] = field(default_factory=list)
    unanswered: list[str] = field(default_factory=list)
    log: list[bytearray] = field(default_factory=list)  # the partition's batches, base offsets patched
    high_watermark: int = 0
    committed: dict[tuple[str, int], int] = field(default_factory=dict)
    members: int = 0

    # -- recording --

    def record(self, frame: bytes) -> None:
        api_key, api_version, _ = peek_api_key_version(frame)
        pair = (api_key, api_version)
        index = self.frames_seen
        self.frames_seen += 1
        kept = self.captured.get(pair)
        if kept is None:
            self.captured[pair] = Captured(api_key, api_version, index, frame)
            return
        kept.count += 1
        # The largest frame of a pair is the most telling one (a Metadata request that names topics,
        # a JoinGroup that carries its member id), as long as it stays small.
        if kept.error is None and len(kept.frame) < len(frame) <= MAX_FILE_BYTES:
            kept.frame = frame

    # -- the connection loop --

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        frames = FrameBuffer(MAX_FRAME_BYTES)
        try:
            while self.frames_seen < MAX_FRAMES_PER_RUN:
                data = await reader.read(65536)
                if not data:
                    return
                frames.feed(data)
                for frame in frames.frames():
                    reply = await self.answer(frame)
                    if reply is False:
                        return
                    if reply:
                        writer.writelines(reply)
                        await writer.drain()
        except (ConnectionError, DecodeError, asyncio.IncompleteReadError):
            return
        except asyncio.CancelledError:
            # The run is over and the loop is tearing down its tasks (a Fetch held open, say).
            return
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def answer(self, frame: bytes) -> list[Any] | Literal[False] | None:
        """The reply's chunks; None for no reply (acks=0, or an API we do not script); False to close."""
        if len(frame) < 8:
            return False
        self.record(frame)
        api_key, api_version, correlation_id = peek_api_key_version(frame)
        api = APIS.get(api_key)
        if api is None or not api.versions[0] <= api_version <= api.versions[1]:
            self.out_of_range.append(f"api key {api_key} v{api_version}")
            if api_key == ApiKey.API_VERSIONS:
                lo, hi = APIS[ApiKey.API_VERSIONS].versions
                return unsupported_api_versions_response(correlation_id, lo, hi)
            return False
        try:
            header, request = decode_request(frame)
        except DecodeError as exc:
            self.captured[(api_key, api_version)].error = f"{type(exc).__name__}: {exc}"
            self.captured[(api_key, api_version)].frame = frame
            print(f"  !! {api.name} v{api_version} did not decode: {exc}", flush=True)
            return False
        handler: Callable[[RequestHeader, Any, int], Any] | None = getattr(self, f"on_{api.name}", None)
        if handler is None:
            self.unanswered.append(f"{api.name} v{api_version}")
            return None
        response = handler(header, request, api_version)
        if asyncio.iscoroutine(response):
            response = await response
        if response is None:
            return None
        return encode_response(api_key, api_version, correlation_id, response)

    # -- handlers: just enough for each client to carry on --

    def on_ApiVersions(self, header: RequestHeader, req: Any, version: int) -> ApiVersionsResponse:
        api_keys = []
        for key, api in sorted(APIS.items()):
            lo, hi = api.versions
            if key == ApiKey.PRODUCE:
                # Kafka 4 advertises Produce from v0 again, because librdkafka refuses a broker whose
                # Produce range does not start at 0 (KAFKA-18659).
                lo = 0
            api_keys.append(ApiVersion(key, lo, hi))
        return ApiVersionsResponse(error_code=ErrorCode.NONE, api_keys=api_keys)

    def _topic(self) -> MetadataResponseTopic:
        partition = MetadataResponsePartition(
            error_code=ErrorCode.NONE,
            partition_index=0,
            leader_id=NODE_ID,
            leader_epoch=LEADER_EPOCH,
            replica_nodes=[NODE_ID],
            isr_nodes=[NODE_ID],
            offline_replicas=[],
        )
        return MetadataResponseTopic(
            error_code=ErrorCode.NONE,
            name=TOPIC,
            topic_id=TOPIC_ID,
            is_internal=False,
            partitions=[partition],
            topic_authorized_operations=-(2**31),
        )

    def on_Metadata(self, header: RequestHeader, req: Any, version: int) -> MetadataResponse:
        if req.topics is None:
            topics = [self._topic()]
        else:
            topics = []
            for wanted in req.topics:
                if wanted.name == TOPIC or (wanted.name is None and wanted.topic_id == TOPIC_ID):
                    topics.append(self._topic())
                else:
                    topics.append(
                        MetadataResponseTopic(
                            error_code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                            name=wanted.name,
                            topic_id=wanted.topic_id,
                            topic_authorized_operations=-(2**31),
                        )
                    )
        return MetadataResponse(
            brokers=[MetadataResponseBroker(node_id=NODE_ID, host=HOST, port=self.port, rack=None)],
            cluster_id=CLUSTER_ID,
            controller_id=NODE_ID,
            topics=topics,
            cluster_authorized_operations=-(2**31),
        )

    def on_FindCoordinator(self, header: RequestHeader, req: Any, version: int) -> FindCoordinatorResponse:
        if version < 4:
            return FindCoordinatorResponse(
                error_code=ErrorCode.NONE, error_message=None, node_id=NODE_ID, host=HOST, port=self.port
            )
        return FindCoordinatorResponse(
            coordinators=[
                Coordinator(key=key, node_id=NODE_ID, host=HOST, port=self.port, error_code=ErrorCode.NONE)
                for key in req.coordinator_keys
            ]
        )

    def on_InitProducerId(self, header: RequestHeader, req: Any, version: int) -> InitProducerIdResponse:
        return InitProducerIdResponse(error_code=ErrorCode.NONE, producer_id=PRODUCER_ID, producer_epoch=0)

    def on_JoinGroup(self, header: RequestHeader, req: Any, version: int) -> JoinGroupResponse:
        if version >= 4 and not req.member_id:
            # KIP-394: the first JoinGroup of a dynamic member gets its id and must come back with it.
            self.members += 1
            member_id = f"{header.client_id}-{uuid.UUID(int=self.members)}"
            return JoinGroupResponse(
                error_code=ErrorCode.MEMBER_ID_REQUIRED,
                generation_id=-1,
                member_id=member_id,
                protocol_name="",
            )
        member_id = req.member_id or f"{header.client_id}-{uuid.UUID(int=1)}"
        chosen = req.protocols[0]
        return JoinGroupResponse(
            error_code=ErrorCode.NONE,
            generation_id=1,
            protocol_type=req.protocol_type,
            protocol_name=chosen.name,
            leader=member_id,
            member_id=member_id,
            members=[
                JoinGroupResponseMember(
                    member_id=member_id,
                    group_instance_id=req.group_instance_id,
                    metadata=bytes(chosen.metadata),
                )
            ],
        )

    def on_SyncGroup(self, header: RequestHeader, req: Any, version: int) -> SyncGroupResponse:
        assignment = next((bytes(a.assignment) for a in req.assignments if a.member_id == req.member_id), b"")
        return SyncGroupResponse(
            error_code=ErrorCode.NONE,
            protocol_type=req.protocol_type,
            protocol_name=req.protocol_name,
            assignment=assignment,
        )

    def on_Heartbeat(self, header: RequestHeader, req: Any, version: int) -> HeartbeatResponse:
        return HeartbeatResponse(error_code=ErrorCode.NONE)

    def on_LeaveGroup(self, header: RequestHeader, req: Any, version: int) -> LeaveGroupResponse:
        members = [] if version < 3 else req.members
        return LeaveGroupResponse(
            error_code=ErrorCode.NONE,
            members=[MemberResponse(m.member_id, m.group_instance_id, ErrorCode.NONE) for m in members],
        )

    def on_OffsetFetch(self, header: RequestHeader, req: Any, version: int) -> OffsetFetchResponse:
        if version < 8:
            wanted = req.topics if req.topics is not None else []
            return OffsetFetchResponse(
                topics=[
                    OffsetFetchResponseTopic(
                        name=t.name,
                        partitions=[
                            OffsetFetchResponsePartition(
                                partition_index=p,
                                committed_offset=self.committed.get((t.name, p), -1),
                                committed_leader_epoch=-1,
                                metadata="",
                                error_code=ErrorCode.NONE,
                            )
                            for p in t.partition_indexes
                        ],
                    )
                    for t in wanted
                ],
                error_code=ErrorCode.NONE,
            )
        groups = []
        for group in req.groups:
            topics = []
            for t in group.topics or []:
                name = t.name if version < 10 else TOPIC
                topics.append(
                    OffsetFetchResponseTopics(
                        name=t.name,
                        topic_id=t.topic_id,
                        partitions=[
                            OffsetFetchResponsePartitions(
                                partition_index=p,
                                committed_offset=self.committed.get((name, p), -1),
                                committed_leader_epoch=-1,
                                metadata="",
                                error_code=ErrorCode.NONE,
                            )
                            for p in t.partition_indexes
                        ],
                    )
                )
            groups.append(
                OffsetFetchResponseGroup(group_id=group.group_id, topics=topics, error_code=ErrorCode.NONE)
            )
        return OffsetFetchResponse(groups=groups)

    def on_OffsetCommit(self, header: RequestHeader, req: Any, version: int) -> OffsetCommitResponse:
        topics = []
        for t in req.topics:
            name = t.name if version < 10 else TOPIC
            for p in t.partitions:
                self.committed[(name, p.partition_index)] = p.committed_offset
            topics.append(
                OffsetCommitResponseTopic(
                    name=t.name,
                    topic_id=t.topic_id,
                    partitions=[
                        OffsetCommitResponsePartition(
                            partition_index=p.partition_index, error_code=ErrorCode.NONE
                        )
                        for p in t.partitions
                    ],
                )
            )
        return OffsetCommitResponse(topics=topics)

    def on_ListOffsets(self, header: RequestHeader, req: Any, version: int) -> ListOffsetsResponse:
        topics = []
        for t in req.topics:
            partitions = []
            for p in t.partitions:
                offset = 0 if p.timestamp == -2 else self.high_watermark  # EARLIEST, else LATEST
                partitions.append(
                    ListOffsetsPartitionResponse(
                        partition_index=p.partition_index,
                        error_code=ErrorCode.NONE
                        if t.name == TOPIC
                        else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                        old_style_offsets=[offset],
                        timestamp=-1,
                        offset=offset,
                        leader_epoch=LEADER_EPOCH,
                    )
                )
            topics.append(ListOffsetsTopicResponse(name=t.name, partitions=partitions))
        return ListOffsetsResponse(topics=topics)

    def on_OffsetForLeaderEpoch(
        self, header: RequestHeader, req: Any, version: int
    ) -> OffsetForLeaderEpochResponse:
        return OffsetForLeaderEpochResponse(
            topics=[
                OffsetForLeaderTopicResult(
                    topic=t.topic,
                    partitions=[
                        EpochEndOffset(
                            error_code=ErrorCode.NONE,
                            partition=p.partition,
                            leader_epoch=LEADER_EPOCH,
                            end_offset=self.high_watermark,
                        )
                        for p in t.partitions
                    ],
                )
                for t in req.topics
            ]
        )

    def on_Produce(self, header: RequestHeader, req: Any, version: int) -> ProduceResponse | None:
        responses = []
        for t in req.topic_data:
            partitions = []
            for p in t.partition_data:
                base_offset = self.high_watermark
                error = ErrorCode.NONE
                if not (t.name == TOPIC or t.topic_id == TOPIC_ID) or p.index != 0:
                    error = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    try:
                        for batch_header, view in iter_batches(p.records or b""):
                            validate_batch(view, batch_header)
                            batch = bytearray(view)
                            patch_base_offset(batch, self.high_watermark)
                            self.log.append(batch)
                            self.high_watermark += batch_header.last_offset_delta + 1
                    except DecodeError as exc:
                        print(f"  !! Produce v{version}: bad batch: {exc}", flush=True)
                        error = ErrorCode.CORRUPT_MESSAGE
                partitions.append(
                    PartitionProduceResponse(
                        index=p.index,
                        error_code=error,
                        base_offset=base_offset,
                        log_append_time_ms=-1,
                        log_start_offset=0,
                    )
                )
            responses.append(
                TopicProduceResponse(name=t.name, topic_id=t.topic_id, partition_responses=partitions)
            )
        if req.acks == 0:
            return None
        return ProduceResponse(responses=responses)

    async def on_Fetch(self, header: RequestHeader, req: Any, version: int) -> FetchResponse:
        any_data = False
        responses = []
        for t in req.topics:
            known = t.topic == TOPIC if version < 13 else t.topic_id == TOPIC_ID
            partitions = []
            for p in t.partitions:
                records = b""
                if not known or p.partition != 0:
                    error = (
                        ErrorCode.UNKNOWN_TOPIC_ID if version >= 13 else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                    )
                elif p.fetch_offset > self.high_watermark:
                    error = ErrorCode.OFFSET_OUT_OF_RANGE
                else:
                    error = ErrorCode.NONE
                    records = b"".join(
                        bytes(b)
                        for b in self.log
                        if int.from_bytes(b[:8], "big") + _last_delta(b) >= p.fetch_offset
                    )
                    any_data = any_data or bool(records)
                partitions.append(
                    PartitionData(
                        partition_index=p.partition,
                        error_code=error,
                        high_watermark=self.high_watermark,
                        last_stable_offset=self.high_watermark,
                        log_start_offset=0,
                        aborted_transactions=None,
                        preferred_read_replica=-1,
                        records=records,
                    )
                )
            responses.append(
                FetchableTopicResponse(topic=t.topic, topic_id=t.topic_id, partitions=partitions)
            )
        if not any_data:
            await asyncio.sleep(min(req.max_wait_ms / 1000, MAX_FETCH_WAIT_S))
        return FetchResponse(error_code=ErrorCode.NONE, session_id=0, responses=responses)


def _last_delta(batch: bytearray) -> int:
    return int.from_bytes(batch[23:27], "big")  # last_offset_delta, after the attributes


# -- the clients --------------------------------------------------------------------------------


def drive_kafka_python(bootstrap: str) -> None:
    from kafka import KafkaConsumer, KafkaProducer  # type: ignore[import-untyped]

    producer = KafkaProducer(
        bootstrap_servers=bootstrap, compression_type="gzip", request_timeout_ms=5000, max_block_ms=10000
    )
    try:
        producer.send(TOPIC, key=KEY, value=message_value("kafka-python")).get(timeout=10)
    finally:
        producer.close(timeout=5)
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=GROUP,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        heartbeat_interval_ms=500,
        request_timeout_ms=10000,
    )
    try:
        consumer.subscribe([TOPIC])
        got = 0
        deadline = time.monotonic() + 15
        linger_until = None
        while time.monotonic() < deadline and (linger_until is None or time.monotonic() < linger_until):
            got += sum(len(recs) for recs in consumer.poll(timeout_ms=500).values())
            if got and linger_until is None:
                linger_until = time.monotonic() + 2  # long enough for a heartbeat or two
        print(f"kafka-python consumed {got} record(s)", flush=True)
        consumer.commit()
    finally:
        consumer.close(autocommit=False)


async def drive_aiokafka(bootstrap: str) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer  # type: ignore[import-untyped]

    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, compression_type="gzip", request_timeout_ms=5000)
    await asyncio.wait_for(producer.start(), 15)
    try:
        await asyncio.wait_for(producer.send_and_wait(TOPIC, message_value("aiokafka"), key=KEY), 15)
    finally:
        await asyncio.wait_for(producer.stop(), 10)
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=GROUP,
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        heartbeat_interval_ms=500,
        request_timeout_ms=10000,
    )
    consumer.subscribe([TOPIC])
    await asyncio.wait_for(consumer.start(), 15)
    try:
        got = 0
        deadline = time.monotonic() + 15
        linger_until = None
        while time.monotonic() < deadline and (linger_until is None or time.monotonic() < linger_until):
            batches = await consumer.getmany(timeout_ms=500)
            got += sum(len(recs) for recs in batches.values())
            if got and linger_until is None:
                linger_until = time.monotonic() + 2
        print(f"aiokafka consumed {got} record(s)", flush=True)
        await asyncio.wait_for(consumer.commit(), 10)
    finally:
        await asyncio.wait_for(consumer.stop(), 10)


def drive_confluent_kafka(bootstrap: str) -> None:
    from confluent_kafka import Consumer, Producer

    producer = Producer(
        {"bootstrap.servers": bootstrap, "compression.type": "lz4", "message.timeout.ms": 10000}
    )
    producer.produce(TOPIC, key=KEY, value=message_value("confluent-kafka"))
    left = producer.flush(15)
    print(f"confluent-kafka producer: {left} message(s) undelivered", flush=True)
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": GROUP,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "heartbeat.interval.ms": 500,
            "session.timeout.ms": 6000,
        }
    )
    try:
        consumer.subscribe([TOPIC])
        got = 0
        deadline = time.monotonic() + 15
        linger_until = None
        while time.monotonic() < deadline and (linger_until is None or time.monotonic() < linger_until):
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                got += 1
            if got and linger_until is None:
                linger_until = time.monotonic() + 2
        print(f"confluent-kafka consumed {got} record(s)", flush=True)
        if got:
            consumer.commit(asynchronous=False)
    finally:
        consumer.close()


PYTHON_DRIVERS: dict[str, Callable[[str], Any]] = {
    "kafka-python": drive_kafka_python,
    "aiokafka": lambda bootstrap: asyncio.run(drive_aiokafka(bootstrap)),
    "confluent-kafka": drive_confluent_kafka,
}

# What each client ran, for the README (the kcat lines are the commands themselves).
DESCRIPTIONS = {
    "kafka-python": [
        'KafkaProducer(compression_type="gzip") sends key b"golden-key", value message_value("kafka-python") '
        'to "golden" (idempotent by default, so InitProducerId too)',
        'KafkaConsumer(group_id="golden-group", auto_offset_reset="earliest", enable_auto_commit=False, '
        "heartbeat_interval_ms=500): subscribe, poll until the record arrives plus 2 s, commit(), close()",
    ],
    "aiokafka": [
        'AIOKafkaProducer(compression_type="gzip").send_and_wait("golden", message_value("aiokafka"), key=b"golden-key")',
        'AIOKafkaConsumer(group_id="golden-group", auto_offset_reset="earliest", enable_auto_commit=False, '
        "heartbeat_interval_ms=500): subscribe, getmany until the record arrives plus 2 s, commit(), stop()",
    ],
    "confluent-kafka": [
        'Producer({"compression.type": "lz4"}).produce("golden", key=b"golden-key", value=message_value("confluent-kafka")); flush()',
        'Consumer({"group.id": "golden-group", "auto.offset.reset": "earliest", "enable.auto.commit": False, '
        '"heartbeat.interval.ms": 500}): subscribe, poll until the record arrives plus 2 s, commit(), close()',
    ],
}


def kcat_commands(bootstrap: str) -> list[list[str]]:
    return [
        ["kcat", "-b", bootstrap, "-P", "-t", TOPIC, "-z", "snappy", "-K", ":"],
        [
            "kcat", "-b", bootstrap, "-G", GROUP,
            "-X", "auto.offset.reset=earliest", "-X", "heartbeat.interval.ms=500", TOPIC,
        ],
    ]  # fmt: skip


def _stop(proc: subprocess.Popen[bytes], grace_s: float) -> None:
    """Ask the process group we started to stop (SIGTERM: clients commit and leave), then kill it."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(grace_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(5)


def _run(argv: list[str], stdin: bytes | None, run_for_s: float, limit_s: float, log: list[str]) -> None:
    """Run one client process: up to ``limit_s``, or stop it gracefully after ``run_for_s``."""
    log.append("$ " + " ".join(argv))
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(stdin, timeout=run_for_s)
    except subprocess.TimeoutExpired:
        _stop(proc, grace_s=max(limit_s - run_for_s, 1.0))
        out, _ = proc.communicate()
    log.extend(out.decode(errors="replace").splitlines()[-25:])
    log.append(f"(exit status {proc.returncode})")


async def capture(client: str) -> tuple[Peer, list[str]]:
    peer = Peer()
    server = await asyncio.start_server(peer.serve, HOST, 0)
    peer.port = server.sockets[0].getsockname()[1]
    bootstrap = f"{HOST}:{peer.port}"
    log: list[str] = []
    print(f"== {client}: peer on {bootstrap}", flush=True)
    try:
        async with server:
            if client == "kcat":
                producer, consumer = kcat_commands(bootstrap)
                value = KEY + b":" + message_value("kcat") + b"\n"
                await asyncio.to_thread(_run, producer, value, 20.0, 25.0, log)
                # The group consumer runs until stopped: 8 s is enough to join, fetch, heartbeat and
                # auto-commit; SIGTERM then makes it commit and leave the group.
                await asyncio.to_thread(_run, consumer, None, 8.0, 15.0, log)
            else:
                argv = [
                    sys.executable,
                    str(Path(__file__).resolve()),
                    "--drive",
                    client,
                    "--bootstrap",
                    bootstrap,
                ]
                await asyncio.to_thread(_run, argv, None, DRIVER_TIMEOUT_S, DRIVER_TIMEOUT_S + 10, log)
    finally:
        server.close()
    return peer, log


# -- writing the files --------------------------------------------------------------------------


def write_client(client: str, peer: Peer) -> list[str]:
    """Write the kept frames of one client; return the file names."""
    out_dir = GOLDEN_DIR / client
    out_dir.mkdir(parents=True, exist_ok=True)
    for old in out_dir.glob("*.bin"):
        old.unlink()
    kept = sorted(peer.captured.values(), key=lambda c: c.first_seen)
    kept = [c for c in kept if c.api_key in APIS and len(c.frame) <= MAX_FILE_BYTES]
    if len(kept) > MAX_FILES_PER_CLIENT:
        print(f"  {len(kept)} (api, version) pairs, keeping the first {MAX_FILES_PER_CLIENT}", flush=True)
        kept = kept[:MAX_FILES_PER_CLIENT]
    names = []
    for number, c in enumerate(kept, start=1):
        name = f"{number:02d}_{APIS[c.api_key].name}_v{c.api_version}.bin"
        (out_dir / name).write_bytes(c.frame)
        names.append(name)
        status = f"  DECODE FAILED: {c.error}" if c.error else ""
        print(f"  {name:40s} {len(c.frame):6d} bytes, seen {c.count}x{status}", flush=True)
    return names


def client_version(client: str) -> str:
    if client == "kafka-python":
        import kafka

        return f"kafka-python {kafka.__version__}"
    if client == "aiokafka":
        import aiokafka

        return f"aiokafka {aiokafka.__version__}"
    if client == "confluent-kafka":
        import confluent_kafka

        return f"confluent-kafka {confluent_kafka.__version__} (librdkafka {confluent_kafka.libversion()[0]})"
    # "Version 1.7.1 (JSON, Transactions, IncrementalAssign, librdkafka 2.0.2 builtin.features=...)"
    out = subprocess.run(["kcat", "-V"], capture_output=True, text=True, timeout=10).stdout
    words = next((line.split() for line in out.splitlines() if line.startswith("Version")), ["", "?"])
    librdkafka = next((words[i + 1] for i, w in enumerate(words[:-1]) if w == "librdkafka"), "?")
    return f"kcat {words[1]} (librdkafka {librdkafka})"


def write_readme(sections: dict[str, tuple[str, list[str], list[str]]]) -> None:
    lines = [
        "# Golden request frames from real clients",
        "",
        "Each `.bin` file is one request frame exactly as a real client sent it: request header and",
        "body, **without the 4-byte size prefix**. The name is `<NN>_<ApiName>_v<version>.bin`, NN in",
        "order of first appearance; for each (api, version) pair the largest frame (at most 64 KiB)",
        "was kept. `tests/protocol/test_golden.py` decodes every file with our codec and re-encodes it.",
        "",
        f"Captured on {CAPTURE_DATE} by `tests/data/capture_golden.py`, a scripted one-broker peer on",
        '127.0.0.1 (topic "golden" with one partition, group "golden-group"). Regenerate with:',
        "",
        "    .venv/bin/python tests/data/capture_golden.py [kafka-python aiokafka confluent-kafka kcat]",
        "",
        "(needs aiokafka and confluent-kafka in the venv and kcat on PATH; it rewrites this file).",
        "Each producer sends one record: key `golden-key`, value",
        "`message_value(client) = f\"golden value from {client}; {'golden ' * 20}\"`, compressible on",
        "purpose (kafka-python and librdkafka send a batch uncompressed when the codec does not shrink it).",
        "Timestamps, member ids and CRCs differ from run to run.",
        "",
    ]
    for client, (version, what, names) in sections.items():
        lines += [f"## {client}: {version}", ""]
        lines += [f"- {w}" for w in what]
        lines += ["", "Files: " + ", ".join(f"`{n}`" for n in names), ""]
    (GOLDEN_DIR / "README.md").write_text("\n".join(lines))


def main() -> None:
    global CAPTURE_DATE
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clients", nargs="*", default=[*PYTHON_DRIVERS, "kcat"])
    parser.add_argument("--drive", help=argparse.SUPPRESS)
    parser.add_argument("--bootstrap", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.drive:
        PYTHON_DRIVERS[args.drive](args.bootstrap)
        return
    if "kcat" in args.clients and shutil.which("kcat") is None:
        sys.exit("kcat is not on PATH")
    CAPTURE_DATE = datetime.date.today().isoformat()
    sections = {}
    problems = []
    for client in args.clients:
        peer, log = asyncio.run(capture(client))
        names = write_client(client, peer)
        if peer.out_of_range:
            print(f"  outside the codec's ranges (not stored): {sorted(set(peer.out_of_range))}", flush=True)
        if peer.unanswered:
            print(f"  not answered: {sorted(set(peer.unanswered))}", flush=True)
        problems += [
            f"{client}: {c.api_key} v{c.api_version}: {c.error}" for c in peer.captured.values() if c.error
        ]
        print("  client output (tail):\n    " + "\n    ".join(log[-30:]), flush=True)
        what = DESCRIPTIONS.get(client) or [
            "`" + " ".join(cmd) + "`" for cmd in kcat_commands("127.0.0.1:PORT")
        ]
        if client == "kcat":
            what[0] += ' with stdin `golden-key:` + message_value("kcat")'
            what[1] += " (run for 8 s, then SIGTERM: it commits and leaves the group)"
        sections[client] = (client_version(client), what, names)
    if set(args.clients) == {*PYTHON_DRIVERS, "kcat"}:
        write_readme(sections)
    if problems:
        print("frames our codec could not decode:\n  " + "\n  ".join(problems), flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
