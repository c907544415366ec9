"""Differential: KIP-1071 streams groups (StreamsGroupHeartbeat, StreamsGroupDescribe): a member joining
with a word-count topology, the internal topics the broker creates, the tasks it is given, leaving;
a missing source topic; the request checks; unknown groups and members."""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker_protocol.messages import streams_group_heartbeat as sgh
from mockbroker_protocol.messages.delete_groups import DeleteGroupsRequest
from mockbroker_protocol.messages.list_groups import ListGroupsRequest
from mockbroker_protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from mockbroker_protocol.messages.offset_fetch import OffsetFetchRequest, OffsetFetchRequestTopic
from mockbroker_protocol.messages.streams_group_describe import StreamsGroupDescribeRequest
from tests.differential.harness import Context, Step, Target, differential
from tests.differential.steps import creatable, create, create_topics, metadata, topic_ready
from tests.differential.test_classic_groups import coordinator_ready, only_ours

HEARTBEAT, DESCRIBE = 88, 89
MEMBER = "streams-member-1"


def repartition(ctx: Context) -> str:
    return f"{ctx.group}-count-repartition"


def changelog(ctx: Context) -> str:
    return f"{ctx.group}-count-changelog"


def topology(ctx: Context, source: str | None = None, epoch: int = 1) -> sgh.Topology:
    """A word count: subtopology 0 reads the source and writes the repartition topic; subtopology 1
    reads it into a state store with a changelog."""
    return sgh.Topology(epoch=epoch, subtopologies=[
        sgh.Subtopology(subtopology_id="0", source_topics=[source or ctx.topic], repartition_sink_topics=[repartition(ctx)]),
        sgh.Subtopology(
            subtopology_id="1",
            repartition_source_topics=[sgh.TopicInfo(repartition(ctx), 0, 0, [sgh.KeyValue("cleanup.policy", "delete")])],
            state_changelog_topics=[sgh.TopicInfo(changelog(ctx), 0, 0, [sgh.KeyValue("cleanup.policy", "compact")])],
        ),
    ])  # fmt: skip


def join(member: str = MEMBER, *, source: str | None = None, **fields: Any) -> Any:
    def build(ctx: Context) -> sgh.StreamsGroupHeartbeatRequest:
        request = sgh.StreamsGroupHeartbeatRequest(
            group_id=ctx.group, member_id=member, member_epoch=0, rebalance_timeout_ms=30_000,
            topology=topology(ctx, source), process_id=f"process-{member}", active_tasks=[], standby_tasks=[],
            warmup_tasks=[],
        )  # fmt: skip
        for name, value in fields.items():
            setattr(request, name, value)
        return request

    return build


def beat(label: str, member: str = MEMBER, *, owned: bool = True, **fields: Any) -> Any:
    """A heartbeat at the epoch of the answer labelled ``label``, reporting the tasks it gave."""

    def build(ctx: Context) -> sgh.StreamsGroupHeartbeatRequest:
        answer = ctx.answers[label]
        request = sgh.StreamsGroupHeartbeatRequest(group_id=ctx.group, member_id=member, member_epoch=answer.member_epoch)
        if owned:
            request.active_tasks = [sgh.StreamsGroupHeartbeatRequestTaskIds(t.subtopology_id, t.partitions)
                                    for t in answer.active_tasks or ()]  # fmt: skip
            request.standby_tasks, request.warmup_tasks = [], []
        for name, value in fields.items():
            setattr(request, name, value)
        return request

    return build


def describe(ctx: Context) -> StreamsGroupDescribeRequest:
    return StreamsGroupDescribeRequest(group_ids=[ctx.group])


def sorted_tasks(tree: Any, ctx: Context | None = None) -> Any:
    """Task lists in subtopology order (Kafka builds them from a HashMap)."""
    for key in ("active_tasks", "standby_tasks", "warmup_tasks"):
        if isinstance(tree.get(key), list):
            tree[key].sort(key=lambda t: t["subtopology_id"])
    return tree


def internal_topics_ready(partitions: int) -> list[Step]:
    """Wait (not compared) until the internal topics the heartbeat asked for exist and are led."""
    return [topic_ready(repartition, partitions), topic_ready(changelog, partitions)]


def members_by_id(tree: Any, ctx: Context | None = None) -> Any:
    """Described members in member id order (Kafka keeps them in a hash table)."""
    for group in tree.get("groups", []):
        group["members"].sort(key=lambda m: m["member_id"])
    return tree


def topology_ready(label: str, member: str = MEMBER) -> Step:
    """Heartbeat (not compared) until the group sees the internal topics it asked for: Kafka's
    coordinator learns of created topics from its next metadata image, a moment later."""
    return Step(HEARTBEAT, 0, beat(label, member), label=label + "-ready", compare=False,
                until=lambda a: a.error_code == 0 and not a.status and bool(a.active_tasks))


def test_join_get_tasks_describe_leave(targets: tuple[Target, Target]) -> None:
    def leave(ctx: Context) -> sgh.StreamsGroupHeartbeatRequest:
        return sgh.StreamsGroupHeartbeatRequest(group_id=ctx.group, member_id=MEMBER, member_epoch=-1)

    differential(
        *targets,
        [
            *create(partitions=2),
            *coordinator_ready(),
            Step(HEARTBEAT, 0, join(), label="joined", normalise=sorted_tasks),
            Step(DESCRIBE, 0, describe, normalise=members_by_id),
            *internal_topics_ready(2),
            topology_ready("joined"),
            Step(HEARTBEAT, 0, beat("joined-ready"), label="steady", normalise=sorted_tasks),
            Step(DESCRIBE, 0, describe, normalise=members_by_id),
            Step(3, 12, metadata([repartition, changelog])),
            Step(HEARTBEAT, 0, leave),
            Step(DESCRIBE, 0, describe, normalise=members_by_id),
        ],
    )


def test_missing_source_topic(targets: tuple[Target, Target]) -> None:
    differential(
        *targets,
        [
            *coordinator_ready(),
            Step(HEARTBEAT, 0, join(source="no-such-topic-anywhere"), label="joined", normalise=sorted_tasks),
            Step(DESCRIBE, 0, describe, normalise=members_by_id),
            Step(HEARTBEAT, 0, beat("joined"), normalise=sorted_tasks),
        ],
    )


INVALID: dict[str, dict[str, Any]] = {
    "empty-member": {"member_id": ""},
    "static-member": {"instance_id": "instance"},
    "no-rebalance-timeout": {"rebalance_timeout_ms": -1},
    "no-topology": {"topology": None},
    "owned-on-join": {"active_tasks": [sgh.StreamsGroupHeartbeatRequestTaskIds("0", [0])]},
    "one-task-list": {"standby_tasks": None},
    "bad-epoch": {"member_epoch": -3, "topology": None},
    "topology-not-on-join": {"member_epoch": 4},
    "warmup-tasks": {"warmup_tasks": [sgh.StreamsGroupHeartbeatRequestTaskIds("0", [0])]},
    "task-offsets": {"task_offsets": []},
}


@pytest.mark.parametrize("case", sorted(INVALID))
def test_invalid_heartbeats(targets: tuple[Target, Target], case: str) -> None:
    differential(*targets, [*create(partitions=1), *coordinator_ready(), Step(HEARTBEAT, 0, join(**INVALID[case]))])


def test_changelog_with_a_partition_count_is_an_invalid_topology(targets: tuple[Target, Target]) -> None:
    def build(ctx: Context) -> sgh.StreamsGroupHeartbeatRequest:
        request: sgh.StreamsGroupHeartbeatRequest = join()(ctx)
        assert request.topology is not None and request.topology.subtopologies is not None
        request.topology.subtopologies[1].state_changelog_topics[0].partitions = 3
        return request

    differential(*targets, [*create(partitions=1), *coordinator_ready(), Step(HEARTBEAT, 0, build)])


def test_unknown_group_and_member(targets: tuple[Target, Target]) -> None:
    def unknown_member(ctx: Context) -> sgh.StreamsGroupHeartbeatRequest:
        return sgh.StreamsGroupHeartbeatRequest(group_id=ctx.group, member_id="someone-else", member_epoch=1)

    differential(
        *targets,
        [
            *create(partitions=1),
            *coordinator_ready(),
            Step(HEARTBEAT, 0, unknown_member),
            Step(DESCRIBE, 0, describe, normalise=members_by_id),
            Step(HEARTBEAT, 0, join(), label="joined", normalise=sorted_tasks),
            Step(HEARTBEAT, 0, unknown_member),
            Step(HEARTBEAT, 0, beat("joined", member_epoch=9)),
        ],
    )


def test_missing_source_topic_then_created(targets: tuple[Target, Target]) -> None:
    """MISSING_SOURCE_TOPICS until the topic exists; then the internal topics, then tasks."""
    differential(
        *targets,
        [
            *coordinator_ready(),
            Step(HEARTBEAT, 0, join(), label="joined", normalise=sorted_tasks),
            *create(partitions=3),
            Step(HEARTBEAT, 0, beat("joined"), label="later", compare=False,
                 until=lambda a: bool(a.status) and a.status[0].status_code != 1),
            *internal_topics_ready(3),
            topology_ready("later"),
            Step(DESCRIBE, 0, describe, normalise=members_by_id),
        ],
    )


def test_second_member_takes_half_after_the_first_revokes(targets: tuple[Target, Target]) -> None:
    """Revoke before assign: the second member is given tasks only once the first reported them gone."""
    differential(
        *targets,
        [
            *create(partitions=2),
            *coordinator_ready(),
            Step(HEARTBEAT, 0, join("a"), label="a-joined", normalise=sorted_tasks),
            *internal_topics_ready(2),
            topology_ready("a-joined", "a"),
            Step(HEARTBEAT, 0, join("b"), label="b-joined", normalise=sorted_tasks),
            Step(HEARTBEAT, 0, beat("a-joined-ready", "a"), label="a-revoking", normalise=sorted_tasks),
            Step(HEARTBEAT, 0, beat("b-joined", "b"), label="b-waiting", normalise=sorted_tasks),
            Step(DESCRIBE, 0, describe, normalise=members_by_id),
            Step(HEARTBEAT, 0, beat("a-revoking", "a"), label="a-revoked", normalise=sorted_tasks),
            Step(HEARTBEAT, 0, beat("b-waiting", "b"), label="b-given", normalise=sorted_tasks),
            Step(DESCRIBE, 0, describe, normalise=members_by_id),
        ],
    )


def test_shutdown_list_offsets_and_delete(targets: tuple[Target, Target]) -> None:
    """A shutdown request reaches the member; ListGroups lists the group with type streams; a
    member's OffsetCommit is checked against its epoch; DeleteGroups refuses a non-empty group and
    deletes an empty one with its offsets."""
    def commit(epoch_of: str, delta: int = 0) -> Any:
        def build(ctx: Context) -> OffsetCommitRequest:
            return OffsetCommitRequest(
                group_id=ctx.group, generation_id_or_member_epoch=ctx.answers[epoch_of].member_epoch + delta,
                member_id=MEMBER,
                topics=[OffsetCommitRequestTopic(name=ctx.topic, partitions=[OffsetCommitRequestPartition(partition_index=0, committed_offset=7)])],
            )  # fmt: skip

        return build

    def fetch(ctx: Context) -> OffsetFetchRequest:
        return OffsetFetchRequest(group_id=ctx.group, topics=[OffsetFetchRequestTopic(name=ctx.topic, partition_indexes=[0])])

    def delete(ctx: Context) -> DeleteGroupsRequest:
        return DeleteGroupsRequest(groups_names=[ctx.group])

    def leave(ctx: Context) -> sgh.StreamsGroupHeartbeatRequest:
        return sgh.StreamsGroupHeartbeatRequest(group_id=ctx.group, member_id=MEMBER, member_epoch=-1)

    differential(
        *targets,
        [
            *create(partitions=2),
            *coordinator_ready(),
            Step(HEARTBEAT, 0, join(), label="joined", normalise=sorted_tasks),
            *internal_topics_ready(2),
            topology_ready("joined"),
            Step(16, 5, lambda ctx: ListGroupsRequest(types_filter=["streams"]), normalise=only_ours),
            Step(8, 9, commit("joined-ready")),
            Step(8, 9, commit("joined-ready", 1)),
            Step(42, 2, delete),
            Step(HEARTBEAT, 0, beat("joined-ready", shutdown_application=True), label="shutdown", normalise=sorted_tasks),
            Step(HEARTBEAT, 0, beat("shutdown"), normalise=sorted_tasks),
            Step(HEARTBEAT, 0, leave),
            Step(16, 5, lambda ctx: ListGroupsRequest(types_filter=["streams"]), normalise=only_ours),
            Step(9, 7, fetch),
            Step(42, 2, delete),
            Step(9, 7, fetch),
        ],
    )


def test_an_existing_internal_topic_with_other_partitions(targets: tuple[Target, Target]) -> None:
    """INCORRECTLY_PARTITIONED_TOPICS: the repartition topic exists with 3 partitions where the
    topology needs as many as the source's 2, and so the changelog, made with 2, needs 3 (its
    subtopology reads the 3). Kafka names the first of the two in StreamsTopology.requiredTopics,
    a HashSet: its order of these random names. The changelog is made here, not left to the
    coordinator: while Kafka's metadata image lags, its first heartbeat would create it with 2
    (then both are wrong on Kafka) where mockbroker, which does not lag, never does (one wrong)."""
    differential(
        *targets,
        [
            *create(partitions=2),
            Step(19, 7, create_topics(creatable(repartition, partitions=3), creatable(changelog, partitions=2))),
            topic_ready(repartition, 3),
            topic_ready(changelog, 2),
            *coordinator_ready(),
            # Kafka's group coordinator learns of the topic from its metadata image, which may
            # lag Metadata's answers: the member rejoins until it reports the topic (a rejoin
            # that finds the topic bumps Kafka's epoch once more, hence the epoch is not compared).
            Step(HEARTBEAT, 0, join(), label="joined", normalise=sorted_tasks, ignore=("member_epoch",),
                 until=lambda a: bool(a.status) and a.status[0].status_code == 2),
        ],
    )


def test_describe_unknown_and_other_kinds(targets: tuple[Target, Target]) -> None:
    differential(*targets, [*coordinator_ready(), Step(DESCRIBE, 0, describe), Step(DESCRIBE, 0, lambda ctx: StreamsGroupDescribeRequest(group_ids=[""]))])


def test_three_members_share_the_tasks_as_kafka_assigns_them(targets: tuple[Target, Target]) -> None:
    """Three members (three processes) join before the source topic exists; once it and the
    internal topics exist, the first assignment spreads the 2 x 6 tasks as Kafka's sticky
    assignor does."""
    differential(
        *targets,
        [
            *coordinator_ready(),
            Step(HEARTBEAT, 0, join("a"), label="a-joined", normalise=sorted_tasks),
            Step(HEARTBEAT, 0, join("b"), label="b-joined", normalise=sorted_tasks),
            Step(HEARTBEAT, 0, join("c"), label="c-joined", normalise=sorted_tasks),
            *create(partitions=6),
            Step(HEARTBEAT, 0, beat("a-joined", "a"), label="a-later", compare=False,
                 until=lambda a: bool(a.status) and a.status[0].status_code != 1),
            *internal_topics_ready(6),
            topology_ready("a-later", "a"),
            Step(DESCRIBE, 0, describe, normalise=members_by_id),
        ],
    )
