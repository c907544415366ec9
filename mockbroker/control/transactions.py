"""The control API's transactions: the transaction coordinator's view of every transactional id,
aborting one from outside, and its faults (the coordinator moved to another broker, or loading).

Kafka's admin tools read the same through DescribeTransactions and ListTransactions (KIP-664) and
abort a hanging transaction by writing its markers (``kafka-transactions --abort``); here the
coordinator aborts it itself, fencing the producer as a timeout does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.control.base import ControlBase
from mockbroker.control.errors import ControlError, NotFound
from mockbroker.control.snapshots import TransactionSnapshot
from mockbroker_protocol.errors import ErrorCode

if TYPE_CHECKING:
    from mockbroker.coordinators.transactions.metadata import TransactionMetadata


class TransactionControl(ControlBase):
    async def transactions(self, state: str | None = None) -> dict[str, TransactionSnapshot]:
        """Every transactional id the cluster knows (in any state, or only in ``state``, by
        Kafka's state name: Empty, Ongoing, PrepareCommit, ...), by id."""
        return {
            tid: self._transaction_snapshot(txn)
            for tid, txn in sorted(self.cluster.transactions.transactions.items())
            if state is None or txn.state.value == state
        }

    async def describe_transaction(self, transactional_id: str) -> TransactionSnapshot | None:
        txn = self.cluster.transactions.describe(transactional_id)
        return None if txn is None else self._transaction_snapshot(txn)

    async def abort_transaction(
        self, transactional_id: str, reason: str = "aborted by the test (control.abort_transaction)"
    ) -> TransactionSnapshot:
        """Abort the id's ongoing transaction now: its producer is fenced (epoch + 1, its next
        request PRODUCER_FENCED, as after a timeout) and ABORT markers are written to its
        partitions. NotFound for an unknown id, ControlError when no transaction is ongoing."""
        now = self.cluster.clock.now_ms()
        error = self.cluster.transactions.abort_transaction(now, transactional_id)
        if error == ErrorCode.TRANSACTIONAL_ID_NOT_FOUND:
            raise NotFound(f"no transactional id {transactional_id!r}")
        txn = self.cluster.transactions.describe(transactional_id)
        assert txn is not None
        if error != ErrorCode.NONE:
            raise ControlError(f"transaction {transactional_id!r} is {txn.state.value}, not Ongoing: nothing to abort")
        self._record("control.transaction_aborted", reason=reason, transactional_id=transactional_id,
                     producer_id=txn.producer_id, producer_epoch=txn.producer_epoch)  # fmt: skip
        return self._transaction_snapshot(txn)

    async def transaction_coordinator(self, transactional_id: str) -> int:
        """The broker coordinating ``transactional_id`` (what FindCoordinator key type 1 answers)."""
        return self.cluster.transaction_coordinator_for(transactional_id).node_id

    async def move_transaction_coordinator(self, transactional_id: str, broker_id: int) -> int:
        """Make ``broker_id`` the id's transaction coordinator; returns the previous one. The
        transaction's state stays; requests to the old coordinator get NOT_COORDINATOR, so the
        producer looks it up again (FindCoordinator)."""
        self._broker(broker_id)
        if broker_id in self.cluster.down_brokers:
            raise ControlError(f"broker {broker_id} is down")
        previous = self.cluster.transaction_coordinator_for(transactional_id).node_id
        self.cluster.transaction_coordinator_moves[transactional_id] = broker_id
        self._record(
            "control.transaction_coordinator_moved", broker_id=broker_id, transactional_id=transactional_id,
            reason=f"transaction coordinator of {transactional_id} moved from broker {previous} to {broker_id}",
            previous=previous,
        )  # fmt: skip
        return previous

    async def load_transaction_coordinator(self, transactional_id: str, duration_ms: int) -> int:
        """Make the id's coordinator answer COORDINATOR_LOAD_IN_PROGRESS (InitProducerId,
        AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, DescribeTransactions; ListTransactions on
        its broker) for ``duration_ms`` on the cluster clock, as Kafka's does while it loads its
        __transaction_state partition after a move; producers back off and retry. 0 ends it.
        Returns until when (ms)."""
        if duration_ms < 0:
            raise ControlError(f"duration_ms must be at least 0, not {duration_ms}")
        until = self.cluster.clock.now_ms() + duration_ms
        if duration_ms == 0:
            self.cluster.transaction_loading_until_ms.pop(transactional_id, None)
        else:
            self.cluster.transaction_loading_until_ms[transactional_id] = until
        self._record(
            "control.transaction_coordinator_loading", transactional_id=transactional_id,
            broker_id=self.cluster.transaction_coordinator_for(transactional_id).node_id,
            reason=f"transaction coordinator of {transactional_id} loading for {duration_ms} ms", until_ms=until,
        )  # fmt: skip
        return until

    def _transaction_snapshot(self, txn: TransactionMetadata) -> TransactionSnapshot:
        return TransactionSnapshot(
            transactional_id=txn.transactional_id,
            state=txn.state.value,
            producer_id=txn.producer_id,
            producer_epoch=txn.producer_epoch,
            transaction_timeout_ms=txn.txn_timeout_ms,
            start_time_ms=txn.txn_start_timestamp_ms,
            last_update_time_ms=txn.txn_last_update_timestamp_ms,
            partitions=tuple(txn.sorted_partitions()),
            coordinator=self.cluster.transaction_coordinator_for(txn.transactional_id).node_id,
        )
