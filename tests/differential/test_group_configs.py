"""Differential: per-group configs (KIP-848 GroupConfig, with KIP-932's share.* and KIP-1071's
streams.* keys) through DescribeConfigs, IncrementalAlterConfigs and AlterConfigs on GROUP
resources: every key with its broker synonyms, set, delete, validate_only, the legacy replace-all,
unknown names, bad values, values outside the broker's group.* bounds, and DeleteGroups."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from mockbroker_protocol.messages import streams_group_heartbeat as sgh
from mockbroker_protocol.messages.alter_configs import AlterableConfig as LegacyConfig
from mockbroker_protocol.messages.alter_configs import AlterConfigsRequest
from mockbroker_protocol.messages.alter_configs import AlterConfigsResource as LegacyResource
from mockbroker_protocol.messages.delete_groups import DeleteGroupsRequest
from mockbroker_protocol.messages.describe_configs import DescribeConfigsRequest, DescribeConfigsResource
from mockbroker_protocol.messages.incremental_alter_configs import (
    AlterableConfig,
    AlterConfigsResource,
    IncrementalAlterConfigsRequest,
)
from tests.differential import test_consumer_groups as consumer_groups
from tests.differential import test_streams_groups as streams_groups
from tests.differential.harness import Context, Item, Step, Target, differential
from tests.differential.steps import DESCRIBE_CONFIGS, create
from tests.differential.test_classic_groups import coordinator_ready
from tests.differential.test_share_groups import HEARTBEAT as SHARE_HEARTBEAT
from tests.differential.test_share_groups import JOIN_ASSIGNMENT, hb
from tests.differential.test_topic_admin import by_name

INCREMENTAL_ALTER, ALTER, DELETE_GROUPS = 44, 33, 42
GROUP = 32
SET, DELETE, APPEND = 0, 1, 2


def incremental(ops: Sequence[tuple[str, int, str | None]], *, validate_only: bool = False, name: str | None = None) -> Any:
    def build(ctx: Context) -> IncrementalAlterConfigsRequest:
        configs = [AlterableConfig(k, op, v) for k, op, v in ops]
        resource = AlterConfigsResource(GROUP, ctx.group if name is None else name, configs)
        return IncrementalAlterConfigsRequest([resource], validate_only)

    return build


def describe(keys: list[str] | None, *, name: str | None = None, documentation: bool = False) -> Any:
    def build(ctx: Context) -> DescribeConfigsRequest:
        resource = DescribeConfigsResource(GROUP, ctx.group if name is None else name, keys)
        return DescribeConfigsRequest(resources=[resource], include_synonyms=True, include_documentation=documentation)

    return build


def applied(key: str, value: str | None, name: Any = None) -> Step:
    """Describe (not compared) until the group's ``key`` reads ``value`` (None: back to its default):
    Kafka's controller commits an alter before it answers, the broker applies it from the metadata
    log a moment later (mockbroker at once)."""

    def done(answer: Any) -> bool:
        entry = next(c for c in answer.results[0].configs if c.name == key)
        return bool(entry.value == value if value is not None else entry.config_source != 8)

    def build(ctx: Context) -> DescribeConfigsRequest:
        return describe([key], name=None if name is None else name(ctx))(ctx)  # type: ignore[no-any-return]

    return Step(DESCRIBE_CONFIGS, 4, build, compare=False, until=done)


def test_describe_every_key_with_its_synonyms(targets: tuple[Target, Target]) -> None:
    differential(*targets, [Step(DESCRIBE_CONFIGS, 4, describe(None, documentation=True), normalise=by_name)])


@pytest.mark.parametrize("version", [1, 2, 3])
def test_describe_versions(targets: tuple[Target, Target], version: int) -> None:
    keys = ["share.auto.offset.reset", "consumer.session.timeout.ms", "share.renew.acknowledge.enable"]
    differential(*targets, [Step(DESCRIBE_CONFIGS, version, describe(keys), normalise=by_name)])


def test_set_describe_delete(targets: tuple[Target, Target]) -> None:
    keys = ["share.auto.offset.reset", "consumer.session.timeout.ms", "streams.num.standby.replicas",
            "share.isolation.level", "share.record.lock.duration.ms"]  # fmt: skip
    changes = [
        ("share.auto.offset.reset", SET, "earliest"),
        ("consumer.session.timeout.ms", SET, " 50000 "),
        ("streams.num.standby.replicas", SET, "1"),
        ("share.record.lock.duration.ms", SET, "15000"),
    ]
    differential(
        *targets,
        [
            Step(INCREMENTAL_ALTER, 1, incremental(changes)),
            applied("share.record.lock.duration.ms", "15000"),
            Step(DESCRIBE_CONFIGS, 4, describe(keys), normalise=by_name),
            Step(INCREMENTAL_ALTER, 1, incremental([("share.auto.offset.reset", DELETE, None), ("nope", DELETE, None)])),
            applied("share.auto.offset.reset", None),
            Step(DESCRIBE_CONFIGS, 4, describe(keys), normalise=by_name),
        ],
    )


def test_share_group_uses_its_configs_and_keeps_them_when_deleted(targets: tuple[Target, Target]) -> None:
    """share.heartbeat.interval.ms set before the group exists is the interval its member is given;
    DeleteGroups of the (empty) share group leaves its configs in place."""
    keys = ["share.heartbeat.interval.ms", "share.auto.offset.reset"]
    changes = [("share.heartbeat.interval.ms", SET, "6000"), ("share.auto.offset.reset", SET, "earliest")]
    differential(
        *targets,
        [
            *create(),
            *coordinator_ready(),
            Step(INCREMENTAL_ALTER, 1, incremental(changes)),
            applied("share.heartbeat.interval.ms", "6000"),
            Step(SHARE_HEARTBEAT, 1, hb(0), divergences={"D20": JOIN_ASSIGNMENT}),
            Step(SHARE_HEARTBEAT, 1, hb(-1, topics=None)),
            Step(DELETE_GROUPS, 2, lambda ctx: DeleteGroupsRequest([ctx.group])),
            Step(DESCRIBE_CONFIGS, 4, describe(keys), normalise=by_name),
        ],
    )


REFUSED: dict[str, list[tuple[str, int, str | None]]] = {
    "unknown-name": [("no.such.config", SET, "1")],
    "unknown-before-bad-value": [("nope", SET, "1"), ("consumer.session.timeout.ms", SET, "10")],
    "not-a-number": [("consumer.session.timeout.ms", SET, "soon")],
    "empty-number": [("consumer.session.timeout.ms", SET, "")],
    "below-type-minimum": [("share.delivery.count.limit", SET, "1")],
    "parse-before-bounds": [("consumer.session.timeout.ms", SET, "10"), ("share.partition.max.record.locks", SET, "50")],
    "session-below-broker-min": [("consumer.session.timeout.ms", SET, "10")],
    "session-above-broker-max": [("share.session.timeout.ms", SET, "70000")],
    "heartbeat-above-broker-max": [("consumer.heartbeat.interval.ms", SET, "46000")],
    "streams-heartbeat-below-min": [("streams.heartbeat.interval.ms", SET, "4000")],
    "lock-duration-above-max": [("share.record.lock.duration.ms", SET, "5000000")],
    "lock-duration-below-type-min": [("share.record.lock.duration.ms", SET, "500")],
    "delivery-count-above-max": [("share.delivery.count.limit", SET, "20")],
    "record-locks-above-max": [("share.partition.max.record.locks", SET, "50000")],
    "standbys-above-max": [("streams.num.standby.replicas", SET, "3")],
    "standbys-negative": [("streams.num.standby.replicas", SET, "-1")],
    "assignment-interval-above-max": [("share.assignment.interval.ms", SET, "20000")],
    "bad-reset": [("share.auto.offset.reset", SET, "EARLIEST")],
    "negative-duration": [("share.auto.offset.reset", SET, "by_duration:-PT1H")],
    "spaced-duration": [("share.auto.offset.reset", SET, "by_duration: PT1H")],
    "bad-isolation": [("share.isolation.level", SET, "serializable")],
    "bad-boolean": [("share.renew.acknowledge.enable", SET, "maybe")],
    "append": [("share.isolation.level", APPEND, "read_committed")],
}


@pytest.mark.parametrize("validate_only", [False, True])
def test_refused_and_accepted_values(targets: tuple[Target, Target], validate_only: bool) -> None:
    steps: list[Item] = [Step(INCREMENTAL_ALTER, 1, incremental(ops, validate_only=validate_only)) for ops in REFUSED.values()]
    accepted = [("share.auto.offset.reset", SET, "by_duration:P1DT2H30M"), ("share.renew.acknowledge.enable", SET, "FALSE")]
    steps.append(Step(INCREMENTAL_ALTER, 1, incremental(accepted, validate_only=validate_only)))
    if not validate_only:
        steps.append(applied("share.renew.acknowledge.enable", "false"))
    keys = ["share.auto.offset.reset", "share.renew.acknowledge.enable", "consumer.session.timeout.ms"]
    steps.append(Step(DESCRIBE_CONFIGS, 4, describe(keys), normalise=by_name))
    differential(*targets, steps)


def test_legacy_alter_replaces_all(targets: tuple[Target, Target]) -> None:
    def alter(configs: dict[str, str]) -> Any:
        def build(ctx: Context) -> AlterConfigsRequest:
            return AlterConfigsRequest([LegacyResource(GROUP, ctx.group, [LegacyConfig(k, v) for k, v in configs.items()])])

        return build

    keys = ["share.auto.offset.reset", "share.isolation.level"]
    differential(
        *targets,
        [
            Step(ALTER, 2, alter({"share.auto.offset.reset": "earliest", "share.isolation.level": "read_committed"})),
            applied("share.isolation.level", "read_committed"),
            Step(ALTER, 2, alter({"share.isolation.level": "read_committed"})),
            applied("share.auto.offset.reset", None),
            Step(DESCRIBE_CONFIGS, 4, describe(keys), normalise=by_name),
            Step(ALTER, 2, alter({"nope": "1"})),
        ],
    )


def test_empty_group_name(targets: tuple[Target, Target]) -> None:
    differential(
        *targets,
        [
            Step(INCREMENTAL_ALTER, 1, incremental([("share.auto.offset.reset", SET, "earliest")], name="")),
            Step(DESCRIBE_CONFIGS, 4, describe(None, name="")),
        ],
    )


def test_consumer_and_streams_groups_use_their_configs(targets: tuple[Target, Target]) -> None:
    """consumer.heartbeat.interval.ms and streams.heartbeat.interval.ms set on two group ids before
    they exist are the intervals their members are given."""

    def streams_id(ctx: Context) -> str:
        return ctx.group + "-streams"

    def streams_join(ctx: Context) -> sgh.StreamsGroupHeartbeatRequest:
        request: sgh.StreamsGroupHeartbeatRequest = streams_groups.join()(ctx)
        request.group_id = streams_id(ctx)
        return request

    def streams_leave(ctx: Context) -> sgh.StreamsGroupHeartbeatRequest:
        return sgh.StreamsGroupHeartbeatRequest(group_id=streams_id(ctx), member_id=streams_groups.MEMBER, member_epoch=-1)

    def streams_alter(ctx: Context) -> IncrementalAlterConfigsRequest:
        return incremental([("streams.heartbeat.interval.ms", SET, "7000")], name=streams_id(ctx))(ctx)  # type: ignore[no-any-return]

    differential(
        *targets,
        [
            *consumer_groups.created(),
            *coordinator_ready(),
            Step(INCREMENTAL_ALTER, 1, incremental([("consumer.heartbeat.interval.ms", SET, "6000")])),
            Step(INCREMENTAL_ALTER, 1, streams_alter),
            applied("consumer.heartbeat.interval.ms", "6000"),
            applied("streams.heartbeat.interval.ms", "7000", streams_id),
            Step(consumer_groups.HEARTBEAT, 1, consumer_groups.hb(0, owned=False),
                 normalise=consumer_groups.sorted_assignment),
            Step(consumer_groups.HEARTBEAT, 1, consumer_groups.hb(-1, topics=None)),
            Step(streams_groups.HEARTBEAT, 0, streams_join, normalise=streams_groups.sorted_tasks),
            Step(streams_groups.HEARTBEAT, 0, streams_leave),
        ],
    )
