"""Transactions (KIP-98), sans-I/O: the transaction coordinator beside the group coordinators.

- ``metadata.py``: Kafka's TransactionState and TransactionMetadata, and the transition table.
- ``coordinator.py``: ``TransactionCoordinator`` (InitProducerId for transactional ids,
  AddPartitionsToTxn and its KIP-890 verification, AddOffsetsToTxn, EndTxn, timeouts, the admin
  views), the one door ``_transition``, and the ``TxnMarkers`` effect.
- ``markers.py``: ``LogMarkerWriter``, which writes a completed transaction's markers to the
  partitions' logs and completes its offsets in the group coordinator.

The cluster makes the coordinator on first use (``MockCluster.transactions``).
"""
