"""Classic groups (kafka-group-semantics §2-§7): the group and member model with its state table
(``group.py``), the coordinator's rules (``coordinator.py``) and the checks of stored SyncGroup
assignments (``assignment_checks.py``)."""
