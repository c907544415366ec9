"""Differential: AlterConfigs and IncrementalAlterConfigs of topics (validation, validate_only,
the four operations), and DescribeConfigs of a broker's common keys."""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker_protocol.messages.alter_configs import AlterableConfig as LegacyConfig
from mockbroker_protocol.messages.alter_configs import AlterConfigsRequest
from mockbroker_protocol.messages.alter_configs import AlterConfigsResource as LegacyResource
from mockbroker_protocol.messages.describe_configs import DescribeConfigsRequest, DescribeConfigsResource
from mockbroker_protocol.messages.incremental_alter_configs import (
    AlterableConfig,
    AlterConfigsResource,
    IncrementalAlterConfigsRequest,
)
from tests.differential.harness import Context, Step, Target, differential
from tests.differential.steps import DESCRIBE_CONFIGS, METADATA, create, metadata
from tests.differential.test_topic_admin import by_name

INCREMENTAL_ALTER, ALTER = 44, 33
TOPIC = 2
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
KEYS = ["retention.ms", "cleanup.policy", "max.message.bytes", "segment.bytes"]


def incremental(ops: list[tuple[str, int, str | None]], *, validate_only: bool = False, name: str | None = None) -> Any:
    def build(ctx: Context) -> IncrementalAlterConfigsRequest:
        configs = [AlterableConfig(k, op, v) for k, op, v in ops]
        return IncrementalAlterConfigsRequest([AlterConfigsResource(TOPIC, name or ctx.topic, configs)], validate_only)

    return build


def describe_keys(ctx: Context) -> DescribeConfigsRequest:
    return DescribeConfigsRequest(resources=[DescribeConfigsResource(TOPIC, ctx.topic, KEYS)], include_synonyms=True)


CASES: dict[str, list[tuple[str, int, str | None]]] = {
    "set": [("retention.ms", SET, "1000"), ("max.message.bytes", SET, "2048")],
    "set-then-delete": [("retention.ms", DELETE, None)],
    "append": [("cleanup.policy", APPEND, "compact")],
    "subtract": [("cleanup.policy", SUBTRACT, "delete")],
    "bad-value": [("retention.ms", SET, "soon")],
    "unknown-key": [("no.such.config", SET, "1")],
    "append-to-non-list": [("retention.ms", APPEND, "5")],
    "duplicate-key": [("retention.ms", SET, "1"), ("retention.ms", SET, "2")],
    "below-minimum": [("segment.bytes", SET, "10")],
    "bad-operation": [("retention.ms", 9, "1")],
}


# The key each accepted change moves away from its value at creation: Kafka's controller commits an
# alter before it answers, but the broker that serves DescribeConfigs applies it from the metadata log
# a moment later, so the comparison waits for it (mockbroker applies it at once).
CHANGED = {"set": "retention.ms", "set-then-delete": "retention.ms", "append": "cleanup.policy", "subtract": "cleanup.policy"}
AT_CREATION = {"retention.ms": "5000", "cleanup.policy": "delete"}


def applied(key: str, not_value: str) -> Step:
    """Describe (not compared) until the topic's ``key`` no longer reads ``not_value``."""

    def moved(answer: Any) -> bool:
        return any(c.name == key and c.value != not_value for c in answer.results[0].configs)

    return Step(DESCRIBE_CONFIGS, 4, describe_keys, compare=False, until=moved)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("validate_only", [False, True])
def test_incremental_alter(targets: tuple[Target, Target], case: str, validate_only: bool) -> None:
    # D7: an unknown operation is an internal error on Kafka, INVALID_REQUEST on mockbroker.
    listed = {"D7": ["responses.0.error_code", "responses.0.error_message"]} if case == "bad-operation" else {}
    key = None if validate_only else CHANGED.get(case)
    differential(
        *targets,
        [
            *create(configs={"retention.ms": "5000"}),
            Step(INCREMENTAL_ALTER, 1, incremental(CASES[case], validate_only=validate_only), divergences=listed),
            *([applied(key, AT_CREATION[key])] if key else []),
            Step(DESCRIBE_CONFIGS, 4, describe_keys, normalise=by_name),
        ],
    )


def test_incremental_alter_unknown_topic(targets: tuple[Target, Target]) -> None:
    differential(*targets, [Step(INCREMENTAL_ALTER, 1, incremental([("retention.ms", SET, "1")]))])


@pytest.mark.parametrize("version", [0, 1, 2])
def test_legacy_alter_replaces_all(targets: tuple[Target, Target], version: int) -> None:
    """AlterConfigs sets the whole set of overrides: keys it leaves out go back to defaults."""

    def alter(ctx: Context) -> AlterConfigsRequest:
        return AlterConfigsRequest([LegacyResource(TOPIC, ctx.topic, [LegacyConfig("max.message.bytes", "4096")])])

    differential(
        *targets,
        [
            *create(configs={"retention.ms": "5000"}),
            Step(ALTER, version, alter),
            applied("max.message.bytes", "1048588"),  # Kafka's broker applies the alter a moment later
            Step(DESCRIBE_CONFIGS, 4, describe_keys, normalise=by_name),
        ],
    )


def test_broker_configs_common_keys(targets: tuple[Target, Target]) -> None:
    keys = ["num.partitions", "auto.create.topics.enable", "message.max.bytes", "log.retention.ms", "delete.topic.enable",
            "log.cleanup.policy", "min.insync.replicas", "default.replication.factor", "offsets.topic.num.partitions"]  # fmt: skip

    def describe(ctx: Context) -> DescribeConfigsRequest:
        node = str(ctx.answers["meta"].brokers[0].node_id)
        return DescribeConfigsRequest(resources=[DescribeConfigsResource(4, node, keys)], include_synonyms=False)

    def no_name(tree: Any, ctx: Context) -> Any:
        tree = by_name(tree)
        tree["results"][0]["resource_name"] = "<node id>"
        return tree

    differential(
        *targets,
        [Step(METADATA, 12, metadata([]), label="meta", compare=False), Step(DESCRIBE_CONFIGS, 4, describe, normalise=no_name)],
    )
