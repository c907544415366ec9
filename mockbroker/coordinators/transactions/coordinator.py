"""The transaction coordinator, sans-I/O: Kafka's TransactionCoordinator and TransactionStateManager
for every transactional id of the cluster.

Public doors (what the handlers and the control API call) return error codes or results, never
raise for a client's bad input; anything raised is our own bug. Every change of state goes
through one door, ``_transition``, checked against ``VALID_PREVIOUS_STATES`` and recorded in the
event log (``txn.transition``). Timers are the cluster's, on its clock, through
``CoordinatorServices.schedule``: the transaction timeout and, with ``marker_delay_ms`` > 0, the
writing of the markers.

Where Kafka writes a transition to ``__transaction_state`` and then applies it, this applies it at
once (there is no log to fail). Completing a transaction writes the COMMIT/ABORT markers to each
of its partitions through the ``MarkerWriter`` effect (the data partitions' logs, and the group
coordinator's pending offsets for ``__consumer_offsets``), then moves to CompleteCommit or
CompleteAbort. Kafka sends the markers asynchronously after answering EndTxn; by default they are
written before the answer here (``marker_delay_ms`` = 0), so a read_committed consumer sees the
records as soon as commit_transaction() returns; a delay keeps the transaction in PrepareCommit /
PrepareAbort for that long (CONCURRENT_TRANSACTIONS meanwhile, as a slow Kafka gives).

Transaction timeouts: Kafka aborts an Ongoing transaction whose start + transaction.timeout.ms has
passed at its next check (every transaction.abort.timed.out.transaction.cleanup.interval.ms,
10 s); here a timer per transaction fires at the first millisecond Kafka's condition
``txnStartTimestamp + txnTimeoutMs < now`` holds, so a ManualClock test knows the instant. The
abort fences the producer first (PrepareEpochFence: epoch + 1), as
TransactionCoordinator.abortTimedOutTransactions does; the producer's next request is
PRODUCER_FENCED.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from mockbroker.coordinators.services import CoordinatorServices
from mockbroker.coordinators.transactions.metadata import (
    COMPLETE_ABORT,
    COMPLETE_COMMIT,
    DEAD,
    EMPTY,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    ONGOING,
    PREPARE_ABORT,
    PREPARE_COMMIT,
    PREPARE_EPOCH_FENCE,
    SHORT_MAX,
    STATES_BY_NAME,
    VALID_PREVIOUS_STATES,
    IllegalStateTransition,
    TransactionMetadata,
    TransactionState,
    is_epoch_exhausted,
)
from mockbroker_protocol.errors import ErrorCode

DEFAULT_TRANSACTION_MAX_TIMEOUT_MS = 900_000  # transaction.max.timeout.ms (15 minutes)
DEFAULT_TRANSACTIONAL_ID_EXPIRATION_MS = 604_800_000  # transactional.id.expiration.ms (7 days)
# The states a transactional id may expire in (TransactionState.isExpirationAllowed).
EXPIRATION_ALLOWED = frozenset({EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT})

TopicPartition = tuple[str, int]


@dataclass(frozen=True, slots=True)
class TransactionConfig:
    """The transaction coordinator's settings (Kafka names in the comments)."""

    max_timeout_ms: int = DEFAULT_TRANSACTION_MAX_TIMEOUT_MS  # transaction.max.timeout.ms
    # mockbroker's own: how long after EndTxn (or an abort) the markers are written; 0: before
    # the answer. Kafka's is however long its WriteTxnMarkers round trips take.
    marker_delay_ms: int = 0
    transactional_id_expiration_ms: int = DEFAULT_TRANSACTIONAL_ID_EXPIRATION_MS  # transactional.id.expiration.ms


@dataclass(frozen=True, slots=True)
class TxnMarkers:
    """The effect of a completing transaction: a COMMIT or ABORT marker for each partition
    (Kafka's WriteTxnMarkers request, TransactionMarkerChannelManager)."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    commit: bool
    partitions: tuple[TopicPartition, ...]


class MarkerWriter(Protocol):
    """Writes markers where they belong (the cluster wires the log and the group coordinator)."""

    def write_markers(self, markers: TxnMarkers, now_ms: int) -> None: ...


@dataclass(frozen=True, slots=True)
class ProducerIdResult:
    """What InitProducerId and EndTxn answer: an error, or the producer id and epoch."""

    error: ErrorCode
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH


class TransactionCoordinator:
    """Every transactional id of the cluster and the rules of the transactional APIs."""

    def __init__(
        self,
        config: TransactionConfig,
        services: CoordinatorServices,
        markers: MarkerWriter,
        *,
        generate_producer_id: Callable[[], int],
        broker_of: Callable[[str], int] | None = None,
    ) -> None:
        self.config = config
        self.services = services
        self.markers = markers
        self._generate_producer_id = generate_producer_id
        self._broker_of = broker_of
        self.transactions: dict[str, TransactionMetadata] = {}

    # -- the one door ---------------------------------------------------------------------------------

    def _transition(
        self, txn: TransactionMetadata, to: TransactionState, now_ms: int, reason: str, **changes: Any
    ) -> None:
        """TransactionMetadata.prepareTransitionTo + completeTransitionTo, at once."""
        if txn.state not in VALID_PREVIOUS_STATES[to]:
            raise IllegalStateTransition(f"transaction {txn.transactional_id}: {txn.state.value} -> {to.value}")
        from_state = txn.state
        for name, value in changes.items():
            if not hasattr(txn, name):
                raise AttributeError(name)
            setattr(txn, name, value)
        txn.state = to
        txn.txn_last_update_timestamp_ms = now_ms
        if to is not ONGOING:
            self.services.timers.cancel(("transaction-timeout", txn.transactional_id))
        elif from_state is not ONGOING:
            self._arm_timeout(txn)
        if to in EXPIRATION_ALLOWED:
            self._arm_expiration(txn)
        else:
            self.services.timers.cancel(("transactional-id-expiration", txn.transactional_id))
        self._record(
            "txn.transition", txn, now_ms, reason, from_state=from_state.value, to_state=to.value,
            partitions=[f"{t}-{p}" for t, p in txn.sorted_partitions()],
        )  # fmt: skip

    def _record(self, type: str, txn: TransactionMetadata, now_ms: int, reason: str | None, **details: Any) -> None:
        self.services.events.record(
            type,
            broker_id=self._broker_of(txn.transactional_id) if self._broker_of is not None else None,
            reason=reason,
            now_ms=now_ms,
            transactional_id=txn.transactional_id,
            producer_id=txn.producer_id,
            producer_epoch=txn.producer_epoch,
            transaction_timeout_ms=txn.txn_timeout_ms,
            **details,
        )

    # -- InitProducerId ---------------------------------------------------------------------------------

    def init_producer_id(
        self, now_ms: int, transactional_id: str, timeout_ms: int, expected: tuple[int, int] | None = None
    ) -> ProducerIdResult:
        """TransactionCoordinator.handleInitProducerId for a transactional id (the handler answers
        a null id itself). ``expected``: the (producer id, epoch) a v3+ producer names (KIP-360)."""
        if transactional_id == "":
            return ProducerIdResult(ErrorCode.INVALID_REQUEST)
        if not 0 < timeout_ms <= self.config.max_timeout_ms:
            return ProducerIdResult(ErrorCode.INVALID_TRANSACTION_TIMEOUT)
        txn = self.transactions.get(transactional_id)
        if txn is None:
            txn = self.transactions[transactional_id] = TransactionMetadata(
                transactional_id, self._generate_producer_id(), timeout_ms, txn_last_update_timestamp_ms=now_ms
            )
        if expected is not None and not self._is_valid_producer_id(txn, expected):
            return ProducerIdResult(ErrorCode.PRODUCER_FENCED)
        state = txn.state
        if state in (PREPARE_COMMIT, PREPARE_ABORT):
            return ProducerIdResult(ErrorCode.CONCURRENT_TRANSACTIONS)  # the client backs off and retries
        if state is ONGOING:
            # Abort the open transaction first, fencing its producer; the client retries and the
            # retry bumps the epoch a second time (so an exhausted epoch gets a new producer id).
            self._fence_and_abort(txn, now_ms, "InitProducerId while a transaction was ongoing")
            return ProducerIdResult(ErrorCode.CONCURRENT_TRANSACTIONS)
        if state in (DEAD, PREPARE_EPOCH_FENCE):
            raise IllegalStateTransition(f"transaction {transactional_id} found in {state.value}")
        if txn.is_epoch_exhausted and (expected is None or expected[1] == txn.producer_epoch):
            # TransactionMetadata.prepareProducerIdRotation
            self._transition(
                txn, EMPTY, now_ms, "InitProducerId: epoch exhausted, new producer id",
                last_producer_id=txn.producer_id, producer_id=self._generate_producer_id(), producer_epoch=0,
                last_producer_epoch=txn.producer_epoch if expected is not None else NO_PRODUCER_EPOCH,
                txn_timeout_ms=timeout_ms, partitions=set(), txn_start_timestamp_ms=-1,
            )  # fmt: skip
            return ProducerIdResult(ErrorCode.NONE, txn.producer_id, txn.producer_epoch)
        return self._increment_epoch(txn, now_ms, timeout_ms, None if expected is None else expected[1])

    @staticmethod
    def _is_valid_producer_id(txn: TransactionMetadata, expected: tuple[int, int]) -> bool:
        """prepareInitProducerIdTransit.isValidProducerId: a just-created id, the current id (its
        epoch is checked by the bump), or a retry after a rotation the producer never heard of."""
        producer_id, epoch = expected
        return (
            txn.producer_epoch == NO_PRODUCER_EPOCH
            or producer_id == txn.producer_id
            or (producer_id == txn.last_producer_id and is_epoch_exhausted(epoch))
        )

    def _increment_epoch(
        self, txn: TransactionMetadata, now_ms: int, timeout_ms: int, expected_epoch: int | None
    ) -> ProducerIdResult:
        """TransactionMetadata.prepareIncrementProducerEpoch."""
        bumped = txn.producer_epoch + 1
        if expected_epoch is None:
            new_epoch, last_epoch = bumped, NO_PRODUCER_EPOCH  # a producer initialising
        elif txn.producer_epoch == NO_PRODUCER_EPOCH or expected_epoch == txn.producer_epoch:
            new_epoch, last_epoch = bumped, txn.producer_epoch  # continuing after an error (KIP-360)
        elif expected_epoch == txn.last_producer_epoch:
            new_epoch, last_epoch = txn.producer_epoch, txn.last_producer_epoch  # a retry of a bump
        else:
            return ProducerIdResult(ErrorCode.PRODUCER_FENCED)
        self._transition(
            txn, EMPTY, now_ms, "InitProducerId", producer_epoch=new_epoch, last_producer_epoch=last_epoch,
            txn_timeout_ms=timeout_ms, partitions=set(), txn_start_timestamp_ms=-1,
        )  # fmt: skip
        return ProducerIdResult(ErrorCode.NONE, txn.producer_id, txn.producer_epoch)

    # -- AddPartitionsToTxn, AddOffsetsToTxn -------------------------------------------------------------

    def _check_producer(self, transactional_id: str, producer_id: int, producer_epoch: int) -> TransactionMetadata | ErrorCode:
        """The checks every request of an ongoing producer shares, in Kafka's order."""
        txn = self.transactions.get(transactional_id)
        if txn is None or txn.producer_id != producer_id:
            return ErrorCode.INVALID_PRODUCER_ID_MAPPING
        if txn.producer_epoch != producer_epoch:
            return ErrorCode.PRODUCER_FENCED
        if txn.state in (PREPARE_COMMIT, PREPARE_ABORT):
            return ErrorCode.CONCURRENT_TRANSACTIONS
        return txn

    def add_partitions(
        self, now_ms: int, transactional_id: str, producer_id: int, producer_epoch: int, partitions: Iterable[TopicPartition]
    ) -> ErrorCode:
        """TransactionCoordinator.handleAddPartitionsToTransaction (AddOffsetsToTxn adds the
        group's __consumer_offsets partition through here too)."""
        if not transactional_id:
            return ErrorCode.INVALID_REQUEST
        txn = self._check_producer(transactional_id, producer_id, producer_epoch)
        if isinstance(txn, ErrorCode):
            return txn
        added = set(partitions)
        if txn.state is ONGOING and added <= txn.partitions:
            return ErrorCode.NONE  # already there: answered without a write
        start = now_ms if txn.state in (EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT) else txn.txn_start_timestamp_ms
        self._transition(
            txn, ONGOING, now_ms, "AddPartitionsToTxn", partitions=txn.partitions | added, txn_start_timestamp_ms=start
        )
        return ErrorCode.NONE

    def verify_partitions(
        self, transactional_id: str, producer_id: int, producer_epoch: int, partitions: Iterable[TopicPartition]
    ) -> ErrorCode | dict[TopicPartition, ErrorCode]:
        """TransactionCoordinator.handleVerifyPartitionsInTransaction (AddPartitionsToTxn v4+
        verify_only, KIP-890 part 1): a transaction-level error, or per partition NONE when it
        is in the transaction and TRANSACTION_ABORTABLE when it is not."""
        wanted = list(partitions)
        if not transactional_id:
            return dict.fromkeys(wanted, ErrorCode.INVALID_REQUEST)
        txn = self._check_producer(transactional_id, producer_id, producer_epoch)
        if isinstance(txn, ErrorCode):
            return txn
        return {tp: ErrorCode.NONE if tp in txn.partitions else ErrorCode.TRANSACTION_ABORTABLE for tp in wanted}

    # -- EndTxn -------------------------------------------------------------------------------------------

    def end_transaction(
        self, now_ms: int, transactional_id: str, producer_id: int, producer_epoch: int, commit: bool, *, tv2: bool = False
    ) -> ProducerIdResult:
        """TransactionCoordinator.handleEndTransaction from a client. ``tv2``: EndTxn v5
        (KIP-890 part 2): completing bumps the epoch, and the answer carries the new one."""
        if not transactional_id:
            return ProducerIdResult(ErrorCode.INVALID_REQUEST)
        txn = self.transactions.get(transactional_id)
        if txn is None:
            return ProducerIdResult(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        if tv2:
            return self._end_transaction_v2(now_ms, txn, producer_id, producer_epoch, commit)
        if txn.producer_id != producer_id:
            return ProducerIdResult(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        if producer_epoch != txn.producer_epoch:
            return ProducerIdResult(ErrorCode.PRODUCER_FENCED)
        error = self._end_transaction_state_check(txn, commit, is_retry=True)
        if error == ErrorCode.NONE:  # a retry: answered the id and epoch it was given
            return ProducerIdResult(error, txn.producer_id, txn.producer_epoch)
        if error is not None:
            return ProducerIdResult(error)
        return self._prepare(txn, now_ms, commit, "EndTxn")

    @staticmethod
    def _end_transaction_state_check(txn: TransactionMetadata, commit: bool, *, is_retry: bool) -> ErrorCode | None:
        """The state match of endTransaction: None to go ahead (from Ongoing, or an abort with
        nothing added under TV2), or the answer: NONE for a retry of a completed end,
        CONCURRENT_TRANSACTIONS while one is being completed, INVALID_TXN_STATE otherwise."""
        state = txn.state
        if state is ONGOING:
            return None
        if state is (COMPLETE_COMMIT if commit else COMPLETE_ABORT):
            return ErrorCode.NONE if is_retry else (None if not commit else ErrorCode.INVALID_TXN_STATE)
        if state is (PREPARE_COMMIT if commit else PREPARE_ABORT):
            return ErrorCode.CONCURRENT_TRANSACTIONS
        if state in (DEAD, PREPARE_EPOCH_FENCE):
            raise IllegalStateTransition(f"transaction {txn.transactional_id} found in {state.value}")
        return ErrorCode.INVALID_TXN_STATE

    def _end_transaction_v2(
        self, now_ms: int, txn: TransactionMetadata, producer_id: int, producer_epoch: int, commit: bool
    ) -> ProducerIdResult:
        """endTransaction under transaction version 2: a retry is told apart by the epoch (the
        first answer carried epoch + 1, or a new producer id after an overflow)."""
        retry_on_overflow = (
            txn.last_producer_id == producer_id and producer_epoch == SHORT_MAX - 1 and txn.producer_epoch == 0
        )
        retry_on_bump = txn.producer_epoch == producer_epoch + 1
        state = txn.state
        if state in (PREPARE_COMMIT, PREPARE_ABORT):
            valid = retry_on_bump
        elif state in (COMPLETE_COMMIT, COMPLETE_ABORT):
            valid = retry_on_bump or retry_on_overflow or producer_epoch == txn.producer_epoch
        else:
            valid = producer_epoch == txn.producer_epoch
        if txn.producer_id != producer_id and not retry_on_overflow:
            return ProducerIdResult(ErrorCode.INVALID_PRODUCER_ID_MAPPING)
        if not valid:
            return ProducerIdResult(ErrorCode.PRODUCER_FENCED)
        is_retry = retry_on_bump or retry_on_overflow
        if state is EMPTY and not commit:
            error: ErrorCode | None = None  # TV2 may abort with nothing added
        elif state is COMPLETE_ABORT and not commit:
            error = ErrorCode.NONE if is_retry else None
        elif state is COMPLETE_COMMIT and not commit:
            error = ErrorCode.INVALID_TXN_STATE if is_retry else None
        else:
            error = self._end_transaction_state_check(txn, commit, is_retry=is_retry)
        if error == ErrorCode.NONE:  # a retry: answered the id and epoch it was given
            return ProducerIdResult(error, txn.producer_id, txn.producer_epoch)
        if error is not None:
            return ProducerIdResult(error)
        txn.tv2 = True
        return self._prepare(txn, now_ms, commit, "EndTxn (transaction version 2)", bump=True)

    # -- completion ---------------------------------------------------------------------------------------

    def _prepare(
        self, txn: TransactionMetadata, now_ms: int, commit: bool, reason: str, *, bump: bool = False
    ) -> ProducerIdResult:
        """prepareAbortOrCommit, then the markers (now, or after marker_delay_ms) and completion;
        returns the producer id and epoch the producer continues with. ``bump`` (TV2): the epoch
        goes up with the end (the markers carry the new one); when it was exhausted the producer
        continues with a new id at epoch 0 once the transaction completes."""
        changes: dict[str, Any] = {}
        if txn.state in (EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT):
            changes["txn_start_timestamp_ms"] = now_ms  # TV2 abort with nothing added
        next_producer_id = NO_PRODUCER_ID
        if bump:
            if txn.is_epoch_exhausted:
                next_producer_id = self._generate_producer_id()
            changes.update(producer_epoch=txn.producer_epoch + 1, last_producer_epoch=txn.producer_epoch)
        self._transition(txn, PREPARE_COMMIT if commit else PREPARE_ABORT, now_ms, reason, **changes)
        markers = TxnMarkers(txn.transactional_id, txn.producer_id, txn.producer_epoch, commit, tuple(txn.sorted_partitions()))
        delay = self.config.marker_delay_ms
        if delay <= 0:
            self._complete(txn, markers, next_producer_id, now_ms)
        else:
            self.services.schedule(
                ("transaction-markers", txn.transactional_id),
                now_ms + delay,
                lambda t: self._complete(txn, markers, next_producer_id, t),
            )
        if next_producer_id != NO_PRODUCER_ID:
            return ProducerIdResult(ErrorCode.NONE, next_producer_id, 0)
        return ProducerIdResult(ErrorCode.NONE, txn.producer_id, txn.producer_epoch)

    def _complete(self, txn: TransactionMetadata, markers: TxnMarkers, next_producer_id: int, now_ms: int) -> None:
        """The markers are written: TransactionMetadata.prepareComplete (partitions cleared; a
        TV2 end of an exhausted epoch moves to the new producer id)."""
        if markers.partitions:
            self.markers.write_markers(markers, now_ms)
            self._record(
                "txn.markers_written", txn, now_ms, None, result="COMMIT" if markers.commit else "ABORT",
                partitions=[f"{t}-{p}" for t, p in markers.partitions],
            )  # fmt: skip
        changes: dict[str, Any] = {"partitions": set()}
        if next_producer_id != NO_PRODUCER_ID:
            changes.update(last_producer_id=txn.producer_id, producer_id=next_producer_id, producer_epoch=0)
        to = COMPLETE_COMMIT if markers.commit else COMPLETE_ABORT
        self._transition(txn, to, now_ms, "transaction markers written", **changes)

    def _fence_and_abort(self, txn: TransactionMetadata, now_ms: int, reason: str) -> None:
        """prepareFenceProducerEpoch then endTransaction(ABORT, isFromClient = false): the epoch
        goes up (fencing the producer that had it) and the transaction is aborted with it."""
        if txn.producer_epoch >= SHORT_MAX:
            raise IllegalStateTransition(f"transaction {txn.transactional_id}: cannot fence epoch {txn.producer_epoch}")
        self._transition(
            txn, PREPARE_EPOCH_FENCE, now_ms, reason, producer_epoch=txn.producer_epoch + 1,
            last_producer_epoch=NO_PRODUCER_EPOCH,
        )  # fmt: skip
        self._prepare(txn, now_ms, False, reason)

    # -- timeouts ------------------------------------------------------------------------------------------

    def _arm_timeout(self, txn: TransactionMetadata) -> None:
        deadline = txn.txn_start_timestamp_ms + txn.txn_timeout_ms + 1
        producer_id = txn.producer_id
        self.services.schedule(
            ("transaction-timeout", txn.transactional_id), deadline, lambda now: self._on_timeout(txn, producer_id, now)
        )

    def _on_timeout(self, txn: TransactionMetadata, producer_id: int, now_ms: int) -> None:
        """TransactionCoordinator.abortTimedOutTransactions for one transaction."""
        if self.transactions.get(txn.transactional_id) is not txn or txn.state is not ONGOING:
            return
        if txn.producer_id != producer_id:
            return
        self._record("txn.timed_out", txn, now_ms, "transaction.timeout.ms passed", started_ms=txn.txn_start_timestamp_ms)
        self._fence_and_abort(txn, now_ms, "transaction timed out")

    # -- transactional.id.expiration.ms ----------------------------------------------------------------

    def _arm_expiration(self, txn: TransactionMetadata) -> None:
        """TransactionStateManager.removeExpiredTransactionalIds: an id idle in Empty,
        CompleteCommit or CompleteAbort whose last update is transactional.id.expiration.ms old
        is removed (Dead, then a tombstone). Kafka looks every
        transaction.remove.expired.transaction.cleanup.interval.ms (an hour); here a timer fires
        at the first millisecond its condition ``txnLastUpdateTimestamp <= now - expiration``
        holds. Re-armed at every transition, so only the last one counts."""
        deadline = txn.txn_last_update_timestamp_ms + self.config.transactional_id_expiration_ms
        self.services.schedule(
            ("transactional-id-expiration", txn.transactional_id), deadline, lambda now: self._on_expiration(txn, now)
        )

    def _on_expiration(self, txn: TransactionMetadata, now_ms: int) -> None:
        if self.transactions.get(txn.transactional_id) is not txn or txn.state not in EXPIRATION_ALLOWED:
            return
        if txn.txn_last_update_timestamp_ms > now_ms - self.config.transactional_id_expiration_ms:
            return
        last_update_ms = txn.txn_last_update_timestamp_ms
        self._transition(txn, DEAD, now_ms, "transactional.id.expiration.ms passed")
        # The tombstone is written: the id is forgotten, and a producer initialising with it
        # again gets a new producer id (its old one is no longer fenced by anything).
        del self.transactions[txn.transactional_id]
        self._record("txn.expired", txn, now_ms, "transactional.id.expiration.ms passed",
                     last_update_ms=last_update_ms)  # fmt: skip

    # -- administration -------------------------------------------------------------------------------------

    def abort_transaction(self, now_ms: int, transactional_id: str) -> ErrorCode:
        """Abort an ongoing transaction from outside (the control API; Kafka's admin aborts by
        writing markers, KIP-664 ``--abort``): its producer is fenced as on a timeout."""
        txn = self.transactions.get(transactional_id)
        if txn is None:
            return ErrorCode.TRANSACTIONAL_ID_NOT_FOUND
        if txn.state is not ONGOING:
            return ErrorCode.INVALID_TXN_STATE
        self._fence_and_abort(txn, now_ms, "aborted by the control API")
        return ErrorCode.NONE

    def describe(self, transactional_id: str) -> TransactionMetadata | None:
        return self.transactions.get(transactional_id)

    def list_transactions(
        self,
        now_ms: int,
        *,
        states: Iterable[str] = (),
        producer_ids: Iterable[int] = (),
        duration_ms: int = -1,
        pattern: str | None = None,
        include: Callable[[str], bool] | None = None,
    ) -> tuple[list[TransactionMetadata], list[str]]:
        """TransactionStateManager.listTransactionStates: the matching transactions and the
        state filters that name no state."""
        names = list(states)
        unknown = [n for n in names if n not in STATES_BY_NAME]
        wanted_states = {STATES_BY_NAME[n] for n in names if n in STATES_BY_NAME}
        wanted_ids = set(producer_ids)
        matcher = re.compile(pattern) if pattern else None
        out = []
        for tid, txn in sorted(self.transactions.items()):
            if txn.state is DEAD or (include is not None and not include(tid)):
                continue
            if wanted_ids and txn.producer_id not in wanted_ids:
                continue
            if names and txn.state not in wanted_states:
                continue
            if duration_ms >= 0 and now_ms - txn.txn_start_timestamp_ms <= duration_ms:
                continue
            if matcher is not None and not matcher.fullmatch(tid):
                continue
            out.append(txn)
        return out, unknown
