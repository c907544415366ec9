"""The group APIs over loopback with the raw WireClient: every version family of JoinGroup, SyncGroup,
Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch, DescribeGroups, ListGroups, DeleteGroups and
OffsetDelete on the group's coordinator, and NOT_COORDINATOR (shaped per API) everywhere else."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest

from mockbroker import MockCluster
from mockbroker.coordinators.offsets.store import OffsetAndMetadata
from mockbroker_protocol import registry
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.delete_groups import DeletableGroupResult, DeleteGroupsRequest
from mockbroker_protocol.messages.describe_groups import DescribeGroupsRequest
from mockbroker_protocol.messages.heartbeat import HeartbeatRequest
from mockbroker_protocol.messages.join_group import (
    JoinGroupRequest,
    JoinGroupRequestProtocol,
    JoinGroupResponse,
)
from mockbroker_protocol.messages.leave_group import LeaveGroupRequest, MemberIdentity, MemberResponse
from mockbroker_protocol.messages.list_groups import ListedGroup, ListGroupsRequest
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
from tests.mockbroker.coordinators.groups_support import assignment, subscription
from tests.mockbroker.wire import WireClient

OFFSET_COMMIT, OFFSET_FETCH, JOIN, HEARTBEAT, LEAVE, SYNC = 8, 9, 11, 12, 13, 14
DESCRIBE, LIST, DELETE, OFFSET_DELETE = 15, 16, 42, 47
# Coordinators in a 3-broker cluster (kafka-group-semantics §1 worked values, partition p -> broker p % 3 + 1).
G1, G2, G3 = "my-group", "group1", "a"  # on brokers 1, 2, 3
SYNC_FOR_JOIN = {0: 0, 1: 1, 2: 1, 3: 2, 4: 2, 5: 3, 6: 4, 7: 5, 8: 5, 9: 5}


async def connect(cluster: MockCluster, node_id: int, client_id: str = "wire-test") -> WireClient:
    node = cluster.brokers[node_id]
    return await WireClient.connect(node.host, node.port, client_id)


def join_request(group_id: str, member_id: str = "", *, instance: str | None = None, topics: tuple[str, ...] = ("t",)) -> JoinGroupRequest:
    return JoinGroupRequest(
        group_id=group_id,
        session_timeout_ms=30_000,
        rebalance_timeout_ms=60_000,
        member_id=member_id,
        group_instance_id=instance,
        protocol_type="consumer",
        protocols=[JoinGroupRequestProtocol("range", subscription(*topics))],
    )


async def join(client: WireClient, version: int, group_id: str, **kwargs: Any) -> JoinGroupResponse:
    """Join (with the KIP-394 round trip at v4+); returns the answered JoinGroup."""
    response: JoinGroupResponse = await client.request(JOIN, version, join_request(group_id, **kwargs))
    if response.error_code == ErrorCode.MEMBER_ID_REQUIRED:
        kwargs.pop("member_id", None)
        response = await client.request(JOIN, version, join_request(group_id, response.member_id, **kwargs))
    return response


def test_the_groups_land_where_the_tests_expect(cluster: MockCluster) -> None:
    assert [cluster.coordinator_for(g).node_id for g in (G1, G2, G3)] == [1, 2, 3]


# -- JoinGroup / SyncGroup / Heartbeat / LeaveGroup, one member, every version ----------------------------------


@pytest.mark.parametrize("version", range(10))
async def test_a_member_lifecycle_at_every_join_version(cluster: MockCluster, version: int) -> None:
    client = await connect(cluster, 1, client_id="lifecycle")
    first = await client.request(JOIN, version, join_request(G1))
    if version >= 4:
        assert (first.error_code, first.generation_id) == (ErrorCode.MEMBER_ID_REQUIRED, -1)
        assert first.member_id.startswith("lifecycle-")
        assert first.protocol_name == ("" if version < 7 else None)
        first = await client.request(JOIN, version, join_request(G1, first.member_id))
    assert first.error_code == 0 and first.generation_id == 1
    assert (first.leader, first.protocol_name) == (first.member_id, "range")
    assert first.protocol_type == ("consumer" if version >= 7 else None)
    assert [m.member_id for m in first.members] == [first.member_id]
    assert first.members[0].metadata == subscription("t")
    member_id = first.member_id
    sync_version = SYNC_FOR_JOIN[version]
    sync = await client.request(
        SYNC,
        sync_version,
        SyncGroupRequest(
            group_id=G1, generation_id=1, member_id=member_id, protocol_type="consumer", protocol_name="range",
            assignments=[SyncGroupRequestAssignment(member_id, assignment(t=[0, 1]))],
        ),
    )  # fmt: skip
    assert (sync.error_code, sync.assignment) == (0, assignment(t=[0, 1]))
    assert sync.protocol_name == ("range" if sync_version >= 5 else None)
    heartbeat_version = min(version, 4)
    assert (await client.request(HEARTBEAT, heartbeat_version, HeartbeatRequest(G1, 1, member_id))).error_code == 0
    assert cluster.groups.groups[G1].state.value == "Stable"
    leave_version = min(version, 5)
    left = await client.request(
        LEAVE, leave_version, LeaveGroupRequest(group_id=G1, member_id=member_id, members=[MemberIdentity(member_id)])
    )
    assert left.error_code == 0
    if leave_version >= 3:
        assert left.members == [MemberResponse(member_id, None, 0)]
    assert cluster.groups.groups[G1].state.value == "Empty"
    await client.close()


async def test_a_second_member_triggers_a_rebalance_over_the_wire(cluster: MockCluster) -> None:
    a, b = await connect(cluster, 2, client_id="a"), await connect(cluster, 2, client_id="b")
    first = await join(a, 9, G2)
    assert (first.generation_id, first.leader) == (1, first.member_id)
    sync = SyncGroupRequest(G2, 1, first.member_id, None, "consumer", "range", [SyncGroupRequestAssignment(first.member_id, assignment(t=[0, 1]))])
    assert (await a.request(SYNC, 5, sync)).assignment == assignment(t=[0, 1])
    # b joins: its JoinGroup parks; a learns of the rebalance from its heartbeat and rejoins.
    b_join = asyncio.create_task(join(b, 9, G2))
    for _ in range(100):  # bounded: each heartbeat is a full round trip through the broker
        heartbeat = await a.request(HEARTBEAT, 4, HeartbeatRequest(G2, 1, first.member_id))
        if heartbeat.error_code == ErrorCode.REBALANCE_IN_PROGRESS:
            break
    assert heartbeat.error_code == ErrorCode.REBALANCE_IN_PROGRESS and not b_join.done()
    a_join = await a.request(JOIN, 9, join_request(G2, first.member_id))
    b_answer = await b_join
    assert (a_join.generation_id, b_answer.generation_id) == (2, 2)
    assert (a_join.leader, b_answer.leader) == (first.member_id, first.member_id)
    assert [m.member_id for m in a_join.members] == [first.member_id, b_answer.member_id] and b_answer.members == []
    plan = {first.member_id: assignment(t=[0]), b_answer.member_id: assignment(t=[1])}
    b_sync = asyncio.create_task(b.request(SYNC, 3, SyncGroupRequest(G2, 2, b_answer.member_id)))
    a_sync = await a.request(SYNC, 5, SyncGroupRequest(G2, 2, first.member_id, None, "consumer", "range", [SyncGroupRequestAssignment(k, v) for k, v in plan.items()]))
    assert (a_sync.assignment, (await b_sync).assignment) == (plan[first.member_id], plan[b_answer.member_id])
    await a.close()
    await b.close()


# -- errors and NOT_COORDINATOR ---------------------------------------------------------------------------------


@pytest.mark.parametrize("version", [0, 5, 6, 7, 9])
async def test_join_errors_in_kafkas_order(cluster: MockCluster, version: int) -> None:
    client = await connect(cluster, 2)
    invalid = await client.request(JOIN, version, join_request("", "m-1"))  # "" lives on broker 1: still INVALID_GROUP_ID
    assert (invalid.error_code, invalid.member_id) == (ErrorCode.INVALID_GROUP_ID, "m-1")
    bad_session = join_request(G1, "m-1")
    bad_session.session_timeout_ms = 0
    assert (await client.request(JOIN, version, bad_session)).error_code == ErrorCode.INVALID_SESSION_TIMEOUT
    wrong = await client.request(JOIN, version, join_request(G1, "m-1"))
    assert (wrong.error_code, wrong.member_id, wrong.generation_id) == (ErrorCode.NOT_COORDINATOR, "", -1)
    assert wrong.protocol_name == ("" if version < 7 else None)
    unknown = await client.request(JOIN, version, join_request(G2, "m-1"))
    assert (unknown.error_code, unknown.member_id) == (ErrorCode.UNKNOWN_MEMBER_ID, "m-1")
    await client.close()


@pytest.mark.parametrize("version", range(6))
async def test_sync_errors(cluster: MockCluster, version: int) -> None:
    client = await connect(cluster, 2)
    request = SyncGroupRequest(group_id=G1, generation_id=1, member_id="m")
    expected = ErrorCode.INCONSISTENT_GROUP_PROTOCOL if version >= 5 else ErrorCode.NOT_COORDINATOR
    assert (await client.request(SYNC, version, request)).error_code == expected
    request.protocol_type, request.protocol_name = "consumer", "range"
    assert (await client.request(SYNC, version, request)).error_code == ErrorCode.NOT_COORDINATOR
    request.group_id = ""
    assert (await client.request(SYNC, version, request)).error_code == ErrorCode.INVALID_GROUP_ID
    request.group_id = G2
    assert (await client.request(SYNC, version, request)).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    await client.close()


@pytest.mark.parametrize("version", range(5))
async def test_heartbeat_errors(cluster: MockCluster, version: int) -> None:
    client = await connect(cluster, 3)
    assert (await client.request(HEARTBEAT, version, HeartbeatRequest("", 0, "m"))).error_code == ErrorCode.INVALID_GROUP_ID
    assert (await client.request(HEARTBEAT, version, HeartbeatRequest(G1, 0, "m"))).error_code == ErrorCode.NOT_COORDINATOR
    assert (await client.request(HEARTBEAT, version, HeartbeatRequest(G3, 0, "m"))).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    await client.close()


@pytest.mark.parametrize("version", range(6))
async def test_leave_errors_shaped_by_version(cluster: MockCluster, version: int) -> None:
    client = await connect(cluster, 3)
    request = LeaveGroupRequest(group_id=G3, member_id="m", members=[MemberIdentity("m"), MemberIdentity("", "i-1")])
    unknown = await client.request(LEAVE, version, request)
    if version >= 3:
        assert (unknown.error_code, unknown.members) == (0, [MemberResponse("m", None, 25), MemberResponse("", "i-1", 25)])
    else:
        assert (unknown.error_code, unknown.members) == (ErrorCode.UNKNOWN_MEMBER_ID, [])
    request.group_id = G1
    wrong = await client.request(LEAVE, version, request)
    assert (wrong.error_code, wrong.members) == (ErrorCode.NOT_COORDINATOR, [])
    request.group_id = ""
    assert (await client.request(LEAVE, version, request)).error_code == ErrorCode.INVALID_GROUP_ID
    await client.close()


async def test_a_static_member_replaced_on_the_wire_is_fenced(cluster: MockCluster) -> None:
    client = await connect(cluster, 1)
    first = await join(client, 9, G1, instance="i-1")
    await client.request(SYNC, 5, SyncGroupRequest(G1, 1, first.member_id, "i-1", "consumer", "range", []))
    second = await join(client, 9, G1, instance="i-1")
    assert second.member_id != first.member_id and second.skip_assignment and second.generation_id == 1
    fenced = await client.request(HEARTBEAT, 4, HeartbeatRequest(G1, 1, first.member_id, "i-1"))
    assert fenced.error_code == ErrorCode.FENCED_INSTANCE_ID
    await client.close()


async def test_a_client_that_disconnects_while_parked_breaks_nothing(cluster: MockCluster) -> None:
    gone = await connect(cluster, 1, client_id="gone")
    stays = await connect(cluster, 1, client_id="stays")
    g = cluster.groups
    leader = await join(stays, 9, G1)
    await stays.request(SYNC, 5, SyncGroupRequest(G1, 1, leader.member_id, None, "consumer", "range", []))
    # "gone" joins: a rebalance; its JoinGroup parks until the leader rejoins; then it disconnects.
    added = asyncio.Event()
    unsubscribe = cluster.events.subscribe(lambda e: added.set() if e.type == "member.joined" else None)
    first = await gone.request(JOIN, 9, join_request(G1))
    await gone.send_raw(registry.encode_request(RequestHeader(JOIN, 9, 99, "gone"), join_request(G1, first.member_id)))
    await asyncio.wait_for(added.wait(), 10)
    unsubscribe()
    assert g.groups[G1].members[first.member_id].is_awaiting_join
    await gone.close()
    rejoin = await stays.request(JOIN, 9, join_request(G1, leader.member_id))  # completes the phase; "gone"'s answer has nowhere to go
    assert rejoin.generation_id == 2 and len(rejoin.members) == 2
    assert cluster.internal_errors == []
    await stays.close()


# -- OffsetCommit and OffsetFetch, every version ------------------------------------------------------------------


def commit_request(group_id: str, topic: str, partitions: dict[int, int], *, topic_id: uuid.UUID | None = None) -> OffsetCommitRequest:
    return OffsetCommitRequest(
        group_id=group_id,
        generation_id_or_member_epoch=-1,
        topics=[
            OffsetCommitRequestTopic(
                topic, topic_id or uuid.UUID(int=0), [OffsetCommitRequestPartition(p, o, committed_metadata=f"m{o}") for p, o in partitions.items()]
            )
        ],
    )


@pytest.mark.parametrize("version", range(1, 11))
async def test_simple_commit_and_fetch_at_every_version(cluster: MockCluster, version: int) -> None:
    topic = cluster.create_topic("orders", 3)
    client = await connect(cluster, 1)
    committed = await client.request(OFFSET_COMMIT, version, commit_request(G1, "orders", {0: 10, 2: 30}, topic_id=topic.topic_id))
    assert [(p.partition_index, p.error_code) for t in committed.topics for p in t.partitions] == [(0, 0), (2, 0)]
    fetch_version = version
    if fetch_version >= 8:
        request = OffsetFetchRequest(groups=[OffsetFetchRequestGroup(G1, topics=[OffsetFetchRequestTopics("orders", topic.topic_id, [0, 1, 2])])])
        (group,) = (await client.request(OFFSET_FETCH, fetch_version, request)).groups
        partitions = group.topics[0].partitions
    else:
        request = OffsetFetchRequest(group_id=G1, topics=[OffsetFetchRequestTopic("orders", [0, 1, 2])])
        partitions = (await client.request(OFFSET_FETCH, fetch_version, request)).topics[0].partitions
    assert [(p.partition_index, p.committed_offset, p.metadata, p.error_code) for p in partitions] == [
        (0, 10, "m10", 0),
        (1, -1, "", 0),
        (2, 30, "m30", 0),
    ]
    await client.close()


async def test_commit_broker_level_errors_come_first_and_not_coordinator_covers_the_rest(cluster: MockCluster) -> None:
    cluster.create_topic("orders", 2)
    client = await connect(cluster, 2)  # not G1's coordinator
    request = commit_request(G1, "orders", {0: 1, 5: 2})
    request.topics.append(OffsetCommitRequestTopic("nope", partitions=[OffsetCommitRequestPartition(0, 1)]))
    response = await client.request(OFFSET_COMMIT, 8, request)
    assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in response.topics] == [
        ("orders", [(5, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), (0, ErrorCode.NOT_COORDINATOR)]),
        ("nope", [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]),
    ]
    only_bad = await client.request(OFFSET_COMMIT, 8, commit_request(G1, "nope", {0: 1}))
    assert only_bad.topics[0].partitions[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION  # no coordinator asked
    await client.close()


async def test_commit_v10_unknown_topic_id(cluster: MockCluster) -> None:
    client = await connect(cluster, 1)
    unknown = uuid.uuid4()
    response = await client.request(OFFSET_COMMIT, 10, commit_request(G1, "", {0: 1}, topic_id=unknown))
    assert (response.topics[0].topic_id, response.topics[0].partitions[0].error_code) == (unknown, ErrorCode.UNKNOWN_TOPIC_ID)
    await client.close()


async def test_member_commit_errors_on_the_wire(cluster: MockCluster) -> None:
    cluster.create_topic("orders", 1)
    client = await connect(cluster, 1)
    request = commit_request(G1, "orders", {0: 1})
    request.generation_id_or_member_epoch = 3
    assert (await client.request(OFFSET_COMMIT, 8, request)).topics[0].partitions[0].error_code == ErrorCode.ILLEGAL_GENERATION
    assert (await client.request(OFFSET_COMMIT, 9, request)).topics[0].partitions[0].error_code == ErrorCode.GROUP_ID_NOT_FOUND
    big = commit_request(G1, "orders", {0: 1})
    big.topics[0].partitions[0].committed_metadata = "x" * 4097
    assert (await client.request(OFFSET_COMMIT, 8, big)).topics[0].partitions[0].error_code == ErrorCode.OFFSET_METADATA_TOO_LARGE
    await client.close()


async def test_fetch_all_and_multi_group_with_require_stable(cluster: MockCluster) -> None:
    topic = cluster.create_topic("orders", 2)
    client = await connect(cluster, 1)
    await client.request(OFFSET_COMMIT, 9, commit_request(G1, "orders", {1: 7}))
    cluster.groups.commit_transactional_offsets(cluster.clock.now_ms(), G1, 5, [("orders", [(0, 3, -1, "")])])
    request = OffsetFetchRequest(
        groups=[
            OffsetFetchRequestGroup(G1, topics=None),
            OffsetFetchRequestGroup(G1, topics=[OffsetFetchRequestTopics("orders", topic.topic_id, [0, 1])]),
            OffsetFetchRequestGroup(G2, topics=None),
        ],
        require_stable=True,
    )
    everything, listed, elsewhere = (await client.request(OFFSET_FETCH, 8, request)).groups
    assert [(t.name, [(p.partition_index, p.committed_offset) for p in t.partitions]) for t in everything.topics] == [("orders", [(1, 7)])]
    assert [(p.committed_offset, p.error_code) for p in listed.topics[0].partitions] == [(-1, ErrorCode.UNSTABLE_OFFSET_COMMIT), (7, 0)]
    assert (elsewhere.error_code, elsewhere.topics) == (ErrorCode.NOT_COORDINATOR, [])
    v10 = OffsetFetchRequest(groups=[OffsetFetchRequestGroup(G1, topics=None)])
    (group,) = (await client.request(OFFSET_FETCH, 10, v10)).groups
    assert group.topics[0].topic_id == topic.topic_id
    await client.close()


# -- DescribeGroups, ListGroups, DeleteGroups, OffsetDelete ------------------------------------------------------------


@pytest.mark.parametrize("version", range(7))
async def test_describe_a_live_group_at_every_version(cluster: MockCluster, version: int) -> None:
    client = await connect(cluster, 1, client_id="describer")
    member = await join(client, 9, G1, instance="i-1")
    (described,) = (await client.request(DESCRIBE, version, DescribeGroupsRequest([G1]))).groups
    assert (described.error_code, described.group_state, described.protocol_type, described.protocol_data) == (
        0, "CompletingRebalance", "consumer", "",
    )  # fmt: skip
    (m,) = described.members
    assert (m.member_id, m.client_id, m.client_host) == (member.member_id, "describer", "/127.0.0.1")
    assert m.group_instance_id == ("i-1" if version >= 4 else None)
    await client.close()


@pytest.mark.parametrize("version", range(6))
async def test_list_groups_at_every_version_shows_this_brokers_groups(cluster: MockCluster, version: int) -> None:
    client1, client2 = await connect(cluster, 1), await connect(cluster, 2)
    await join(client1, 9, G1)
    await client2.request(OFFSET_COMMIT, 8, commit_request(G2, "x", {}))  # nothing valid: no group created
    cluster.groups.commit_offsets(cluster.clock.now_ms(), commit_request(G2, "x", {0: 1}), api_version=8)  # a simple group on 2
    on_1 = await client1.request(LIST, version, ListGroupsRequest())
    expected = ListedGroup(G1, "consumer", "CompletingRebalance" if version >= 4 else "", "classic" if version >= 5 else "")
    assert on_1.groups == [expected]
    on_2 = await client2.request(LIST, version, ListGroupsRequest())
    assert [(g.group_id, g.protocol_type) for g in on_2.groups] == [(G2, "")]
    if version >= 4:
        filtered = await client1.request(LIST, version, ListGroupsRequest(states_filter=["stable"]))
        assert filtered.groups == []
    if version >= 5:
        typed = await client1.request(LIST, version, ListGroupsRequest(types_filter=["consumer"]))
        assert typed.groups == []
    await client1.close()
    await client2.close()


@pytest.mark.parametrize("version", range(3))
async def test_delete_groups_at_every_version(cluster: MockCluster, version: int) -> None:
    client = await connect(cluster, 1)
    cluster.create_topic("orders", 1)
    await client.request(OFFSET_COMMIT, 8, commit_request(G1, "orders", {0: 1}))
    await client.request(OFFSET_COMMIT, 8, commit_request("", "orders", {0: 1}))  # "" is a group too, on broker 1
    live = await join(client, 9, "b")  # "b" -> partition 48 -> broker 1
    assert cluster.coordinator_for("b").node_id == 1 and live.error_code == 0
    assert cluster.coordinator_for("missing").node_id == 1
    response = await client.request(DELETE, version, DeleteGroupsRequest([G1, "", "b", G2, "missing", G1]))
    assert response.results == [
        DeletableGroupResult(G1, 0),
        DeletableGroupResult("", 0),
        DeletableGroupResult("b", ErrorCode.NON_EMPTY_GROUP),
        DeletableGroupResult(G2, ErrorCode.NOT_COORDINATOR),
        DeletableGroupResult("missing", ErrorCode.GROUP_ID_NOT_FOUND),
    ]
    assert G1 not in cluster.groups.groups
    await client.close()


async def test_offset_delete(cluster: MockCluster) -> None:
    cluster.create_topic("orders", 2)
    cluster.create_topic("other", 1)
    client = await connect(cluster, 1)

    def request(group_id: str) -> OffsetDeleteRequest:
        return OffsetDeleteRequest(
            group_id,
            [
                OffsetDeleteRequestTopic("orders", [OffsetDeleteRequestPartition(0), OffsetDeleteRequestPartition(9)]),
                OffsetDeleteRequestTopic("nope", [OffsetDeleteRequestPartition(0)]),
                OffsetDeleteRequestTopic("other", [OffsetDeleteRequestPartition(0)]),
            ],
        )

    assert (await client.request(OFFSET_DELETE, 0, request(""))).error_code == ErrorCode.INVALID_GROUP_ID
    assert (await client.request(OFFSET_DELETE, 0, request(G2))).error_code == ErrorCode.NOT_COORDINATOR
    missing = await client.request(OFFSET_DELETE, 0, request(G1))
    assert (missing.error_code, missing.topics) == (ErrorCode.GROUP_ID_NOT_FOUND, [])
    member = await join(client, 9, G1, topics=("orders",))
    await client.request(SYNC, 5, SyncGroupRequest(G1, 1, member.member_id, None, "consumer", "range", []))
    await client.request(OFFSET_COMMIT, 8, commit_request(G1, "other", {0: 4}))  # generation -1 in a live group: refused
    cluster.groups.offsets.put(G1, "other", 0, OffsetAndMetadata(4, None, "", 0))  # as if committed while Empty
    response = await client.request(OFFSET_DELETE, 0, request(G1))
    assert response.error_code == 0
    assert [(t.name, [(p.partition_index, p.error_code) for p in t.partitions]) for t in response.topics] == [
        ("orders", [(9, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION), (0, ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC)]),
        ("nope", [(0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]),
        ("other", [(0, 0)]),
    ]
    assert cluster.groups.offsets.get(G1, "other", 0) is None
    await client.close()
