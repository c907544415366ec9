"""AddPartitionsToTxn (key 24), v0-5: add partitions to a producer's ongoing transaction.

v0-3: one transaction (the ``v3_and_below_*`` fields), answered per partition. v1: same as v0.
v2: PRODUCER_FENCED may be answered (INVALID_PRODUCER_EPOCH below). v3: flexible. v4+ (KIP-890
part 1): broker to broker, a batch of transactions, each either added or only verified
(``verify_only``: is each partition in the transaction? TRANSACTION_ABORTABLE when not, at v4
too: Kafka 4.3 answers it whatever the version, and the broker asking renames it for old
producers); a top-level error_code. v5: same as v4.

As KafkaApis.handleAddPartitionsToTxnRequest: a transaction naming a partition that does not exist
fails whole (UNKNOWN_TOPIC_OR_PARTITION for those, OPERATION_NOT_ATTEMPTED for the others);
otherwise the transaction coordinator's answer (mockbroker/coordinators/transactions/) lands on
every partition; a broker that is not the id's coordinator answers NOT_COORDINATOR.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, ResourceType, authorized, cluster_authorized
from mockbroker.handlers._txn import coordinator_error, fenced_for
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.add_partitions_to_txn import (
    AddPartitionsToTxnPartitionResult,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    AddPartitionsToTxnResult,
    AddPartitionsToTxnTopic,
    AddPartitionsToTxnTopicResult,
    AddPartitionsToTxnTransaction,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.ADD_PARTITIONS_TO_TXN
VERSIONS = (0, 5)
BATCHED_MIN_VERSION = 4
ABORTABLE_MIN_VERSION = 5
FENCED_MIN_VERSION = 2

TopicPartition = tuple[str, int]


async def handle(ctx: RequestContext, req: AddPartitionsToTxnRequest) -> AddPartitionsToTxnResponse:
    if ctx.api_version < BATCHED_MIN_VERSION:
        single = AddPartitionsToTxnTransaction(
            transactional_id=req.v3_and_below_transactional_id,
            producer_id=req.v3_and_below_producer_id,
            producer_epoch=req.v3_and_below_producer_epoch,
            topics=req.v3_and_below_topics,
        )
        return AddPartitionsToTxnResponse(results_by_topic_v3_and_below=_transaction(ctx, single).topic_results)
    if not cluster_authorized(ctx, AclOperation.CLUSTER_ACTION):  # v4+ is the brokers' own (KIP-890)
        return AddPartitionsToTxnResponse(error_code=ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results_by_transaction=[])
    return AddPartitionsToTxnResponse(
        error_code=ErrorCode.NONE, results_by_transaction=[_transaction(ctx, t) for t in req.transactions]
    )


def _transaction(ctx: RequestContext, txn: AddPartitionsToTxnTransaction) -> AddPartitionsToTxnResult:
    partitions = _partitions(txn.topics)
    if ctx.cluster.authorizer is not None and ctx.api_version < BATCHED_MIN_VERSION and (denied := _denied(ctx, txn, partitions)):
        return _result(txn.transactional_id, txn.topics, denied)
    missing = {tp for tp in partitions if ctx.cluster.partition(*tp) is None}
    if missing:
        errors = {tp: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if tp in missing else ErrorCode.OPERATION_NOT_ATTEMPTED for tp in partitions}
        return _result(txn.transactional_id, txn.topics, errors)
    if txn.transactional_id and (refused := coordinator_error(ctx, txn.transactional_id)):
        return _result(txn.transactional_id, txn.topics, dict.fromkeys(partitions, refused))
    coordinator = ctx.cluster.transactions
    if txn.verify_only:
        verified = coordinator.verify_partitions(txn.transactional_id, txn.producer_id, txn.producer_epoch, partitions)
        if isinstance(verified, dict):
            return _result(txn.transactional_id, txn.topics, verified)
        error = verified
    else:
        error = coordinator.add_partitions(
            ctx.now_ms, txn.transactional_id, txn.producer_id, txn.producer_epoch, partitions
        )
    error = fenced_for(error, ctx.api_version, FENCED_MIN_VERSION)
    return _result(txn.transactional_id, txn.topics, dict.fromkeys(partitions, error))


def _denied(
    ctx: RequestContext, txn: AddPartitionsToTxnTransaction, partitions: list[TopicPartition]
) -> dict[TopicPartition, ErrorCode] | None:
    """KafkaApis.handleAddPartitionsToTxnRequest (v0-3): WRITE on the transactional id, then on
    each topic (unauthorized TOPIC_AUTHORIZATION_FAILED, unknown UNKNOWN_TOPIC_OR_PARTITION, the
    rest OPERATION_NOT_ATTEMPTED)."""
    if not authorized(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, txn.transactional_id):
        return dict.fromkeys(partitions, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    refused = {name for name, _ in partitions if not authorized(ctx, AclOperation.WRITE, ResourceType.TOPIC, name)}
    if not refused:
        return None
    return {
        tp: ErrorCode.TOPIC_AUTHORIZATION_FAILED
        if tp[0] in refused
        else ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if ctx.cluster.partition(*tp) is None
        else ErrorCode.OPERATION_NOT_ATTEMPTED
        for tp in partitions
    }


def _partitions(topics: list[AddPartitionsToTxnTopic]) -> list[TopicPartition]:
    return [(t.name, p) for t in topics for p in t.partitions]


def _result(
    transactional_id: str, topics: list[AddPartitionsToTxnTopic], errors: dict[TopicPartition, ErrorCode]
) -> AddPartitionsToTxnResult:
    """AddPartitionsToTxnResponse.resultForTransaction: one result per topic, in request order."""
    by_topic: dict[str, AddPartitionsToTxnTopicResult] = {}
    for t in topics:
        result = by_topic.setdefault(t.name, AddPartitionsToTxnTopicResult(name=t.name))
        for p in t.partitions:
            result.results_by_partition.append(AddPartitionsToTxnPartitionResult(p, errors[(t.name, p)]))
    return AddPartitionsToTxnResult(transactional_id=transactional_id, topic_results=list(by_topic.values()))
