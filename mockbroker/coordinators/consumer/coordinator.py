"""The KIP-848 consumer-group coordinator, sans-I/O: ConsumerGroupHeartbeat, ConsumerGroupDescribe,
and the consumer-group side of the offset and admin group APIs.

Follows Kafka's GroupMetadataManager (consumerGroupHeartbeat, consumerGroupLeave, ...) rule by rule,
as kafka-group-semantics §10 describes them; method names are Kafka's in snake_case. Inputs are
request fields and ``now_ms``; outputs are response values. Timers (session timeout, rebalance
timeout) are scheduled on the cluster's ``Timers`` and call back with the time they fired.

The rules are split by API over a shared core (consumer/base.py: state, doors, target assignment,
reconciliation, fencing and timers): heartbeat.py (ConsumerGroupHeartbeat) and admin.py
(describe, offsets, admin and control entries). Every change of group state goes through one
door, ``update_state``, which recomputes the state from the epochs and members
(ConsumerGroup.maybeUpdateGroupState) and records the transition with its reason; every change of a member's assignment goes through ``_set_member_assignment``
(docs/events.md, "Consumer group events").

The group epoch is bumped by a member joining, leaving or being fenced, by a change of subscribed
names or regex or of preferred assignor, and by a change of the subscribed topics' metadata
(§10.2). Deliberate differences from Kafka, all invisible on the wire except where said:
- The target assignment is computed synchronously in the heartbeat that finds the group epoch
  ahead (Kafka may defer it by group.consumer.assignment.interval.ms or run it off-thread).
- Subscription metadata is recomputed on every heartbeat. The group's regexes are resolved
  again by a ConsumerGroupHeartbeat when Kafka's maybeUpdateRegularExpressions would (a regex
  not resolved yet, the topics changed, the last resolution older than
  group.consumer.regex.refresh.interval.ms's 10 minutes), with that member's DESCRIBE ACLs, but
  in the heartbeat itself: Kafka resolves off-thread, at most every 10 s, so a new topic
  matching a regex is picked up here at the next heartbeat rather than seconds later.
- Regexes are Python ``re`` patterns matched in full against topic names (RE2J's ``matches()``);
  constructs RE2J does not have (look-around, back-references, conditionals, possessive and
  atomic groups) are refused with INVALID_REGULAR_EXPRESSION, as RE2J would refuse them. Python
  and RE2J still differ on a few escapes and flags (``\\Z``, ``(?u)``, POSIX classes such as
  ``[[:alpha:]]``, which RE2J knows and ``re`` does not).
- Mixed groups (§10.8) are served by ``mockbroker.coordinators.migration.mixed``: classic
  JoinGroup, SyncGroup, Heartbeat and LeaveGroup to a non-empty consumer group (the router sends
  them there), and online upgrade (asked in ``_get_or_maybe_create_consumer_group``) and downgrade
  (asked in ``consumer_group_fence_members``) through ``migration`` (``OnlineMigration``), as
  ``group.consumer.migration.policy`` allows. An empty classic group is replaced on an epoch-0
  heartbeat, and an empty consumer group by a classic group on a classic JoinGroup, as in Kafka.
  Not served: the downgrade Kafka makes when a classic static member replaces the last
  consumer-protocol static member under the same instance id (the classic member joins the
  consumer group instead).
- Ties in the preferred assignor vote go to the name asked for first (Java: HashMap order).
"""

from __future__ import annotations

from mockbroker.coordinators.consumer.admin import AdminRules
from mockbroker.coordinators.consumer.base import (
    OnlineMigration,
    TopicFilter,
    TopicView,
    join_key,
    kafka_uuid_string,
    known_static_member,
    sync_key,
    validate_regex,
)
from mockbroker.coordinators.consumer.heartbeat import HeartbeatRules

__all__ = [
    "ConsumerGroupCoordinator",
    "OnlineMigration",
    "TopicFilter",
    "TopicView",
    "join_key",
    "kafka_uuid_string",
    "known_static_member",
    "sync_key",
    "validate_regex",
]


class ConsumerGroupCoordinator(HeartbeatRules, AdminRules):
    """Owns every KIP-848 consumer group (``groups``). Shares the timers, the event log
    (``services``), the offsets (``offsets``) and the group-id namespace with the other kinds:
    a group id names a classic group or a consumer group, never both (``migration`` answers
    for the classic side, wired in by the router)."""
