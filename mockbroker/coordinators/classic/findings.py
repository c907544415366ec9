"""What an assignment check finds (Finding) and the kinds of finding: a leaf both the classic group
(``ClassicGroup.findings``) and the checks (assignment_checks.py) import, so neither imports the other."""

from __future__ import annotations

from dataclasses import dataclass

from mockbroker_assignors.types import TopicPartition

# Finding kinds beyond mockbroker_assignors.validation's (unknown_member, duplicate, unknown_topic,
# out_of_range, not_subscribed, multiple_owners, unassigned).
UNDECODABLE_ASSIGNMENT = "undecodable_assignment"
UNDECODABLE_SUBSCRIPTION = "undecodable_subscription"
REVOKE_BEFORE_REASSIGN = "revoke_before_reassign"
REFERENCE_DIVERGENCE = "reference_divergence"
# Every partition of a subscribed topic left unassigned by the leader: what a leader whose metadata
# does not have the topic yet sends (Java's AbstractPartitionAssignor skips topics without metadata,
# and the client rejoins once its metadata has them; kafka-python's first generation does this
# routinely). Legal, so informational; a topic assigned only in part stays ``unassigned``.
TOPIC_NOT_ASSIGNED = "topic_not_assigned"
INFORMATIONAL_KINDS = frozenset({REFERENCE_DIVERGENCE, TOPIC_NOT_ASSIGNED})


@dataclass(frozen=True, slots=True)
class Finding:
    """Something wrong (or, for ``reference_divergence``, different from Java) in an assignment
    the coordinator stored. ``source`` is "leader" (the leader's SyncGroup) or "broker" (a
    broker-side assignor's result); ``member_id`` is None for a partition's problem (owned
    twice, or by nobody)."""

    kind: str
    group_id: str
    generation_id: int
    member_id: str | None
    topic_partitions: tuple[TopicPartition, ...]
    message: str
    protocol_name: str | None = None
    source: str = "leader"

    @property
    def informational(self) -> bool:
        return self.kind in INFORMATIONAL_KINDS

    def __str__(self) -> str:
        return f"group {self.group_id} generation {self.generation_id} ({self.source}, {self.kind}): {self.message}"
