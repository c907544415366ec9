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

from protocol.records import RecordBatchHeader, patch_base_offset, patch_partition_leader_epoch


@dataclass(slots=True)
class StoredBatch:
    base_offset: int
    last_offset: int
    max_timestamp: int
    data: bytearray  # the whole batch, base offset patched
    producer_id: int
    is_transactional: bool
    is_control: bool

    @property
    def size(self) -> int:
        return len(self.data)


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

    @property
    def high_watermark(self) -> int:
        return self.log_end_offset

    @property
    def last_stable_offset(self) -> int:
        if self.open_txn_first_offset:
            return min(self.open_txn_first_offset.values())
        return self.high_watermark

    def append(self, batch: bytearray, header: RecordBatchHeader) -> int:
        """Append one validated batch (a buffer the log now owns); return its base offset."""
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
        for listener in list(self._listeners):
            listener(self)
        return base

    def read(self, offset: int, max_bytes: int, *, upper: int | None = None) -> list[bytearray]:
        """The stored batches from the one containing ``offset``, up to ``max_bytes`` (at least
        one batch is always returned when any is available, as Kafka does, so a consumer can
        make progress past a batch larger than its limit), stopping before ``upper``."""
        limit = self.high_watermark if upper is None else upper
        i = bisect.bisect_right(self._bases, offset) - 1
        if i < 0:
            i = 0
        out: list[bytearray] = []
        total = 0
        while i < len(self.batches):
            b = self.batches[i]
            if b.base_offset >= limit:
                break
            if b.last_offset < offset:
                i += 1
                continue
            if out and total + b.size > max_bytes:
                break
            out.append(b.data)
            total += b.size
            if total >= max_bytes:
                break
            i += 1
        return out

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first batch whose max timestamp is >= ``timestamp``.

        Kafka answers with the exact record; batch granularity is what a broker that never
        decompresses can give, and clients seek to the returned offset either way."""
        for b in self.batches:
            if b.max_timestamp >= timestamp and b.last_offset >= self.log_start_offset:
                return max(b.base_offset, self.log_start_offset), b.max_timestamp
        return None

    def max_timestamp_offset(self) -> tuple[int, int] | None:
        best: StoredBatch | None = None
        for b in self.batches:
            if not b.is_control and (best is None or b.max_timestamp > best.max_timestamp):
                best = b
        return None if best is None else (best.last_offset, best.max_timestamp)

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
