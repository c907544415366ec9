"""One share partition (KIP-932): a share group's delivery state of one topic partition, as Kafka's
SharePartition keeps it, sans-I/O.

The share-partition start offset (SPSO) is the first offset not yet done with; below it every
record is Acknowledged or Archived and forgotten. From the SPSO up, each in-flight record has a
state (RecordState: Available, Acquired, Acknowledged, Archived), a delivery count and, while
Acquired, the member holding it and the deadline of its acquisition lock
(group.share.record.lock.duration.ms). ``acquire`` hands a member the Available records from the
SPSO up to the log's high watermark (redeliveries first, since they sit lower), raising each one's
delivery count; ``acknowledge`` applies the member's Accept, Release, Reject (and Gap, Renew); a lock
that expires, a Release, or the member leaving make the record Available again, or Archived once its
delivery count reached group.share.delivery.count.limit. The SPSO then moves over the finished
records at its head.

Kafka keeps in-flight records by batch and splits batches into per-offset state when a batch is
acknowledged piecewise; here the state is per offset from the start, which answers the same ranges on
the wire (AcquiredRecords are merged runs of equal delivery count). The state is not persisted
through a share coordinator (ReadShareGroupState/WriteShareGroupState): it lives with the cluster.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from mockbroker.coordinators.errors import GroupError
from mockbroker_protocol.errors import ErrorCode


class RecordState(enum.Enum):
    """RecordState, with Kafka's ids."""

    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


class AcknowledgeType(enum.IntEnum):
    """AcknowledgeType (the int8 values of AcknowledgeTypes); 0 is a gap (no record at the offset)."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4  # KIP-1222, ShareFetch/ShareAcknowledge v2


@dataclass(slots=True)
class InFlightRecord:
    state: RecordState = RecordState.AVAILABLE
    delivery_count: int = 0
    member_id: str | None = None
    lock_deadline_ms: int = 0
    # Which acquisition locked it: a lock timer only releases the records of its own acquisition.
    acquisition: int = 0


@dataclass(slots=True)
class AcquiredRange:
    """AcquiredRecords: offsets first..last, each delivered ``delivery_count`` times."""

    first_offset: int
    last_offset: int
    delivery_count: int


@dataclass(slots=True)
class SharePartition:
    """SharePartition: the SPSO, the in-flight records past it, and the next offset never acquired."""

    group_id: str
    topic: str
    partition: int
    start_offset: int
    # The first offset never acquired (Kafka's endOffset + 1): records from here on are Available
    # without an in-flight entry.
    next_fetch_offset: int = -1
    in_flight: dict[int, InFlightRecord] = field(default_factory=dict)
    _acquisitions: int = 0

    def __post_init__(self) -> None:
        if self.next_fetch_offset < 0:
            self.next_fetch_offset = self.start_offset

    # -- reading ---------------------------------------------------------------------------------------

    def record(self, offset: int) -> InFlightRecord | None:
        return self.in_flight.get(offset)

    def acquired_by(self, member_id: str) -> list[int]:
        return sorted(o for o, r in self.in_flight.items() if r.state is RecordState.ACQUIRED and r.member_id == member_id)

    def has_available(self, high_watermark: int) -> bool:
        """Whether ``acquire`` could hand out anything now."""
        if self.next_fetch_offset < high_watermark:
            return True
        return any(r.state is RecordState.AVAILABLE for r in self.in_flight.values())

    # -- the log moving under it -----------------------------------------------------------------------

    def maybe_move_start(self, log_start_offset: int) -> None:
        """DeleteRecords and retention: records below the log start offset are gone for the share
        partition too (SharePartition.updateCacheAndOffsets)."""
        if log_start_offset > self.start_offset:
            for offset in [o for o in self.in_flight if o < log_start_offset]:
                del self.in_flight[offset]
            self.start_offset = log_start_offset
            self.next_fetch_offset = max(self.next_fetch_offset, log_start_offset)

    # -- acquire ---------------------------------------------------------------------------------------

    def acquire(
        self, member_id: str, record_offsets: Iterable[int], *, max_records: int, max_in_flight: int, now_ms: int,
        lock_duration_ms: int,
    ) -> tuple[int, list[AcquiredRange]]:  # fmt: skip
        """SharePartition.acquire: lock up to ``max_records`` Available records for ``member_id``.
        ``record_offsets`` are the offsets holding records from the SPSO up to the high watermark,
        in order (the log says where records are; control records are no records). Returns the
        acquisition's id (for its lock timer) and the acquired ranges."""
        self._acquisitions += 1
        acquisition = self._acquisitions
        taken: list[tuple[int, int]] = []
        limit = self.start_offset + max_in_flight
        for offset in record_offsets:
            if len(taken) >= max_records or offset >= limit:
                break
            if offset < self.start_offset:
                continue
            rec = self.in_flight.get(offset)
            if rec is None:
                if offset < self.next_fetch_offset:
                    continue  # finished and forgotten below the SPSO, or a gap
                rec = self.in_flight[offset] = InFlightRecord()
            if rec.state is not RecordState.AVAILABLE:
                continue
            rec.state = RecordState.ACQUIRED
            rec.delivery_count += 1
            rec.member_id = member_id
            rec.lock_deadline_ms = now_ms + lock_duration_ms
            rec.acquisition = acquisition
            self.next_fetch_offset = max(self.next_fetch_offset, offset + 1)
            taken.append((offset, rec.delivery_count))
        return acquisition, _ranges(taken)

    def skip_to(self, offset: int) -> None:
        """Offsets below ``offset`` that hold no record (control records) are done with."""
        if offset > self.next_fetch_offset:
            self.next_fetch_offset = offset
        self._maybe_advance_start()

    # -- acknowledge -----------------------------------------------------------------------------------

    def acknowledge(
        self, member_id: str, batches: list[tuple[int, int, list[int]]], *, delivery_count_limit: int, now_ms: int,
        lock_duration_ms: int, renew_allowed: bool, renew_enabled: bool = True,
    ) -> None:  # fmt: skip
        """SharePartition.acknowledge: every batch checked first, then applied (all or nothing).
        GroupError(INVALID_REQUEST) for a malformed batch (with no message: KafkaApis refuses it
        before the share partition sees it) or one past the acquired records,
        GroupError(INVALID_RECORD_STATE) for a record this member does not hold."""
        plan: list[tuple[int, AcknowledgeType]] = []
        for first, last, types in batches:
            if last < first or (len(types) != 1 and len(types) != last - first + 1):
                raise GroupError(ErrorCode.INVALID_REQUEST, "")
            try:
                kinds = [AcknowledgeType(t) for t in types]
            except ValueError as exc:
                raise GroupError(ErrorCode.INVALID_REQUEST, "") from exc
            if AcknowledgeType.RENEW in kinds and not renew_allowed:
                raise GroupError(ErrorCode.INVALID_REQUEST, "")
            if AcknowledgeType.RENEW in kinds and not renew_enabled:  # the group config share.renew.acknowledge.enable
                raise GroupError(ErrorCode.INVALID_RECORD_STATE, "Renewing acquisition locks is not enabled for the group.")
            if last >= self.next_fetch_offset:  # SharePartition.acknowledgeBatchRecords
                raise GroupError(
                    ErrorCode.INVALID_REQUEST, "Batch record not found. The last offset in request is past acquired records."
                )
            for offset in range(first, last + 1):
                kind = kinds[0] if len(kinds) == 1 else kinds[offset - first]
                rec = self.in_flight.get(offset)
                if kind is AcknowledgeType.GAP and (rec is None or rec.state is not RecordState.ACQUIRED):
                    if offset < self.start_offset or offset >= self.next_fetch_offset:
                        raise GroupError(ErrorCode.INVALID_RECORD_STATE, f"The offset {offset} is not in flight.")
                    plan.append((offset, kind))
                    continue
                if rec is None or offset < self.start_offset:
                    raise GroupError(ErrorCode.INVALID_RECORD_STATE, f"The offset {offset} is not in flight.")
                if rec.state is not RecordState.ACQUIRED:
                    raise GroupError(ErrorCode.INVALID_RECORD_STATE, f"The record at offset {offset} is not acquired.")
                if rec.member_id != member_id:
                    raise GroupError(
                        ErrorCode.INVALID_RECORD_STATE, f"The record at offset {offset} is acquired by another member."
                    )
                plan.append((offset, kind))
        for offset, kind in plan:
            rec = self.in_flight.setdefault(offset, InFlightRecord())
            if kind is AcknowledgeType.ACCEPT:
                self._finish(rec, RecordState.ACKNOWLEDGED)
            elif kind in (AcknowledgeType.REJECT, AcknowledgeType.GAP):
                self._finish(rec, RecordState.ARCHIVED)
            elif kind is AcknowledgeType.RELEASE:
                self._release(rec, delivery_count_limit)
            else:  # RENEW: the lock starts over; the record stays with the member
                rec.lock_deadline_ms = now_ms + lock_duration_ms
        self._maybe_advance_start()

    # -- releasing ---------------------------------------------------------------------------------------

    def release_expired(self, acquisition: int, *, delivery_count_limit: int, now_ms: int) -> list[int]:
        """The lock of one acquisition expired: its records still Acquired (and not renewed past
        now) become Available again, or Archived at the delivery limit. Returns those offsets."""
        released = []
        for offset, rec in sorted(self.in_flight.items()):
            if rec.state is RecordState.ACQUIRED and rec.acquisition == acquisition and rec.lock_deadline_ms <= now_ms:
                self._release(rec, delivery_count_limit)
                released.append(offset)
        self._maybe_advance_start()
        return released

    def next_lock_deadline(self, acquisition: int) -> int | None:
        """The latest deadline among the acquisition's records still Acquired (renewed ones move)."""
        deadlines = [
            r.lock_deadline_ms for r in self.in_flight.values()
            if r.state is RecordState.ACQUIRED and r.acquisition == acquisition
        ]  # fmt: skip
        return min(deadlines) if deadlines else None

    def expire_locks(self, offsets: Iterable[int] | None, *, delivery_count_limit: int) -> list[int]:
        """The acquisition locks of the Acquired records at ``offsets`` (every Acquired record for
        None) expire now, as if group.share.record.lock.duration.ms had passed: each becomes
        Available again, or Archived at the delivery limit. Returns those offsets (the control
        API's expire_acquisition_lock; Kafka's timer path is ``release_expired``)."""
        wanted = None if offsets is None else set(offsets)
        released = []
        for offset, rec in sorted(self.in_flight.items()):
            if rec.state is RecordState.ACQUIRED and (wanted is None or offset in wanted):
                self._release(rec, delivery_count_limit)
                released.append(offset)
        self._maybe_advance_start()
        return released

    def release_member(self, member_id: str, *, delivery_count_limit: int) -> list[int]:
        """SharePartition.releaseAcquiredRecords: the member's share session closed or it left."""
        released = []
        for offset, rec in sorted(self.in_flight.items()):
            if rec.state is RecordState.ACQUIRED and rec.member_id == member_id:
                self._release(rec, delivery_count_limit)
                released.append(offset)
        self._maybe_advance_start()
        return released

    def _release(self, rec: InFlightRecord, delivery_count_limit: int) -> None:
        if rec.delivery_count >= delivery_count_limit:
            self._finish(rec, RecordState.ARCHIVED)
        else:
            rec.state, rec.member_id, rec.lock_deadline_ms = RecordState.AVAILABLE, None, 0

    @staticmethod
    def _finish(rec: InFlightRecord, state: RecordState) -> None:
        rec.state, rec.member_id, rec.lock_deadline_ms = state, None, 0

    def _maybe_advance_start(self) -> None:
        """The SPSO moves over finished records (and offsets without records) at its head."""
        offset = self.start_offset
        while offset < self.next_fetch_offset:
            rec = self.in_flight.get(offset)
            if rec is not None and rec.state not in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED):
                break
            self.in_flight.pop(offset, None)
            offset += 1
        self.start_offset = offset

    def snapshot(self) -> dict[str, object]:
        return {
            "start_offset": self.start_offset,
            "next_fetch_offset": self.next_fetch_offset,
            "in_flight": [
                {"offset": o, "state": r.state.name.capitalize(), "delivery_count": r.delivery_count,
                 "member_id": r.member_id, "lock_deadline_ms": r.lock_deadline_ms or None}
                for o, r in sorted(self.in_flight.items())
            ],
        }


def _ranges(taken: list[tuple[int, int]]) -> list[AcquiredRange]:
    out: list[AcquiredRange] = []
    for offset, count in taken:
        last = out[-1] if out else None
        if last is not None and last.last_offset + 1 == offset and last.delivery_count == count:
            last.last_offset = offset
        else:
            out.append(AcquiredRange(offset, offset, count))
    return out


def record_offsets(batches: Iterable[tuple[int, int, bool]], start: int, end: int) -> Iterator[int]:
    """The offsets holding records in [start, end), from (base, last, is_control) batches."""
    for base, last, is_control in batches:
        if is_control or last < start:
            continue
        if base >= end:
            return
        yield from range(max(base, start), min(last + 1, end))
