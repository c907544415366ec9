"""Assignment checks: what is wrong with a classic group's assignment, as readable findings.

``check_assignment`` is what the broker runs on a leader's SyncGroup assignment and what the
assignor tests run on every result. The rules are the ones every Java assignor keeps (and that
the Java consumer relies on): each partition of each subscribed topic is owned by exactly one
member, only by a member subscribed to its topic, only by members of the group, and only real
partitions of known topics are handed out.

A member missing from the assignment is not a finding: the group coordinator gives such members
an empty assignment (GroupMetadataManager / classic group SyncGroup: "missing" members get an
empty byte array), so it is legal, if unusual, for a leader to leave them out.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from mockbroker_assignors.types import ClusterMetadata, GroupSubscription, MemberAssignment, TopicPartition

__all__ = ["Problem", "check_assignment", "find_problems"]

# Problem kinds, one per rule.
UNKNOWN_MEMBER = "unknown_member"
DUPLICATE = "duplicate"
UNKNOWN_TOPIC = "unknown_topic"
OUT_OF_RANGE = "out_of_range"
NOT_SUBSCRIBED = "not_subscribed"
MULTIPLE_OWNERS = "multiple_owners"
UNASSIGNED = "unassigned"


@dataclass(frozen=True, slots=True)
class Problem:
    """One broken rule: its ``kind`` (the constants above), the member at fault (None for a
    partition's problem: owned twice or by nobody), the partitions concerned, and a sentence."""

    kind: str
    member: str | None
    partitions: tuple[TopicPartition, ...]
    message: str


def _tp(tp: TopicPartition) -> str:
    return f"{tp.topic}-{tp.partition}"  # Java's TopicPartition.toString


def check_assignment(
    cluster: ClusterMetadata,
    subscriptions: GroupSubscription,
    assignment: Mapping[str, MemberAssignment],
) -> list[str]:
    """Findings about ``assignment`` of the group ``subscriptions`` over ``cluster``; empty if sound.

    >>> from mockbroker_assignors.types import ClusterMetadata, MemberAssignment, Subscription, TopicPartition
    >>> cluster = ClusterMetadata.of({"t0": 2, "t1": 1})
    >>> subs = {"a": Subscription(topics=("t0",)), "b": Subscription(topics=("t0", "t1"))}
    >>> check_assignment(cluster, subs, {
    ...     "a": MemberAssignment((TopicPartition("t0", 0), TopicPartition("t1", 0))),
    ...     "b": MemberAssignment((TopicPartition("t0", 0), TopicPartition("t0", 5))),
    ... })  # doctest: +NORMALIZE_WHITESPACE
    ['member a owns t1-0 but is not subscribed to t1',
     'member b owns t0-5, out of range: t0 has 2 partitions',
     't0-0 is owned by 2 members: a, b',
     't0-1 is not assigned (subscribed by a, b)']

    Findings come in a fixed order: per member (sorted by id) what it must not own or lists
    twice, then per partition (by topic, then number) double ownership and partitions nobody owns.
    """
    return [p.message for p in find_problems(cluster, subscriptions, assignment)]


def find_problems(
    cluster: ClusterMetadata,
    subscriptions: GroupSubscription,
    assignment: Mapping[str, MemberAssignment],
    *,
    may_be_unassigned: Collection[TopicPartition] = (),
) -> list[Problem]:
    """``check_assignment`` as structured problems, in the same order. Partitions in
    ``may_be_unassigned`` are not reported when nobody owns them (a cooperative assignor leaves
    partitions out while their previous owner revokes them, KIP-429)."""
    findings: list[Problem] = []
    owners: dict[TopicPartition, list[str]] = {}

    for member in sorted(assignment):
        partitions = assignment[member].partitions
        subscription = subscriptions.get(member)
        if subscription is None:
            findings.append(Problem(
                UNKNOWN_MEMBER, member, tuple(partitions),
                f"unknown member {member} was assigned {len(partitions)} partition(s)",
            ))  # fmt: skip
        topics = frozenset(subscription.topics) if subscription is not None else frozenset()
        counts: dict[TopicPartition, int] = {}
        for tp in partitions:
            counts[tp] = counts.get(tp, 0) + 1
        for tp in sorted(counts):
            if counts[tp] > 1:
                findings.append(Problem(DUPLICATE, member, (tp,), f"member {member} lists {_tp(tp)} {counts[tp]} times"))
            size = cluster.topics[tp.topic].num_partitions if tp.topic in cluster.topics else None
            if size is None:
                findings.append(Problem(UNKNOWN_TOPIC, member, (tp,), f"member {member} owns {_tp(tp)} of unknown topic {tp.topic}"))
                continue
            if not 0 <= tp.partition < size:
                findings.append(Problem(
                    OUT_OF_RANGE, member, (tp,), f"member {member} owns {_tp(tp)}, out of range: {tp.topic} has {size} partitions"
                ))  # fmt: skip
                continue
            if subscription is not None and tp.topic not in topics:
                findings.append(Problem(
                    NOT_SUBSCRIBED, member, (tp,), f"member {member} owns {_tp(tp)} but is not subscribed to {tp.topic}"
                ))  # fmt: skip
            owners.setdefault(tp, []).append(member)

    subscribers: dict[str, list[str]] = {}
    for member in sorted(subscriptions):
        for topic in dict.fromkeys(subscriptions[member].topics):
            subscribers.setdefault(topic, []).append(member)

    wanted = {
        TopicPartition(topic, p)
        for topic in subscribers
        if topic in cluster.topics
        for p in range(cluster.topics[topic].num_partitions)
    }
    for tp in sorted(wanted | owners.keys()):
        holders = owners.get(tp, [])
        if len(holders) > 1:
            findings.append(Problem(
                MULTIPLE_OWNERS, None, (tp,), f"{_tp(tp)} is owned by {len(holders)} members: {', '.join(holders)}"
            ))  # fmt: skip
        elif not holders and tp not in may_be_unassigned:
            findings.append(Problem(
                UNASSIGNED, None, (tp,), f"{_tp(tp)} is not assigned (subscribed by {', '.join(subscribers[tp.topic])})"
            ))  # fmt: skip
    return findings
