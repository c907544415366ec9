"""Committed offsets (kafka-group-semantics §8.1-§8.4): the store (``store.py``) and the rules of
OffsetCommit, OffsetFetch, OffsetDelete, TxnOffsetCommit and offset expiry (``manager.py``)."""
