"""A server-side (KIP-848) assignor plugin for the consumer-group tests, loaded by the broker as
"tests.integration.kip848_assignor:ModuloAssignor" through group.consumer.assignors.

It deals partition p of each topic to the (p mod n)-th subscriber in member-id order: neither
uniform's nor range's answer, so a test can tell that the broker used it, and deterministic, so
the test can compute what each member must receive."""

from __future__ import annotations

from mockbroker_assignors.types import ClusterMetadata, GroupSpec, TargetAssignment


class ModuloAssignor:
    name = "modulo"

    def assign(self, group: GroupSpec, cluster: ClusterMetadata) -> TargetAssignment:
        result: TargetAssignment = {member_id: {} for member_id in group.members}
        for topic in sorted(cluster.topics):
            subscribers = sorted(m for m, spec in group.members.items() if topic in spec.subscribed_topics)
            if not subscribers:
                continue
            for member_id in subscribers:
                mine = frozenset(
                    p for p in range(cluster.partitions_for(topic)) if subscribers[p % len(subscribers)] == member_id
                )
                if mine:
                    result[member_id][topic] = mine
        return result
