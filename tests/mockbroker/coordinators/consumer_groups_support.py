"""Pure KIP-848 coordinator tests: a MockCluster that is never started, on a ManualClock.

``ConsumerHarness`` sends ConsumerGroupHeartbeats to ``cluster.groups.consumer`` with short
builders (``cg_join``, ``cg_heartbeat``, ``cg_leave``; the classic
builders of Harness stay available) and reads the group back through the coordinator's
``snapshot``, so a test reads as a sequence of heartbeats and time steps. Topics are created on
the cluster; partitions are written as ``{"t": [0, 1]}`` and translated to and from topic ids.
"""

from __future__ import annotations

from typing import Any

from mockbroker.coordinators.consumer.coordinator import TopicFilter
from mockbroker.coordinators.consumer.group import ConsumerGroup
from mockbroker_protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatRequestTopicPartitions,
    ConsumerGroupHeartbeatResponse,
)
from tests.mockbroker.coordinators.groups_support import Harness

REBALANCE_TIMEOUT = 30_000
Parts = dict[str, list[int]]


class ConsumerHarness(Harness):
    def __init__(self, topics: dict[str, int] | None = None, **settings: Any) -> None:
        super().__init__(**settings)
        self.consumer = self.groups.consumer
        # What the next heartbeats' principal may DESCRIBE (None: no authorizer), as the handler
        # hands it in (handlers/_authz.describable_topics).
        self.describable: TopicFilter | None = None
        for name, count in (topics if topics is not None else {"t": 6}).items():
            self.cluster.create_topic(name, count)

    # -- looking ------------------------------------------------------------------------------

    def cgroup(self, group_id: str = "g") -> ConsumerGroup:
        return self.consumer.groups[group_id]

    def snap(self, group_id: str = "g") -> dict[str, Any]:
        snap = self.consumer.snapshot(group_id)
        assert snap is not None, f"no consumer group {group_id}"
        return snap

    def member(self, member_id: str, group_id: str = "g") -> dict[str, Any]:
        return next(m for m in self.snap(group_id)["members"] if m["member_id"] == member_id)

    def owned(self, response: ConsumerGroupHeartbeatResponse) -> Parts | None:
        """The assignment in a response, by topic name (None: no assignment sent)."""
        if response.assignment is None:
            return None
        names = {t.topic_id: t.name for t in self.cluster.topics.values()}
        return {names[tp.topic_id]: sorted(tp.partitions) for tp in response.assignment.topic_partitions}

    def topic_partitions(self, parts: Parts | None) -> list[ConsumerGroupHeartbeatRequestTopicPartitions] | None:
        if parts is None:
            return None
        return [
            ConsumerGroupHeartbeatRequestTopicPartitions(self.cluster.topics[name].topic_id, sorted(ps))
            for name, ps in parts.items()
        ]

    # -- requests -----------------------------------------------------------------------------

    def send(self, request: ConsumerGroupHeartbeatRequest, version: int = 1) -> ConsumerGroupHeartbeatResponse:
        response = self.consumer.consumer_group_heartbeat(
            self.now, request, api_version=version, client_id="client", client_host="/127.0.0.1",
            describable=self.describable,
        )
        if self.cluster.internal_errors:
            raise self.cluster.internal_errors[0]
        return response

    def cg_join(self, member_id: str, group_id: str = "g", *, topics: list[str] | None = None, regex: str | None = None,
             instance: str | None = None, assignor: str | None = None, rebalance: int = REBALANCE_TIMEOUT,
             version: int = 1) -> ConsumerGroupHeartbeatResponse:  # fmt: skip
        if topics is None and regex is None:
            topics = ["t"]
        return self.send(
            ConsumerGroupHeartbeatRequest(
                group_id=group_id, member_id=member_id, member_epoch=0, instance_id=instance,
                rebalance_timeout_ms=rebalance, subscribed_topic_names=topics, subscribed_topic_regex=regex,
                server_assignor=assignor, topic_partitions=[],
            ),
            version,
        )  # fmt: skip

    def cg_heartbeat(self, member_id: str, epoch: int, owned: Parts | None = None, group_id: str = "g", *,
                  instance: str | None = None, topics: list[str] | None = None, assignor: str | None = None,
                  regex: str | None = None) -> ConsumerGroupHeartbeatResponse:  # fmt: skip
        return self.send(
            ConsumerGroupHeartbeatRequest(
                group_id=group_id, member_id=member_id, member_epoch=epoch, instance_id=instance,
                subscribed_topic_names=topics, subscribed_topic_regex=regex, server_assignor=assignor,
                topic_partitions=self.topic_partitions(owned),
            )
        )  # fmt: skip

    def cg_leave(self, member_id: str, group_id: str = "g", *, instance: str | None = None, epoch: int = -1) -> ConsumerGroupHeartbeatResponse:
        return self.send(
            ConsumerGroupHeartbeatRequest(group_id=group_id, member_id=member_id, member_epoch=epoch, instance_id=instance)
        )

    def converge(self, *member_ids: str, group_id: str = "g", rounds: int = 10) -> dict[str, Parts]:
        """Heartbeat every member in turn, each reporting what it was last given, until the group
        is Stable; returns each member's partitions."""
        owned: dict[str, Parts] = {m: self.member(m, group_id)["assigned"] for m in member_ids}
        for _ in range(rounds):
            for m in member_ids:
                epoch = self.member(m, group_id)["member_epoch"]
                response = self.cg_heartbeat(m, epoch, owned[m], group_id)
                assert response.error_code == 0, response
                given = self.owned(response)
                if given is not None:
                    owned[m] = {t: ps for t, ps in given.items() if ps}
            if self.snap(group_id)["state"] == "Stable":
                return owned
        raise AssertionError(f"group {group_id} did not converge: {self.snap(group_id)}")
