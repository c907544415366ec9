"""AddOffsetsToTxn (key 25), v0-4: add a group's offsets partition to a producer's transaction.

v1: same as v0. v2: PRODUCER_FENCED may be answered (INVALID_PRODUCER_EPOCH below). v3: flexible.
v4 (KIP-890): TRANSACTION_ABORTABLE may be answered.

As KafkaApis.handleAddOffsetsToTxnRequest: the group's ``__consumer_offsets`` partition
(GroupCoordinator.partitionFor) is added to the transaction through AddPartitionsToTxn's rules,
so that TxnOffsetCommit may write there and the transaction's marker later commits or drops the
offsets. Only the id's transaction coordinator answers (NOT_COORDINATOR elsewhere).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker.handlers._txn import coordinator_error, fenced_for
from mockbroker.model import OFFSETS_TOPIC
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.add_offsets_to_txn import AddOffsetsToTxnRequest, AddOffsetsToTxnResponse

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.ADD_OFFSETS_TO_TXN
VERSIONS = (0, 4)
FENCED_MIN_VERSION = 2


async def handle(ctx: RequestContext, req: AddOffsetsToTxnRequest) -> AddOffsetsToTxnResponse:
    # KafkaApis.handleAddOffsetsToTxnRequest: WRITE on the transactional id, then READ on the group.
    if not authorized(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactional_id):
        return AddOffsetsToTxnResponse(error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    if not authorized(ctx, AclOperation.READ, ResourceType.GROUP, req.group_id):
        return AddOffsetsToTxnResponse(error_code=ErrorCode.GROUP_AUTHORIZATION_FAILED)
    if req.transactional_id and (refused := coordinator_error(ctx, req.transactional_id)):
        return AddOffsetsToTxnResponse(error_code=refused)
    offsets_partition = (OFFSETS_TOPIC, ctx.cluster.coordinator_partition(req.group_id))
    error = ctx.cluster.transactions.add_partitions(
        ctx.now_ms, req.transactional_id, req.producer_id, req.producer_epoch, [offsets_partition]
    )
    return AddOffsetsToTxnResponse(error_code=fenced_for(error, ctx.api_version, FENCED_MIN_VERSION))
