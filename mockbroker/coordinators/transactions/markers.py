"""Where a completed transaction's markers go: the partitions' logs and the group coordinator.

Kafka's TransactionMarkerChannelManager sends WriteTxnMarkers to each partition's leader, which
appends a COMMIT or ABORT control batch (MemoryRecords.withEndTransactionMarker) with the
producer's id and epoch; for a ``__consumer_offsets`` partition the group coordinator then makes
the transaction's pending offsets visible, or drops them (GroupCoordinator.onTransactionCompleted).
Here every partition is local, so the writer appends the marker batch to the partition's log
(which closes the producer's open transaction there, moves the last stable offset and, for an
abort, records the aborted transaction for read_committed fetches) and completes the offsets.
A partition whose topic was deleted meanwhile is skipped, as Kafka drops markers for partitions
that no longer exist.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from mockbroker.coordinators.transactions.coordinator import TxnMarkers
from mockbroker_protocol.records import RecordBatchHeader, build_end_txn_marker, parse_batch_header

# The coordinator epoch written into markers (the __transaction_state partition's leader epoch;
# one never-moving leader here).
COORDINATOR_EPOCH = 0


class _Log(Protocol):
    def append(self, batch: bytearray, header: RecordBatchHeader, /) -> int: ...


class _Partition(Protocol):
    @property
    def log(self) -> _Log: ...


class Topic(Protocol):
    """What the writer reads of a topic (mockbroker.model.Topic; the coordinators package does
    not import the model)."""

    @property
    def partitions(self) -> Sequence[_Partition]: ...


class LogMarkerWriter:
    """The ``MarkerWriter`` the cluster wires: the topics' logs and the offsets' completion."""

    __slots__ = ("_complete_offsets", "_offsets_topic", "_topics")

    def __init__(
        self, topics: Mapping[str, Topic], offsets_topic: str, complete_offsets: Callable[[int, int, bool], None]
    ) -> None:
        self._topics = topics
        self._offsets_topic = offsets_topic  # __consumer_offsets
        # (now_ms, producer_id, commit): GroupCoordinator.complete_transaction
        self._complete_offsets = complete_offsets

    def write_markers(self, markers: TxnMarkers, now_ms: int) -> None:
        offsets_done = False
        for topic_name, index in markers.partitions:
            if topic_name == self._offsets_topic:
                if not offsets_done:
                    self._complete_offsets(now_ms, markers.producer_id, markers.commit)
                    offsets_done = True
                continue
            topic = self._topics.get(topic_name)
            if topic is None or not 0 <= index < len(topic.partitions):
                continue
            batch = bytearray(
                build_end_txn_marker(
                    commit=markers.commit,
                    producer_id=markers.producer_id,
                    producer_epoch=markers.producer_epoch,
                    coordinator_epoch=COORDINATOR_EPOCH,
                    timestamp=now_ms,
                )
            )
            topic.partitions[index].log.append(batch, parse_batch_header(batch))
