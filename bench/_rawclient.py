"""A raw Kafka-protocol client for the benchmarks: frames built ahead of time with our codec.

Both brokers get the same bytes. Versions are the highest both serve (librdkafka's mock stops at
ApiVersions v2, Metadata v12, Heartbeat v4; its flexible JoinGroup v6 closes the connection, so
JoinGroup v5 and SyncGroup v3 here), so neither does work the other skips. SyncGroup answers are
read for their error code only: the mock writes a null assignment where Kafka writes empty bytes.

- ``frame``: one request frame (size prefix included).
- ``call``: one blocking request/response on a socket.
- ``join_group``: N raw members (one connection each, asyncio) join one group and reach Stable:
  JoinGroup (twice: KIP-394's MEMBER_ID_REQUIRED first), the leader's SyncGroup with a range-like
  assignment, the followers' SyncGroups. The member identities are returned, for heartbeats.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import time
from dataclasses import dataclass
from typing import Any

from mockbroker_protocol import registry
from mockbroker_protocol.consumer_protocol import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    TopicPartition,
    encode_assignment,
    encode_subscription,
)
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from mockbroker_protocol.messages.find_coordinator import FindCoordinatorRequest
from mockbroker_protocol.messages.heartbeat import HeartbeatRequest
from mockbroker_protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from mockbroker_protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from mockbroker_protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment

API_VERSIONS, METADATA, HEARTBEAT, JOIN_GROUP, SYNC_GROUP, FIND_COORDINATOR = 18, 3, 12, 11, 14, 10
VERSION = {API_VERSIONS: 2, METADATA: 12, HEARTBEAT: 4, JOIN_GROUP: 5, SYNC_GROUP: 3, FIND_COORDINATOR: 3}
CLIENT_ID = "bench"
MEMBER_ID_REQUIRED = 79
REBALANCE_IN_PROGRESS = 27
# Answers after which a consumer rejoins: REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION, and the
# INVALID_REQUEST librdkafka's mock gives a SyncGroup that arrives once its group is up again.
REJOIN = frozenset({REBALANCE_IN_PROGRESS, 22, 42})
# COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR: a real Kafka answers
# these until __consumer_offsets exists and its partition is loaded (the first group request
# creates it, FindCoordinator being what creates it); a client retries after retry.backoff.ms
# (100 ms), as this one does.
COORDINATOR_RETRY = frozenset({14, 15, 16})
RETRY_BACKOFF_S = 0.1
_SIZE = struct.Struct(">i")


def frame(api_key: int, request: Any, correlation_id: int = 0, version: int | None = None) -> bytes:
    v = VERSION[api_key] if version is None else version
    return registry.encode_request(RequestHeader(api_key, v, correlation_id, CLIENT_ID), request)


def api_versions_request() -> ApiVersionsRequest:
    return ApiVersionsRequest()


def metadata_request(topic: str) -> MetadataRequest:
    return MetadataRequest(topics=[MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False)


def read_frame(sock: socket.socket) -> bytes:
    size = _SIZE.unpack(_recv_exactly(sock, 4))[0]
    return _recv_exactly(sock, size)


def _recv_exactly(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            raise ConnectionError("broker closed the connection")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def call(sock: socket.socket, api_key: int, request: Any, correlation_id: int = 1) -> Any:
    sock.sendall(frame(api_key, request, correlation_id))
    cid, body = registry.decode_response(api_key, VERSION[api_key], read_frame(sock))
    if cid != correlation_id:
        raise RuntimeError(f"correlation id {cid}, expected {correlation_id}")
    return body


def first_answer_s(address: tuple[str, int], deadline_s: float = 10.0) -> float:
    """Connect (retrying while refused) and send ApiVersions; the monotonic time it was answered."""
    end = time.monotonic() + deadline_s
    while True:
        try:
            with socket.create_connection(address, timeout=deadline_s) as sock:
                call(sock, API_VERSIONS, api_versions_request())
                return time.perf_counter()
        except ConnectionRefusedError:
            if time.monotonic() > end:
                raise
            time.sleep(0.001)


# -- a group of raw members -----------------------------------------------------------------------


@dataclass
class Member:
    member_id: str
    generation_id: int
    is_leader: bool


async def _acall(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, api_key: int, request: Any) -> Any:
    writer.write(frame(api_key, request, 1))
    size = _SIZE.unpack(await reader.readexactly(4))[0]
    data = await reader.readexactly(size)
    if api_key == SYNC_GROUP:  # correlation id, throttle time, error code (v1-v3)
        return _ErrorOnly(struct.unpack_from(">h", data, 8)[0])
    _, body = registry.decode_response(api_key, VERSION[api_key], data)
    return body


@dataclass
class _ErrorOnly:
    error_code: int


async def join_group(
    address: tuple[str, int],
    group_id: str,
    members: int,
    topic: str,
    partitions: int,
    *,
    session_timeout_ms: int = 6000,
    rebalance_timeout_ms: int = 60000,
    heartbeat_interval_s: float = 0.2,
    timeout_s: float = 300.0,
) -> tuple[list[Member], float, list[tuple[asyncio.StreamReader, asyncio.StreamWriter]]]:
    """``members`` raw members join ``group_id`` as a consumer would: JoinGroup (twice: KIP-394's
    MEMBER_ID_REQUIRED first), SyncGroup (the leader sends a round-robin assignment), heartbeats,
    and a rejoin whenever SyncGroup or Heartbeat answers REBALANCE_IN_PROGRESS. Returns once every
    member has synced the same generation (the group is Stable with all of them), the seconds that
    took from the first JoinGroup, and the open connections (the caller closes them)."""
    metadata = encode_subscription(ConsumerProtocolSubscription(topics=[topic]), 0)
    conns = [await asyncio.open_connection(*address) for _ in range(members)]
    # FindCoordinator first, as a client does: on a real Kafka it creates __consumer_offsets, and
    # JoinGroup answers NOT_COORDINATOR until that is loaded. Every broker here has one node, the
    # coordinator, so the answer's address is not used.
    async with asyncio.timeout(timeout_s):
        while (found := await _acall(*conns[0], FIND_COORDINATOR, FindCoordinatorRequest(key=group_id))).error_code:
            if found.error_code not in COORDINATOR_RETRY:
                raise RuntimeError(f"FindCoordinator error {found.error_code}")
            await asyncio.sleep(RETRY_BACKOFF_S)
    synced: list[Member | None] = [None] * members
    done = asyncio.Event()
    finished_at: list[float] = []
    sync_sent: dict[int, int] = {}  # generation -> followers whose SyncGroup is written
    sync_sent_changed = asyncio.Condition()
    t0 = time.perf_counter()

    def check() -> None:
        if all(synced) and len({m.generation_id for m in synced if m}) == 1:
            finished_at.append(time.perf_counter())
            done.set()

    async def member(i: int) -> None:
        reader, writer = conns[i]
        member_id = ""
        while not done.is_set():
            request = JoinGroupRequest(
                group_id=group_id, session_timeout_ms=session_timeout_ms, rebalance_timeout_ms=rebalance_timeout_ms,
                member_id=member_id, protocol_type="consumer",
                protocols=[JoinGroupRequestProtocol(name="range", metadata=metadata)],
            )  # fmt: skip
            joined = await _acall(reader, writer, JOIN_GROUP, request)
            member_id = joined.member_id or member_id
            if joined.error_code in (MEMBER_ID_REQUIRED, REBALANCE_IN_PROGRESS):
                continue
            if joined.error_code in COORDINATOR_RETRY:
                await asyncio.sleep(RETRY_BACKOFF_S)
                continue
            if joined.error_code != 0:
                raise RuntimeError(f"JoinGroup error {joined.error_code}")
            is_leader = joined.leader == joined.member_id
            assignments = []
            if is_leader:
                ids = [m.member_id for m in joined.members]
                for k, mid in enumerate(ids):
                    owned = [p for p in range(partitions) if p % len(ids) == k]
                    blob = encode_assignment(ConsumerProtocolAssignment([TopicPartition(topic, owned)]), 0)
                    assignments.append(SyncGroupRequestAssignment(member_id=mid, assignment=blob))
            sync = SyncGroupRequest(
                group_id=group_id, generation_id=joined.generation_id, member_id=member_id,
                protocol_type="consumer", protocol_name="range", assignments=assignments,
            )  # fmt: skip
            if is_leader:
                # The leader syncs after its followers: librdkafka's mock marks the group up as soon
                # as the leader's assignment covers everyone and then refuses later SyncGroups
                # (INVALID_REQUEST). Real leaders run an assignor first, so followers are usually
                # earlier; here the wait is explicit (bounded, in case a follower is not in this
                # generation). Kafka and mockbroker do not care about the order.
                followers = len(joined.members) - 1
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(1.0), sync_sent_changed:
                        generation = joined.generation_id
                        await sync_sent_changed.wait_for(
                            lambda g=generation, f=followers: sync_sent.get(g, 0) >= f  # type: ignore[misc]
                        )
                answer = await _acall(reader, writer, SYNC_GROUP, sync)
            else:
                answer_future = asyncio.ensure_future(_acall(reader, writer, SYNC_GROUP, sync))
                await asyncio.sleep(0)  # let the write happen before the leader is told
                async with sync_sent_changed:
                    sync_sent[joined.generation_id] = sync_sent.get(joined.generation_id, 0) + 1
                    sync_sent_changed.notify_all()
                answer = await answer_future
            if answer.error_code in REJOIN:
                continue
            if answer.error_code != 0:
                raise RuntimeError(f"SyncGroup error {answer.error_code}")
            me = Member(member_id, joined.generation_id, is_leader)
            synced[i] = me
            check()
            while not done.is_set():  # heartbeat until everyone is in, or a rebalance starts
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(done.wait(), heartbeat_interval_s)
                if done.is_set():
                    break
                beat = await _acall(reader, writer, HEARTBEAT, heartbeat_request(group_id, me))
                if beat.error_code in REJOIN:
                    synced[i] = None
                    break
                if beat.error_code != 0:
                    raise RuntimeError(f"Heartbeat error {beat.error_code}")

    tasks = [asyncio.ensure_future(member(i)) for i in range(members)]
    try:
        async with asyncio.timeout(timeout_s):
            await asyncio.gather(*tasks)  # each ends once everyone is in; the first error ends all
    finally:
        for t in tasks:
            t.cancel()
    elapsed = finished_at[0] - t0
    return [m for m in synced if m], elapsed, conns


def heartbeat_request(group_id: str, member: Member) -> HeartbeatRequest:
    return HeartbeatRequest(group_id=group_id, generation_id=member.generation_id, member_id=member.member_id)


def feed(connection: Any, chunk: bytes) -> None:
    """Hand ``chunk`` to a broker connection (an asyncio.BufferedProtocol, mockbroker.net.server) as the
    event loop delivers a socket read, in as many reads as the connection's buffer needs."""
    view, pos = memoryview(chunk), 0
    while pos < len(chunk):
        buffer = connection.get_buffer(len(chunk) - pos)
        n = min(len(buffer), len(chunk) - pos)
        buffer[:n] = view[pos : pos + n]
        connection.buffer_updated(n)
        pos += n
