"""InitProducerId (key 22), v0-5: a producer id and epoch for idempotent and transactional producers.

v0 (KIP-98): transactional_id (null: an idempotent producer) and transaction timeout. v2:
flexible. v3 (KIP-360): producer_id and producer_epoch, which an idempotent producer may send to
have its epoch bumped (both or neither: one alone is INVALID_REQUEST). v4: PRODUCER_FENCED may be
returned instead of INVALID_PRODUCER_EPOCH. v5 (KIP-890): transactions v2. v6 (KIP-939,
two-phase commit) is not served.

As TransactionCoordinator.handleInitProducerId:
- null transactional id: any broker answers, always with a new producer id at epoch 0 (a KIP-360
  bump for an idempotent producer is a new id too);
- "" is INVALID_REQUEST; a timeout outside (0, transaction.max.timeout.ms] is
  INVALID_TRANSACTION_TIMEOUT; a broker that is not the id's transaction coordinator answers
  NOT_COORDINATOR;
- otherwise the transactional id keeps its producer id and gets the next epoch (a new id when the
  epoch is exhausted), and a v3+ request naming another id/epoch than the current one is fenced.

Not here yet (it belongs to the transaction coordinator): aborting a transaction left open by the
previous incarnation (Kafka answers CONCURRENT_TRANSACTIONS while it does), transaction timeouts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._coordinator import transaction_coordinator
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.init_producer_id import InitProducerIdRequest, InitProducerIdResponse
from mockbroker_protocol.records import NO_PRODUCER_EPOCH, NO_PRODUCER_ID

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.INIT_PRODUCER_ID
VERSIONS = (0, 5)
# transaction.max.timeout.ms (Kafka's default, 15 minutes).
TRANSACTION_MAX_TIMEOUT_MS = 900_000


async def handle(ctx: RequestContext, req: InitProducerIdRequest) -> InitProducerIdResponse:
    ids = ctx.cluster.producer_ids
    no_id, no_epoch = req.producer_id == NO_PRODUCER_ID, req.producer_epoch == NO_PRODUCER_EPOCH
    if no_id != no_epoch:
        return _error(ErrorCode.INVALID_REQUEST)  # KafkaApis: both or neither
    if req.transactional_id is None:
        return InitProducerIdResponse(error_code=ErrorCode.NONE, producer_id=ids.generate_producer_id(), producer_epoch=0)
    if req.transactional_id == "":
        return _error(ErrorCode.INVALID_REQUEST)
    if not 0 < req.transaction_timeout_ms <= TRANSACTION_MAX_TIMEOUT_MS:
        return _error(ErrorCode.INVALID_TRANSACTION_TIMEOUT)
    if transaction_coordinator(ctx.cluster, req.transactional_id).node_id != ctx.broker.node_id:
        return _error(ErrorCode.NOT_COORDINATOR)
    expected = None if no_id else (req.producer_id, req.producer_epoch)
    error, producer_id, producer_epoch = ids.init_transactional(req.transactional_id, expected)
    if error == ErrorCode.PRODUCER_FENCED and ctx.api_version < 4:
        error = ErrorCode.INVALID_PRODUCER_EPOCH  # older clients do not know PRODUCER_FENCED (KafkaApis)
    if error != ErrorCode.NONE:
        return _error(error)
    return InitProducerIdResponse(error_code=ErrorCode.NONE, producer_id=producer_id, producer_epoch=producer_epoch)


def _error(code: ErrorCode) -> InitProducerIdResponse:
    return InitProducerIdResponse(error_code=code, producer_id=NO_PRODUCER_ID, producer_epoch=NO_PRODUCER_EPOCH)
