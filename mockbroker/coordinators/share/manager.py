"""The share partitions and share sessions of the cluster: Kafka's SharePartitionManager and
ShareSessionCache, sans-I/O (KIP-932).

What ShareFetch and ShareAcknowledge call (handlers/share_fetch.py, handlers/share_acknowledge.py):

- ``new_context`` / ``acknowledge_session_update``: the share session of (group, member), its
  partitions and epoch. Epoch 0 opens a session (replacing any; acknowledgements on it are
  INVALID_REQUEST), -1 closes it (ShareFetch then may fetch nothing: INVALID_REQUEST), any other
  epoch must be the session's next one (INVALID_SHARE_SESSION_EPOCH; no session:
  SHARE_SESSION_NOT_FOUND). ShareAcknowledge at epoch 0 is INVALID_SHARE_SESSION_EPOCH. A closed
  session releases the member's acquired records.
- ``acknowledge``: one partition's acknowledgement batches (SharePartition.acknowledge).
- ``acquire``: one partition's Available records for the member, locked for
  group.share.record.lock.duration.ms; the lock is a timer on the cluster clock.
- ``on_member_left``: the share coordinator calls it when a member leaves or is fenced; its
  records are released and its sessions closed.
- ``add_waiter``/``remove_waiter``: a parked ShareFetch is woken when records become Available
  again (release, lock expiry); appends wake it through the partition log's listeners.

A share partition starts, the first time its group fetches it, at the offset the group config
share.auto.offset.reset names (``latest`` by default: the high watermark; ``earliest``: the log
start offset; ``by_duration:<ISO-8601>``: the first record at or after now minus the duration,
else the high watermark), set with IncrementalAlterConfigs on the GROUP resource or
``set_auto_offset_reset``. The group's other share.* configs (record lock duration, delivery
count limit, partition max record locks, renew acknowledge enable) are read from
``services.group_config`` each time they apply (ShareGroupConfigProvider).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mockbroker.config.group_configs import by_duration_ms, validate_group_configs
from mockbroker.coordinators.errors import GroupError
from mockbroker.coordinators.services import CoordinatorServices
from mockbroker.coordinators.share.partition import AcquiredRange, SharePartition, record_offsets
from mockbroker_protocol.errors import ErrorCode

INITIAL_EPOCH = 0  # ShareRequestMetadata.INITIAL_EPOCH
FINAL_EPOCH = -1  # ShareRequestMetadata.FINAL_EPOCH
AUTO_OFFSET_RESET_VALUES = ("latest", "earliest")  # share.auto.offset.reset (also by_duration:<ISO-8601>)

class StoredBatchView(Protocol):
    """What a share partition reads of a stored batch (mockbroker.log.partition.StoredBatch)."""

    @property
    def base_offset(self) -> int: ...

    @property
    def last_offset(self) -> int: ...

    @property
    def is_control(self) -> bool: ...

    @property
    def producer_id(self) -> int: ...

    @property
    def is_transactional(self) -> bool: ...


class PartitionLogView(Protocol):
    """What a share partition reads of a partition's log (mockbroker.log.partition.PartitionLog);
    a Protocol so that the coordinators never import the log layer."""

    @property
    def partition(self) -> int: ...

    @property
    def log_start_offset(self) -> int: ...

    @property
    def high_watermark(self) -> int: ...

    @property
    def batches(self) -> Sequence[StoredBatchView]: ...

    @property
    def last_stable_offset(self) -> int: ...

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None: ...

    def collect_aborted_transactions(self, start_offset: int, upper_bound_offset: int) -> Sequence[AbortedTxnView]: ...


class AbortedTxnView(Protocol):
    """An aborted transaction's range in a partition (mockbroker.log.partition.AbortedTxn)."""

    @property
    def producer_id(self) -> int: ...

    @property
    def first_offset(self) -> int: ...

    @property
    def last_offset(self) -> int: ...


def readable(log: PartitionLogView, start: int, isolation_level: str) -> tuple[Iterator[tuple[int, int, bool]], int]:
    """The (base, last, is_control) batches a share group reads from ``start``, and where it stops:
    the high watermark for read_uncommitted; for read_committed (share.isolation.level) the last
    stable offset, and an aborted transaction's batches count as no records, as control batches
    do (Kafka's SharePartition archives them: never delivered)."""
    batches = ((b.base_offset, b.last_offset, b.is_control) for b in log.batches)
    if isolation_level != "read_committed":
        return batches, log.high_watermark
    end = log.last_stable_offset
    aborted = log.collect_aborted_transactions(start, end)
    if not aborted:
        return batches, end

    def is_aborted(b: StoredBatchView) -> bool:
        return b.is_transactional and any(
            t.producer_id == b.producer_id and t.first_offset <= b.base_offset <= t.last_offset for t in aborted
        )

    return ((b.base_offset, b.last_offset, b.is_control or is_aborted(b)) for b in log.batches), end


SharePartitionKey = tuple[str, uuid.UUID, int]  # group id, topic id, partition
TopicIdPartition = tuple[uuid.UUID, int]


def next_epoch(epoch: int) -> int:
    """ShareRequestMetadata.nextEpoch: 0 -> 1, then +1, wrapping to 1 after Integer.MAX_VALUE."""
    return 1 if epoch >= (1 << 31) - 1 else epoch + 1


@dataclass(slots=True)
class ShareSession:
    """ShareSession: the partitions a member fetches and the epoch its next request must carry."""

    group_id: str
    member_id: str
    epoch: int
    partitions: dict[TopicIdPartition, None] = field(default_factory=dict)


@dataclass(slots=True)
class ShareFetchContext:
    """What ``new_context`` decides: whether the session is new (a full answer), closing, and the
    partitions to fetch."""

    session: ShareSession | None
    is_full: bool
    is_final: bool
    partitions: list[TopicIdPartition]


class SharePartitionManager:
    """Every share partition (by group, topic id, partition) and every share session."""

    def __init__(self, services: CoordinatorServices) -> None:
        self.services = services
        self.config = services.config
        self.partitions: dict[SharePartitionKey, SharePartition] = {}
        self.sessions: dict[tuple[str, str], ShareSession] = {}
        self._waiters: list[Callable[[], None]] = []

    # -- settings --------------------------------------------------------------------------------------

    def set_auto_offset_reset(self, group_id: str, value: str) -> None:
        """Set the group config share.auto.offset.reset, as IncrementalAlterConfigs would (ValueError
        with Kafka's message for a value it refuses)."""
        overrides = {**self.services.group_configs.get(group_id, {}), "share.auto.offset.reset": value}
        error = validate_group_configs(overrides, self.config)
        if error is not None:
            raise ValueError(error.message)
        self.services.set_group_configs(group_id, overrides)

    # -- share sessions ----------------------------------------------------------------------------------

    def new_context(
        self, group_id: str, member_id: str, epoch: int, wanted: list[TopicIdPartition], forgotten: list[TopicIdPartition],
        *, acknowledging: bool, now_ms: int,
    ) -> ShareFetchContext:  # fmt: skip
        """SharePartitionManager.newContext; GroupError for the request-level errors."""
        key = (group_id, member_id)
        if epoch == FINAL_EPOCH:
            if wanted:
                raise GroupError(ErrorCode.INVALID_REQUEST, "A share fetch at the final epoch may fetch nothing.")
            session = self.sessions.get(key)
            if session is None:
                raise GroupError(ErrorCode.SHARE_SESSION_NOT_FOUND, "no such share session found")
            return ShareFetchContext(session, False, True, [])
        if epoch == INITIAL_EPOCH:
            if acknowledging:
                raise GroupError(ErrorCode.INVALID_REQUEST, "Acknowledge data present on the initial share fetch.")
            if key in self.sessions:
                self._close_session(key, now_ms)
            session = ShareSession(group_id, member_id, next_epoch(INITIAL_EPOCH), dict.fromkeys(wanted))
            self.sessions[key] = session
            self.services.record("share_session.opened", group_id, None, now_ms, member_id=member_id,
                                 partitions=len(session.partitions))  # fmt: skip
            return ShareFetchContext(session, True, False, list(session.partitions))
        session = self.sessions.get(key)
        if session is None:
            raise GroupError(ErrorCode.SHARE_SESSION_NOT_FOUND, "no such share session found")
        if session.epoch != epoch:
            raise GroupError(
                ErrorCode.INVALID_SHARE_SESSION_EPOCH, f"expected share session epoch {session.epoch}, got {epoch}"
            )
        for tp in wanted:
            session.partitions[tp] = None
        for tp in forgotten:
            session.partitions.pop(tp, None)
        session.epoch = next_epoch(session.epoch)
        return ShareFetchContext(session, False, False, list(session.partitions))

    def acknowledge_session_update(self, group_id: str, member_id: str, epoch: int) -> ShareSession:
        """SharePartitionManager.acknowledgeSessionUpdate (ShareAcknowledge)."""
        if epoch == INITIAL_EPOCH:
            raise GroupError(ErrorCode.INVALID_SHARE_SESSION_EPOCH, "ShareAcknowledge cannot open a share session.")
        session = self.sessions.get((group_id, member_id))
        if session is None:
            raise GroupError(ErrorCode.SHARE_SESSION_NOT_FOUND, "no such share session found")
        if epoch != FINAL_EPOCH:
            if session.epoch != epoch:
                raise GroupError(
                    ErrorCode.INVALID_SHARE_SESSION_EPOCH, f"expected share session epoch {session.epoch}, got {epoch}"
                )
            session.epoch = next_epoch(session.epoch)
        return session

    def close_session(self, group_id: str, member_id: str, now_ms: int) -> None:
        """The final epoch's end: the session goes, and the member's acquired records with it."""
        self._close_session((group_id, member_id), now_ms)

    def _close_session(self, key: tuple[str, str], now_ms: int) -> None:
        session = self.sessions.pop(key, None)
        if session is None:
            return
        group_id, member_id = key
        self.services.record("share_session.closed", group_id, None, now_ms, member_id=member_id)
        self._release_member(group_id, member_id, now_ms, "share session closed")

    def on_member_left(self, group_id: str, member_id: str, now_ms: int) -> None:
        """The share coordinator removed the member (left or fenced)."""
        self.sessions.pop((group_id, member_id), None)
        self._release_member(group_id, member_id, now_ms, "member left the share group")

    def on_group_deleted(self, group_id: str) -> None:
        """DeleteGroups: the share partitions of the group go (DeleteShareGroupState)."""
        for key in [k for k in self.partitions if k[0] == group_id]:
            del self.partitions[key]

    def _release_member(self, group_id: str, member_id: str, now_ms: int, reason: str) -> None:
        released_any = False
        for (g, _, _), sp in self.partitions.items():
            if g == group_id:
                limit = self.services.group_config(group_id).share_delivery_count_limit
                released = sp.release_member(member_id, delivery_count_limit=limit)
                if released:
                    released_any = True
                    self.services.record("share_partition.released", group_id, None, now_ms, member_id=member_id,
                                         reason=reason, topic=sp.topic, partition=sp.partition, offsets=released)  # fmt: skip
        if released_any:
            self._wake()

    # -- share partitions --------------------------------------------------------------------------------

    def share_partition(
        self, group_id: str, topic_id: uuid.UUID, topic: str, log: PartitionLogView, now_ms: int
    ) -> SharePartition:
        """getOrCreateSharePartition, starting at share.auto.offset.reset."""
        key = (group_id, topic_id, log.partition)
        sp = self.partitions.get(key)
        if sp is None:
            start = self._start_offset(self.services.group_config(group_id).share_auto_offset_reset, log, now_ms)
            sp = self.partitions[key] = SharePartition(group_id, topic, log.partition, start)
        sp.maybe_move_start(log.log_start_offset)
        return sp

    @staticmethod
    def _start_offset(reset: str, log: PartitionLogView, now_ms: int) -> int:
        """SharePartition.initialize's start offset for a strategy (ShareGroupAutoOffsetResetStrategy)."""
        if reset == "earliest":
            return log.log_start_offset
        if reset.startswith("by_duration:"):
            duration = by_duration_ms(reset)
            assert duration is not None  # validated when set
            found = log.offset_for_timestamp(now_ms - duration)
            return log.high_watermark if found is None else found[0]
        return log.high_watermark

    def acquire(
        self, group_id: str, member_id: str, topic_id: uuid.UUID, topic: str, log: PartitionLogView, max_records: int, now_ms: int
    ) -> list[AcquiredRange]:
        """SharePartition.acquire over the records the log holds up to its high watermark; arms
        the acquisition's lock timer."""
        sp = self.share_partition(group_id, topic_id, topic, log, now_ms)
        configs = self.services.group_config(group_id)
        batches, hw = readable(log, sp.start_offset, configs.share_isolation_level)
        lock = configs.share_record_lock_duration_ms
        acquisition, ranges = sp.acquire(
            member_id, record_offsets(batches, sp.start_offset, hw), max_records=max_records,
            max_in_flight=configs.share_partition_max_record_locks, now_ms=now_ms, lock_duration_ms=lock,
        )  # fmt: skip
        rest, _ = readable(log, sp.next_fetch_offset, configs.share_isolation_level)
        if not ranges and not any(True for _ in record_offsets(rest, sp.next_fetch_offset, hw)):
            sp.skip_to(hw)  # only control (or aborted) records left below the end
        if ranges:
            self.services.record("share_partition.acquired", group_id, None, now_ms, member_id=member_id, topic=topic,
                                 partition=log.partition, ranges=[(r.first_offset, r.last_offset, r.delivery_count)
                                                                  for r in ranges])  # fmt: skip
            self._arm_lock(sp, (group_id, topic_id, log.partition), acquisition, now_ms + lock)
        return ranges

    def _arm_lock(self, sp: SharePartition, key: SharePartitionKey, acquisition: int, deadline_ms: int) -> None:
        timer_key: Hashable = ("share-acquisition-lock", *key, acquisition)

        def expire(now_ms: int) -> None:
            current = self.partitions.get(key)
            if current is not sp:
                return
            released = sp.release_expired(
                acquisition, delivery_count_limit=self.services.group_config(key[0]).share_delivery_count_limit, now_ms=now_ms
            )
            if released:
                self.services.record("share_partition.lock_expired", key[0], None, now_ms, topic=sp.topic,
                                     partition=sp.partition, offsets=released)  # fmt: skip
                self._wake()
            later = sp.next_lock_deadline(acquisition)  # records renewed past this deadline
            if later is not None:
                self.services.schedule(timer_key, later, expire)

        self.services.schedule(timer_key, deadline_ms, expire)

    def expire_locks(
        self, group_id: str, topic_id: uuid.UUID, partition: int, offsets: Iterable[int] | None, now_ms: int,
        cause: Callable[[], None] | None = None,
    ) -> list[int]:  # fmt: skip
        """The control API's lock expiry: the share partition's Acquired records at ``offsets``
        (all of them for None) are released now, with the same event and wake-up as a lock timer
        firing. ``cause`` is called before the effects' events once there is something to expire.
        ValueError when the group has no such share partition."""
        sp = self.partitions.get((group_id, topic_id, partition))
        if sp is None:
            raise ValueError(f"share group {group_id} has no share state for that partition (it has never fetched it)")
        if cause is not None:
            cause()
        released = sp.expire_locks(offsets, delivery_count_limit=self.services.group_config(group_id).share_delivery_count_limit)
        if released:
            self.services.record("share_partition.lock_expired", group_id, None, now_ms, topic=sp.topic,
                                 partition=sp.partition, offsets=released)  # fmt: skip
            self._wake()
        return released

    def acknowledge(
        self, group_id: str, member_id: str, topic_id: uuid.UUID, topic: str, log: PartitionLogView,
        batches: list[tuple[int, int, list[int]]], now_ms: int, *, renew_allowed: bool,
    ) -> None:  # fmt: skip
        """SharePartition.acknowledge; GroupError(INVALID_RECORD_STATE, INVALID_REQUEST)."""
        sp = self.partitions.get((group_id, topic_id, log.partition))
        if sp is None:
            raise GroupError(ErrorCode.INVALID_RECORD_STATE, "The share partition has no records in flight.")
        configs = self.services.group_config(group_id)
        sp.acknowledge(
            member_id, batches, delivery_count_limit=configs.share_delivery_count_limit, now_ms=now_ms,
            lock_duration_ms=configs.share_record_lock_duration_ms, renew_allowed=renew_allowed,
            renew_enabled=configs.share_renew_acknowledge_enable,
        )  # fmt: skip
        self.services.record("share_partition.acknowledged", group_id, None, now_ms, member_id=member_id, topic=topic,
                             partition=log.partition, batches=[[*list(b[:2]), list(b[2])] for b in batches],
                             start_offset=sp.start_offset)  # fmt: skip
        self._wake()

    def has_available(self, group_id: str, topic_id: uuid.UUID, log: PartitionLogView) -> bool:
        sp = self.partitions.get((group_id, topic_id, log.partition))
        read_committed = self.services.group_config(group_id).share_isolation_level == "read_committed"
        return sp is None or sp.has_available(log.last_stable_offset if read_committed else log.high_watermark)

    # -- waking parked fetches -------------------------------------------------------------------------

    def add_waiter(self, wake: Callable[[], None]) -> None:
        self._waiters.append(wake)

    def remove_waiter(self, wake: Callable[[], None]) -> None:
        if wake in self._waiters:
            self._waiters.remove(wake)

    def _wake(self) -> None:
        for wake in list(self._waiters):
            wake()

    # -- observation -----------------------------------------------------------------------------------

    def snapshot(self, group_id: str, topic_names: dict[uuid.UUID, str]) -> list[dict[str, Any]]:
        """The group's share partitions as plain data: SPSO and in-flight records."""
        return [
            {"topic": topic_names.get(topic_id, str(topic_id)), "partition": p, **sp.snapshot()}
            for (g, topic_id, p), sp in sorted(self.partitions.items(), key=lambda kv: (str(kv[0][1]), kv[0][2]))
            if g == group_id
        ]
