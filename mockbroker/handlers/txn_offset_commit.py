"""TxnOffsetCommit (key 28), v0-5: commit a group's offsets inside a producer's transaction.

v1: same as v0. v2: committed_leader_epoch. v3 (KIP-447): generation_id, member_id and
group_instance_id, checked against the group as OffsetCommit's are (ILLEGAL_GENERATION,
UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID), so a zombie that lost its partitions cannot commit; flexible.
v4 (KIP-890): TRANSACTION_ABORTABLE. v5 (KIP-890 part 2): the group's offsets partition is added
to the transaction implicitly (no AddOffsetsToTxn).

Served by the group's coordinator, as KafkaApis.handleTxnOffsetCommitRequest and
GroupCoordinatorService.commitTransactionalOffsets: unknown topics are UNKNOWN_TOPIC_OR_PARTITION;
then the transaction is verified with the transaction coordinator (KIP-890 part 1, on by default
since Kafka 3.6: the producer id, its epoch, and that AddOffsetsToTxn added the offsets
partition; a fenced producer is answered INVALID_PRODUCER_EPOCH, a partition not in the
transaction TRANSACTION_ABORTABLE, INVALID_TXN_STATE below v4, as AddPartitionsToTxnManager
renames them); then the group's
checks. Accepted offsets are pending: OffsetFetch does not return them (require_stable ones are
UNSTABLE_OFFSET_COMMIT) until the transaction's COMMIT marker makes them the group's committed
offsets; an ABORT drops them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker.model import OFFSETS_TOPIC
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.txn_offset_commit import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
    TxnOffsetCommitResponsePartition,
    TxnOffsetCommitResponseTopic,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.TXN_OFFSET_COMMIT
VERSIONS = (0, 5)
ABORTABLE_MIN_VERSION = 4
IMPLICIT_ADD_MIN_VERSION = 5


async def handle(ctx: RequestContext, req: TxnOffsetCommitRequest) -> TxnOffsetCommitResponse:
    cluster = ctx.cluster
    errors: dict[tuple[str, int], ErrorCode] = {}
    if cluster.authorizer is not None and (refused := _unauthorized(ctx, req)) is not None:
        return TxnOffsetCommitResponse(topics=_answer(req, dict.fromkeys(((t.name, p.partition_index) for t in req.topics for p in t.partitions), refused)))
    for topic in req.topics:
        known = topic.name in cluster.topics
        if cluster.authorizer is not None and not authorized(ctx, AclOperation.READ, ResourceType.TOPIC, topic.name):
            errors.update({(topic.name, p.partition_index): ErrorCode.TOPIC_AUTHORIZATION_FAILED for p in topic.partitions})
            continue
        for p in topic.partitions:
            if not known or cluster.partition(topic.name, p.partition_index) is None:
                errors[(topic.name, p.partition_index)] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    remaining = [
        (t.name, [(p.partition_index, p.committed_offset, p.committed_leader_epoch, p.committed_metadata)
                  for p in t.partitions if (t.name, p.partition_index) not in errors])
        for t in req.topics
    ]  # fmt: skip
    remaining = [(name, parts) for name, parts in remaining if parts]
    if remaining:
        group_error = _check(ctx, req)
        if group_error is None:
            results = cluster.groups.commit_transactional_offsets(
                ctx.now_ms, req.group_id, req.producer_id, remaining, generation_id=req.generation_id,
                member_id=req.member_id, group_instance_id=req.group_instance_id,
            )  # fmt: skip
            group_error = results if isinstance(results, ErrorCode) else None
            if isinstance(results, dict):
                errors.update(results)
        if group_error is not None:
            errors.update({(name, p[0]): group_error for name, parts in remaining for p in parts})
    return TxnOffsetCommitResponse(topics=_answer(req, errors))


def _unauthorized(ctx: RequestContext, req: TxnOffsetCommitRequest) -> ErrorCode | None:
    """KafkaApis.handleTxnOffsetCommitRequest: WRITE on the transactional id, then READ on the group."""
    if not authorized(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactional_id):
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    if not authorized(ctx, AclOperation.READ, ResourceType.GROUP, req.group_id):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED
    return None


def _check(ctx: RequestContext, req: TxnOffsetCommitRequest) -> ErrorCode | None:
    """The group coordinator's placement, then the transaction's verification."""
    if not is_group_coordinator(ctx, req.group_id):
        return ErrorCode.NOT_COORDINATOR
    coordinator = ctx.cluster.transactions
    offsets_partition = (OFFSETS_TOPIC, ctx.cluster.coordinator_partition(req.group_id))
    verified = coordinator.verify_partitions(req.transactional_id, req.producer_id, req.producer_epoch, [offsets_partition])
    error = verified if isinstance(verified, ErrorCode) else verified[offsets_partition]
    if error == ErrorCode.TRANSACTION_ABORTABLE and ctx.api_version >= IMPLICIT_ADD_MIN_VERSION:
        error = coordinator.add_partitions(
            ctx.now_ms, req.transactional_id, req.producer_id, req.producer_epoch, [offsets_partition]
        )
    if error == ErrorCode.NONE:
        return None
    # AddPartitionsToTxnManager: what the verification's errors become for the request that waited on it.
    if error == ErrorCode.PRODUCER_FENCED:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    if error == ErrorCode.TRANSACTION_ABORTABLE and ctx.api_version < ABORTABLE_MIN_VERSION:
        return ErrorCode.INVALID_TXN_STATE
    return error


def _answer(req: TxnOffsetCommitRequest, errors: dict[tuple[str, int], ErrorCode]) -> list[TxnOffsetCommitResponseTopic]:
    return [
        TxnOffsetCommitResponseTopic(
            name=t.name,
            partitions=[
                TxnOffsetCommitResponsePartition(p.partition_index, errors.get((t.name, p.partition_index), ErrorCode.NONE))
                for p in t.partitions
            ],
        )
        for t in req.topics
    ]
