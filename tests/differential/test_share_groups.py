"""Differential: KIP-932 share groups (ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch,
ShareAcknowledge): request validation, a member joining and leaving, describing, and the share
session errors."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from mockbroker_protocol.messages.share_acknowledge import ShareAcknowledgeRequest
from mockbroker_protocol.messages.share_fetch import FetchPartition, FetchTopic, ShareFetchRequest
from mockbroker_protocol.messages.share_group_describe import ShareGroupDescribeRequest
from mockbroker_protocol.messages.share_group_heartbeat import ShareGroupHeartbeatRequest
from tests.differential.harness import Context, Step, Target, differential
from tests.differential.steps import create
from tests.differential.test_classic_groups import coordinator_ready

HEARTBEAT, DESCRIBE, SHARE_FETCH, SHARE_ACK = 76, 77, 78, 79
MEMBER = str(uuid.UUID(int=7))
# D6: the first member of a new group gets epoch 2 from Kafka, 1 from mockbroker (as for consumer groups).
DESCRIBED_EPOCHS = ["groups.0.group_epoch", "groups.0.assignment_epoch", "groups.0.members.0.member_epoch"]
# D20: Kafka assigns a share partition only once the share coordinator has initialized its state.
JOIN_ASSIGNMENT = ["assignment.topic_partitions", "assignment.topic_partitions.*"]
DESCRIBED_ASSIGNMENT = ["groups.0.members.0.assignment.topic_partitions", "groups.0.members.0.assignment.topic_partitions.*"]


def hb(epoch: int, *, topics: list[str] | str | None = "ours", member: str = MEMBER, group: str | None = None,
       rack: str | None = None) -> Any:  # fmt: skip
    def build(ctx: Context) -> ShareGroupHeartbeatRequest:
        names = [ctx.topic] if topics == "ours" else topics
        return ShareGroupHeartbeatRequest(
            group_id=ctx.group if group is None else group, member_id=member, member_epoch=epoch, rack_id=rack,
            subscribed_topic_names=names,  # type: ignore[arg-type]
        )

    return build


INVALID = {
    "no-topics-on-join": dict(epoch=0, topics=None),
    "empty-topics-on-join": dict(epoch=0, topics=[]),
    "empty-member": dict(epoch=0, member=" "),
    "empty-group": dict(epoch=0, group=" "),
    "empty-rack": dict(epoch=0, rack=" "),
    "bad-epoch": dict(epoch=-2),
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_heartbeats(targets: tuple[Target, Target], case: str) -> None:
    args: dict[str, Any] = dict(INVALID[case])
    epoch = args.pop("epoch")
    differential(*targets, [*create(), *coordinator_ready(), Step(HEARTBEAT, 1, hb(epoch, **args))])


def test_describe_unknown_group(targets: tuple[Target, Target]) -> None:
    differential(
        *targets,
        [*coordinator_ready(), Step(DESCRIBE, 1, lambda ctx: ShareGroupDescribeRequest(group_ids=[ctx.group]))],
    )


def fetch(epoch: int, *, topic: bool = True) -> Any:
    def build(ctx: Context) -> ShareFetchRequest:
        topics = [FetchTopic(ctx.answers["created"].topics[0].topic_id, [FetchPartition(0)])] if topic else []
        return ShareFetchRequest(
            group_id=ctx.group, member_id=MEMBER, share_session_epoch=epoch, max_wait_ms=0, min_bytes=1,
            max_bytes=1 << 20, max_records=10, batch_size=10, topics=topics,
        )  # fmt: skip

    return build


def ack(epoch: int) -> Any:
    def build(ctx: Context) -> ShareAcknowledgeRequest:
        return ShareAcknowledgeRequest(group_id=ctx.group, member_id=MEMBER, share_session_epoch=epoch)

    return build


SESSION_ERRORS = {
    "fetch-no-session": (SHARE_FETCH, fetch(3)),
    "fetch-final-no-session": (SHARE_FETCH, fetch(-1, topic=False)),
    "ack-initial-epoch": (SHARE_ACK, ack(0)),
    "ack-no-session": (SHARE_ACK, ack(4)),
}


@pytest.mark.parametrize("case", sorted(SESSION_ERRORS))
def test_share_session_errors(targets: tuple[Target, Target], case: str) -> None:
    key, build = SESSION_ERRORS[case]
    steps = create()
    steps[0].label = "created"
    differential(*targets, [*steps, *coordinator_ready(), Step(key, 1, build)])


def test_join_heartbeat_describe_leave(targets: tuple[Target, Target]) -> None:
    def steady(ctx: Context) -> ShareGroupHeartbeatRequest:
        return ShareGroupHeartbeatRequest(group_id=ctx.group, member_id=MEMBER, member_epoch=ctx.answers["joined"].member_epoch)

    differential(
        *targets,
        [
            *create(partitions=2),
            *coordinator_ready(),
            Step(HEARTBEAT, 1, hb(0), label="joined", divergences={"D6": ["member_epoch"], "D20": JOIN_ASSIGNMENT}),
            Step(HEARTBEAT, 1, steady, divergences={"D6": ["member_epoch"]}),
            Step(
                DESCRIBE, 1, lambda ctx: ShareGroupDescribeRequest(group_ids=[ctx.group]),
                divergences={"D6": DESCRIBED_EPOCHS, "D20": DESCRIBED_ASSIGNMENT},
            ),
            Step(HEARTBEAT, 1, hb(-1, topics=None)),
            Step(HEARTBEAT, 1, hb(5, topics=None)),
        ],
    )
