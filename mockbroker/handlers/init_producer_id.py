"""InitProducerId (key 22), v0-5: a producer id and epoch for idempotent and transactional producers.

v0 (KIP-98): transactional_id (null: an idempotent producer) and transaction timeout. v2:
flexible. v3 (KIP-360): producer_id and producer_epoch, which a producer may send to have its
epoch bumped (both or neither: one alone is INVALID_REQUEST). v4: PRODUCER_FENCED may be
returned instead of INVALID_PRODUCER_EPOCH. v5 (KIP-890): transactions v2. v6 (KIP-939,
two-phase commit) is not served.

As KafkaApis.handleInitProducerIdRequest and TransactionCoordinator.handleInitProducerId:
- null transactional id: any broker answers, always with a new producer id at epoch 0 (a KIP-360
  bump for an idempotent producer is a new id too);
- otherwise only the id's transaction coordinator answers (NOT_COORDINATOR elsewhere), and the
  transaction coordinator decides (mockbroker/coordinators/transactions/): "" is INVALID_REQUEST,
  a timeout outside (0, transaction.max.timeout.ms] INVALID_TRANSACTION_TIMEOUT, the same producer
  id with the next epoch, fencing of an older producer, CONCURRENT_TRANSACTIONS while the previous
  incarnation's open transaction is aborted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, ResourceType, authorized, cluster_authorized
from mockbroker.handlers._txn import coordinator_error, fenced_for
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.init_producer_id import InitProducerIdRequest, InitProducerIdResponse
from mockbroker_protocol.records import NO_PRODUCER_EPOCH, NO_PRODUCER_ID

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.INIT_PRODUCER_ID
VERSIONS = (0, 5)
FENCED_MIN_VERSION = 4


async def handle(ctx: RequestContext, req: InitProducerIdRequest) -> InitProducerIdResponse:
    if ctx.cluster.authorizer is not None and (refused := _unauthorized(ctx, req.transactional_id)):
        return _error(refused)
    no_id, no_epoch = req.producer_id == NO_PRODUCER_ID, req.producer_epoch == NO_PRODUCER_EPOCH
    if no_id != no_epoch:
        return _error(ErrorCode.INVALID_REQUEST)  # KafkaApis: both or neither
    if req.transactional_id is None:
        producer_id = ctx.cluster.producer_ids.generate_producer_id()
        return InitProducerIdResponse(error_code=ErrorCode.NONE, producer_id=producer_id, producer_epoch=0)
    if req.transactional_id and (refused := coordinator_error(ctx, req.transactional_id)):
        return _error(refused)
    expected = None if no_id else (req.producer_id, req.producer_epoch)
    result = ctx.cluster.transactions.init_producer_id(
        ctx.now_ms, req.transactional_id, req.transaction_timeout_ms, expected
    )
    if result.error != ErrorCode.NONE:
        return _error(fenced_for(result.error, ctx.api_version, FENCED_MIN_VERSION))
    return InitProducerIdResponse(
        error_code=ErrorCode.NONE, producer_id=result.producer_id, producer_epoch=result.producer_epoch
    )


def _unauthorized(ctx: RequestContext, transactional_id: str | None) -> ErrorCode | None:
    """KafkaApis.handleInitProducerIdRequest: WRITE on the transactional id; without one,
    IDEMPOTENT_WRITE on the cluster or WRITE on some topic (KIP-679)."""
    authorizer = ctx.cluster.authorizer
    if transactional_id is not None:
        if authorized(ctx, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, transactional_id):
            return None
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    if cluster_authorized(ctx, AclOperation.IDEMPOTENT_WRITE, log_denial=False) or (
        authorizer is not None
        and authorizer.authorize_by_resource_type(ctx.principal, ctx.client_host, AclOperation.WRITE, ResourceType.TOPIC)
    ):
        return None
    return ErrorCode.CLUSTER_AUTHORIZATION_FAILED


def _error(code: ErrorCode) -> InitProducerIdResponse:
    return InitProducerIdResponse(error_code=code, producer_id=NO_PRODUCER_ID, producer_epoch=NO_PRODUCER_EPOCH)
