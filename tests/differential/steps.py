"""Request builders and common steps the differential sequences share (names from the run's Context)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mockbroker_protocol.messages.create_partitions import CreatePartitionsRequest, CreatePartitionsTopic
from mockbroker_protocol.messages.create_topics import (
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
)
from mockbroker_protocol.messages.delete_topics import DeleteTopicsRequest, DeleteTopicState
from mockbroker_protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from tests.differential.harness import Context, Step

METADATA, CREATE_TOPICS, DELETE_TOPICS, CREATE_PARTITIONS, DESCRIBE_CONFIGS = 3, 19, 20, 37, 32
PRODUCE, FETCH, LIST_OFFSETS = 0, 1, 2
NameOf = Callable[[Context], str]


def topic(ctx: Context) -> str:
    return ctx.topic


def topic2(ctx: Context) -> str:
    return ctx.topic2


def group(ctx: Context) -> str:
    return ctx.group


def metadata(names: list[NameOf] | None, allow_auto: bool = False) -> Callable[[Context], MetadataRequest]:
    def build(ctx: Context) -> MetadataRequest:
        topics = None if names is None else [MetadataRequestTopic(name=n(ctx)) for n in names]
        return MetadataRequest(topics=topics, allow_auto_topic_creation=allow_auto)

    return build


def topic_ready(name: NameOf = topic, partitions: int = 1) -> Step:
    """Wait (not compared) until Metadata shows ``name`` with every partition led: Kafka's metadata
    cache learns of a created topic shortly after CreateTopics answers."""

    def ready(answer: Any) -> bool:
        found = answer.topics[0]
        return (
            found.error_code == 0
            and len(found.partitions) == partitions
            and all(p.leader_id >= 0 and p.error_code == 0 for p in found.partitions)
        )

    return Step(METADATA, 12, metadata([name]), compare=False, until=ready)


def topic_gone(name: NameOf = topic) -> Step:
    """Wait (not compared) until Metadata no longer knows ``name``."""
    return Step(METADATA, 12, metadata([name]), compare=False, until=lambda a: a.topics[0].error_code == 3)


def creatable(
    name: NameOf = topic, partitions: int = 1, replication: int = 1, configs: dict[str, str | None] | None = None
) -> Callable[[Context], CreatableTopic]:
    def build(ctx: Context) -> CreatableTopic:
        return CreatableTopic(
            name=name(ctx),
            num_partitions=partitions,
            replication_factor=replication,
            configs=[CreatableTopicConfig(k, v) for k, v in (configs or {}).items()],
        )

    return build


def create_topics(
    *topics: Callable[[Context], CreatableTopic], validate_only: bool = False, timeout_ms: int = 30000
) -> Callable[[Context], CreateTopicsRequest]:
    def build(ctx: Context) -> CreateTopicsRequest:
        return CreateTopicsRequest(topics=[t(ctx) for t in topics], timeout_ms=timeout_ms, validate_only=validate_only)

    return build


def create(
    name: NameOf = topic, partitions: int = 1, configs: dict[str, str | None] | None = None, version: int = 7
) -> list[Step]:
    """CreateTopics (compared) and a wait until the topic is led everywhere."""
    return [
        Step(CREATE_TOPICS, version, create_topics(creatable(name, partitions, configs=configs))),
        topic_ready(name, partitions),
        leaders_ready(name, partitions),
    ]


def leaders_ready(name: NameOf = topic, partitions: int = 1) -> Step:
    """Wait (not compared) until every partition's leader serves ListOffsets: Metadata may name a
    leader shortly before its replica manager has made it one (NOT_LEADER_OR_FOLLOWER meanwhile)."""
    from mockbroker_protocol.messages.list_offsets import (
        ListOffsetsPartition,
        ListOffsetsRequest,
        ListOffsetsTopic,
    )

    def build(ctx: Context) -> ListOffsetsRequest:
        wanted = [ListOffsetsPartition(p, -1, -1) for p in range(partitions)]
        return ListOffsetsRequest(replica_id=-1, topics=[ListOffsetsTopic(name(ctx), wanted)])

    def ready(answer: Any) -> bool:
        return all(p.error_code == 0 for t in answer.topics for p in t.partitions)

    return Step(LIST_OFFSETS, 7, build, compare=False, until=ready)


def delete_topics(*names: NameOf, version: int = 6) -> Callable[[Context], DeleteTopicsRequest]:
    def build(ctx: Context) -> DeleteTopicsRequest:
        if version >= 6:
            return DeleteTopicsRequest(topics=[DeleteTopicState(name=n(ctx)) for n in names], timeout_ms=30000)
        return DeleteTopicsRequest(topic_names=[n(ctx) for n in names], timeout_ms=30000)

    return build


def create_partitions(
    name: NameOf, count: int, validate_only: bool = False, assignments: list[list[int]] | None = None
) -> Callable[[Context], CreatePartitionsRequest]:
    from mockbroker_protocol.messages.create_partitions import CreatePartitionsAssignment

    def build(ctx: Context) -> CreatePartitionsRequest:
        assigned = None if assignments is None else [CreatePartitionsAssignment(a) for a in assignments]
        return CreatePartitionsRequest(
            topics=[CreatePartitionsTopic(name=name(ctx), count=count, assignments=assigned)],
            timeout_ms=30000,
            validate_only=validate_only,
        )

    return build
