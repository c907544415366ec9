"""A transactional id's state: Kafka's TransactionState and TransactionMetadata, and the table of
the transitions between states.

States and their valid previous states are Kafka's (TransactionState.java, 4.x):

| state             | entered from                                  | meaning |
|-------------------|-----------------------------------------------|---------|
| Empty             | Empty, CompleteCommit, CompleteAbort          | no transaction; InitProducerId bumped the epoch |
| Ongoing           | Ongoing, Empty, CompleteCommit, CompleteAbort | AddPartitionsToTxn / AddOffsetsToTxn added partitions |
| PrepareCommit     | Ongoing                                       | EndTxn(commit) accepted; markers being written |
| PrepareAbort      | Ongoing, PrepareEpochFence, Empty, CompleteCommit, CompleteAbort | EndTxn(abort), a timeout, or a re-initialising producer; markers being written |
| CompleteCommit    | PrepareCommit                                 | every partition has its COMMIT marker |
| CompleteAbort     | PrepareAbort                                  | every partition has its ABORT marker |
| PrepareEpochFence | Ongoing                                       | the epoch is bumped to fence the producer before the abort (a timeout, InitProducerId) |
| Dead              | Empty, CompleteCommit, CompleteAbort          | expired (transactional.id.expiration.ms; not entered here) |

In Kafka PrepareEpochFence is only ever a *pending* state (the transition is never written to the
log: the abort that follows is); here it is entered for an instant so the event log shows it.
Empty, CompleteCommit and CompleteAbort reach PrepareAbort only under transaction version 2
(EndTxn v5 aborting with nothing added, TransactionMetadata.prepareAbortOrCommit).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

NO_PRODUCER_ID = -1  # RecordBatch.NO_PRODUCER_ID
NO_PRODUCER_EPOCH = -1  # RecordBatch.NO_PRODUCER_EPOCH
SHORT_MAX = 0x7FFF


class TransactionState(Enum):
    EMPTY = "Empty"
    ONGOING = "Ongoing"
    PREPARE_COMMIT = "PrepareCommit"
    PREPARE_ABORT = "PrepareAbort"
    COMPLETE_COMMIT = "CompleteCommit"
    COMPLETE_ABORT = "CompleteAbort"
    DEAD = "Dead"
    PREPARE_EPOCH_FENCE = "PrepareEpochFence"


EMPTY = TransactionState.EMPTY
ONGOING = TransactionState.ONGOING
PREPARE_COMMIT = TransactionState.PREPARE_COMMIT
PREPARE_ABORT = TransactionState.PREPARE_ABORT
COMPLETE_COMMIT = TransactionState.COMPLETE_COMMIT
COMPLETE_ABORT = TransactionState.COMPLETE_ABORT
DEAD = TransactionState.DEAD
PREPARE_EPOCH_FENCE = TransactionState.PREPARE_EPOCH_FENCE

VALID_PREVIOUS_STATES: dict[TransactionState, frozenset[TransactionState]] = {
    EMPTY: frozenset({EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT}),
    ONGOING: frozenset({ONGOING, EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT}),
    PREPARE_COMMIT: frozenset({ONGOING}),
    PREPARE_ABORT: frozenset({ONGOING, PREPARE_EPOCH_FENCE, EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT}),
    COMPLETE_COMMIT: frozenset({PREPARE_COMMIT}),
    COMPLETE_ABORT: frozenset({PREPARE_ABORT}),
    DEAD: frozenset({EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT}),
    PREPARE_EPOCH_FENCE: frozenset({ONGOING}),
}

# ListTransactions' state filters use these names (TransactionState.stateName).
STATES_BY_NAME = {s.value: s for s in TransactionState}


class IllegalStateTransition(AssertionError):
    """Our own bug: a transition the table does not allow (Kafka throws IllegalStateException)."""


def is_epoch_exhausted(epoch: int) -> bool:
    """TransactionMetadata.isEpochExhausted: the last two epochs are kept for fencing bumps."""
    return epoch >= SHORT_MAX - 1


@dataclass(slots=True)
class TransactionMetadata:
    """One transactional id (Kafka's TransactionMetadata, without the pending-state bookkeeping:
    here a transition is applied where Kafka would write it to __transaction_state)."""

    transactional_id: str
    producer_id: int
    txn_timeout_ms: int
    state: TransactionState = EMPTY
    producer_epoch: int = NO_PRODUCER_EPOCH
    # The epoch before the last bump: a retried InitProducerId (KIP-360) or EndTxn v5 (KIP-890)
    # that lost its answer names it, and is answered again instead of being fenced.
    last_producer_epoch: int = NO_PRODUCER_EPOCH
    # The producer id before the last rotation (epoch exhausted).
    last_producer_id: int = NO_PRODUCER_ID
    partitions: set[tuple[str, int]] = field(default_factory=set)
    txn_start_timestamp_ms: int = -1
    txn_last_update_timestamp_ms: int = -1
    # Transaction version 2 (KIP-890): the last EndTxn came at v5, so completion bumped the epoch.
    tv2: bool = False

    @property
    def is_epoch_exhausted(self) -> bool:
        return is_epoch_exhausted(self.producer_epoch)

    def sorted_partitions(self) -> list[tuple[str, int]]:
        return sorted(self.partitions)
