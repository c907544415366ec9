"""The share groups' server assignor: Kafka's SimpleAssignor (group.share.assignors "simple", KIP-932).

Unlike a consumer group's assignors it may give one partition to several members (records, not
partitions, are what members share). Steps, as in SimpleAssignor.assignHomogenous/Heterogeneous:
1. each member is hashed (Java's String.hashCode) to one of the partitions it subscribes to;
2. the partitions left with no member, neither new nor current, go round-robin over the members
   (by topic, over the members subscribed to it, when subscriptions differ);
3. the current assignment is kept where the member still subscribes to the topic, plus the new.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Sequence

from mockbroker.coordinators.share.group import TopicIdPartition
from mockbroker_protocol.hashing import java_string_hash, to_int32


def _java_remainder(a: int, b: int) -> int:
    """Java's % (the sign of the dividend)."""
    r = abs(a) % b
    return -r if a < 0 else r


def _member_hash_assignment(
    targets: Sequence[TopicIdPartition], member_ids: Iterable[str], out: dict[TopicIdPartition, list[str]]
) -> None:
    if not targets:
        return
    for member_id in member_ids:
        index = abs(_java_remainder(to_int32(java_string_hash(member_id)), len(targets)))
        out.setdefault(targets[index], []).append(member_id)


def _round_robin(member_ids: Sequence[str], targets: Sequence[TopicIdPartition], out: dict[TopicIdPartition, list[str]]) -> None:
    for i, tp in enumerate(targets):
        out.setdefault(tp, []).append(member_ids[i % len(member_ids)])


def _target_partitions(topic_ids: Iterable[uuid.UUID], partitions: Mapping[uuid.UUID, int]) -> list[TopicIdPartition]:
    return [(topic_id, p) for topic_id in topic_ids for p in range(partitions[topic_id])]


def simple_assign(
    subscriptions: Mapping[str, Sequence[uuid.UUID]],
    partitions: Mapping[uuid.UUID, int],
    current: Mapping[str, Iterable[TopicIdPartition]],
) -> dict[str, frozenset[TopicIdPartition]]:
    """SimpleAssignor.assign: member id -> its partitions. ``subscriptions`` holds each member's
    subscribed topic ids that exist (in the order the member named them), ``partitions`` their
    partition counts, ``current`` the target assignment so far. Every member gets an entry."""
    member_ids = list(subscriptions)
    if not member_ids:
        return {}
    current_by_partition: dict[TopicIdPartition, list[str]] = {}
    for member_id, assigned in current.items():
        for tp in assigned:
            current_by_partition.setdefault(tp, []).append(member_id)
    new: dict[TopicIdPartition, list[str]] = {}
    final: dict[str, set[TopicIdPartition]] = {}
    homogeneous = len({frozenset(t) for t in subscriptions.values()}) == 1
    if homogeneous:
        topic_ids = list(dict.fromkeys(subscriptions[member_ids[0]]))
        if not topic_ids:
            return {m: frozenset() for m in member_ids}
        targets = _target_partitions(topic_ids, partitions)
        _member_hash_assignment(targets, member_ids, new)
        unassigned = [tp for tp in targets if tp not in new and tp not in current_by_partition]
        _round_robin(member_ids, unassigned, new)
        subscribed = set(topic_ids)
        for tp, members in current_by_partition.items():
            if tp[0] in subscribed:
                for m in members:
                    if m in subscriptions:
                        final.setdefault(m, set()).add(tp)
    else:
        per_member = {m: _target_partitions(dict.fromkeys(t), partitions) for m, t in subscriptions.items() if t}
        all_targets = list(dict.fromkeys(tp for targets in per_member.values() for tp in targets))
        members_of_topic: dict[uuid.UUID, list[str]] = {}
        for m, targets in per_member.items():
            for topic_id, _ in targets:
                if m not in members_of_topic.setdefault(topic_id, []):
                    members_of_topic[topic_id].append(m)
        for m, targets in per_member.items():
            _member_hash_assignment(targets, [m], new)
        unassigned_by_topic: dict[uuid.UUID, list[TopicIdPartition]] = {}
        for tp in all_targets:
            if tp not in new and tp not in current_by_partition:
                unassigned_by_topic.setdefault(tp[0], []).append(tp)
        for topic_id, targets in unassigned_by_topic.items():
            _round_robin(members_of_topic[topic_id], targets, new)
        for tp, members in current_by_partition.items():
            for m in members:
                if m in members_of_topic.get(tp[0], ()):
                    final.setdefault(m, set()).add(tp)
    for tp, members in new.items():
        for m in members:
            final.setdefault(m, set()).add(tp)
    return {m: frozenset(final.get(m, ())) for m in member_ids}
