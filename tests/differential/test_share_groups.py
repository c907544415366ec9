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
# D20: Kafka assigns a share partition only once the share coordinator has initialized its state.
JOIN_ASSIGNMENT = ["assignment.topic_partitions", "assignment.topic_partitions.*"]
DESCRIBED_ASSIGNMENT = ["groups.0.members.0.assignment.topic_partitions", "groups.0.members.0.assignment.topic_partitions.*"]
# D20 again: once Kafka's share coordinator has initialized the partitions it bumps the group epoch,
# which ShareGroupDescribe shows if the initialization was quick (its state topic already loaded).
DESCRIBED_EPOCH = ["groups.0.group_epoch"]


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
            Step(HEARTBEAT, 1, hb(0), label="joined", divergences={"D20": JOIN_ASSIGNMENT}),
            Step(HEARTBEAT, 1, steady),
            Step(
                DESCRIBE, 1, lambda ctx: ShareGroupDescribeRequest(group_ids=[ctx.group]),
                divergences={"D20": DESCRIBED_ASSIGNMENT + DESCRIBED_EPOCH},
            ),
            Step(HEARTBEAT, 1, hb(-1, topics=None)),
            Step(HEARTBEAT, 1, hb(5, topics=None)),
        ],
    )


FLOWS = {
    "accept": [(0, 2, [1])],
    "release-reject": [(0, 0, [2]), (1, 2, [3, 1])],  # offset 0 comes back with delivery count 2
    "not-acquired": [(0, 3, [1])],  # offset 3 was never acquired: INVALID_RECORD_STATE, nothing applied
    "bad-types": [(0, 2, [1, 1])],  # neither one type nor one per offset
}


@pytest.mark.parametrize("flow", sorted(FLOWS))
def test_share_fetch_acknowledge_flow(targets: tuple[Target, Target], flow: str) -> None:
    """Join, wait until the partition is assigned (Kafka initializes it first, D20), produce
    three records, acquire them with a share session, acknowledge (ShareAcknowledge), fetch again
    (what was released comes back) and close the session."""
    from mockbroker_protocol.messages.share_acknowledge import AcknowledgementBatch as AckBatch
    from mockbroker_protocol.messages.share_acknowledge import AcknowledgePartition, AcknowledgeTopic
    from tests.differential.test_data_path import batch, produce

    epoch: dict[str, int] = {}
    held: dict[str, bool] = {}
    session = {"epoch": 1}

    def acquired(answer: Any) -> bool:
        """Kafka loads the share partition asynchronously: a fetch may come back empty first.
        Each answered fetch uses up a session epoch; the one with records is compared."""
        if answer.error_code == 0:
            session["epoch"] += 1
        return any(p.acquired_records for t in answer.responses for p in t.partitions)

    def joined(answer: Any) -> bool:
        epoch["member"] = answer.member_epoch
        held["partitions"] = bool(answer.assignment and answer.assignment.topic_partitions)
        return True

    def steady(ctx: Context) -> ShareGroupHeartbeatRequest:
        return ShareGroupHeartbeatRequest(group_id=ctx.group, member_id=MEMBER, member_epoch=epoch["member"])

    def assigned(answer: Any) -> bool:
        epoch["member"] = answer.member_epoch
        if answer.assignment is not None and answer.assignment.topic_partitions:
            held["partitions"] = True
        return held["partitions"]

    def session_fetch(session_epoch: int | None, wait_ms: int, with_topic: bool = True) -> Any:
        def build(ctx: Context) -> ShareFetchRequest:
            current = session["epoch"] if session_epoch is None else session_epoch
            topics = [FetchTopic(ctx.answers["created"].topics[0].topic_id, [FetchPartition(0)])] if with_topic else []
            return ShareFetchRequest(
                group_id=ctx.group, member_id=MEMBER, share_session_epoch=current, max_wait_ms=wait_ms,
                min_bytes=1, max_bytes=1 << 20, max_records=10, batch_size=10, topics=topics,
            )  # fmt: skip

        return build

    def accept(ctx: Context) -> ShareAcknowledgeRequest:
        topic_id = ctx.answers["created"].topics[0].topic_id
        return ShareAcknowledgeRequest(
            group_id=ctx.group, member_id=MEMBER, share_session_epoch=session["epoch"],
            topics=[AcknowledgeTopic(topic_id, [AcknowledgePartition(0, [AckBatch(f, last, types) for f, last, types in FLOWS[flow]])])],
        )  # fmt: skip

    steps = create()
    steps[0].label = "created"
    differential(
        *targets,
        [
            *steps,
            *coordinator_ready(),
            Step(HEARTBEAT, 1, hb(0), label="joined", compare=False, until=joined),
            Step(HEARTBEAT, 1, steady, compare=False, until=assigned),
            # Opening the session makes Kafka load the share partition (asynchronously), which fixes
            # its start offset (share.auto.offset.reset=latest) then: the open waits a second (an
            # empty long poll) so that the load is done before the records are produced. Not compared.
            Step(SHARE_FETCH, 1, session_fetch(0, 1000), compare=False, until=lambda a: session.update(epoch=1) or True),
            Step(0, 9, produce(batch(b"a", b"b", b"c"))),
            Step(SHARE_FETCH, 1, session_fetch(None, 5000, with_topic=False), until=acquired),
            Step(SHARE_ACK, 1, accept, until=lambda a: bool(session.update(epoch=session["epoch"] + 1)) or True),
            Step(SHARE_FETCH, 1, session_fetch(None, 0, with_topic=False)),
            Step(SHARE_FETCH, 1, session_fetch(-1, 0, with_topic=False)),
        ],
    )
