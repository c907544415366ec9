"""The KIP-848 server-side ``range`` assignor: contiguous ranges per topic, like the Java broker's.

A port of the group coordinator's ``RangeAssignor`` (``org.apache.kafka.coordinator.group.assignor``)
as rewritten by KAFKA-16944 (apache/kafka#16504, Kafka 3.9) and unchanged on trunk since. Not to be
confused with the client-side ``range`` of classic groups (``mockbroker_assignors.range``), which shares the
name and the idea but not the member order.

The rules:

* Members are sorted once: static members first, by ``group.instance.id``, then dynamic members by
  member id (Java's ``sortMemberIds``; ``String.compareTo``, i.e. UTF-16 order). Putting static
  members first keeps their ranges across restarts, which change their member id but not their
  instance id (the javadoc's rolling-bounce example; semantics doc §10.2).
* Each topic is split among its subscribers in that order: with ``P`` partitions and ``N``
  subscribers each gets ``P // N`` contiguous partitions and the first ``P % N`` one more. When
  every member subscribes to the same topics (``GroupSpec.homogeneous``) all members are the
  subscribers of every topic, so members get the same partition numbers of topics with equal
  partition counts: co-partitioning, for joins.
* It is not sticky: the current assignment (``MemberSpec.assigned``) is not read, and adding or
  removing a member shifts the ranges of the members after it.

Racks are not used (KAFKA-16694 removed the server-side assignors' rack awareness in Kafka 3.8).
Topics a member subscribes to that the cluster metadata lacks are ignored, as the broker does
(``TopicIds`` skips names it cannot resolve; Java's assignor only throws for an unknown topic id,
which the broker never passes). Every member is in the result, with ``{}`` when it gets nothing, in the sorted order.

Worked example (the Java javadoc's). M0 and M1 subscribe to T1 and T2, 3 partitions each; M0 sorts
first, gets 3 // 2 = 1 partition plus the one extra of each topic, M1 the rest:

>>> from mockbroker_assignors.types import ClusterMetadata, GroupSpec, MemberSpec
>>> cluster = ClusterMetadata.of({"T1": 3, "T2": 3})
>>> both = frozenset({"T1", "T2"})
>>> group = GroupSpec({m: MemberSpec(m, both) for m in ("M1", "M0")})
>>> for member, topics in ServerRangeAssignor().assign(group, cluster).items():
...     print(member, {t: sorted(ps) for t, ps in topics.items()})
M0 {'T1': [0, 1], 'T2': [0, 1]}
M1 {'T1': [2], 'T2': [2]}

After a rolling bounce the members are M3 (was M0) and M2 (was M1): by member id M2 now sorts
first and the ranges swap. With instance ids I0 and I1 they do not:

>>> group = GroupSpec({
...     "M3": MemberSpec("M3", both, instance_id="I0"),
...     "M2": MemberSpec("M2", both, instance_id="I1"),
... })
>>> for member, topics in ServerRangeAssignor().assign(group, cluster).items():
...     print(member, {t: sorted(ps) for t, ps in topics.items()})
M3 {'T1': [0, 1], 'T2': [0, 1]}
M2 {'T1': [2], 'T2': [2]}

Cost: O(M log M + T * M) plus the size of the result.
"""

from __future__ import annotations

from mockbroker_assignors.types import ClusterMetadata, GroupSpec, TargetAssignment

__all__ = ["ServerRangeAssignor", "sort_member_ids"]


def _utf16(value: str) -> bytes:
    """A sort key giving ``String.compareTo`` order (UTF-16 code units, not code points)."""
    return value.encode("utf-16-be", "surrogatepass")


def _member_key(member_id: str, instance_id: str | None) -> tuple[int, bytes, bytes]:
    if instance_id is not None:
        return (0, _utf16(instance_id), _utf16(member_id))
    return (1, _utf16(member_id), b"")


def sort_member_ids(group: GroupSpec) -> list[str]:
    """Java's ``RangeAssignor.sortMemberIds``: static members (with an instance id) first, by
    instance id, then the others by member id. Two members with one instance id (which the broker
    never has) fall back to member id order.

    >>> from mockbroker_assignors.types import MemberSpec
    >>> sort_member_ids(GroupSpec({
    ...     "b": MemberSpec("b", frozenset()), "z": MemberSpec("z", frozenset(), instance_id="i2"),
    ...     "a": MemberSpec("a", frozenset()), "y": MemberSpec("y", frozenset(), instance_id="i1"),
    ... }))
    ['y', 'z', 'a', 'b']
    """
    members = group.members
    return sorted(members, key=lambda m: _member_key(m, members[m].instance_id))


class ServerRangeAssignor:
    """KIP-848 ``range``: Java's server-side ``RangeAssignor`` (see the module docstring for the
    rules, the Kafka version followed and a worked example)."""

    name = "range"

    def assign(self, group: GroupSpec, cluster: ClusterMetadata) -> TargetAssignment:
        if not group.members:
            return {}
        specs = group.members
        order = sort_member_ids(group)
        result: TargetAssignment = {m: {} for m in order}

        # Subscribers of each known topic, in the sorted member order. A homogeneous group
        # (assignHomogeneousGroup) takes the first member's topics, with every member subscribed.
        subscribers: dict[str, list[str]] = {}
        if group.homogeneous:
            for topic in specs[order[0]].subscribed_topics:
                if topic in cluster.topics:
                    subscribers[topic] = order
        else:
            for member in order:
                for topic in specs[member].subscribed_topics:
                    if topic in cluster.topics:
                        subscribers.setdefault(topic, []).append(member)

        for topic in sorted(subscribers):
            members = subscribers[topic]
            partitions = max(0, cluster.topics[topic].num_partitions)
            # addPartitionsToAssignment: a minimum quota each, one extra for the first P % N.
            quota, extra = divmod(partitions, len(members))
            start = 0
            for member in members:
                if start >= partitions:
                    break  # The rest get nothing of this topic (more subscribers than partitions).
                end = min(start + quota + (1 if extra > 0 else 0), partitions)
                if extra > 0:
                    extra -= 1
                result[member][topic] = frozenset(range(start, end))
                start = end
        return result

