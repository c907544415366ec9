"""A partition's log: record batches kept as bytes, offsets, watermarks, retention.

A batch is stored as the client sent it, with only its base offset (and leader epoch) patched:
never decompressed, never re-encoded. Fetch hands the stored objects straight to the socket.
With one in-sync replica per partition the high watermark equals the log end offset; the last
stable offset stays below the first offset of any open transaction.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, field

from mockbroker.log.producers import ProducerStateManager
from mockbroker_protocol.errors import DecodeError
from mockbroker_protocol.primitives import Buffer
from mockbroker_protocol.records import (
    ControlRecord,
    ControlRecordType,
    RecordBatchHeader,
    decode_batch,
    parse_control_record,
    patch_base_offset,
    patch_partition_leader_epoch,
)


@dataclass(slots=True)
class StoredBatch:
    base_offset: int
    last_offset: int
    max_timestamp: int
    # The whole batch, base offset patched: a buffer of its own, or a writable view of a produce
    # request's frame that the log keeps instead of copying it (replica_manager.append_records).
    data: bytearray | memoryview
    producer_id: int
    is_transactional: bool
    is_control: bool

    @property
    def size(self) -> int:
        return len(self.data)


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    """An aborted transaction's offsets in this partition (Kafka's transaction index entry): a
    read_committed consumer drops the producer's records from ``first_offset`` to the marker at
    ``last_offset``."""

    producer_id: int
    first_offset: int
    last_offset: int


@dataclass(slots=True)
class PartitionLog:
    topic: str
    partition: int
    leader_epoch: int = 0
    log_start_offset: int = 0
    log_end_offset: int = 0
    batches: list[StoredBatch] = field(default_factory=list)
    # base offsets, parallel to batches, for bisect
    _bases: list[int] = field(default_factory=list)
    size_bytes: int = 0
    # first offset of each producer's open transaction: the last stable offset stays below it
    open_txn_first_offset: dict[int, int] = field(default_factory=dict)
    _listeners: list[Callable[[PartitionLog], None]] = field(default_factory=list)
    # Idempotence and transactions per producer id (sequences, epochs, open transactions).
    producers: ProducerStateManager = field(default_factory=ProducerStateManager)
    # Aborted transactions still (partly) in the log, in marker order: Fetch at read_committed
    # returns the ones its data overlaps (FetchResponse.AbortedTransactions).
    aborted_txns: list[AbortedTxn] = field(default_factory=list)
    # (leader epoch, first offset written in it), as Kafka's LeaderEpochFileCache: what
    # OffsetForLeaderEpoch and the leader epochs in ListOffsets answers are read from.
    epoch_start_offsets: list[tuple[int, int]] = field(default_factory=list)
    # When retention.ms was last applied (None: never); see replica_manager.enforce_retention.
    retention_checked_ms: int | None = None

    @property
    def high_watermark(self) -> int:
        return self.log_end_offset

    @property
    def last_stable_offset(self) -> int:
        if self.open_txn_first_offset:
            # Never below the log start: retention may delete the start of an open transaction
            # (UnifiedLog.maybeIncrementFirstUnstableOffset).
            return max(min(self.open_txn_first_offset.values()), self.log_start_offset)
        return self.high_watermark

    def append(self, batch: bytearray | memoryview, header: RecordBatchHeader) -> int:
        """Append one validated batch (a writable buffer the log now owns); return its base offset."""
        base = self.log_end_offset
        patch_base_offset(batch, base)
        patch_partition_leader_epoch(batch, self.leader_epoch)
        stored = StoredBatch(
            base_offset=base,
            last_offset=base + header.last_offset_delta,
            max_timestamp=header.max_timestamp,
            data=batch,
            producer_id=header.producer_id,
            is_transactional=header.is_transactional,
            is_control=header.is_control_batch,
        )
        self.batches.append(stored)
        self._bases.append(base)
        self.size_bytes += len(batch)
        self.log_end_offset = stored.last_offset + 1
        if not self.epoch_start_offsets or self.epoch_start_offsets[-1][0] < self.leader_epoch:
            # UnifiedLog.maybeAssignEpochStartOffset: the first batch stamped with a new epoch.
            self.epoch_start_offsets.append((self.leader_epoch, base))
        if header.has_producer_id:
            self._update_producer_state(stored, header)
        self.notify_listeners()
        return base

    def notify_listeners(self) -> None:
        """Wake whatever waits on this partition (parked Fetches re-read it). Appends call it;
        so should anything else a parked Fetch must notice at once: a leader move, deletion."""
        for listener in list(self._listeners):
            listener(self)

    def _update_producer_state(self, stored: StoredBatch, header: RecordBatchHeader) -> None:
        """After an append (UnifiedLog.append -> ProducerStateManager.update): a data batch
        extends its producer's sequence range and may open a transaction; a COMMIT/ABORT marker
        closes it, and an ABORT is remembered for read_committed fetches."""
        pid = header.producer_id
        if not stored.is_control:
            self.producers.on_append(header, stored.base_offset, stored.last_offset, stored.max_timestamp)
            if header.is_transactional and pid not in self.open_txn_first_offset:
                self.open_txn_first_offset[pid] = stored.base_offset
            return
        marker = self._marker(stored)
        coordinator_epoch = (
            -1 if marker is None or marker.coordinator_epoch is None else marker.coordinator_epoch
        )
        first = self.producers.on_end_txn_marker(
            pid, header.producer_epoch, stored.max_timestamp, coordinator_epoch
        )
        first = self.open_txn_first_offset.pop(pid, first)
        if first is not None and marker is not None and marker.control_type == ControlRecordType.ABORT:
            self.aborted_txns.append(AbortedTxn(pid, first, stored.base_offset))

    @staticmethod
    def _marker(stored: StoredBatch) -> ControlRecord | None:
        # The marker type and coordinator epoch are in the control record, not the batch header;
        # markers are written by the broker, one small uncompressed record, so reading it is cheap.
        try:
            _, records = decode_batch(stored.data)
            return parse_control_record(records[0]) if records else None
        except DecodeError:
            return None

    def read(
        self, offset: int, max_bytes: int, *, upper: int | None = None, min_one_message: bool = True
    ) -> list[Buffer]:
        """The stored batches from the one containing ``offset``, up to ``max_bytes``, stopping
        before ``upper``. With ``min_one_message`` the first batch is returned even when it is
        larger than ``max_bytes`` (KIP-74: so a consumer can make progress past a batch larger
        than its limit); Fetch sets it only until one partition has returned data."""
        limit = self.high_watermark if upper is None else upper
        i = bisect.bisect_right(self._bases, offset) - 1
        if i < 0:
            i = 0
        out: list[Buffer] = []
        total = 0
        while i < len(self.batches):
            b = self.batches[i]
            if b.base_offset >= limit:
                break
            if b.last_offset < offset:
                i += 1
                continue
            if (out or not min_one_message) and total + b.size > max_bytes:
                break
            out.append(b.data)
            total += b.size
            if total >= max_bytes:
                break
            i += 1
        return out

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record at or after the log start whose timestamp is
        >= ``timestamp`` (LogSegment.findOffsetByTimestamp).

        The batch is found from the headers; only that one batch is decoded, to find the record
        in it, as Kafka does. ListOffsets is not the produce/fetch path, and seeking to the
        batch's base instead would hand a consumer records older than it asked for."""
        for b in self.batches:
            if b.max_timestamp >= timestamp and b.last_offset >= self.log_start_offset:
                floor = max(b.base_offset, self.log_start_offset)
                for record in self._records(b):
                    if record[1] >= timestamp and record[0] >= floor:
                        return record
                return floor, b.max_timestamp
        return None

    def max_timestamp_offset(self) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record carrying the largest timestamp (KIP-734;
        RecordBatch.offsetOfMaxTimestamp picks the record within the batch, KAFKA-16310)."""
        best: StoredBatch | None = None
        for b in self.batches:
            if not b.is_control and (best is None or b.max_timestamp > best.max_timestamp):
                best = b
        if best is None:
            return None
        for offset, ts in self._records(best):
            if ts == best.max_timestamp and offset >= self.log_start_offset:
                return offset, ts
        return best.last_offset, best.max_timestamp

    @staticmethod
    def _records(b: StoredBatch) -> list[tuple[int, int]]:
        """(offset, timestamp) of each record of a stored batch; empty when it cannot be decoded
        (callers then fall back to batch granularity)."""
        try:
            _, records = decode_batch(b.data)
        except DecodeError:
            return []
        return [(r.offset, r.timestamp) for r in records]

    def _epoch_entries(self) -> list[tuple[int, int]]:
        # Kafka assigns a new leader epoch its start offset at election (the log end then);
        # here an epoch gets its entry with its first batch, so until then add it implicitly.
        entries = list(self.epoch_start_offsets)
        if not entries or entries[-1][0] < self.leader_epoch:
            entries.append((self.leader_epoch, self.log_end_offset))
        return entries

    def epoch_for_offset(self, offset: int) -> int | None:
        """The leader epoch that wrote ``offset`` (LeaderEpochFileCache.epochForOffset)."""
        found: int | None = None
        for epoch, start in self._epoch_entries():
            if start > offset:
                break
            found = epoch
        return found

    def end_offset_for_epoch(self, requested_epoch: int) -> tuple[int, int]:
        """(epoch, end offset) for OffsetForLeaderEpoch, by LeaderEpochFileCache.endOffsetFor:
        the current epoch ends at the log end; an older epoch ends where the next known one
        starts; UNDEFINED_EPOCH (-1) and newer epochs are (-1, -1)."""
        entries = self._epoch_entries()
        if requested_epoch == -1:
            return -1, -1
        if requested_epoch == entries[-1][0]:
            return requested_epoch, self.log_end_offset
        higher = next((e for e in entries if e[0] > requested_epoch), None)
        if higher is None:
            return -1, -1
        floor = [e for e in entries if e[0] <= requested_epoch]
        if not floor:
            # Older than anything known: the start of the first known epoch after it.
            return requested_epoch, higher[1]
        return floor[-1][0], higher[1]

    def collect_aborted_transactions(self, start_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        """The aborted transactions overlapping [start_offset, upper_bound_offset)
        (TransactionIndex.collectAbortedTxns)."""
        return [
            t for t in self.aborted_txns if t.last_offset >= start_offset and t.first_offset < upper_bound_offset
        ]

    def delete_records_before(self, offset: int) -> None:
        """Move the log start offset (DeleteRecords, retention); drop batches wholly below it."""
        if offset <= self.log_start_offset:
            return
        self.log_start_offset = offset
        keep = 0
        while keep < len(self.batches) and self.batches[keep].last_offset < offset:
            self.size_bytes -= self.batches[keep].size
            keep += 1
        if keep:
            del self.batches[:keep]
            del self._bases[:keep]
        # Forget aborted transactions wholly below the new start: no fetch can reach them.
        if self.aborted_txns and self.aborted_txns[0].last_offset < offset:
            self.aborted_txns = [t for t in self.aborted_txns if t.last_offset >= offset]

    def enforce_retention(self, now_ms: int, retention_ms: int, retention_bytes: int) -> None:
        """Drop whole batches from the front while the log is over ``retention_bytes`` or a batch
        is older than ``retention_ms`` (-1 disables either), never the active (last) batch."""
        while len(self.batches) > 1:
            first = self.batches[0]
            too_big = retention_bytes >= 0 and self.size_bytes > retention_bytes
            too_old = retention_ms >= 0 and first.max_timestamp >= 0 and now_ms - first.max_timestamp > retention_ms
            if not (too_big or too_old):
                break
            self.delete_records_before(first.last_offset + 1)

    def add_listener(self, listener: Callable[[PartitionLog], None]) -> None:
        self._listeners.append(listener)

    def remove_listener(self, listener: Callable[[PartitionLog], None]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)
