"""DescribeTransactions (key 65), v0 (KIP-664): the state of transactional ids.

As TransactionCoordinator.handleDescribeTransactions: each id is answered by its transaction
coordinator (NOT_COORDINATOR on any other broker); an id never initialised is
TRANSACTIONAL_ID_NOT_FOUND; otherwise its state name, timeout, start time (-1 before the first
transaction), producer id and epoch, and the partitions of the ongoing transaction by topic.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker.handlers._txn import coordinator_error
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.describe_transactions import (
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
    TopicData,
    TransactionState,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.DESCRIBE_TRANSACTIONS
VERSIONS = (0, 0)


async def handle(ctx: RequestContext, req: DescribeTransactionsRequest) -> DescribeTransactionsResponse:
    return DescribeTransactionsResponse(transaction_states=[_describe(ctx, tid) for tid in req.transactional_ids])


def _describe(ctx: RequestContext, transactional_id: str) -> TransactionState:
    if not authorized(ctx, AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, transactional_id):
        return TransactionState(error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, transactional_id=transactional_id)
    if refused := coordinator_error(ctx, transactional_id):
        return TransactionState(error_code=refused, transactional_id=transactional_id)
    txn = ctx.cluster.transactions.describe(transactional_id)
    if txn is None:
        return TransactionState(error_code=ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, transactional_id=transactional_id)
    by_topic: dict[str, list[int]] = {}
    for topic, partition in txn.sorted_partitions():
        by_topic.setdefault(topic, []).append(partition)
    return TransactionState(
        error_code=ErrorCode.NONE,
        transactional_id=transactional_id,
        transaction_state=txn.state.value,
        transaction_timeout_ms=txn.txn_timeout_ms,
        transaction_start_time_ms=txn.txn_start_timestamp_ms,
        producer_id=txn.producer_id,
        producer_epoch=txn.producer_epoch,
        topics=[TopicData(topic, partitions) for topic, partitions in by_topic.items()],
    )
