"""ListTransactions (key 66), v0-2 (KIP-664): the transactions a broker coordinates.

v0: filters by state name and producer id (an unknown state name is listed back in
unknown_state_filters). v1 (KIP-994): duration_filter, only transactions running longer than that
many ms. v2 (KIP-1152): transactional_id_pattern, a regular expression the whole id must match
(INVALID_REGULAR_EXPRESSION when it is not one).
Each broker lists the ids whose __transaction_state partition it leads
(TransactionStateManager.listTransactionStates), so an admin client asks every broker.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, ResourceType, authorized, cluster_authorized
from mockbroker.handlers._txn import is_transaction_coordinator
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.list_transactions import (
    ListTransactionsRequest,
    ListTransactionsResponse,
    TransactionState,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.LIST_TRANSACTIONS
VERSIONS = (0, 2)


async def handle(ctx: RequestContext, req: ListTransactionsRequest) -> ListTransactionsResponse:
    loading = ctx.cluster.transaction_loading_until_ms
    if loading and any(until > ctx.now_ms and is_transaction_coordinator(ctx, t) for t, until in loading.items()):
        # TransactionStateManager.listTransactionStates: nothing while a partition loads.
        return ListTransactionsResponse(error_code=ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
    pattern = req.transactional_id_pattern or None
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error:
            return ListTransactionsResponse(error_code=ErrorCode.INVALID_REGULAR_EXPRESSION)
    # KafkaApis.handleListTransactionsRequest: without DESCRIBE on the cluster, only the ids it may describe
    everything = ctx.cluster.authorizer is None or cluster_authorized(ctx, AclOperation.DESCRIBE, log_denial=False)

    def describable(tid: str) -> bool:
        return everything or authorized(ctx, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, tid, log_denial=False)

    found, unknown = ctx.cluster.transactions.list_transactions(
        ctx.now_ms,
        states=req.state_filters,
        producer_ids=req.producer_id_filters,
        duration_ms=req.duration_filter,
        pattern=pattern,
        include=lambda tid: is_transaction_coordinator(ctx, tid) and describable(tid),
    )
    return ListTransactionsResponse(
        error_code=ErrorCode.NONE,
        unknown_state_filters=unknown,
        transaction_states=[TransactionState(t.transactional_id, t.producer_id, t.state.value) for t in found],
    )
