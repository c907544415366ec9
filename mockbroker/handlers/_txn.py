"""What the transactional handlers share (not a handler module: the underscore keeps it out of
the handler table): where a transactional id's coordinator is, the error renames KafkaApis
applies for older clients, and Produce's check of a transaction's first batch (KIP-890)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._coordinator import transaction_coordinator
from mockbroker_protocol.errors import CorruptRecordError, ErrorCode
from mockbroker_protocol.records import parse_batch_header
from mockbroker_protocol.records.batch import (
    ATTRIBUTES_OFFSET,
    RECORD_BATCH_OVERHEAD,
    TRANSACTIONAL_FLAG_MASK,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext
    from mockbroker.model import Partition
    from mockbroker_protocol.primitives import Buffer


def is_transaction_coordinator(ctx: RequestContext, transactional_id: str) -> bool:
    """True when the broker ``ctx`` serves leads the id's __transaction_state partition; the
    transactional APIs answer NOT_COORDINATOR everywhere else."""
    return transaction_coordinator(ctx.cluster, transactional_id).node_id == ctx.broker.node_id


def coordinator_error(ctx: RequestContext, transactional_id: str) -> ErrorCode | None:
    """What the transactional APIs answer before the coordinator looks at the request: NOT_COORDINATOR
    on a broker that is not the id's coordinator, COORDINATOR_LOAD_IN_PROGRESS while its coordinator
    loads (control.load_transaction_coordinator; TransactionStateManager.getTransactionState), else None."""
    if not is_transaction_coordinator(ctx, transactional_id):
        return ErrorCode.NOT_COORDINATOR
    loading = ctx.cluster.transaction_loading_until_ms
    if loading and transactional_id in loading:
        if ctx.now_ms < loading[transactional_id]:
            return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        del loading[transactional_id]
    return None


def fenced_for(error: ErrorCode, api_version: int, fenced_min_version: int) -> ErrorCode:
    """KafkaApis: clients below ``fenced_min_version`` do not know PRODUCER_FENCED (KIP-588) and
    get INVALID_PRODUCER_EPOCH, which they handle the same way."""
    if error == ErrorCode.PRODUCER_FENCED and api_version < fenced_min_version:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    return error


# Produce v11 (KIP-890): producers understand TRANSACTION_ABORTABLE; older ones get INVALID_TXN_STATE
# (AddPartitionsToTxnManager: TransactionSupportedOperation genericErrorSupported).
PRODUCE_ABORTABLE_MIN_VERSION = 11
# Produce v12 (KIP-890 part 2): under transactions version 2 the batch adds its partition.
PRODUCE_IMPLICIT_ADD_MIN_VERSION = 12


def verify_transactional_append(
    ctx: RequestContext, transactional_id: str, topic: str, partition: Partition, records: Buffer | None
) -> tuple[ErrorCode, str | None] | None:
    """KIP-890 part 1 (transaction.partition.verification.enable, on by default since Kafka 3.6):
    before the first transactional batch of a transaction is appended to a partition, the
    partition asks the transaction coordinator whether the producer really added it
    (ReplicaManager.appendRecords -> AddPartitionsToTxnManager). Without this, a batch sent after
    its transaction ended would open a transaction nobody ever closes, and the last stable offset
    would stay behind it forever. Only a transactional producer's batch that opens a transaction
    on the partition is checked: later batches and every other producer pay nothing.

    None: append; otherwise the error the partition answers and its message, as
    AddPartitionsToTxnManager and ReplicaManager.appendRecords make them: a fenced producer
    INVALID_PRODUCER_EPOCH; TRANSACTION_ABORTABLE becomes INVALID_TXN_STATE below v11 (older
    producers do not know it); INVALID_TXN_STATE says "Partition was not added to the transaction"; CONCURRENT_TRANSACTIONS,
    which producers before transactions version 2 do not retry, becomes NOT_ENOUGH_REPLICAS (which
    they do) naming the underlying error, and stays itself from v12 (the partition's transaction
    supports epoch bumps: "less confusing to the client")."""
    if (
        records is None
        or len(records) < RECORD_BATCH_OVERHEAD
        or not records[ATTRIBUTES_OFFSET + 1] & TRANSACTIONAL_FLAG_MASK
    ):
        return None
    try:
        header = parse_batch_header(records)
    except CorruptRecordError:
        return None  # the append's own checks answer it
    if header.is_control_batch or header.producer_id in partition.log.open_txn_first_offset:
        return None
    where = (topic, partition.index)
    verified = ctx.cluster.transactions.verify_partitions(
        transactional_id, header.producer_id, header.producer_epoch, [where]
    )
    error = verified if isinstance(verified, ErrorCode) else verified[where]
    if error == ErrorCode.TRANSACTION_ABORTABLE and ctx.api_version >= PRODUCE_IMPLICIT_ADD_MIN_VERSION:
        # A v12 producer uses transactions version 2 (it may only use v12 in a transaction
        # then): the coordinator adds the partition, as AddPartitionsToTxnManager asks it to.
        error = ctx.cluster.transactions.add_partitions(
            ctx.now_ms, transactional_id, header.producer_id, header.producer_epoch, [where]
        )
    return verification_error(error, ctx.api_version)


def verification_error(error: ErrorCode, api_version: int) -> tuple[ErrorCode, str | None] | None:
    """The Produce answer for the coordinator's verdict on a partition (see above)."""
    if error == ErrorCode.NONE:
        return None
    if error == ErrorCode.PRODUCER_FENCED:
        return ErrorCode.INVALID_PRODUCER_EPOCH, None
    if error == ErrorCode.TRANSACTION_ABORTABLE and api_version < PRODUCE_ABORTABLE_MIN_VERSION:
        error = ErrorCode.INVALID_TXN_STATE
    if error == ErrorCode.INVALID_TXN_STATE:
        return error, "Partition was not added to the transaction"
    if error in _RETRIABLE_VERIFICATION_ERRORS or (
        error == ErrorCode.CONCURRENT_TRANSACTIONS and api_version < PRODUCE_IMPLICIT_ADD_MIN_VERSION
    ):
        return ErrorCode.NOT_ENOUGH_REPLICAS, (
            f"Unable to verify the partition has been added to the transaction. Underlying error: {error.name}"
        )
    return error, None


# Verification errors older producers may not retry; NOT_ENOUGH_REPLICAS makes them retry
# without a metadata refresh (ReplicaManager).
_RETRIABLE_VERIFICATION_ERRORS = frozenset(
    {
        ErrorCode.NETWORK_EXCEPTION,
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_COORDINATOR,
    }
)
