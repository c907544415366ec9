"""A small client-side assignor plugin for the lab's tests (the README's example): each topic's
partitions dealt in turn over that topic's subscribers, in member id order."""

from __future__ import annotations

from mockbroker_assignors.types import (
    ClusterMetadata,
    GroupAssignment,
    GroupSubscription,
    MemberAssignment,
    RebalanceProtocol,
    TopicPartition,
)


class TopicRoundRobinAssignor:
    name: str = "topic-roundrobin"
    supported_protocols: tuple[RebalanceProtocol, ...] = (RebalanceProtocol.EAGER,)

    def assign(self, cluster: ClusterMetadata, subscriptions: GroupSubscription) -> GroupAssignment:
        owned: dict[str, list[TopicPartition]] = {m: [] for m in sorted(subscriptions)}
        for topic in sorted({t for s in subscriptions.values() for t in s.topics}):
            subscribers = [m for m in owned if topic in subscriptions[m].topics]
            for p in range(cluster.partitions_for(topic)):
                owned[subscribers[p % len(subscribers)]].append(TopicPartition(topic, p))
        return {m: MemberAssignment(tuple(ps)) for m, ps in owned.items()}
