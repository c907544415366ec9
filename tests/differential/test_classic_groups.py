"""Differential: the classic group protocol and the group admin APIs.

FindCoordinator, JoinGroup (KIP-394's member-id handshake), SyncGroup, Heartbeat, LeaveGroup and
their errors; OffsetCommit/OffsetFetch edge cases; DescribeGroups, ListGroups, DeleteGroups and
OffsetDelete. Timeouts are inside Kafka's default bounds (group.min.session.timeout.ms 6000), so
both brokers run with Kafka's defaults; a group's members stay until their session expires.
"""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker_protocol import registry
from mockbroker_protocol.consumer_protocol import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    TopicPartition,
    encode_assignment,
    encode_subscription,
)
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.delete_groups import DeleteGroupsRequest
from mockbroker_protocol.messages.describe_groups import DescribeGroupsRequest
from mockbroker_protocol.messages.find_coordinator import FindCoordinatorRequest
from mockbroker_protocol.messages.heartbeat import HeartbeatRequest
from mockbroker_protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from mockbroker_protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity
from mockbroker_protocol.messages.list_groups import ListGroupsRequest
from mockbroker_protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from mockbroker_protocol.messages.offset_delete import (
    OffsetDeleteRequest,
    OffsetDeleteRequestPartition,
    OffsetDeleteRequestTopic,
)
from mockbroker_protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
)
from mockbroker_protocol.messages.sync_group import SyncGroupRequest, SyncGroupRequestAssignment
from tests.differential.harness import Context, Raw, Read, Step, Target, differential, unique
from tests.differential.steps import create

FIND_COORDINATOR, OFFSET_COMMIT, OFFSET_FETCH, JOIN, HEARTBEAT, LEAVE, SYNC = 10, 8, 9, 11, 12, 13, 14
DESCRIBE_GROUPS, LIST_GROUPS, DELETE_GROUPS, OFFSET_DELETE = 15, 16, 42, 47
SESSION_MS = 10_000
PROTOCOL = "range"


NOT_READY = (14, 15, 16)  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR


def coordinator_ready() -> list[Step]:
    """Wait (not compared) until the group's coordinator is found and loaded: Kafka creates
    __consumer_offsets on the first FindCoordinator and answers COORDINATOR_NOT_AVAILABLE, then
    NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS, until its partition is led and loaded."""
    return [
        Step(
            FIND_COORDINATOR,
            3,
            lambda ctx: FindCoordinatorRequest(key=ctx.group, key_type=0),
            compare=False,
            until=lambda a: a.error_code == 0,
        ),
        Step(
            DESCRIBE_GROUPS,
            5,
            lambda ctx: DescribeGroupsRequest(groups=[ctx.group]),
            compare=False,
            until=lambda a: a.groups[0].error_code not in NOT_READY,
        ),
    ]


def subscription(ctx: Context) -> bytes:
    return encode_subscription(ConsumerProtocolSubscription(topics=[ctx.topic]), 1)


def join(
    member: str | Any = "",
    *,
    session_ms: int = SESSION_MS,
    protocol_type: str = "consumer",
    protocols: list[str] | None = None,
    instance: str | None = None,
    group: str | None = None,
) -> Any:
    """A JoinGroup; ``member`` is a member id or the label of an earlier answer whose member id to use."""

    def build(ctx: Context) -> JoinGroupRequest:
        return JoinGroupRequest(
            group_id=ctx.group if group is None else group,
            session_timeout_ms=session_ms,
            rebalance_timeout_ms=SESSION_MS,
            member_id=member_id(ctx, member),
            group_instance_id=instance,
            protocol_type=protocol_type,
            protocols=[JoinGroupRequestProtocol(p, subscription(ctx)) for p in (protocols or [PROTOCOL])],
        )

    return build


def member_id(ctx: Context, ref: str) -> str:
    """``@label``: the member id of that earlier answer; anything else as it is."""
    if ref.startswith("@"):
        return str(ctx.answers[ref[1:]].member_id)
    return ref


def generation(ctx: Context, ref: str) -> int:
    return int(ctx.answers[ref[1:]].generation_id) if ref.startswith("@") else -1


def sync(member: str, *, gen: int | None = None, assign: bool = True, protocol: str | None = None) -> Any:
    def build(ctx: Context) -> SyncGroupRequest:
        mid = member_id(ctx, member)
        assignment = encode_assignment(ConsumerProtocolAssignment([TopicPartition(ctx.topic, [0])]), 1)
        return SyncGroupRequest(
            group_id=ctx.group,
            generation_id=generation(ctx, member) if gen is None else gen,
            member_id=mid,
            protocol_type="consumer",
            protocol_name=protocol or PROTOCOL,
            assignments=[SyncGroupRequestAssignment(mid, assignment)] if assign else [],
        )

    return build


def heartbeat(member: str, *, gen: int | None = None, group: str | None = None) -> Any:
    def build(ctx: Context) -> HeartbeatRequest:
        return HeartbeatRequest(
            group_id=ctx.group if group is None else group,
            generation_id=generation(ctx, member) if gen is None else gen,
            member_id=member_id(ctx, member),
        )

    return build


def joined(version: int = 9) -> list[Step]:
    """One member through KIP-394's handshake (v4+), JoinGroup and the leader's SyncGroup: Stable.
    Labels: "first" (MEMBER_ID_REQUIRED, v4+), "joined", "synced"."""
    steps = coordinator_ready()
    if version >= 4:
        steps.append(Step(JOIN, version, join(""), label="first"))
        steps.append(Step(JOIN, version, join("@first"), label="joined"))
    else:
        steps.append(Step(JOIN, version, join(""), label="joined"))
    steps.append(Step(SYNC, min(version, 5), sync("@joined"), label="synced"))
    return steps


@pytest.mark.parametrize("version", range(10))
def test_join_sync_heartbeat_leave(targets: tuple[Target, Target], version: int) -> None:
    leave_version = 5 if version >= 4 else 0

    def leave(ctx: Context) -> LeaveGroupRequest:
        mid = member_id(ctx, "@joined")
        if leave_version >= 3:
            return LeaveGroupRequest(group_id=ctx.group, members=[MemberIdentity(member_id=mid, reason="done")])
        return LeaveGroupRequest(group_id=ctx.group, member_id=mid)

    differential(
        *targets,
        [
            *joined(version),
            Step(HEARTBEAT, min(version, 4), heartbeat("@joined")),
            Step(LEAVE, leave_version, leave),
            Step(DESCRIBE_GROUPS, 5, describe()),
        ],
    )


@pytest.mark.parametrize("version", [0, 3, 4])
def test_heartbeat_errors(targets: tuple[Target, Target], version: int) -> None:
    differential(
        *targets,
        [
            *joined(),
            Step(HEARTBEAT, version, heartbeat("@joined", gen=99)),
            Step(HEARTBEAT, version, heartbeat("no-such-member")),
            Step(HEARTBEAT, version, heartbeat("no-such-member", gen=1, group="no-such-group-differential")),
            Step(HEARTBEAT, version, heartbeat("@joined", group="")),
        ],
    )


@pytest.mark.parametrize("version", [3, 5])
def test_sync_errors(targets: tuple[Target, Target], version: int) -> None:
    differential(
        *targets,
        [
            *joined(),
            Step(SYNC, version, sync("@joined", gen=7)),
            Step(SYNC, version, sync("unknown-member", gen=1)),
            Step(SYNC, version, sync("@joined", protocol="roundrobin")),
        ],
    )


@pytest.mark.parametrize("session_ms", [5999, 1_800_001])
@pytest.mark.parametrize("version", [1, 5, 9])
def test_join_session_timeout_bounds(targets: tuple[Target, Target], session_ms: int, version: int) -> None:
    differential(*targets, [*coordinator_ready(), Step(JOIN, version, join("", session_ms=session_ms))])


@pytest.mark.parametrize(
    "case",
    ["no-protocols", "unknown-member", "empty-group-id", "other-protocol-type", "no-common-protocol", "empty-protocol-type"],
)
def test_join_errors(targets: tuple[Target, Target], case: str) -> None:
    steps: list[Any] = [*joined()]
    if case == "no-protocols":
        steps.append(Step(JOIN, 9, lambda ctx: JoinGroupRequest(ctx.group, SESSION_MS, SESSION_MS, "", None, "consumer", [])))
    elif case == "unknown-member":
        steps.append(Step(JOIN, 9, join("stranger-member-id")))
    elif case == "empty-group-id":
        steps.append(Step(JOIN, 9, join("", group="")))
    elif case == "other-protocol-type":
        steps.append(Step(JOIN, 9, join("", protocol_type="connect")))
    elif case == "no-common-protocol":
        steps.append(Step(JOIN, 9, join("", protocols=["roundrobin"]), label="other"))
        steps.append(Step(JOIN, 9, join("@other", protocols=["roundrobin"])))
    elif case == "empty-protocol-type":
        steps.append(Step(JOIN, 9, join("", protocol_type="")))
    differential(*targets, steps)


def test_two_members_rebalance(targets: tuple[Target, Target]) -> None:
    """A second member's join puts the group in PreparingRebalance: the leader's heartbeat gets
    REBALANCE_IN_PROGRESS, it rejoins, and both JoinGroups complete with generation 2."""
    differential(
        *targets,
        [
            *joined(),
            Step(JOIN, 9, join(""), label="b-first", conn="b"),
            Step(JOIN, 9, join("@b-first"), label="b-joined", conn="b", send_only=True),
            # Kafka's coordinator takes B's join in its own time: wait until the rebalance shows.
            Step(HEARTBEAT, 4, heartbeat("@joined"), until=lambda a: a.error_code == 27),
            Step(JOIN, 9, join("@joined"), label="a-rejoined", normalise=sorted_members),
            Read("b-joined"),
            Step(DESCRIBE_GROUPS, 5, describe(), normalise=sorted_described),
        ],
    )


def sorted_members(tree: Any, ctx: Context | None = None) -> Any:
    tree["members"].sort(key=lambda m: str(m["member_id"]))
    return tree


def sorted_described(tree: Any, ctx: Context | None = None) -> Any:
    for group in tree["groups"]:
        group["members"].sort(key=lambda m: str(m["member_id"]))
    return tree


def test_static_member_join(targets: tuple[Target, Target]) -> None:
    """KIP-345: a static member (group.instance.id) gets its member id at once, no handshake."""
    differential(
        *targets,
        [
            *coordinator_ready(),
            Step(JOIN, 9, join("", instance="static-1"), label="joined"),
            Step(SYNC, 5, sync("@joined")),
            Step(DESCRIBE_GROUPS, 5, describe()),
        ],
    )


@pytest.mark.parametrize("version", [0, 2, 3, 5])
def test_leave_errors(targets: tuple[Target, Target], version: int) -> None:
    def leave(ctx: Context) -> LeaveGroupRequest:
        if version >= 3:
            return LeaveGroupRequest(
                group_id=ctx.group, members=[MemberIdentity(member_id="stranger"), MemberIdentity(member_id="")]
            )
        return LeaveGroupRequest(group_id=ctx.group, member_id="stranger")

    def leave_unknown_group(ctx: Context) -> LeaveGroupRequest:
        request = leave(ctx)
        request.group_id = "no-such-group-differential"
        return request

    differential(*targets, [*joined(), Step(LEAVE, version, leave), Step(LEAVE, version, leave_unknown_group)])


# -- offsets ----------------------------------------------------------------------------------------


def commit(
    offset: int = 5, *, member: str = "", gen: int = -1, partition: int = 0, metadata: str | None = "m",
    topic: str | None = None, by_id: bool = False,
) -> Any:  # fmt: skip
    def build(ctx: Context) -> OffsetCommitRequest:
        t = OffsetCommitRequestTopic(
            name=topic or ctx.topic,
            partitions=[OffsetCommitRequestPartition(partition, offset, -1, -1, metadata)],
        )
        if by_id:
            t.name = ""
            t.topic_id = ctx.answers["created"].topics[0].topic_id
        return OffsetCommitRequest(
            group_id=ctx.group,
            generation_id_or_member_epoch=generation(ctx, member) if gen == -2 else gen,
            member_id=member_id(ctx, member),
            topics=[t],
        )

    return build


def fetch_offsets(version: int, partitions: list[int] | None = (0, 1), *, stable: bool = False) -> Any:  # type: ignore[assignment]
    def build(ctx: Context) -> OffsetFetchRequest:
        if version >= 8:
            topics = None if partitions is None else [OffsetFetchRequestTopics(name=ctx.topic, partition_indexes=list(partitions))]
            if version >= 10 and topics:
                topics[0].name = ""
                topics[0].topic_id = ctx.answers["created"].topics[0].topic_id
            return OffsetFetchRequest(groups=[OffsetFetchRequestGroup(group_id=ctx.group, topics=topics)], require_stable=stable)
        topics_old = None if partitions is None else [OffsetFetchRequestTopic(ctx.topic, list(partitions))]
        return OffsetFetchRequest(group_id=ctx.group, topics=topics_old, require_stable=stable)

    return build


def created_topic(partitions: int = 2) -> list[Step]:
    steps = create(partitions=partitions)
    steps[0].label = "created"
    return steps


@pytest.mark.parametrize("version", range(2, 11))  # v0-1 are gone in 4.x (KIP-896)
def test_standalone_commit_then_fetch(targets: tuple[Target, Target], version: int) -> None:
    """A commit with generation -1 and no member (an admin or simple consumer) creates an Empty group."""
    fetch_version = min(version, 10)
    differential(
        *targets,
        [
            *created_topic(),
            *coordinator_ready(),
            Step(OFFSET_COMMIT, version, commit(7, by_id=version >= 10)),
            Step(OFFSET_FETCH, fetch_version, fetch_offsets(fetch_version)),
            Step(DESCRIBE_GROUPS, 5, describe()),
        ],
    )


@pytest.mark.parametrize("version", [1, 2, 5, 7, 8, 9, 10])
def test_offset_fetch_unknown_group_and_all_partitions(targets: tuple[Target, Target], version: int) -> None:
    steps: list[Any] = [*created_topic(), *coordinator_ready(), Step(OFFSET_FETCH, version, fetch_offsets(version))]
    if version >= 2:
        steps.append(Step(OFFSET_FETCH, version, fetch_offsets(version, None)))
    differential(*targets, steps)


@pytest.mark.parametrize(
    "case", ["wrong-generation", "unknown-member", "unknown-topic", "unknown-partition", "metadata-too-large", "member-of-group"]
)
def test_commit_edge_cases(targets: tuple[Target, Target], case: str) -> None:
    commits = {
        "wrong-generation": commit(member="@joined", gen=42),
        "unknown-member": commit(member="stranger", gen=1),
        "unknown-topic": commit(topic="no-such-topic-differential"),
        "unknown-partition": commit(partition=9),
        "metadata-too-large": commit(metadata="x" * 4097),
        "member-of-group": commit(member="@joined", gen=-2),
    }
    differential(
        *targets,
        [
            *created_topic(),
            *joined(),
            Step(OFFSET_COMMIT, 9, commits[case]),
            Step(OFFSET_FETCH, 9, fetch_offsets(9)),
        ],
    )


def test_commit_to_empty_group_with_generation(targets: tuple[Target, Target]) -> None:
    """A commit naming a member and generation of a group that does not exist."""
    differential(*targets, [*created_topic(), *coordinator_ready(), Step(OFFSET_COMMIT, 9, commit(member="ghost", gen=3))])


# -- group admin ------------------------------------------------------------------------------------


def describe(*extra: str) -> Any:
    def build(ctx: Context) -> DescribeGroupsRequest:
        return DescribeGroupsRequest(groups=[ctx.group, *extra], include_authorized_operations=False)

    return build


@pytest.mark.parametrize("version", range(6))
def test_describe_groups(targets: tuple[Target, Target], version: int) -> None:
    differential(
        *targets,
        [*joined(), Step(DESCRIBE_GROUPS, version, describe("no-such-group-differential"))],
    )


def only_ours(tree: Any, ctx: Context) -> Any:
    """ListGroups lists every group of the broker; only this sequence's is compared."""
    tree["groups"] = [g for g in tree["groups"] if g["group_id"] == ctx.group]
    return tree


@pytest.mark.parametrize("version", range(6))
def test_list_groups(targets: tuple[Target, Target], version: int) -> None:
    def request(ctx: Context) -> ListGroupsRequest:
        return ListGroupsRequest(states_filter=["Stable"] if version >= 4 else [], types_filter=["classic"] if version >= 5 else [])

    differential(*targets, [*joined(), Step(LIST_GROUPS, version, request, normalise=only_ours)])


@pytest.mark.parametrize("version", [0, 1, 2])
def test_delete_groups(targets: tuple[Target, Target], version: int) -> None:
    def delete(ctx: Context) -> DeleteGroupsRequest:
        return DeleteGroupsRequest(groups_names=[ctx.group, "no-such-group-differential"])

    differential(
        *targets,
        [
            *created_topic(),
            *joined(),
            Step(DELETE_GROUPS, version, delete, normalise=sorted_results),  # a member is in it: NON_EMPTY_GROUP
            Step(LEAVE, 5, lambda ctx: LeaveGroupRequest(ctx.group, "", [MemberIdentity(member_id_of(ctx))])),
            Step(OFFSET_COMMIT, 9, commit(3)),
            Step(DELETE_GROUPS, version, delete, normalise=sorted_results),
            Step(OFFSET_FETCH, 9, fetch_offsets(9)),
        ],
    )


def sorted_results(tree: Any, ctx: Context | None = None) -> Any:
    """Kafka answers groups in the order of their coordinator shards' replies; no client relies on it."""
    tree["results"].sort(key=lambda r: str(r["group_id"]))
    return tree


def member_id_of(ctx: Context) -> str:
    return str(ctx.answers["joined"].member_id)


def offset_delete(partitions: list[int], topic: str | None = None, group: str | None = None) -> Any:
    def build(ctx: Context) -> OffsetDeleteRequest:
        return OffsetDeleteRequest(
            group_id=group or ctx.group,
            topics=[OffsetDeleteRequestTopic(topic or ctx.topic, [OffsetDeleteRequestPartition(p) for p in partitions])],
        )

    return build


@pytest.mark.parametrize("version", [0])
def test_offset_delete(targets: tuple[Target, Target], version: int) -> None:
    differential(
        *targets,
        [
            *created_topic(),
            *joined(),
            Step(OFFSET_COMMIT, 9, commit(4, member="@joined", gen=-2)),
            Step(OFFSET_DELETE, version, offset_delete([0])),  # subscribed: GROUP_SUBSCRIBED_TO_TOPIC
            Step(LEAVE, 5, lambda ctx: LeaveGroupRequest(ctx.group, "", [MemberIdentity(member_id_of(ctx))])),
            Step(OFFSET_DELETE, version, offset_delete([0, 1])),
            Step(OFFSET_DELETE, version, offset_delete([0], topic="no-such-topic-differential")),
            Step(OFFSET_DELETE, version, offset_delete([0], group="no-such-group-differential")),
            Step(OFFSET_FETCH, 9, fetch_offsets(9)),
        ],
    )


@pytest.mark.parametrize("version", range(7))
def test_find_coordinator(targets: tuple[Target, Target], version: int) -> None:
    def request(ctx: Context) -> FindCoordinatorRequest:
        if version >= 4:
            return FindCoordinatorRequest(key_type=0, coordinator_keys=[ctx.group, ctx.group + "-b"])
        return FindCoordinatorRequest(key=ctx.group, key_type=0)

    differential(*targets, [*coordinator_ready(), Step(FIND_COORDINATOR, version, request)])


def test_find_coordinator_bad_key_type(targets: tuple[Target, Target]) -> None:
    differential(
        *targets,
        [*coordinator_ready(), Step(FIND_COORDINATOR, 3, lambda ctx: FindCoordinatorRequest(key=ctx.group, key_type=7))],
    )


STRING_LIMIT = 0x7FFF  # Kafka's generated readers refuse a longer string field ("had invalid length")


def over_limit_join(ctx: Context) -> bytes:
    """A JoinGroup v9 whose group id is one byte over Kafka's limit (our encoder writes it; Kafka's
    reader refuses it, the request does not parse and the broker closes the connection)."""
    request = join("")(ctx)
    request.group_id = ctx.group + "g"
    return registry.encode_request(RequestHeader(JOIN, 9, 99, "over-limit"), request)


def test_group_id_at_kafkas_string_limit(targets: tuple[Target, Target]) -> None:
    """A group id of 32,767 bytes is a group like any other (only "" is INVALID_GROUP_ID): found,
    joined through KIP-394's handshake and synced; one byte more closes that connection only."""
    group = unique("dg").ljust(STRING_LIMIT, "g")
    differential(
        *targets,
        [*joined(9), Raw(over_limit_join, label="over-limit"), Step(HEARTBEAT, 4, heartbeat("@joined"))],
        names=(unique("dt"), unique("dt2"), group),
    )
