"""A streams group's topology against the cluster's topics: Kafka 4.3's InternalTopicManager.configureTopics.

Decides the partition count of every internal topic (repartition topics from the subtopologies
that write to them, changelog topics from their subtopology's task count), enforces
copartitioning, and reports what is wrong with the status Kafka's StreamsGroupHeartbeat answers:
MISSING_SOURCE_TOPICS, INCORRECTLY_PARTITIONED_TOPICS, MISSING_INTERNAL_TOPICS (with the internal
topics the broker then creates, with the configs the topology asks for). Messages are Kafka's
(RepartitionTopics, ChangelogTopics, CopartitionedTopicsEnforcer, InternalTopicManager).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from mockbroker_protocol.hashing import java_hash_map_order


@dataclass(frozen=True, slots=True)
class TopicInfo:
    """StreamsGroupTopologyValue.TopicInfo: an internal topic the topology asks for."""

    name: str
    partitions: int  # 0: decided by the coordinator (always 0 for changelog topics)
    replication_factor: int  # 0: the broker's default
    topic_configs: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Subtopology:
    """StreamsGroupTopologyValue.Subtopology, lists sorted so that equal topologies compare equal."""

    subtopology_id: str
    source_topics: tuple[str, ...]
    repartition_sink_topics: tuple[str, ...]
    state_changelog_topics: tuple[TopicInfo, ...]
    repartition_source_topics: tuple[TopicInfo, ...]
    # each group: source topic names and repartition source topic names that must be copartitioned
    copartition_groups: tuple[frozenset[str], ...]

    @property
    def is_stateful(self) -> bool:
        """A subtopology with a state store has a changelog topic (TopologyDescriber.isStateful)."""
        return bool(self.state_changelog_topics)


@dataclass(frozen=True, slots=True)
class StreamsTopology:
    """StreamsTopology: the topology a group was initialized with, by subtopology id (sorted)."""

    topology_epoch: int
    subtopologies: tuple[Subtopology, ...]

    def required_topics(self) -> list[str]:
        """StreamsTopology.requiredTopics, in its iteration order: a HashSet (Collectors.toSet) of
        each subtopology's source, repartition source and changelog topics, the subtopologies taken
        from their HashMap by id (configureTopics reports the first wrongly partitioned one in it)."""
        inserted: list[str] = []
        by_id = {sub.subtopology_id: sub for sub in self.subtopologies}
        for sub_id in java_hash_map_order(list(by_id)):
            sub = by_id[sub_id]
            inserted += [*sub.source_topics, *(t.name for t in sub.repartition_source_topics)]
            inserted += [t.name for t in sub.state_changelog_topics]
        return java_hash_map_order(inserted)


class Status(enum.IntEnum):
    """StreamsGroupHeartbeatResponse.Status: the codes of the Status entries."""

    STALE_TOPOLOGY = 0
    MISSING_SOURCE_TOPICS = 1
    INCORRECTLY_PARTITIONED_TOPICS = 2
    MISSING_INTERNAL_TOPICS = 3
    SHUTDOWN_APPLICATION = 4


class TopicConfigurationError(Exception):
    """TopicConfigurationException: the topology cannot be run on the cluster's topics as they are."""

    def __init__(self, status: Status, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True, slots=True)
class InternalTopic:
    """CreatableTopic: an internal topic to create (replication factor -1: the broker's default)."""

    name: str
    partitions: int
    replication_factor: int
    configs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ConfiguredSubtopology:
    number_of_tasks: int
    subtopology: Subtopology
    internal_partitions: dict[str, int]  # repartition source and changelog topic -> partitions


@dataclass(slots=True)
class ConfiguredTopology:
    """ConfiguredTopology: ready when nothing is wrong (no error)."""

    topology_epoch: int
    subtopologies: dict[str, ConfiguredSubtopology] | None
    internal_topics_to_create: list[InternalTopic]
    error: TopicConfigurationError | None

    @property
    def is_ready(self) -> bool:
        return self.error is None


def summarize_topics(topics: Collection[str]) -> str:
    """InternalTopicManager.summarizeTopics: the first three, then how many more."""
    if not topics:
        return "<none>"
    names = list(topics)
    summary = ", ".join(names[:3])
    if len(names) > 3:
        summary += f" and {len(names) - 3} additional topics"
    return summary


def configure_topics(topology: StreamsTopology, partition_count: Callable[[str], int | None]) -> ConfiguredTopology:
    """InternalTopicManager.configureTopics. ``partition_count`` is the cluster's partition
    count of an existing topic, None for a missing one."""
    try:
        missing = sorted({t for sub in topology.subtopologies for t in sub.source_topics if partition_count(t) is None})
        if missing:
            raise TopicConfigurationError(
                Status.MISSING_SOURCE_TOPICS, f"Source topics {summarize_topics(missing)} are missing."
            )
        decided = _decide_partition_counts(topology, partition_count)

        def count(topic: str) -> int | None:
            known = partition_count(topic)
            return known if known is not None else decided.get(topic)

        configured: dict[str, ConfiguredSubtopology] = {}
        for sub in sorted(topology.subtopologies, key=lambda s: s.subtopology_id):
            sources = [*sub.source_topics, *(t.name for t in sub.repartition_source_topics)]
            counts = [count(t) for t in sources]
            if not counts or any(c is None for c in counts):
                raise AssertionError(f"number of partitions must be set for the sources of subtopology {sub.subtopology_id}")
            internal = {
                t.name: (t.partitions or decided[t.name])
                for t in (*sub.repartition_source_topics, *sub.state_changelog_topics)
            }
            configured[sub.subtopology_id] = ConfiguredSubtopology(max(c for c in counts if c is not None), sub, internal)
        to_create: dict[str, InternalTopic] = {}
        inserted: list[str] = []
        for conf in configured.values():  # a TreeMap by subtopology id; each kind of topic a HashMap
            infos = {t.name: t for t in (*conf.subtopology.repartition_source_topics, *conf.subtopology.state_changelog_topics)}
            repartition = java_hash_map_order([t.name for t in conf.subtopology.repartition_source_topics])
            changelogs = java_hash_map_order([t.name for t in conf.subtopology.state_changelog_topics])
            for info in (infos[name] for name in (*repartition, *changelogs)):
                inserted.append(info.name)
                to_create[info.name] = InternalTopic(
                    info.name, conf.internal_partitions[info.name], info.replication_factor or -1, dict(info.topic_configs)
                )
        for topic in topology.required_topics():
            existing = partition_count(topic)
            if existing is None:
                continue
            expected = to_create.pop(topic, None)
            if expected is not None and existing != expected.partitions:
                raise TopicConfigurationError(
                    Status.INCORRECTLY_PARTITIONED_TOPICS,
                    f"Existing topic {topic} has different number of partitions: expected {expected.partitions}, "
                    f"found {existing}",
                )
        error = None
        if to_create:
            # missingInternalTopics collects them in a HashMap: its order is the one named
            error = TopicConfigurationError(
                Status.MISSING_INTERNAL_TOPICS,
                f"Internal topics are missing: {summarize_topics(java_hash_map_order(inserted, kept=to_create))}",
            )
        # KafkaApis asks for the creation of that map's keys, and names refused ones in that order too
        in_map_order = [to_create[n] for n in java_hash_map_order(inserted, kept=to_create)]
        return ConfiguredTopology(topology.topology_epoch, configured, in_map_order, error)
    except TopicConfigurationError as exc:
        return ConfiguredTopology(topology.topology_epoch, None, [], exc)


def _decide_partition_counts(topology: StreamsTopology, partition_count: Callable[[str], int | None]) -> dict[str, int]:
    """InternalTopicManager.decidePartitionCounts: repartition topics, copartitioning, changelogs."""
    decided: dict[str, int] = {}

    def count(topic: str) -> int | None:
        known = partition_count(topic)
        return known if known is not None else decided.get(topic)

    # RepartitionTopics.setup: a repartition topic without a fixed count gets the largest task
    # count of the subtopologies that write to it, iterated until every count is known.
    for sub in topology.subtopologies:
        for info in sub.repartition_source_topics:
            if info.partitions:
                decided[info.name] = info.partitions
    sinks = {t for sub in topology.subtopologies for t in sub.repartition_sink_topics}
    flexible = [t.name for sub in topology.subtopologies for t in sub.repartition_source_topics if not t.partitions]
    for name in flexible:
        if name not in sinks:
            raise TopicConfigurationError(
                Status.MISSING_SOURCE_TOPICS,
                "Failed to compute number of partitions for all repartition topics, because a repartition source "
                "topic is never used as a sink topic.",
            )
    pending = list(dict.fromkeys(flexible))
    while pending:
        progressed = False
        for name in list(pending):
            writers = [s for s in topology.subtopologies if name in s.repartition_sink_topics]
            best: int | None = None
            for writer in writers:
                for source in (*writer.source_topics, *(t.name for t in writer.repartition_source_topics)):
                    c = count(source)
                    if c is not None:
                        best = c if best is None else max(best, c)
            if best is not None:
                decided[name] = best
                pending.remove(name)
                progressed = True
        if not progressed:
            raise TopicConfigurationError(
                Status.MISSING_SOURCE_TOPICS,
                "Failed to compute number of partitions for all repartition topics. There may be loops in the "
                "topology that cannot be resolved.",
            )
    _enforce_copartitioning(topology, decided, count)
    # ChangelogTopics.setup: a changelog topic has one partition per task of its subtopology.
    for sub in topology.subtopologies:
        if not sub.state_changelog_topics:
            continue
        counts = [count(t) for t in (*sub.source_topics, *(r.name for r in sub.repartition_source_topics))]
        tasks = max((c for c in counts if c is not None), default=0)
        for info in sub.state_changelog_topics:
            decided[info.name] = tasks
    return decided


def _enforce_copartitioning(topology: StreamsTopology, decided: dict[str, int], count: Callable[[str], int | None]) -> None:
    """CopartitionedTopicsEnforcer.enforce for every copartition group: source topics must agree;
    flexible repartition topics take their count."""
    fixed = {t.name for sub in topology.subtopologies for t in sub.repartition_source_topics if t.partitions}
    flexible = {t.name for sub in topology.subtopologies for t in sub.repartition_source_topics if not t.partitions}
    for sub in topology.subtopologies:
        for group in sub.copartition_groups:
            if not group:
                continue
            non_repartition = {t: count(t) for t in group if t not in fixed and t not in flexible}
            if non_repartition:
                counts = set(non_repartition.values())
                if len(counts) > 1:
                    listed = ", ".join(f"{t}:{c}" for t, c in sorted(non_repartition.items()))
                    raise TopicConfigurationError(
                        Status.INCORRECTLY_PARTITIONED_TOPICS,
                        f"Following topics do not have the same number of partitions: [{listed}]",
                    )
                target = next(iter(counts))
            else:
                fixed_counts = [decided[t] for t in sorted(group & fixed)]
                target = max(fixed_counts) if fixed_counts else max((decided.get(t, 0) for t in group), default=0)
            if target is None:
                continue
            for t in sorted(group & fixed):
                if decided[t] != target:
                    raise TopicConfigurationError(
                        Status.INCORRECTLY_PARTITIONED_TOPICS,
                        f"Number of partitions [{decided[t]}] of repartition topic [{t}] doesn't match number of "
                        f"partitions [{target}] of the source topic.",
                    )
            for t in group & flexible:
                decided[t] = target


def topology_partition_counts(topology: StreamsTopology, topics: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    """What a configured topology depends on: the partition counts of the topology's topics that
    exist (Kafka's metadata hash over the same topics)."""
    return tuple(sorted((t, topics[t]) for t in topology.required_topics() if t in topics))
