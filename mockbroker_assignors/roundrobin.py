"""The "roundrobin" assignor: Java's RoundRobinAssignor, all partitions dealt out to members in turn.

All partitions of all subscribed topics are laid out in one list (topics in Java string order,
then partition number) and dealt to the members in a circle (Java's MemberInfo order: static
members by ``group.instance.id``, then dynamic members by member id). A member not subscribed to
the partition's topic is skipped, and the circle goes on from the member after the one that took
the partition. With identical subscriptions the counts differ by at most one; with different
subscriptions the skipping can pile partitions onto the widest subscriber. Not rack-aware:
KIP-881 covers only the range and sticky assignors.
"""

from __future__ import annotations

from mockbroker_assignors.range import member_order, subscribed_topic_sizes
from mockbroker_assignors.types import (
    ClusterMetadata,
    GroupAssignment,
    GroupSubscription,
    MemberAssignment,
    RebalanceProtocol,
    TopicPartition,
)

__all__ = ["RoundRobinAssignor"]


class RoundRobinAssignor:
    """Java's RoundRobinAssignor (protocol name "roundrobin", EAGER).

    Worked example (the Java javadoc's): members C0 and C1, topics t0 and t1 with three partitions
    each. The six partitions t0p0, t0p1, t0p2, t1p0, t1p1, t1p2 go to C0, C1, C0, C1, C0, C1:

    >>> from mockbroker_assignors.types import ClusterMetadata, Subscription
    >>> both = Subscription(topics=("t0", "t1"))
    >>> result = RoundRobinAssignor().assign(ClusterMetadata.of({"t0": 3, "t1": 3}), {"C0": both, "C1": both})
    >>> [f"{tp.topic}p{tp.partition}" for tp in result["C0"].partitions]
    ['t0p0', 't0p2', 't1p1']
    >>> [f"{tp.topic}p{tp.partition}" for tp in result["C1"].partitions]
    ['t0p1', 't1p0', 't1p2']

    Different subscriptions: t0, t1, t2 with 1, 2 and 3 partitions; C0 takes [t0], C1 [t0, t1],
    C2 [t0, t1, t2]. t0p0 goes to C0, t1p0 to C1 (its turn), t1p1 to C2; then the turn is back
    at C0, but C0 and C1 do not take t2, so all three t2 partitions land on C2:

    >>> cluster = ClusterMetadata.of({"t0": 1, "t1": 2, "t2": 3})
    >>> result = RoundRobinAssignor().assign(cluster, {
    ...     "C0": Subscription(topics=("t0",)),
    ...     "C1": Subscription(topics=("t0", "t1")),
    ...     "C2": Subscription(topics=("t0", "t1", "t2")),
    ... })
    >>> {m: [f"{tp.topic}p{tp.partition}" for tp in a.partitions] for m, a in result.items()}
    {'C0': ['t0p0'], 'C1': ['t1p0'], 'C2': ['t1p1', 't2p0', 't2p1', 't2p2']}

    Every member of ``subscriptions`` is in the result, in Java's member order; partitions come in
    the order they were dealt, which is topic then partition order, as in Java.
    """

    name: str = "roundrobin"
    supported_protocols: tuple[RebalanceProtocol, ...] = (RebalanceProtocol.EAGER,)

    def __repr__(self) -> str:
        return "RoundRobinAssignor()"

    def assign(self, cluster: ClusterMetadata, subscriptions: GroupSubscription) -> GroupAssignment:
        members = member_order(subscriptions)
        topics_of = {m: frozenset(subscriptions[m].topics) for m in members}
        assigned: dict[str, list[TopicPartition]] = {m: [] for m in members}
        turn = 0  # index of the member Java's CircularIterator would peek at next
        # subscribed_topic_sizes yields topics in Java string order (RoundRobinAssignor's TreeSet),
        # and each has a subscriber, so the skipping loop below always ends.
        for topic, count in subscribed_topic_sizes(cluster, subscriptions).items():
            for partition in range(count):
                while topic not in topics_of[members[turn]]:
                    turn = (turn + 1) % len(members)
                assigned[members[turn]].append(TopicPartition(topic, partition))
                turn = (turn + 1) % len(members)
        return {m: MemberAssignment(tuple(assigned[m])) for m in members}
