"""EndTxn (key 26), v0-5: commit or abort a producer's transaction.

v1: same as v0. v2: PRODUCER_FENCED may be answered (INVALID_PRODUCER_EPOCH below). v3: flexible.
v4 (KIP-890): TRANSACTION_ABORTABLE. v5 (KIP-890 part 2, transaction version 2): ending the
transaction bumps the producer epoch, and the answer carries the producer id and epoch to go on
with (a new producer id when the epoch was exhausted).

As KafkaApis.handleEndTxnRequest and TransactionCoordinator.handleEndTransaction
(mockbroker/coordinators/transactions/): INVALID_PRODUCER_ID_MAPPING for an unknown id or another
producer id, PRODUCER_FENCED for another epoch, INVALID_TXN_STATE for an end that does not follow
(commit after abort, commit with nothing added), CONCURRENT_TRANSACTIONS while the previous end is
being completed; a retry of a completed end is answered NONE. The markers are written to every
partition of the transaction before the answer (see the coordinator on ``marker_delay_ms``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker.handlers._txn import coordinator_error, fenced_for
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.end_txn import EndTxnRequest, EndTxnResponse

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.END_TXN
VERSIONS = (0, 5)
FENCED_MIN_VERSION = 2
EPOCH_BUMP_MIN_VERSION = 5


async def handle(ctx: RequestContext, req: EndTxnRequest) -> EndTxnResponse:
    if not authorized(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, req.transactional_id):
        return EndTxnResponse(error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)  # KafkaApis.handleEndTxnRequest
    if req.transactional_id and (refused := coordinator_error(ctx, req.transactional_id)):
        return EndTxnResponse(error_code=refused)
    result = ctx.cluster.transactions.end_transaction(
        ctx.now_ms,
        req.transactional_id,
        req.producer_id,
        req.producer_epoch,
        req.committed,
        tv2=ctx.api_version >= EPOCH_BUMP_MIN_VERSION,
    )
    return EndTxnResponse(
        error_code=fenced_for(result.error, ctx.api_version, FENCED_MIN_VERSION),
        producer_id=result.producer_id,
        producer_epoch=result.producer_epoch,
    )
