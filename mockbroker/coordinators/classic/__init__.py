"""Classic groups (kafka-group-semantics §2-§7): the group and member model with its state table
(``group.py``), the coordinator (``coordinator.py``: ``ClassicGroupCoordinator``, put together
from one module of rules per API over a shared core: ``base.py``, ``join.py``, ``sync.py``,
``heartbeat.py``, ``leave.py``, ``admin.py``), and the checks of stored SyncGroup assignments
(``assignment_checks.py``, ``findings.py``)."""
