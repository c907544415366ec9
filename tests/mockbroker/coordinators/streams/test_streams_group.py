"""The KIP-1071 streams-group coordinator, pure, on the manual clock: request checks, topology
validation and its statuses, internal topics, the task assignor, reconciliation (revoke before
assign), timers, leaving, shutdown requests, endpoints, describe, ListGroups, DeleteGroups, offsets."""

from __future__ import annotations

import json

import pytest

from mockbroker.coordinators.streams.topology import (
    StreamsTopology,
    Subtopology,
    TopicInfo,
    configure_topics,
)
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.hashing import java_hash_map_order
from mockbroker_protocol.messages import streams_group_heartbeat as sgh
from mockbroker_protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from tests.mockbroker.coordinators.streams_groups_support import (
    CHANGELOG,
    REPARTITION,
    StreamsHarness,
    tasks_of,
    word_count,
)

ALL = {"0": [0, 1, 2, 3], "1": [0, 1, 2, 3]}


def statuses(response: sgh.StreamsGroupHeartbeatResponse) -> list[tuple[int, str]]:
    return [(s.status_code, s.status_detail) for s in response.status or ()]


# -- the request checks (GroupCoordinatorService, before NOT_COORDINATOR) -----------------------------


@pytest.mark.parametrize(
    ("fields", "code", "message"),
    [
        ({"member_id": ""}, ErrorCode.INVALID_REQUEST, "MemberId can't be empty."),
        ({"group_id": " "}, ErrorCode.INVALID_REQUEST, "GroupId can't be empty."),
        ({"instance_id": "i"}, ErrorCode.INVALID_REQUEST, "Static membership is not yet supported."),
        ({"task_offsets": []}, ErrorCode.INVALID_REQUEST, "TaskOffsets are not supported yet."),
        ({"task_end_offsets": []}, ErrorCode.INVALID_REQUEST, "TaskEndOffsets are not supported yet."),
        ({"rack_id": ""}, ErrorCode.INVALID_REQUEST, "RackId can't be empty."),
        ({"rebalance_timeout_ms": -1}, ErrorCode.INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request."),
        ({"active_tasks": [sgh.StreamsGroupHeartbeatRequestTaskIds("0", [0])]}, ErrorCode.INVALID_REQUEST,
         "ActiveTasks must be empty when (re-)joining."),
        ({"standby_tasks": [sgh.StreamsGroupHeartbeatRequestTaskIds("0", [0])]}, ErrorCode.INVALID_REQUEST,
         "StandbyTasks must be empty when (re-)joining."),
        ({"topology": None}, ErrorCode.INVALID_REQUEST, "Topology must be non-null when (re-)joining."),
        # null task lists on a join are refused as not empty (Utils.throwIfNotEmptyCollection)
        ({"standby_tasks": None}, ErrorCode.INVALID_REQUEST, "StandbyTasks must be empty when (re-)joining."),
        ({"member_epoch": 1, "topology": None, "standby_tasks": None}, ErrorCode.INVALID_REQUEST,
         "If one task-type is non-null, all must be non-null."),
        ({"member_epoch": -3, "topology": None}, ErrorCode.INVALID_REQUEST,
         "MemberEpoch is -3, but must be greater than or equal to -2."),
        ({"member_epoch": 1}, ErrorCode.INVALID_REQUEST, "Topology can only be provided when (re-)joining."),
    ],
)
def test_request_checks(fields: dict[str, object], code: ErrorCode, message: str) -> None:
    h = StreamsHarness()
    request = sgh.StreamsGroupHeartbeatRequest(
        group_id="g", member_id="m", member_epoch=0, rebalance_timeout_ms=1000, topology=word_count(),
        active_tasks=[], standby_tasks=[], warmup_tasks=[], process_id="p",
    )  # fmt: skip
    for name, value in fields.items():
        setattr(request, name, value)
    response = h.send(request)
    assert (response.error_code, response.error_message) == (code, message)
    assert "g" not in h.streams.groups


def test_changelog_topic_with_a_partition_count_is_an_invalid_topology() -> None:
    h = StreamsHarness()
    topology = word_count()
    topology.subtopologies[1].state_changelog_topics[0].partitions = 3
    response = h.enter("a", topology=topology)
    assert (response.error_code, response.error_message) == (
        ErrorCode.STREAMS_INVALID_TOPOLOGY,
        f"Changelog topic {CHANGELOG} must have an undefined partition count, but it is set to 3.",
    )


# -- topology validation, internal topics -------------------------------------------------------------


def test_missing_source_topic_then_recovery_when_it_appears() -> None:
    h = StreamsHarness(topics={})
    response = h.enter("a")
    assert response.error_code == ErrorCode.NONE
    assert (response.member_id, response.member_epoch) == ("a", 2)  # a new group starts at epoch 1, as in Kafka
    assert statuses(response) == [(1, "Source topics input are missing.")]
    assert tasks_of(response.active_tasks) == {}
    assert h.snap()["state"] == "NotReady"
    h.cluster.create_topic("input", 2)
    response = h.beat("a", h.epoch("a"), active={}, standby={})
    assert statuses(response) == [(3, f"Internal topics are missing: {CHANGELOG}, {REPARTITION}")]
    assert sorted(h.created) == [CHANGELOG, REPARTITION]
    assert len(h.cluster.topics[REPARTITION].partitions) == 2 and len(h.cluster.topics[CHANGELOG].partitions) == 2
    assert h.cluster.topics[CHANGELOG].configs == {"cleanup.policy": "compact"}
    response = h.beat("a", h.epoch("a"), active={}, standby={})
    assert statuses(response) == []
    assert (response.member_epoch, tasks_of(response.active_tasks)) == (4, {"0": [0, 1], "1": [0, 1]})
    assert h.snap()["state"] == "Stable"
    assert h.snap()["subtopologies"] == {"0": 2, "1": 2}


def test_an_existing_internal_topic_with_other_partitions_is_incorrectly_partitioned() -> None:
    h = StreamsHarness(topics={"input": 4, REPARTITION: 3})
    response = h.enter("a")
    assert statuses(response) == [
        (2, f"Existing topic {REPARTITION} has different number of partitions: expected 4, found 3")
    ]
    assert h.created == []
    assert h.snap()["state"] == "NotReady"


def test_copartitioned_sources_must_agree() -> None:
    h = StreamsHarness(topics={"left": 2, "right": 3})
    topology = sgh.Topology(epoch=1, subtopologies=[sgh.Subtopology(
        subtopology_id="0", source_topics=["left", "right"],
        copartition_groups=[sgh.CopartitionGroup(source_topics=[0, 1])],
    )])  # fmt: skip
    response = h.enter("a", topology=topology)
    assert statuses(response) == [(2, "Following topics do not have the same number of partitions: [left:2, right:3]")]


def test_topology_updates_are_refused_and_an_older_epoch_is_stale() -> None:
    h = StreamsHarness()
    h.enter("a", topology=word_count(epoch=2))
    response = h.enter("b", topology=word_count(epoch=2, source="other"))
    assert (response.error_code, response.error_message) == (ErrorCode.INVALID_REQUEST, "Topology updates are not supported yet.")
    response = h.enter("c", topology=word_count(epoch=1))
    assert response.error_code == ErrorCode.NONE
    assert (0, "The member's topology epoch 1 is behind the group's topology epoch 2.") in statuses(response)


# -- assignment and reconciliation ----------------------------------------------------------------------


def test_one_member_gets_every_task() -> None:
    h = StreamsHarness()
    first = h.enter("a")
    assert (first.member_epoch, tasks_of(first.active_tasks)) == (2, {})  # NotReady: internal topics missing
    response = h.beat("a", h.epoch("a"), active={}, standby={})
    assert (response.member_epoch, tasks_of(response.active_tasks)) == (3, ALL)
    assert tasks_of(response.standby_tasks) == {} and tasks_of(response.warmup_tasks) == {}
    assert response.heartbeat_interval_ms == h.cluster.groups.config.streams_group_heartbeat_interval_ms
    steady = h.beat("a", h.epoch("a"), active=ALL, standby={})
    assert steady.active_tasks is None  # unchanged: not sent again


def test_revoke_before_assign() -> None:
    h = StreamsHarness()
    h.enter("a")
    h.beat("a", h.epoch("a"), active={}, standby={})
    joined = h.enter("b")
    assert (joined.member_epoch, tasks_of(joined.active_tasks)) == (4, {})  # a still holds everything
    assert h.snap()["members"][1]["state"] == "UNRELEASED_TASKS"
    # a must give up half before b gets it: it stays at epoch 3 until it reports them gone
    revoke = h.beat("a", h.epoch("a"), active=ALL, standby={})
    assert revoke.member_epoch == 3
    kept = tasks_of(revoke.active_tasks)
    assert kept is not None and sum(len(p) for p in kept.values()) == 4
    assert h.snap()["members"][0]["state"] == "UNREVOKED_TASKS"
    still = h.beat("b", 4, active={}, standby={})
    assert tasks_of(still.active_tasks) is None  # nothing released yet
    done = h.beat("a", h.epoch("a"), active=kept, standby={})
    assert done.member_epoch == 4
    given = h.beat("b", 4, active={}, standby={})
    got = tasks_of(given.active_tasks)
    assert got is not None
    assert sorted((s, p) for s, ps in got.items() for p in ps) == sorted(
        {(s, p) for s, ps in ALL.items() for p in ps} - {(s, p) for s, ps in kept.items() for p in ps}
    )
    assert h.snap()["state"] == "Stable"


def test_fenced_member_epochs() -> None:
    h = StreamsHarness()
    h.enter("a")
    h.beat("a", h.epoch("a"), active={}, standby={})
    response = h.beat("a", 7, active={}, standby={})
    assert (response.error_code, response.error_message) == (
        ErrorCode.FENCED_MEMBER_EPOCH,
        "The streams group member has a greater member epoch (7) than the one known by the group coordinator (3). "
        "The member must abandon all its partitions and rejoin.",
    )
    # the previous epoch is accepted while the owned tasks are a subset of the assignment
    previous = h.sgroup().members["a"].previous_member_epoch
    assert h.beat("a", previous, active={"0": [0]}, standby={}).error_code == ErrorCode.NONE
    response = h.beat("a", previous, active={"9": [0]}, standby={})
    assert response.error_code == ErrorCode.FENCED_MEMBER_EPOCH


def test_invalid_owned_tasks() -> None:
    h = StreamsHarness()
    h.enter("a")
    response = h.beat("a", h.epoch("a"), active={"7": [0]}, standby={})
    assert (response.error_code, response.error_message) == (ErrorCode.INVALID_REQUEST, "Subtopology 7 does not exist in the topology.")
    response = h.beat("a", h.epoch("a"), active={"0": [4]}, standby={})
    assert (response.error_code, response.error_message) == (
        ErrorCode.INVALID_REQUEST, "Task 4 for subtopology 0 is invalid. Number of tasks for this subtopology: 4"
    )


def test_standby_replicas_go_to_another_process() -> None:
    h = StreamsHarness(group_streams_num_standby_replicas=1)
    h.enter("a")
    h.beat("a", h.epoch("a"), active={}, standby={})
    h.enter("b")
    target = {m["member_id"]: m["target"] for m in h.snap()["members"]}
    for mine, theirs in (("a", "b"), ("b", "a")):
        # every stateful task (subtopology 1) the other holds actively is a standby here
        assert target[mine]["standby"].get("1", []) == target[theirs]["active"].get("1", [])
    assert "0" not in target["a"]["standby"] and "0" not in target["b"]["standby"]  # stateless: no standby


def test_two_members_of_one_process_get_no_standby() -> None:
    h = StreamsHarness(group_streams_num_standby_replicas=1)
    h.enter("a", process="p")
    h.enter("b", process="p")
    assert all(m["target"]["standby"] == {} for m in h.snap()["members"])


# -- timers, leaving, shutdown ----------------------------------------------------------------------------


def test_session_timeout_fences_and_the_other_member_takes_the_tasks() -> None:
    h = StreamsHarness()
    h.enter("a")
    h.beat("a", h.epoch("a"), active={}, standby={})
    h.enter("b")
    session = h.cluster.groups.config.streams_group_session_timeout_ms
    for _ in range(3):
        h.advance(session // 2)
        h.beat("b", h.epoch("b"), active={}, standby={})
    assert list(h.sgroup().members) == ["b"]
    assert [e.details["cause"] for e in h.events("streams_group.member_fenced")] == ["session_timeout"]
    response = h.beat("b", h.epoch("b"), active={}, standby={})
    assert tasks_of(response.active_tasks) in (ALL, None)
    assert h.snap()["members"][0]["assigned"]["active"] == ALL


def test_rebalance_timeout_fences_a_member_that_does_not_revoke() -> None:
    h = StreamsHarness()
    h.enter("a", rebalance_timeout_ms=5_000)
    h.beat("a", h.epoch("a"), active={}, standby={})
    h.enter("b")
    h.beat("a", h.epoch("a"), active=ALL, standby={})  # told to revoke; it never does
    for _ in range(6):
        h.advance(1_000)
        h.beat("b", h.epoch("b"), active={}, standby={})
    assert list(h.sgroup().members) == ["b"]
    assert [e.details["cause"] for e in h.events("streams_group.member_fenced")] == ["rebalance_timeout"]


def test_leave_and_unknown_member() -> None:
    h = StreamsHarness()
    h.enter("a")
    response = h.beat("a", -1)
    assert (response.error_code, response.member_id, response.member_epoch) == (ErrorCode.NONE, "a", -1)
    assert h.snap()["state"] == "Empty"
    response = h.beat("a", 1)
    assert (response.error_code, response.error_message) == (ErrorCode.UNKNOWN_MEMBER_ID, "Member a is not a member of group g.")
    response = h.beat("a", 1, group_id="nope")
    assert (response.error_code, response.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Streams group nope not found.")


def test_shutdown_request_reaches_every_member_until_the_group_is_empty() -> None:
    h = StreamsHarness()
    h.enter("a")
    h.enter("b")
    detail = "Streams group member a encountered a fatal error and requested a shutdown for the entire application."
    assert (4, detail) in statuses(h.beat("a", h.epoch("a"), shutdown_application=True))
    assert (4, detail) in statuses(h.beat("b", h.epoch("b")))
    h.beat("a", -1)
    h.beat("b", -1)
    assert h.sgroup().shutdown_request_member_id is None


def test_initial_rebalance_delay_holds_the_first_assignment() -> None:
    h = StreamsHarness(group_streams_initial_rebalance_delay_ms=3000)
    first = h.enter("a")
    assert first.member_epoch == 0  # the member stays at the assignment epoch while the delay runs
    response = h.enter("a")  # at epoch 0 it heartbeats as a join
    assert (response.member_epoch, tasks_of(response.active_tasks)) == (0, {})
    assert h.snap()["state"] == "Assigning"
    h.advance(3000)
    response = h.enter("a")
    assert (response.member_epoch, tasks_of(response.active_tasks)) == (3, ALL)


def test_endpoints_for_interactive_queries() -> None:
    h = StreamsHarness(topics={"input": 2})
    h.enter("a", endpoint=("host-a", 7000))
    response = h.beat("a", h.epoch("a"), active={}, standby={}, endpoint_information_epoch=0)
    assert response.endpoint_information_epoch == h.sgroup().endpoint_information_epoch > 0
    [entry] = response.partitions_by_user_endpoint or []
    assert (entry.user_endpoint.host, entry.user_endpoint.port) == ("host-a", 7000)
    assert {(tp.topic, tuple(tp.partitions)) for tp in entry.active_partitions} == {("input", (0, 1)), (REPARTITION, (0, 1))}
    again = h.beat("a", h.epoch("a"), active={}, standby={}, endpoint_information_epoch=response.endpoint_information_epoch)
    assert again.partitions_by_user_endpoint is None


# -- describe, list, delete, offsets --------------------------------------------------------------------------


def test_describe() -> None:
    h = StreamsHarness()
    h.enter("a")
    h.beat("a", h.epoch("a"), active={}, standby={})
    described = h.groups.streams_group_describe("g")
    assert (described.error_code, described.group_state, described.group_epoch, described.assignment_epoch) == (0, "Stable", 3, 3)
    assert described.topology is not None and described.topology.epoch == 1
    subtopologies = described.topology.subtopologies or []
    assert [s.subtopology_id for s in subtopologies] == ["0", "1"]
    assert subtopologies[1].state_changelog_topics[0].partitions == 4
    [member] = described.members
    assert (member.member_id, member.process_id, member.topology_epoch, member.client_host) == ("a", "p-a", 1, "/127.0.0.1")
    assert {t.subtopology_id: t.partitions for t in member.assignment.active_tasks} == ALL
    missing = h.groups.streams_group_describe("nope")
    assert (missing.error_code, missing.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group nope not found.")


def test_list_and_delete() -> None:
    h = StreamsHarness()
    h.enter("a")
    assert [(g.group_id, g.protocol_type, g.group_state, g.group_type) for g in h.groups.list_groups(types_filter=["Streams"])] == [
        ("g", "streams", "NotReady", "streams")
    ]
    assert h.groups.list_groups(types_filter=["consumer"]) == []
    assert h.groups.delete_group(h.now, "g") == ErrorCode.NON_EMPTY_GROUP
    h.beat("a", -1)
    assert h.groups.delete_group(h.now, "g") == ErrorCode.NONE
    assert "g" not in h.streams.groups


def test_a_classic_or_consumer_id_is_not_a_streams_group() -> None:
    h = StreamsHarness()
    h.streams.other_groups = h.groups
    h.groups.consumer.create_group("c", h.now)
    response = h.enter("x", group_id="c")
    assert (response.error_code, response.error_message) == (ErrorCode.GROUP_ID_NOT_FOUND, "Group c is not a streams group.")


def commit(h: StreamsHarness, member: str, epoch: int, version: int = 9) -> list[int]:
    request = OffsetCommitRequest(
        group_id="g", generation_id_or_member_epoch=epoch, member_id=member,
        topics=[OffsetCommitRequestTopic(name="input", partitions=[OffsetCommitRequestPartition(partition_index=0, committed_offset=5)])],
    )  # fmt: skip
    topics = h.groups.commit_offsets(h.now, request, api_version=version)
    return [p.error_code for t in topics for p in t.partitions]


def test_offset_commits_are_checked_against_member_epochs() -> None:
    h = StreamsHarness()
    h.enter("a")
    h.beat("a", h.epoch("a"), active={}, standby={})
    epoch = h.epoch("a")
    assert commit(h, "a", epoch) == [ErrorCode.NONE]
    assert commit(h, "a", epoch + 1) == [ErrorCode.STALE_MEMBER_EPOCH]
    assert commit(h, "zz", epoch) == [ErrorCode.UNKNOWN_MEMBER_ID]
    assert commit(h, "a", epoch, version=8) == [ErrorCode.UNSUPPORTED_VERSION]
    fetched = h.groups.fetch_offsets("g", [("input", [0])])
    assert fetched.topics[0].partitions[0].committed_offset == 5


async def test_control_and_http_views_of_a_streams_group() -> None:
    """The control API lists and describes a streams group (StreamsGroupSnapshot), and the HTTP
    API's StreamsGroup schema accepts what it answers."""
    from mockbroker.control import StreamsGroupSnapshot
    from mockbroker.http.components import check

    h = StreamsHarness(group_streams_num_standby_replicas=1)
    h.enter("a")
    h.beat("a", h.epoch("a"), active={}, standby={})
    h.enter("b")
    control = h.cluster.control
    listing = await control.groups()
    assert (listing["g"].type, listing["g"].state) == ("streams", "Reconciling")
    snap = await control.describe_group("g")
    assert isinstance(snap, StreamsGroupSnapshot)
    assert (snap.group_epoch, snap.subtopologies, snap.topology_status) == (4, {"0": 4, "1": 4}, None)
    assert snap.member(member_id="a").process_id == "p-a" and not snap.reconciled
    as_sent = json.loads(json.dumps({**snap.to_json(), "coordinator": 1, "reconciled": snap.reconciled}))
    check(ref_group(), as_sent, "group")


def ref_group() -> dict[str, str]:
    return {"$ref": "#/components/schemas/Group"}


async def test_control_expires_a_streams_member_and_forces_a_rebalance() -> None:
    h = StreamsHarness()
    h.enter("a")
    h.beat("a", h.epoch("a"), active={}, standby={})
    h.enter("b")
    control = h.cluster.control
    epoch = h.sgroup().group_epoch
    assert await control.force_rebalance("g", "a test wants it") in ("Reconciling", "Stable")
    assert h.sgroup().group_epoch == h.sgroup().assignment_epoch == epoch + 1
    assert await control.expire_session("g", "b") == "b"
    assert list(h.sgroup().members) == ["a"]
    assert [e.details["cause"] for e in h.events("streams_group.member_fenced")] == ["session_timeout"]
    assert [e.type for e in h.events() if e.type.startswith("control.")][-2:] == ["control.rebalance_forced", "control.session_expired"]


def test_internal_topics_to_create_keep_the_missing_topics_hash_map_order() -> None:
    """Kafka 4.3.1 answered both the missing list and the unauthorized list (KafkaApis partitions
    the map's keys by CREATE) repartition first for these names: they share a HashMap bucket, so
    insertion order decides, not the alphabet (a CI run against Kafka caught a sorted list)."""
    repartition, changelog = "dg-bc5125-14-count-repartition", "dg-bc5125-14-count-changelog"
    assert java_hash_map_order([repartition, changelog]) == [repartition, changelog]
    topology = StreamsTopology(1, (
        Subtopology("0", ("input",), (repartition,), (), (), ()),
        Subtopology("1", (), (), (TopicInfo(changelog, 0, 0, ()),), (TopicInfo(repartition, 0, 0, ()),), ()),
    ))  # fmt: skip
    configured = configure_topics(topology, {"input": 2}.get)
    assert configured.error is not None
    assert configured.error.message == f"Internal topics are missing: {repartition}, {changelog}"
    assert [t.name for t in configured.internal_topics_to_create] == [repartition, changelog]


def test_the_first_wrongly_partitioned_topic_in_the_required_topics_hash_set_order() -> None:
    """Kafka 4.3.1 checks existing internal topics in StreamsTopology.requiredTopics' order (a
    HashSet) and names the first wrong one: for these names the changelog, though the repartition
    topic sorts first (seen against Kafka with names made to fall in other buckets,
    MOCKBROKER_DIFFERENTIAL_NAMES=reverse-buckets; Java's HashSet of the three names agrees)."""
    source, repartition, changelog = "dt-4dbc9b-01203-bp", "dg-4dbc9b-01205-ay-count-repartition", "dg-4dbc9b-01205-ay-count-changelog"
    topology = StreamsTopology(1, (
        Subtopology("0", (source,), (repartition,), (), (), ()),
        Subtopology("1", (), (), (TopicInfo(changelog, 0, 0, ()),), (TopicInfo(repartition, 0, 0, ()),), ()),
    ))  # fmt: skip
    assert topology.required_topics() == [changelog, source, repartition]
    configured = configure_topics(topology, {source: 2, repartition: 3, changelog: 2}.get)
    assert configured.error is not None
    assert configured.error.message == f"Existing topic {changelog} has different number of partitions: expected 3, found 2"
