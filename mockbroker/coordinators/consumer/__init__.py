"""KIP-848 consumer groups (kafka-group-semantics §10): the group, member and reconciliation model
(``group.py``) and the coordinator (``coordinator.py``: ``ConsumerGroupCoordinator``, put together
from ``heartbeat.py`` (ConsumerGroupHeartbeat) and ``admin.py`` (describe, offsets, admin, control)
over a shared core, ``base.py``, which also declares ``OnlineMigration``)."""
