"""Differential: CreateTopics, DeleteTopics and CreatePartitions validation, DescribeConfigs of topics."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from mockbroker_protocol.messages.create_topics import CreatableReplicaAssignment, CreatableTopic
from mockbroker_protocol.messages.delete_topics import DeleteTopicsRequest, DeleteTopicState
from mockbroker_protocol.messages.describe_configs import DescribeConfigsRequest, DescribeConfigsResource
from tests.differential.harness import Context, Step, Target, differential
from tests.differential.steps import (
    CREATE_PARTITIONS,
    CREATE_TOPICS,
    DELETE_TOPICS,
    DESCRIBE_CONFIGS,
    METADATA,
    creatable,
    create,
    create_partitions,
    create_topics,
    delete_topics,
    metadata,
    topic,
    topic2,
    topic_gone,
    topic_ready,
)


def named(name: str) -> Any:
    return lambda ctx: name


@pytest.mark.parametrize("version", range(2, 8))
def test_create_and_describe(targets: tuple[Target, Target], version: int) -> None:
    differential(
        *targets,
        [
            Step(CREATE_TOPICS, version, create_topics(creatable(topic, 3, configs={"retention.ms": "3600000"}))),
            topic_ready(topic, 3),
            Step(METADATA, 12, metadata([topic])),
        ],
    )


@pytest.mark.parametrize("version", [4, 5, 7])
def test_create_with_broker_defaults(targets: tuple[Target, Target], version: int) -> None:
    """v4+: -1 partitions and replication factor take the broker's num.partitions and default.replication.factor."""
    differential(*targets, [Step(CREATE_TOPICS, version, create_topics(creatable(topic, -1, -1))), topic_ready(topic, 1)])


INVALID = {
    "zero-partitions": dict(partitions=0),
    "negative-partitions": dict(partitions=-2),
    "zero-replication": dict(replication=0),
    "replication-above-brokers": dict(replication=3),
    "replication-int16-max": dict(replication=32_767),
    "unknown-config": dict(configs={"no.such.config": "1"}),
    "bad-config-value": dict(configs={"retention.ms": "soon"}),
    "bad-cleanup-policy": dict(configs={"cleanup.policy": "bogus"}),
    "null-config-value": dict(configs={"retention.ms": None}),
    "removed-config": dict(configs={"message.format.version": "3.0"}),
    "segment-bytes-too-small": dict(configs={"segment.bytes": "1024"}),
    "min-insync-zero": dict(configs={"min.insync.replicas": "0"}),
}


@pytest.mark.parametrize("case", sorted(INVALID))
@pytest.mark.parametrize("validate_only", [False, True])
def test_create_invalid(targets: tuple[Target, Target], case: str, validate_only: bool) -> None:
    args: dict[str, Any] = {"partitions": 1, **INVALID[case]}
    differential(
        *targets,
        [
            Step(CREATE_TOPICS, 7, create_topics(creatable(topic, **args), validate_only=validate_only)),
            Step(METADATA, 12, metadata([topic])),
        ],
    )


BAD_NAMES = {"space": "bad name!", "long": "a" * 250, "dot": ".", "dotdot": "..", "empty": "", "slash": "a/b"}


@pytest.mark.parametrize("case", sorted(BAD_NAMES))
def test_create_bad_name(targets: tuple[Target, Target], case: str) -> None:
    differential(*targets, [Step(CREATE_TOPICS, 7, create_topics(creatable(named(BAD_NAMES[case]), 1)))])


@pytest.mark.parametrize("version", [2, 5, 7])
def test_create_existing(targets: tuple[Target, Target], version: int) -> None:
    differential(*targets, [*create(topic, 1), Step(CREATE_TOPICS, version, create_topics(creatable(topic, 2)))])


def test_create_validate_only_creates_nothing(targets: tuple[Target, Target]) -> None:
    differential(
        *targets,
        [
            Step(CREATE_TOPICS, 7, create_topics(creatable(topic, 4), validate_only=True)),
            Step(METADATA, 12, metadata([topic])),
        ],
    )


def test_create_same_name_twice_in_one_request(targets: tuple[Target, Target]) -> None:
    differential(*targets, [Step(CREATE_TOPICS, 7, create_topics(creatable(topic, 1), creatable(topic, 2)))])


def test_create_with_manual_assignment_and_count(targets: tuple[Target, Target]) -> None:
    """Assignments and a partition count together are refused (INVALID_REQUEST)."""

    def both(ctx: Context) -> CreatableTopic:
        return CreatableTopic(ctx.topic, 2, -1, [CreatableReplicaAssignment(0, [1])], [])

    differential(*targets, [Step(CREATE_TOPICS, 7, create_topics(both))])


OVERSIZED_ASSIGNMENTS = {
    # the controller counts assignments as partitions: over MAX_PARTITIONS_PER_BATCH (10,000)
    "too-many-assignments": lambda: [CreatableReplicaAssignment(i, [1]) for i in range(10_001)],
    # one partition naming the broker 100,000 times (validateManualPartitionAssignment)
    "repeated-broker": lambda: [CreatableReplicaAssignment(0, [1] * 100_000)],
}


@pytest.mark.parametrize("case", sorted(OVERSIZED_ASSIGNMENTS))
def test_create_with_oversized_manual_assignments(targets: tuple[Target, Target], case: str) -> None:
    """Limits on what a request may ask for (issue #19): Kafka's errors for huge manual assignments."""

    def build(ctx: Context) -> CreatableTopic:
        return CreatableTopic(ctx.topic, -1, -1, OVERSIZED_ASSIGNMENTS[case](), [])

    differential(*targets, [Step(CREATE_TOPICS, 7, create_topics(build)), Step(METADATA, 12, metadata([topic]))])


def test_create_collides_with_dot_underscore(targets: tuple[Target, Target]) -> None:
    """A name differing from an existing one only by '.' against '_' collides (metric names)."""
    differential(
        *targets,
        [
            *create(lambda c: c.topic + ".x", 1),
            Step(CREATE_TOPICS, 7, create_topics(creatable(lambda c: c.topic + "_x", 1))),
        ],
    )


@pytest.mark.parametrize("version", range(1, 7))
def test_delete(targets: tuple[Target, Target], version: int) -> None:
    differential(
        *targets,
        [
            *create(topic, 2),
            Step(DELETE_TOPICS, version, delete_topics(topic, version=version)),
            topic_gone(topic),
            Step(METADATA, 12, metadata([topic])),
        ],
    )


@pytest.mark.parametrize("version", [1, 4, 6])
def test_delete_unknown(targets: tuple[Target, Target], version: int) -> None:
    differential(*targets, [Step(DELETE_TOPICS, version, delete_topics(topic, version=version))])


def test_delete_by_id_and_unknown_id(targets: tuple[Target, Target]) -> None:
    unknown = uuid.uuid4()

    def by_ids(ctx: Context) -> DeleteTopicsRequest:
        created = ctx.answers["created"].topics[0].topic_id
        return DeleteTopicsRequest(
            topics=[DeleteTopicState(name=None, topic_id=created), DeleteTopicState(name=None, topic_id=unknown)],
            timeout_ms=30000,
        )

    steps = create(topic, 1)
    steps[0].label = "created"
    differential(*targets, [*steps, Step(DELETE_TOPICS, 6, by_ids, normalise=sorted_responses), topic_gone(topic)])


def sorted_responses(tree: Any, ctx: Context | None = None) -> Any:
    """Kafka answers unknown ids before deletions in an order of its own making; no client relies on it."""
    tree["responses"].sort(key=lambda r: (str(r["name"]), str(r["topic_id"])))
    return tree


def test_delete_with_name_and_id_together(targets: tuple[Target, Target]) -> None:
    def both(ctx: Context) -> DeleteTopicsRequest:
        return DeleteTopicsRequest(topics=[DeleteTopicState(name=ctx.topic, topic_id=uuid.uuid4())], timeout_ms=30000)

    differential(*targets, [*create(topic, 1), Step(DELETE_TOPICS, 6, both)])


def test_delete_internal_topic_name(targets: tuple[Target, Target]) -> None:
    differential(*targets, [Step(DELETE_TOPICS, 6, delete_topics(named("__consumer_offsets_nope"), version=6))])


@pytest.mark.parametrize("version", range(4))
def test_create_partitions_grows(targets: tuple[Target, Target], version: int) -> None:
    differential(
        *targets,
        [
            *create(topic, 1),
            Step(CREATE_PARTITIONS, version, create_partitions(topic, 3)),
            topic_ready(topic, 3),
            Step(METADATA, 12, metadata([topic])),
        ],
    )


PARTITION_CASES = {
    "same-count": dict(count=2),
    "fewer": dict(count=1),
    "zero": dict(count=0),
    "validate-only": dict(count=5, validate_only=True),
    "bad-assignment-size": dict(count=4, assignments=[[1]]),
}


@pytest.mark.parametrize("case", sorted(PARTITION_CASES))
def test_create_partitions_validation(targets: tuple[Target, Target], case: str) -> None:
    differential(
        *targets,
        [
            *create(topic, 2),
            Step(CREATE_PARTITIONS, 3, create_partitions(topic, **PARTITION_CASES[case])),
            Step(METADATA, 12, metadata([topic])),
        ],
    )


def test_create_partitions_unknown_topic(targets: tuple[Target, Target]) -> None:
    differential(*targets, [Step(CREATE_PARTITIONS, 3, create_partitions(topic2, 3))])


def test_create_partitions_same_topic_twice(targets: tuple[Target, Target]) -> None:
    def twice(ctx: Context) -> Any:
        request = create_partitions(topic, 3)(ctx)
        request.topics.append(create_partitions(topic, 4)(ctx).topics[0])
        return request

    differential(*targets, [*create(topic, 1), Step(CREATE_PARTITIONS, 3, twice)])


def describe(keys: list[str] | None, synonyms: bool = False, documentation: bool = False) -> Any:
    def build(ctx: Context) -> DescribeConfigsRequest:
        return DescribeConfigsRequest(
            resources=[DescribeConfigsResource(2, ctx.topic, keys)],
            include_synonyms=synonyms,
            include_documentation=documentation,
        )

    return build


def by_name(tree: Any, ctx: Context | None = None) -> Any:
    """Configs sorted by name: Kafka lists them in a HashMap's order, which no client relies on."""
    for result in tree["results"]:
        result["configs"] = {entry.pop("name"): entry for entry in result["configs"]}
    return tree


@pytest.mark.parametrize("version", range(1, 5))  # v0 is gone in 4.x (KIP-896)
def test_describe_topic_configs(targets: tuple[Target, Target], version: int) -> None:
    overrides = {"retention.ms": "3600000", "cleanup.policy": "compact,delete", "max.message.bytes": "2000"}
    differential(
        *targets,
        [
            *create(topic, 1, configs=overrides),
            Step(DESCRIBE_CONFIGS, version, describe(None, synonyms=True), normalise=by_name),
            Step(
                DESCRIBE_CONFIGS,
                version,
                describe(["retention.ms", "segment.bytes", "no.such.key"], synonyms=True),
                normalise=by_name,
            ),
        ],
    )


def test_describe_configs_of_unknown_topic(targets: tuple[Target, Target]) -> None:
    differential(*targets, [Step(DESCRIBE_CONFIGS, 4, describe(None))])


# The controller's bounds on one request (issue #19; ReplicationControlManager
# MAX_PARTITIONS_PER_BATCH and QuorumController MAX_RECORDS_PER_USER_OP, both 10,000).
# Cases near the bound are only validated: creating 10,000 partitions takes the real Kafka long.
BATCH_CASES = {
    "partitions-over": ([10_001], (False, True)),
    "partitions-int32-max": ([2**31 - 1], (False, True)),
    "partitions-over-in-two-topics": ([5_000, 5_001], (False, True)),
    "records-over": ([10_000], (True,)),  # a TopicRecord and 10,000 PartitionRecords
    "records-at-bound": ([9_999], (True,)),
}


@pytest.mark.parametrize(
    ("case", "validate_only"), [(case, v) for case, (_, modes) in sorted(BATCH_CASES.items()) for v in modes]
)
def test_create_beyond_the_controller_batch(targets: tuple[Target, Target], case: str, validate_only: bool) -> None:
    counts, _ = BATCH_CASES[case]
    names = [topic, topic2][: len(counts)]
    differential(
        *targets,
        [
            Step(
                CREATE_TOPICS,
                7,
                create_topics(*(creatable(n, c) for n, c in zip(names, counts, strict=True)), validate_only=validate_only),
            ),
            Step(METADATA, 12, metadata(names)),
        ],
    )


@pytest.mark.parametrize("count", [10_001, 10_002])
def test_create_partitions_beyond_the_controller_batch(targets: tuple[Target, Target], count: int) -> None:
    """Validated only: 10,000 more partitions is the most one request may add."""
    differential(
        *targets,
        [*create(topic, 1), Step(CREATE_PARTITIONS, 3, create_partitions(topic, count, validate_only=True))],
    )
