"""Differential: the share-group offset admin APIs (KIP-932: DescribeShareGroupOffsets at v0 and
v1, AlterShareGroupOffsets, DeleteShareGroupOffsets), ListGroups with the share type, DeleteGroups
of a share group, and OffsetCommit/OffsetFetch given a share group's id."""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker_protocol.messages.alter_share_group_offsets import (
    AlterShareGroupOffsetsRequest,
    AlterShareGroupOffsetsRequestPartition,
    AlterShareGroupOffsetsRequestTopic,
)
from mockbroker_protocol.messages.delete_groups import DeleteGroupsRequest
from mockbroker_protocol.messages.delete_share_group_offsets import (
    DeleteShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsRequestTopic,
)
from mockbroker_protocol.messages.describe_share_group_offsets import (
    DescribeShareGroupOffsetsRequest,
    DescribeShareGroupOffsetsRequestGroup,
    DescribeShareGroupOffsetsRequestTopic,
)
from mockbroker_protocol.messages.list_groups import ListGroupsRequest
from tests.differential.harness import Context, Step, Target, differential
from tests.differential.steps import create
from tests.differential.test_classic_groups import coordinator_ready
from tests.differential.test_share_groups import HEARTBEAT, hb

DESCRIBE_OFFSETS, ALTER_OFFSETS, DELETE_OFFSETS = 90, 91, 92
LIST_GROUPS, DELETE_GROUPS, OFFSET_COMMIT, OFFSET_FETCH = 16, 42, 8, 9
MISSING = "no-such-topic-share-offsets"


def describe(topics: list[tuple[str, list[int]]] | None, *, group: str | None = None) -> Any:
    """``topics`` names "ours" for the sequence's topic."""

    def build(ctx: Context) -> DescribeShareGroupOffsetsRequest:
        named = None if topics is None else [
            DescribeShareGroupOffsetsRequestTopic(ctx.topic if t == "ours" else t, parts) for t, parts in topics
        ]  # fmt: skip
        return DescribeShareGroupOffsetsRequest(
            [DescribeShareGroupOffsetsRequestGroup(ctx.group if group is None else group, named)]
        )

    return build


def alter(offsets: list[tuple[str, int, int]], *, group: str | None = None) -> Any:
    def build(ctx: Context) -> AlterShareGroupOffsetsRequest:
        topics: dict[str, AlterShareGroupOffsetsRequestTopic] = {}
        for t, p, offset in offsets:
            name = ctx.topic if t == "ours" else t
            topics.setdefault(name, AlterShareGroupOffsetsRequestTopic(name)).partitions.append(
                AlterShareGroupOffsetsRequestPartition(p, offset)
            )
        return AlterShareGroupOffsetsRequest(ctx.group if group is None else group, list(topics.values()))

    return build


def delete(topics: list[str], *, group: str | None = None) -> Any:
    def build(ctx: Context) -> DeleteShareGroupOffsetsRequest:
        return DeleteShareGroupOffsetsRequest(
            ctx.group if group is None else group,
            [DeleteShareGroupOffsetsRequestTopic(ctx.topic if t == "ours" else t) for t in topics],
        )

    return build


def prelude(partitions: int = 2) -> list[Step]:
    return [*create(partitions=partitions), *coordinator_ready()]


@pytest.mark.parametrize("version", [0, 1])
def test_describe_unknown_group(targets: tuple[Target, Target], version: int) -> None:
    differential(*targets, [
        *prelude(),
        Step(DESCRIBE_OFFSETS, version, describe(None)),
        Step(DESCRIBE_OFFSETS, version, describe([("ours", [0])])),
        Step(DESCRIBE_OFFSETS, version, describe(None, group="")),
    ])  # fmt: skip


def test_alter_then_describe_then_delete(targets: tuple[Target, Target]) -> None:
    differential(*targets, [
        *prelude(),
        Step(ALTER_OFFSETS, 0, alter([("ours", 0, 0), ("ours", 1, 0)])),
        Step(DESCRIBE_OFFSETS, 0, describe([("ours", [0, 1])])),
        Step(DESCRIBE_OFFSETS, 1, describe([("ours", [0, 1]), (MISSING, [0])])),
        Step(DESCRIBE_OFFSETS, 1, describe(None)),
        Step(DELETE_OFFSETS, 0, delete(["ours", MISSING])),
        Step(DESCRIBE_OFFSETS, 1, describe([("ours", [0, 1])])),
    ])  # fmt: skip


def test_alter_errors(targets: tuple[Target, Target]) -> None:
    differential(*targets, [
        *prelude(),
        Step(ALTER_OFFSETS, 0, alter([("ours", 0, 0)], group="")),
        Step(ALTER_OFFSETS, 0, alter([("ours", 5, 0), (MISSING, 0, 0)])),
    ])  # fmt: skip


def test_delete_unknown_group(targets: tuple[Target, Target]) -> None:
    differential(*targets, [
        *prelude(),
        Step(DELETE_OFFSETS, 0, delete(["ours"])),
        Step(DELETE_OFFSETS, 0, delete(["ours"], group="")),
    ])  # fmt: skip


def test_offsets_of_a_group_with_members(targets: tuple[Target, Target]) -> None:
    """A share group with a member: altering and deleting its offsets is NON_EMPTY_GROUP;
    ListGroups lists it as a share group; OffsetCommit and OffsetFetch on its id; DeleteGroups
    refuses it while it has a member and deletes it once the member left."""
    from mockbroker_protocol.messages.offset_commit import (
        OffsetCommitRequest,
        OffsetCommitRequestPartition,
        OffsetCommitRequestTopic,
    )
    from mockbroker_protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestGroup

    def commit(ctx: Context) -> OffsetCommitRequest:
        return OffsetCommitRequest(
            group_id=ctx.group,
            topics=[
                OffsetCommitRequestTopic(name=ctx.topic, partitions=[OffsetCommitRequestPartition(0, 1)])
            ],
        )

    def ours(tree: Any, ctx: Context) -> Any:
        return {**tree, "groups": [g for g in tree["groups"] if g["group_id"] == ctx.group]}

    differential(*targets, [
        *prelude(),
        Step(HEARTBEAT, 1, hb(0), label="joined", compare=False),
        Step(ALTER_OFFSETS, 0, alter([("ours", 0, 0)])),
        Step(DELETE_OFFSETS, 0, delete(["ours"])),
        Step(LIST_GROUPS, 5, lambda ctx: ListGroupsRequest(types_filter=["share"]), normalise=ours),
        Step(OFFSET_COMMIT, 9, commit),
        Step(OFFSET_FETCH, 8, lambda ctx: OffsetFetchRequest(groups=[OffsetFetchRequestGroup(group_id=ctx.group, topics=None)])),
        Step(DELETE_GROUPS, 2, lambda ctx: DeleteGroupsRequest(groups_names=[ctx.group])),
        Step(HEARTBEAT, 1, hb(-1, topics=None)),
        Step(DELETE_GROUPS, 2, lambda ctx: DeleteGroupsRequest(groups_names=[ctx.group])),
        Step(DESCRIBE_OFFSETS, 1, describe(None)),
    ])  # fmt: skip
