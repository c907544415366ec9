"""KIP-848 consumer groups (kafka-group-semantics §10): the group, member and reconciliation model
(``group.py``) and the coordinator's rules (``coordinator.py``)."""
