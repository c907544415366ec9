"""Pure streams-group (KIP-1071) coordinator tests: a MockCluster never started, on a ManualClock.

``StreamsHarness`` sends StreamsGroupHeartbeats through ``cluster.groups`` and, as the handler
does, creates the internal topics a heartbeat asks for. ``word_count`` is the topology of a Kafka
Streams word count: subtopology 0 reads ``input`` and writes the repartition topic, subtopology 1
reads it and keeps a changelog.
"""

from __future__ import annotations

from typing import Any

from mockbroker.coordinators.streams.group import StreamsGroup
from mockbroker_protocol.messages import streams_group_heartbeat as sgh
from tests.mockbroker.coordinators.groups_support import Harness

Tasks = dict[str, list[int]]
REPARTITION = "app-count-repartition"
CHANGELOG = "app-count-changelog"


def word_count(epoch: int = 1, source: str = "input") -> sgh.Topology:
    return sgh.Topology(
        epoch=epoch,
        subtopologies=[
            sgh.Subtopology(subtopology_id="0", source_topics=[source], repartition_sink_topics=[REPARTITION]),
            sgh.Subtopology(
                subtopology_id="1",
                repartition_source_topics=[sgh.TopicInfo(REPARTITION, 0, 0, [sgh.KeyValue("cleanup.policy", "delete")])],
                state_changelog_topics=[sgh.TopicInfo(CHANGELOG, 0, 0, [sgh.KeyValue("cleanup.policy", "compact")])],
            ),
        ],
    )


def task_ids(tasks: Tasks | None) -> list[sgh.StreamsGroupHeartbeatRequestTaskIds] | None:
    if tasks is None:
        return None
    return [sgh.StreamsGroupHeartbeatRequestTaskIds(sub, parts) for sub, parts in sorted(tasks.items())]


def tasks_of(entries: list[sgh.StreamsGroupHeartbeatResponseTaskIds] | None) -> Tasks | None:
    return None if entries is None else {t.subtopology_id: sorted(t.partitions) for t in entries}


class StreamsHarness(Harness):
    def __init__(self, topics: dict[str, int] | None = None, **settings: Any) -> None:
        super().__init__(**settings)
        self.streams = self.groups.streams
        for name, count in (topics if topics is not None else {"input": 4}).items():
            self.cluster.create_topic(name, count)
        self.created: list[str] = []

    def sgroup(self, group_id: str = "g") -> StreamsGroup:
        return self.streams.groups[group_id]

    def epoch(self, member_id: str, group_id: str = "g") -> int:
        """The member's current epoch, as its last answer gave it."""
        return self.sgroup(group_id).members[member_id].member_epoch

    def snap(self, group_id: str = "g") -> dict[str, Any]:
        snap = self.streams.snapshot(group_id)
        assert snap is not None, f"no streams group {group_id}"
        return snap

    def send(self, request: sgh.StreamsGroupHeartbeatRequest, *, create: bool = True) -> sgh.StreamsGroupHeartbeatResponse:
        result = self.groups.streams_group_heartbeat(self.now, request, client_id="client", client_host="/127.0.0.1")
        if create:
            for topic in result.internal_topics_to_create:
                self.cluster.create_topic(topic.name, topic.partitions, None, topic.configs)
                self.created.append(topic.name)
        return result.response

    def enter(self, member_id: str, *, process: str | None = None, topology: sgh.Topology | None = None,
             group_id: str = "g", rebalance_timeout_ms: int = 30_000, endpoint: tuple[str, int] | None = None,
             create: bool = True, **fields: Any) -> sgh.StreamsGroupHeartbeatResponse:  # fmt: skip
        return self.send(sgh.StreamsGroupHeartbeatRequest(
            group_id=group_id, member_id=member_id, member_epoch=0, rebalance_timeout_ms=rebalance_timeout_ms,
            topology=topology if topology is not None else word_count(), process_id=process or f"p-{member_id}",
            active_tasks=[], standby_tasks=[], warmup_tasks=[],
            user_endpoint=None if endpoint is None else sgh.StreamsGroupHeartbeatRequestEndpoint(*endpoint),
            **fields,
        ), create=create)  # fmt: skip

    def beat(self, member_id: str, epoch: int, *, active: Tasks | None = None, standby: Tasks | None = None,
             group_id: str = "g", **fields: Any) -> sgh.StreamsGroupHeartbeatResponse:  # fmt: skip
        """A heartbeat; ``active`` (and ``standby``) report the owned tasks (None: unchanged)."""
        owned = active is not None or standby is not None
        return self.send(sgh.StreamsGroupHeartbeatRequest(
            group_id=group_id, member_id=member_id, member_epoch=epoch,
            active_tasks=task_ids(active or {}) if owned else None,
            standby_tasks=task_ids(standby or {}) if owned else None,
            warmup_tasks=[] if owned else None, **fields,
        ))  # fmt: skip
