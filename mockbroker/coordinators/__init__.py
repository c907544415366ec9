"""Group coordination, sans-I/O: one router over one package per kind of group, and the offsets store.

Layout (a new kind of group is a new folder beside these):

- ``router.py``: ``GroupCoordinator``, the one object the handlers, the control API and the cluster
  talk to (``MockCluster.groups``). It routes each request by group type (a group id names a
  classic group or a consumer group, never both) and answers the APIs that span kinds:
  DescribeGroups, ListGroups, DeleteGroups, the offset APIs and the cleanup cycle (Kafka's
  GroupCoordinatorService and GroupCoordinatorShard).
- ``classic/``: the classic group state machine (JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
  static membership, the join/sync/session timers; kafka-group-semantics §2-§7) and the checks of
  the assignments SyncGroup stores (``classic/assignment_checks.py``, which read classic groups only).
- ``consumer/``: KIP-848 consumer groups (ConsumerGroupHeartbeat, ConsumerGroupDescribe, §10).
- ``migration/``: classic members inside consumer groups and online upgrade/downgrade (§10.8).
  It is the only package that knows both kinds; the consumer coordinator reaches it through the
  ``OnlineMigration`` Protocol it declares (consumer/base.py), wired by the router, so no
  package imports one that imports it back.
- ``offsets/``: the committed-offsets store and Kafka's OffsetMetadataManager rules (OffsetCommit,
  OffsetFetch, OffsetDelete, TxnOffsetCommit, retention and expiry, §8.1-§8.4).
- ``parked.py``: a response a later request or a timer completes (JoinGroup, SyncGroup): kept at
  the top because it is no kind's own (the handlers await it, and any coordinator may park).
- ``errors.py``: ``GroupError``.

One error style, Kafka's: a rule that refuses a request raises ``GroupError(code, message)``
where it is checked (Java's ``throw new XxxException`` in GroupMetadataManager), and the
coordinator's public entry point (what the router and the handlers call) catches it and answers
the code, with the message where the response has a field for it. Public entry points therefore
return responses or codes and never raise ``GroupError``; anything else raised is our own bug
and fails loudly (``IllegalStateTransition``, ``AssertionError``). Exceptions rather than returned
codes because the rules nest deeply (Kafka's throwIf* chains) and ConsumerGroupHeartbeat answers
a message with the code; a ``try`` costs nothing on CPython 3.11 when nothing is raised, so the
hot Heartbeat path pays nothing for it. Answers that carry an error code but are a step of the
protocol rather than a refusal stay answers: MEMBER_ID_REQUIRED (the KIP-394 handshake hands out a
member id), and the parked JoinGroups and SyncGroups of *other* members completed with
REBALANCE_IN_PROGRESS, UNKNOWN_MEMBER_ID or FENCED_INSTANCE_ID when a rebalance, a removal or a
static replacement ends their wait. Checks a handler makes before NOT_COORDINATOR
(``check_join_request``, ``check_sync_request``, ``check_consumer_group_heartbeat_request``) are
public entries too: they return the code or the error answer.

The names below are imported on first use (PEP 562), not with the package: a broker process that
has not yet seen a group request does not pay for the coordinators and the assignors.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mockbroker.coordinators.errors import GroupError
    from mockbroker.coordinators.parked import Parked, wait
    from mockbroker.coordinators.router import GroupCoordinator

_EXPORTS = {
    "GroupCoordinator": "mockbroker.coordinators.router",
    "GroupError": "mockbroker.coordinators.errors",
    "Parked": "mockbroker.coordinators.parked",
    "wait": "mockbroker.coordinators.parked",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = ["GroupCoordinator", "GroupError", "Parked", "wait"]
