"""Fetch (key 1), v4-18: read record batches, long-polling until min_bytes or max_wait_ms.

v4: isolation_level (read_committed stops at the last stable offset and lists aborted
transactions), last_stable_offset. v5: log_start_offset. v7 (KIP-227): fetch sessions, see
mockbroker.log.fetch_sessions. v9 (KIP-320): current_leader_epoch checked. v11 (KIP-392): rack_id,
preferred_read_replica (always -1: the leader serves). v12: flexible; diverging epochs and
snapshots (follower fields, never set here). v13 (KIP-516): topics by id (UNKNOWN_TOPIC_ID).
v15: replica_state. v16 (KIP-951): NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH carry
current_leader and the leaders' node_endpoints (Kafka fills them from v16, though the field
exists from v12). v17-18: replica directory id, high watermark (followers, KIP-853/KIP-1166).
v0-3 were removed by KIP-896 and are not served: dispatch closes the connection, as Kafka 4 does.

Sizes (KIP-74): max_bytes and min_bytes are capped by fetch.max.bytes (KafkaApis); partitions are
read in order, each up to min(partition_max_bytes, what is left
of max_bytes), whole batches only; the first partition that has data returns at least one batch
even when it is larger than both limits, so a consumer is never stuck behind a big batch.

Long poll (ReplicaManager.fetchMessages, DelayedFetch): answer at once when max_wait_ms <= 0,
when there is nothing to read, when min_bytes are readable or when reading a partition failed
(not the leader, leader epoch, offset out of range; unknown topics do not count, as in Kafka);
otherwise park this connection until an append to one of the partitions (PartitionLog listeners)
or the deadline (cluster.timers, so a ManualClock drives it), then read again. Anything else a
parked fetch must notice at once (a leader move, a deletion) should call
PartitionLog.notify_listeners; until then it is seen at the next wake-up or the deadline.

Records are the log's stored buffers, handed to the encoder as a list and to the socket as
chunks of their own: never copied on the way out.
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker.log.fetch_sessions import PartitionKey, records_bytes
from mockbroker.log.replica_manager import partition_error
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.fetch import (
    AbortedTransaction,
    FetchableTopicResponse,
    FetchPartition,
    FetchRequest,
    FetchResponse,
    LeaderIdAndEpoch,
    NodeEndpoint,
    PartitionData,
)
from mockbroker_protocol.primitives import INT32, INT64, Buffer

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext, RequestFaults
    from mockbroker.log.partition import PartitionLog
    from mockbroker.model import Topic
    from mockbroker.state import ClusterState

API_KEY = ApiKey.FETCH
VERSIONS = (4, 18)
READ_COMMITTED = 1
CURRENT_LEADER_MIN_VERSION = 16  # KafkaApis fills current_leader / node_endpoints from v16
_waiter_ids = itertools.count()


async def handle(ctx: RequestContext, req: FetchRequest) -> FetchResponse:
    context = ctx.cluster.fetch_sessions[ctx.broker.node_id].new_context(req, ctx.api_version, ctx.now_ms)
    if context.error != ErrorCode.NONE:
        return FetchResponse(error_code=context.error, session_id=0)
    wanted = context.partitions()
    faults = ctx.faults  # pushed partition errors (mockbroker/control/faults.py); None: none
    failed = None if faults is None else _take_faults(ctx, wanted, faults)
    if failed:  # a failed partition ends a long poll: the others are read once
        read = dict(_read_all(ctx, req, [w for w in wanted if w[0] not in failed])[0])
        results = [(key, _error(key[1], failed[key]) if key in failed else read[key]) for key, _ in wanted]
    else:
        results = await _read_until_ready(ctx, req, wanted)
    error, session_id, answered = context.update_and_generate(results)
    return FetchResponse(
        error_code=error,
        session_id=session_id,
        responses=_group_by_topic(ctx, answered),
        node_endpoints=_node_endpoints(ctx, answered),
    )


def _take_faults(
    ctx: RequestContext, wanted: list[tuple[PartitionKey, FetchPartition]], faults: RequestFaults
) -> dict[PartitionKey, ErrorCode]:
    """The fault point: the pushed error of each partition that has one, taken."""
    failed: dict[PartitionKey, ErrorCode] = {}
    for key, _ in wanted:
        topic_key, index = key
        name = ctx.cluster.topic_ids.get(topic_key, "") if isinstance(topic_key, uuid.UUID) else topic_key
        fault = faults.partition(name, index)
        if fault is not None:
            failed[key] = fault
    return failed


async def _read_until_ready(
    ctx: RequestContext, req: FetchRequest, wanted: list[tuple[PartitionKey, FetchPartition]]
) -> list[tuple[PartitionKey, PartitionData]]:
    cluster = ctx.cluster
    deadline_ms = ctx.now_ms + req.max_wait_ms
    # KafkaApis.handleFetchRequest: fetchMinBytes = min(minBytes, fetchMaxBytes), so a fetch
    # asking for more than the broker would ever return in one answer is not parked until its end.
    min_bytes = min(req.min_bytes, req.max_bytes, cluster.config.fetch_max_bytes)
    waiter: FetchWaiter | None = None
    try:
        while True:
            results, readable, failed, logs = _read_all(ctx, req, wanted)
            if (
                req.max_wait_ms <= 0
                or not logs
                or readable >= min_bytes
                or failed
                or (waiter is not None and waiter.expired)
                or cluster.clock.now_ms() >= deadline_ms
            ):
                return results
            if waiter is None:
                waiter = FetchWaiter(cluster, logs, deadline_ms)
            await waiter.wait()
    finally:
        if waiter is not None:
            waiter.close()


class FetchWaiter:
    """Wakes a parked fetch on an append to any of its partitions or at its deadline (ShareFetch
    adds its own wake-ups on top: handlers/share_fetch.py)."""

    def __init__(self, cluster: ClusterState, logs: list[PartitionLog], deadline_ms: int, kind: str = "fetch") -> None:
        self._cluster = cluster
        self._logs = logs
        self._event = asyncio.Event()
        self._key = (kind, next(_waiter_ids))
        self.expired = False
        for log in logs:
            log.add_listener(self._on_append)
        cluster.timers.schedule(self._key, deadline_ms, self._on_deadline)

    def _on_append(self, log: PartitionLog) -> None:
        self._event.set()

    def _on_deadline(self, now_ms: int) -> None:
        self.expired = True
        self._event.set()

    async def wait(self) -> None:
        await self._event.wait()
        self._event.clear()

    def close(self) -> None:
        for log in self._logs:
            log.remove_listener(self._on_append)
        self._cluster.timers.cancel(self._key)


def _read_all(
    ctx: RequestContext, req: FetchRequest, wanted: list[tuple[PartitionKey, FetchPartition]]
) -> tuple[list[tuple[PartitionKey, PartitionData]], int, bool, list[PartitionLog]]:
    """Read every partition once: (results, bytes read, any read error, the logs read from).

    As in KafkaApis, partitions of unknown topics are answered but are not "read": their errors
    do not end a long poll early, and a fetch with nothing else to read is answered at once."""
    results = []
    # KafkaApis.handleFetchRequest: fetchMaxBytes = min(maxBytes, fetch.max.bytes).
    remaining = min(req.max_bytes, ctx.cluster.config.fetch_max_bytes)
    min_one_message = True  # !hardMaxBytesLimit: every served version has max_bytes (v3+)
    readable = 0
    failed = False
    logs: list[PartitionLog] = []
    for key, fetch in wanted:
        data, log = _read_partition(ctx, req, key, fetch, remaining, min_one_message)
        size = records_bytes(data)
        if size:
            min_one_message = False  # once a partition has returned data, the limits hold
        remaining = max(0, remaining - size)
        readable += size
        if log is not None:
            logs.append(log)
            failed = failed or data.error_code != ErrorCode.NONE
        results.append((key, data))
    return results, readable, failed, logs


def _read_partition(
    ctx: RequestContext,
    req: FetchRequest,
    key: PartitionKey,
    fetch: FetchPartition,
    remaining: int,
    min_one_message: bool,
) -> tuple[PartitionData, PartitionLog | None]:
    topic_key, index = key
    topic: Topic | None
    if isinstance(topic_key, uuid.UUID):
        topic, missing = ctx.cluster.topic_by_id(topic_key), ErrorCode.UNKNOWN_TOPIC_ID
    else:
        topic, missing = ctx.cluster.topics.get(topic_key), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    # Unknown topics and partitions are answered by KafkaApis itself (FetchResponse.partitionResponse,
    # whose aborted transactions default to an empty list); errors of the log read below carry null.
    if ctx.cluster.authorizer is not None and (topic is not None or not isinstance(topic_key, uuid.UUID)):
        name = topic.name if topic is not None else str(topic_key)
        if not authorized(ctx, AclOperation.READ, ResourceType.TOPIC, name):  # KafkaApis: before existence
            return _error(index, ErrorCode.TOPIC_AUTHORIZATION_FAILED, aborted=[]), None
    if topic is None:
        return _error(index, missing, aborted=[]), None
    if not 0 <= index < len(topic.partitions):
        return _error(index, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, aborted=[]), None
    partition = topic.partitions[index]
    error = partition_error(ctx.broker, partition, fetch.current_leader_epoch)
    if error != ErrorCode.NONE:
        data = _error(index, error)
        if ctx.api_version >= CURRENT_LEADER_MIN_VERSION and error in (
            ErrorCode.NOT_LEADER_OR_FOLLOWER,
            ErrorCode.FENCED_LEADER_EPOCH,
        ):
            data.current_leader = LeaderIdAndEpoch(partition.leader_id, partition.log.leader_epoch)
        return data, partition.log
    log = partition.log
    offset = fetch.fetch_offset
    if not log.log_start_offset <= offset <= log.log_end_offset:
        return _error(index, ErrorCode.OFFSET_OUT_OF_RANGE), log
    read_committed = req.isolation_level == READ_COMMITTED
    upper = log.last_stable_offset if read_committed else log.high_watermark
    batches = log.read(
        offset, min(fetch.partition_max_bytes, remaining), upper=upper, min_one_message=min_one_message
    )
    aborted = _aborted_transactions(log, offset, batches) if read_committed else None
    return (
        PartitionData(
            partition_index=index,
            error_code=ErrorCode.NONE,
            high_watermark=log.high_watermark,
            last_stable_offset=log.last_stable_offset,
            log_start_offset=log.log_start_offset,
            aborted_transactions=aborted,
            preferred_read_replica=-1,
            records=batches,  # the stored buffers themselves: zero copy to the socket
        ),
        log,
    )


def _aborted_transactions(log: PartitionLog, offset: int, batches: list[Buffer]) -> list[AbortedTransaction]:
    """The aborted transactions the returned data overlaps (LocalLog.addAbortedTransactions): from
    the fetch offset to just past the last batch returned (its base offset + last offset delta)."""
    if not batches:
        return []
    last = batches[-1]
    upper_bound = INT64.unpack_from(last, 0)[0] + INT32.unpack_from(last, 23)[0] + 1
    return [AbortedTransaction(t.producer_id, t.first_offset) for t in log.collect_aborted_transactions(offset, upper_bound)]


def _error(index: int, code: ErrorCode, aborted: list[AbortedTransaction] | None = None) -> PartitionData:
    # FetchResponse.partitionResponse / ReplicaManager.createLogReadResult: offsets unknown (-1).
    return PartitionData(
        partition_index=index,
        error_code=code,
        high_watermark=-1,
        last_stable_offset=-1,
        log_start_offset=-1,
        aborted_transactions=aborted,
        records=b"",
    )


def _group_by_topic(ctx: RequestContext, answered: list[tuple[PartitionKey, PartitionData]]) -> list[FetchableTopicResponse]:
    """Consecutive partitions of one topic share an entry, as FetchResponse.of builds them."""
    out: list[FetchableTopicResponse] = []
    previous: object = None
    for (topic_key, _), data in answered:
        if not out or topic_key != previous:
            entry = (
                FetchableTopicResponse(topic_id=topic_key)
                if isinstance(topic_key, uuid.UUID)
                else FetchableTopicResponse(topic=topic_key)
            )
            out.append(entry)
            previous = topic_key
        out[-1].partitions.append(data)
    return out


def _node_endpoints(ctx: RequestContext, answered: list[tuple[PartitionKey, PartitionData]]) -> list[NodeEndpoint]:
    leaders = sorted({d.current_leader.leader_id for _, d in answered if d.current_leader.leader_id >= 0})
    nodes = [ctx.cluster.brokers[i] for i in leaders if i in ctx.cluster.brokers]
    return [NodeEndpoint(n.node_id, a[0], a[1], n.rack) for n in nodes if (a := n.address(ctx.listener)) is not None]
