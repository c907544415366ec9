"""Differential: KIP-848 consumer groups (ConsumerGroupHeartbeat, ConsumerGroupDescribe): joining,
steady heartbeats, leaving, and the request validation errors."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from mockbroker_protocol.messages.consumer_group_describe import ConsumerGroupDescribeRequest
from mockbroker_protocol.messages.consumer_group_heartbeat import (
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupHeartbeatRequestTopicPartitions,
)
from tests.differential.harness import Context, Step, Target, differential
from tests.differential.steps import create
from tests.differential.test_classic_groups import coordinator_ready

HEARTBEAT, DESCRIBE = 68, 69
REBALANCE_MS = 30_000
MEMBER = str(uuid.UUID(int=1))


def hb(
    epoch: int,
    *,
    topics: list[str] | str | None = "ours",
    member: str = MEMBER,
    owned: bool | None = None,
    assignor: str | None = None,
    rebalance_ms: int = REBALANCE_MS,
    group: str | None = None,
) -> Any:
    def build(ctx: Context) -> ConsumerGroupHeartbeatRequest:
        names = [ctx.topic] if topics == "ours" else topics
        partitions = None
        if owned is not None:
            topic_id = ctx.answers["created"].topics[0].topic_id
            partitions = [ConsumerGroupHeartbeatRequestTopicPartitions(topic_id, [0, 1])] if owned else []
        return ConsumerGroupHeartbeatRequest(
            group_id=ctx.group if group is None else group,
            member_id=member,
            member_epoch=epoch,
            rebalance_timeout_ms=rebalance_ms,
            subscribed_topic_names=names,  # type: ignore[arg-type]
            server_assignor=assignor,
            topic_partitions=partitions,
        )

    return build


def created() -> list[Step]:
    steps = create(partitions=2)
    steps[0].label = "created"
    return steps


def sorted_assignment(tree: Any, ctx: Context | None = None) -> Any:
    assignment = tree.get("assignment")
    if isinstance(assignment, dict):
        for topic in assignment["topic_partitions"]:
            topic["partitions"].sort()
    return tree


@pytest.mark.parametrize("version", [0, 1])
def test_join_heartbeat_leave(targets: tuple[Target, Target], version: int) -> None:
    member = MEMBER if version >= 1 else ""

    def mid(ctx: Context) -> str:
        return str(ctx.answers["joined"].member_id)

    def steady(ctx: Context) -> ConsumerGroupHeartbeatRequest:
        epoch = ctx.answers["joined"].member_epoch
        return ConsumerGroupHeartbeatRequest(group_id=ctx.group, member_id=mid(ctx), member_epoch=epoch)

    def leave(ctx: Context) -> ConsumerGroupHeartbeatRequest:
        return ConsumerGroupHeartbeatRequest(group_id=ctx.group, member_id=mid(ctx), member_epoch=-1)

    differential(
        *targets,
        [
            *created(),
            *coordinator_ready(),
            # v1: the client makes its member id (KIP-1082); the same on both. A new group starts at
            # epoch 1 (ModernGroup in 4.3), so the first member gets epoch 2.
            Step(HEARTBEAT, version, hb(0, member=member, owned=False), label="joined", normalise=sorted_assignment),
            Step(HEARTBEAT, version, steady),
            # KIP-430 without an authorizer: every operation a group supports
            Step(DESCRIBE, 0, lambda ctx: ConsumerGroupDescribeRequest(group_ids=[ctx.group], include_authorized_operations=version == 1)),
            Step(HEARTBEAT, version, leave),
        ],
    )


INVALID = {
    "no-topics-on-join": dict(epoch=0, topics=None),
    "empty-member-v1": dict(epoch=0, member=""),
    "unknown-member": dict(epoch=5, member=str(uuid.UUID(int=99))),
    "bad-epoch": dict(epoch=-5),
    "unknown-assignor": dict(epoch=0, assignor="no-such-assignor"),
    "no-rebalance-timeout": dict(epoch=0, rebalance_ms=-1),
    "empty-group": dict(epoch=0, group=""),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_heartbeats(targets: tuple[Target, Target], case: str) -> None:
    args: dict[str, Any] = {"owned": False, **INVALID[case]}
    epoch = args.pop("epoch")
    differential(*targets, [*created(), *coordinator_ready(), Step(HEARTBEAT, 1, hb(epoch, **args))])


def test_fenced_epoch(targets: tuple[Target, Target]) -> None:
    differential(
        *targets,
        [
            *created(),
            *coordinator_ready(),
            Step(HEARTBEAT, 1, hb(0, owned=False), normalise=sorted_assignment),
            Step(HEARTBEAT, 1, hb(7, owned=True)),
        ],
    )


def test_describe_unknown_group(targets: tuple[Target, Target]) -> None:
    differential(
        *targets,
        [*coordinator_ready(), Step(DESCRIBE, 0, lambda ctx: ConsumerGroupDescribeRequest(group_ids=[ctx.group]))],
    )
