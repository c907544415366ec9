"""Producer ids and producer state: idempotence (KIP-98) and the epoch rules of KIP-360.

Two pieces, after Kafka's:
- ``ProducerIdManager`` (cluster-wide) hands out producer ids for InitProducerId (idempotent
  producers, and the transaction coordinator's transactional ids:
  mockbroker/coordinators/transactions/).
- ``ProducerStateManager`` (one per partition log) remembers, per producer id, its epoch, the
  sequence ranges and offsets of its last five batches (ProducerStateEntry.NUM_BATCHES_TO_RETAIN)
  and the first offset of its open transaction. ``check`` answers what ProducerAppendInfo and
  UnifiedLog.analyzeAndValidateProducerState decide before an append; the log calls ``on_append``
  after one.

Errors are values: ``check`` returns a ``ProducerCheck``, never raises.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.records import NO_PRODUCER_EPOCH, NO_SEQUENCE, RecordBatchHeader

# ProducerStateEntry.NUM_BATCHES_TO_RETAIN: a producer has at most five batches in flight
# (max.in.flight.requests.per.connection <= 5 with idempotence), so any retry duplicates one of these.
NUM_BATCHES_TO_RETAIN = 5
INT32_MAX = 0x7FFFFFFF


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    """One appended batch of a producer (Kafka's BatchMetadata): its sequence range and offsets."""

    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    timestamp: int  # the batch's max timestamp as stored


@dataclass(slots=True)
class ProducerStateEntry:
    producer_id: int
    producer_epoch: int = NO_PRODUCER_EPOCH
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN))
    current_txn_first_offset: int | None = None
    last_timestamp: int = -1
    # The coordinator epoch of the last COMMIT/ABORT marker (ProducerStateEntry.coordinatorEpoch;
    # DescribeProducers shows it): -1 until a transaction of the producer ends on the partition.
    coordinator_epoch: int = -1

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else NO_SEQUENCE

    def maybe_update_producer_epoch(self, producer_epoch: int) -> None:
        # A new epoch starts a new sequence space: the old batches can no longer be duplicated.
        if producer_epoch != self.producer_epoch:
            self.batches.clear()
            self.producer_epoch = producer_epoch

    def find_duplicate_batch(self, header: RecordBatchHeader) -> BatchMetadata | None:
        """ProducerStateEntry.findDuplicateBatch: same epoch and exactly the same sequence range."""
        if header.producer_epoch != self.producer_epoch:
            return None
        first, last = header.base_sequence, header.last_sequence
        for batch in self.batches:
            if batch.first_seq == first and batch.last_seq == last:
                return batch
        return None


@dataclass(frozen=True, slots=True)
class ProducerCheck:
    """The verdict on a batch before it is appended: an error, a duplicate to answer with the
    original batch's offsets, or neither (append it)."""

    error: ErrorCode = ErrorCode.NONE
    message: str | None = None
    duplicate: BatchMetadata | None = None


ACCEPT = ProducerCheck()


def in_sequence(last_seq: int, next_seq: int) -> bool:
    """ProducerAppendInfo.inSequence: sequences wrap from Int32.MAX to 0."""
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == INT32_MAX)


@dataclass(slots=True)
class ProducerStateManager:
    """Per-partition producer state (Kafka's ProducerStateManager, in memory, without expiry)."""

    producers: dict[int, ProducerStateEntry] = field(default_factory=dict)

    def check(self, header: RecordBatchHeader, where: str) -> ProducerCheck:
        """Decide on a client's data batch with a producer id, before anything is appended.

        In Kafka's order: a duplicate of one of the last five batches is answered with the
        original offsets (UnifiedLog.analyzeAndValidateProducerState; DUPLICATE_SEQUENCE_NUMBER is
        never sent to clients); then ProducerAppendInfo's checks: an older epoch is
        INVALID_PRODUCER_EPOCH (since 2.7, KIP-588; PRODUCER_FENCED before); a new epoch must start
        at sequence 0 unless the producer is unknown; within an epoch the sequence must follow on.
        An unknown producer id is accepted at any sequence: since 2.5 (KIP-360) the broker no
        longer answers UNKNOWN_PRODUCER_ID, because the producer's state may simply have been
        removed with its data by retention or DeleteRecords.
        """
        pid, epoch, first_seq = header.producer_id, header.producer_epoch, header.base_sequence
        entry = self.producers.get(pid)
        if entry is None:
            return ACCEPT
        duplicate = entry.find_duplicate_batch(header)
        if duplicate is not None:
            return ProducerCheck(duplicate=duplicate)
        if epoch < entry.producer_epoch:
            return ProducerCheck(
                ErrorCode.INVALID_PRODUCER_EPOCH,
                f"Epoch of producer {pid} in {where} is {epoch}, which is smaller than the last seen epoch "
                f"{entry.producer_epoch}",
            )
        if epoch != entry.producer_epoch:
            if first_seq != 0 and entry.producer_epoch != NO_PRODUCER_EPOCH:
                return ProducerCheck(
                    ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                    f"Invalid sequence number for new epoch of producer {pid} in partition {where}: {epoch} "
                    f"(request epoch), {first_seq} (seq. number), {entry.producer_epoch} (current producer epoch)",
                )
        elif not in_sequence(entry.last_seq, first_seq):
            return ProducerCheck(
                ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
                f"Out of order sequence number for producer {pid} in partition {where}: {first_seq} "
                f"(incoming seq. number), {entry.last_seq} (current end sequence number)",
            )
        if entry.current_txn_first_offset is not None and not header.is_transactional:
            # ProducerAppendInfo.appendDataBatch: a plain write while its transaction is open.
            return ProducerCheck(
                ErrorCode.INVALID_TXN_STATE, f"Expected transactional write from producer {pid} in partition {where}"
            )
        return ACCEPT

    def on_append(self, header: RecordBatchHeader, base_offset: int, last_offset: int, max_timestamp: int) -> None:
        """Record an appended data batch (ProducerStateEntry.addBatch; opens a transaction on the
        first transactional batch)."""
        entry = self.producers.get(header.producer_id)
        if entry is None:
            entry = self.producers[header.producer_id] = ProducerStateEntry(header.producer_id)
        entry.maybe_update_producer_epoch(header.producer_epoch)
        if header.base_sequence != NO_SEQUENCE:
            entry.batches.append(
                BatchMetadata(header.base_sequence, header.last_sequence, base_offset, last_offset, max_timestamp)
            )
        entry.last_timestamp = max_timestamp
        if header.is_transactional and entry.current_txn_first_offset is None:
            entry.current_txn_first_offset = base_offset

    def on_end_txn_marker(
        self, producer_id: int, producer_epoch: int, timestamp: int, coordinator_epoch: int = -1
    ) -> int | None:
        """Record an appended COMMIT/ABORT marker; return the first offset of the transaction it
        ends (None when the producer had none open: nothing completes)."""
        entry = self.producers.get(producer_id)
        if entry is None:
            entry = self.producers[producer_id] = ProducerStateEntry(producer_id)
        entry.maybe_update_producer_epoch(producer_epoch)
        entry.last_timestamp = timestamp
        entry.coordinator_epoch = coordinator_epoch
        first = entry.current_txn_first_offset
        entry.current_txn_first_offset = None
        return first


@dataclass(slots=True)
class ProducerIdManager:
    """Cluster-wide producer id allocation (Kafka's ProducerIdManager; ids start at 0 on a fresh
    KRaft cluster, taken in blocks from the controller)."""

    next_producer_id: int = 0

    def generate_producer_id(self) -> int:
        pid = self.next_producer_id
        self.next_producer_id += 1
        return pid
