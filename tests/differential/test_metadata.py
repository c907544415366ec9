"""Differential: Metadata at every version, known, unknown, auto-created and invalid topics, topic ids."""

from __future__ import annotations

import uuid

import pytest

from mockbroker_protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from tests.differential.harness import Context, Step, Target, differential
from tests.differential.steps import METADATA, create, metadata, topic, topic_ready

VERSIONS = range(14)
AUTO_CREATED_AT_ONCE = {"D3": ["topics.0.error_code", "topics.0.partitions", "topics.0.partitions.*", "topics.0.topic_id"]}


@pytest.mark.parametrize("version", VERSIONS)
def test_existing_topic(targets: tuple[Target, Target], version: int) -> None:
    differential(*targets, [*create(topic, 3), Step(METADATA, version, metadata([topic]))])


@pytest.mark.parametrize("version", range(4, 14))
def test_unknown_topic_without_auto_creation(targets: tuple[Target, Target], version: int) -> None:
    differential(*targets, [Step(METADATA, version, metadata([topic], allow_auto=False))])


@pytest.mark.parametrize("version", VERSIONS)
def test_auto_creation(targets: tuple[Target, Target], version: int) -> None:
    """The first answer creates the topic (v0-3 always may); after it is led, both show it the same."""
    differential(
        *targets,
        [
            Step(METADATA, version, metadata([topic], allow_auto=True), divergences=AUTO_CREATED_AT_ONCE),
            topic_ready(topic),
            Step(METADATA, version, metadata([topic], allow_auto=True)),
        ],
    )


BAD_NAMES = ["bad name!", "a" * 250, ".", "..", "x/y", "caf\u00e9"]


@pytest.mark.parametrize("name", BAD_NAMES, ids=["space", "long", "dot", "dotdot", "slash", "unicode"])
@pytest.mark.parametrize("allow_auto", [False, True])
def test_invalid_topic_names(targets: tuple[Target, Target], name: str, allow_auto: bool) -> None:
    request = MetadataRequest(topics=[MetadataRequestTopic(name=name)], allow_auto_topic_creation=allow_auto)
    differential(*targets, [Step(METADATA, 12, request)])


def test_known_and_unknown_topics_together(targets: tuple[Target, Target]) -> None:
    differential(*targets, [*create(topic, 2), Step(METADATA, 12, metadata([topic, lambda c: c.topic2]))])


@pytest.mark.parametrize("version", [10, 11, 12, 13])
def test_topic_ids_match_create_topics(targets: tuple[Target, Target], version: int) -> None:
    """The id CreateTopics gave is the one Metadata reports (both become <uuid#0>)."""
    differential(*targets, [*create(topic, 1), Step(METADATA, version, metadata([topic]))])


@pytest.mark.parametrize("version", [12, 13])
def test_lookup_by_topic_id(targets: tuple[Target, Target], version: int) -> None:
    def by_id(ctx: Context) -> MetadataRequest:
        topic_id = ctx.answers["created"].topics[0].topic_id
        return MetadataRequest(topics=[MetadataRequestTopic(topic_id=topic_id, name=None)], allow_auto_topic_creation=False)

    steps = create(topic, 1)
    steps[0].label = "created"
    differential(*targets, [*steps, Step(METADATA, version, by_id)])


@pytest.mark.parametrize("version", [12, 13])
def test_lookup_by_unknown_topic_id(targets: tuple[Target, Target], version: int) -> None:
    request = MetadataRequest(topics=[MetadataRequestTopic(topic_id=uuid.uuid4(), name=None)], allow_auto_topic_creation=False)
    differential(*targets, [Step(METADATA, version, request)])


@pytest.mark.parametrize("version", [1, 4, 9, 12])
def test_no_topics_lists_brokers_only(targets: tuple[Target, Target], version: int) -> None:
    differential(*targets, [Step(METADATA, version, MetadataRequest(topics=[], allow_auto_topic_creation=False))])


@pytest.mark.parametrize("version", [8, 10])
def test_authorized_operations(targets: tuple[Target, Target], version: int) -> None:
    def build(ctx: Context) -> MetadataRequest:
        return MetadataRequest(
            topics=[MetadataRequestTopic(name=ctx.topic)],
            allow_auto_topic_creation=False,
            include_cluster_authorized_operations=version <= 10,
            include_topic_authorized_operations=True,
        )

    differential(*targets, [*create(topic, 1), Step(METADATA, version, build)])
