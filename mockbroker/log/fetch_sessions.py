"""Incremental fetch sessions (KIP-227): per-broker cache and the four kinds of fetch context.

A consumer that fetches many partitions need not repeat them all on every Fetch: its first
request (session id 0, epoch 0) is a full fetch that creates a session; later requests name the
session and the next epoch and carry only the partitions whose fetch position changed, plus
``forgotten_topics_data``; the broker answers only the partitions that have something new.

Kafka's FetchManager.newContext decides, and so does ``FetchSessionCache.new_context`` here:
- epoch 0 or -1 (a "full" request): any session the request names is closed; epoch 0 creates a
  new session once the response is known (FullFetchContext), epoch -1 creates none
  (SessionlessFetchContext, session id 0 in the answer);
- epoch > 0 (incremental): unknown session -> FETCH_SESSION_ID_NOT_FOUND; another epoch than the
  session expects -> INVALID_FETCH_SESSION_EPOCH; a session created with topic names used from
  v13 (topic ids) or the other way round -> FETCH_SESSION_TOPIC_ID_ERROR; otherwise the session
  takes the request's partitions and forgets the forgotten ones, and the fetch reads every
  partition of the session (IncrementalFetchContext). A session left with no partitions is closed
  and the request answered sessionless.

The response of an incremental fetch carries a partition only when it has records, a changed
high watermark or log start offset, or an error (CachedPartition.maybeUpdateResponseData); a
partition that returned records moves to the end of the session, so that the next fetch starts
with the others (fairness under max_bytes, KIP-227).

Sessions are bounded: the cache holds at most ``max_sessions`` (Kafka's cache is bounded in
partition slots, max.incremental.fetch.session.cache.slots = 1000, and evicts by a privileged /
least-recently-used rule); a new session here evicts the least recently used one.
"""

from __future__ import annotations

import random
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.primitives import records_size

if TYPE_CHECKING:  # annotations only: the Fetch codec loads with the first Fetch (start-up stays fast)
    from mockbroker_protocol.messages.fetch import FetchPartition, FetchRequest, PartitionData

# FetchMetadata (clients/.../requests/FetchMetadata.java)
INVALID_SESSION_ID = 0
INITIAL_EPOCH = 0
FINAL_EPOCH = -1
TOPIC_IDS_MIN_VERSION = 13  # KIP-516: Fetch names topics by id from v13
DEFAULT_MAX_SESSIONS = 1000

TopicKey = str | uuid.UUID  # a topic name (v12 and older) or a topic id (v13+)
PartitionKey = tuple[TopicKey, int]


def records_bytes(data: PartitionData) -> int:
    return 0 if data.records is None else records_size(data.records)


def next_epoch(prev_epoch: int) -> int:
    """FetchMetadata.nextEpoch: FINAL stays FINAL, and the epoch wraps from Int.MAX to 1."""
    if prev_epoch < 0:
        return FINAL_EPOCH
    return 1 if prev_epoch == 0x7FFFFFFF else prev_epoch + 1


@dataclass(slots=True)
class CachedPartition:
    """A partition of a session: what the client last asked for, and what it was last told."""

    request: FetchPartition
    # INVALID_HIGH_WATERMARK (-1) until answered, so a newly added partition is always answered.
    high_watermark: int = -1
    log_start_offset: int = -1

    def maybe_update_response_data(self, data: PartitionData) -> bool:
        """CachedPartition.maybeUpdateResponseData: must ``data`` go into the response? Caches
        what the client is now told."""
        must_respond = records_bytes(data) > 0
        if self.high_watermark != data.high_watermark:
            must_respond = True
            self.high_watermark = data.high_watermark
        if self.log_start_offset != data.log_start_offset:
            must_respond = True
            self.log_start_offset = data.log_start_offset
        if data.preferred_read_replica != -1:
            must_respond = True
        if data.error_code != ErrorCode.NONE:
            # So that the partition is answered again once the error is gone.
            self.high_watermark = -1
            must_respond = True
        return must_respond


@dataclass(slots=True)
class FetchSession:
    session_id: int
    epoch: int  # the epoch the next request must carry
    uses_topic_ids: bool
    partitions: OrderedDict[PartitionKey, CachedPartition]
    creation_ms: int
    last_used_ms: int


@dataclass(slots=True)
class FetchContext:
    """What one Fetch reads and how its answer is shaped (Kafka's FetchContext subclasses):
    kind is "full", "sessionless", "incremental" or "error"."""

    kind: str
    cache: FetchSessionCache
    error: ErrorCode = ErrorCode.NONE
    requested: list[tuple[PartitionKey, FetchPartition]] = field(default_factory=list)
    session: FetchSession | None = None
    uses_topic_ids: bool = False
    now_ms: int = 0
    expected_epoch: int = FINAL_EPOCH  # incremental: the session's epoch once this request is answered

    def partitions(self) -> list[tuple[PartitionKey, FetchPartition]]:
        """The partitions to read, in order: the request's, or the whole session's."""
        if self.kind == "incremental" and self.session is not None:
            return [(key, cached.request) for key, cached in self.session.partitions.items()]
        return self.requested

    def update_and_generate(
        self, results: Sequence[tuple[PartitionKey, PartitionData]]
    ) -> tuple[ErrorCode, int, list[tuple[PartitionKey, PartitionData]]]:
        """(error, session id, partitions to answer) once the partitions have been read."""
        if self.kind == "sessionless":
            return ErrorCode.NONE, INVALID_SESSION_ID, list(results)
        if self.kind == "full":
            session = self.cache.create_session(self.requested, results, self.uses_topic_ids, self.now_ms)
            return ErrorCode.NONE, session.session_id if session else INVALID_SESSION_ID, list(results)
        session = self.session
        assert session is not None
        if session.epoch != self.expected_epoch:
            # Another request moved the session on while this one was parked (a duplicate).
            return ErrorCode.INVALID_FETCH_SESSION_EPOCH, session.session_id, []
        answer = []
        for key, data in results:
            cached = session.partitions.get(key)
            if cached is None or not cached.maybe_update_response_data(data):
                continue
            answer.append((key, data))
            if records_bytes(data) > 0:
                session.partitions.move_to_end(key)
        return ErrorCode.NONE, session.session_id, answer


class FetchSessionCache:
    """One broker's fetch sessions, least recently used first."""

    def __init__(self, max_sessions: int = DEFAULT_MAX_SESSIONS, rng: random.Random | None = None) -> None:
        self.max_sessions = max_sessions
        self.sessions: OrderedDict[int, FetchSession] = OrderedDict()
        self._rng = rng or random.Random()

    def __len__(self) -> int:
        return len(self.sessions)

    def new_context(self, req: FetchRequest, version: int, now_ms: int) -> FetchContext:
        uses_topic_ids = version >= TOPIC_IDS_MIN_VERSION
        requested = _requested_partitions(req, uses_topic_ids)
        session_id, epoch = req.session_id, req.session_epoch
        if epoch in (INITIAL_EPOCH, FINAL_EPOCH):
            if session_id != INVALID_SESSION_ID:
                # Any session named by a full fetch request is closed.
                self.sessions.pop(session_id, None)
            kind = "sessionless" if epoch == FINAL_EPOCH else "full"
            return FetchContext(kind, self, requested=requested, uses_topic_ids=uses_topic_ids, now_ms=now_ms)
        session = self.sessions.get(session_id)
        if session is None:
            return FetchContext("error", self, ErrorCode.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != epoch:
            return FetchContext("error", self, ErrorCode.INVALID_FETCH_SESSION_EPOCH)
        if session.uses_topic_ids != uses_topic_ids:
            return FetchContext("error", self, ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR)
        for key, partition in requested:
            cached = session.partitions.get(key)
            if cached is None:
                session.partitions[key] = CachedPartition(partition)
            else:
                cached.request = partition  # CachedPartition.updateRequestParams
        for key in _forgotten_partitions(req, uses_topic_ids):
            session.partitions.pop(key, None)
        if not session.partitions:
            del self.sessions[session_id]
            return FetchContext("sessionless", self, requested=requested, uses_topic_ids=uses_topic_ids, now_ms=now_ms)
        session.last_used_ms = now_ms
        session.epoch = next_epoch(session.epoch)
        self.sessions.move_to_end(session_id)
        return FetchContext(
            "incremental", self, session=session, uses_topic_ids=uses_topic_ids, now_ms=now_ms, expected_epoch=session.epoch
        )

    def create_session(
        self,
        requested: list[tuple[PartitionKey, FetchPartition]],
        results: Sequence[tuple[PartitionKey, PartitionData]],
        uses_topic_ids: bool,
        now_ms: int,
    ) -> FetchSession | None:
        """FetchSessionCache.maybeCreateSession, after a full fetch has been answered: the
        session starts at epoch 1 and caches what the response told the client."""
        if self.max_sessions <= 0:
            return None
        while len(self.sessions) >= self.max_sessions:
            self.sessions.popitem(last=False)
        request_data = dict(requested)
        partitions: OrderedDict[PartitionKey, CachedPartition] = OrderedDict()
        for key, data in results:
            cached = CachedPartition(request_data[key], data.high_watermark, data.log_start_offset)
            if data.error_code != ErrorCode.NONE:
                cached.high_watermark = -1
            partitions[key] = cached
        session_id = self._new_session_id()
        session = FetchSession(session_id, next_epoch(INITIAL_EPOCH), uses_topic_ids, partitions, now_ms, now_ms)
        self.sessions[session_id] = session
        return session

    def _new_session_id(self) -> int:
        # FetchSessionCache.newSessionId: random, so that ids from before a restart do not collide.
        while True:
            candidate = self._rng.randint(1, 0x7FFFFFFF)
            if candidate not in self.sessions:
                return candidate


def _requested_partitions(req: FetchRequest, uses_topic_ids: bool) -> list[tuple[PartitionKey, FetchPartition]]:
    seen: dict[PartitionKey, FetchPartition] = {}
    for topic in req.topics:
        topic_key: TopicKey = topic.topic_id if uses_topic_ids else topic.topic
        for partition in topic.partitions:
            seen[(topic_key, partition.partition)] = partition
    return list(seen.items())


def _forgotten_partitions(req: FetchRequest, uses_topic_ids: bool) -> list[PartitionKey]:
    keys: list[PartitionKey] = []
    for forgotten in req.forgotten_topics_data:
        topic_key: TopicKey = forgotten.topic_id if uses_topic_ids else forgotten.topic
        keys.extend((topic_key, index) for index in forgotten.partitions)
    return keys
