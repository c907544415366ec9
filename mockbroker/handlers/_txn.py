"""What the transactional handlers share (not a handler module: the underscore keeps it out of
the handler table): where a transactional id's coordinator is, and the error renames KafkaApis
applies for older clients."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._coordinator import transaction_coordinator
from mockbroker_protocol.errors import ErrorCode

if TYPE_CHECKING:
    from mockbroker.dispatch import RequestContext


def is_transaction_coordinator(ctx: RequestContext, transactional_id: str) -> bool:
    """True when the broker ``ctx`` serves leads the id's __transaction_state partition; the
    transactional APIs answer NOT_COORDINATOR everywhere else."""
    return transaction_coordinator(ctx.cluster, transactional_id).node_id == ctx.broker.node_id


def fenced_for(error: ErrorCode, api_version: int, fenced_min_version: int) -> ErrorCode:
    """KafkaApis: clients below ``fenced_min_version`` do not know PRODUCER_FENCED (KIP-588) and
    get INVALID_PRODUCER_EPOCH, which they handle the same way."""
    if error == ErrorCode.PRODUCER_FENCED and api_version < fenced_min_version:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    return error
