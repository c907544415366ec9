"""The group APIs that need no coordinator state, answered as Kafka answers for groups that do not
exist: DescribeGroups, ListGroups, OffsetFetch, DeleteGroups, over loopback, every version, on the
group's coordinator and on the wrong broker (NOT_COORDINATOR); then kafka-python's admin client."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
from kafka import KafkaAdminClient, TopicPartition
from kafka.structs import OffsetAndMetadata

from mockbroker import MockCluster
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.delete_groups import DeletableGroupResult, DeleteGroupsRequest
from mockbroker_protocol.messages.describe_groups import DescribedGroup, DescribeGroupsRequest
from mockbroker_protocol.messages.list_groups import ListGroupsRequest
from mockbroker_protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestGroup,
    OffsetFetchRequestTopic,
    OffsetFetchRequestTopics,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartition,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic,
    OffsetFetchResponseTopics,
)
from mockbroker_protocol.primitives import ZERO_UUID
from tests.mockbroker.wire import WireClient

OFFSET_FETCH, DESCRIBE_GROUPS, LIST_GROUPS, DELETE_GROUPS = 9, 15, 16, 42
INT32_MIN = -2147483648
# READ 3, DELETE 6, DESCRIBE 8, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11 (AclEntry.supportedOperations(GROUP)).
GROUP_OPERATIONS = (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11)
# Groups and the broker coordinating each in a 3-broker cluster (node ids 1-3), from the semantics
# doc's worked partitions: "my-group" 12 -> 1, "group1" 40 -> 2, "a" 47 -> 3, "" 0 -> 1.
ON_1, ON_2, ON_3, EMPTY = "my-group", "group1", "a", ""


async def connect(cluster: MockCluster, node_id: int) -> WireClient:
    node = cluster.brokers[node_id]
    return await WireClient.connect(node.host, node.port)


def test_the_groups_land_where_the_tests_expect(cluster: MockCluster) -> None:
    assert [cluster.coordinator_for(g).node_id for g in (ON_1, ON_2, ON_3, EMPTY)] == [1, 2, 3, 1]


# -- DescribeGroups --------------------------------------------------------------------------------


def dead(group_id: str, version: int, operations: int = INT32_MIN) -> DescribedGroup:
    if version >= 6:
        return DescribedGroup(
            error_code=ErrorCode.GROUP_ID_NOT_FOUND,
            error_message=f"Group {group_id} not found.",
            group_id=group_id,
            group_state="Dead",
        )
    return DescribedGroup(error_code=0, group_id=group_id, group_state="Dead", authorized_operations=operations)


@pytest.mark.parametrize("version", range(7))
async def test_describe_groups_unknown_and_wrong_broker(cluster: MockCluster, version: int) -> None:
    client = await connect(cluster, 1)
    resp = await client.request(DESCRIBE_GROUPS, version, DescribeGroupsRequest(groups=[ON_1, ON_2, EMPTY, ON_3, ON_1]))
    not_here = [DescribedGroup(error_code=ErrorCode.NOT_COORDINATOR, group_id=g) for g in (ON_2, ON_3)]
    assert resp.groups == [dead(ON_1, version), not_here[0], dead(EMPTY, version), not_here[1], dead(ON_1, version)]
    for g in resp.groups:
        assert (g.protocol_type, g.protocol_data, g.members, g.authorized_operations) == ("", "", [], INT32_MIN)
    await client.close()


@pytest.mark.parametrize("version", range(3, 7))
async def test_describe_groups_authorized_operations_only_when_requested_and_found(cluster: MockCluster, version: int) -> None:
    client = await connect(cluster, 2)
    req = DescribeGroupsRequest(groups=[ON_2, ON_1], include_authorized_operations=True)
    resp = await client.request(DESCRIBE_GROUPS, version, req)
    # Kafka fills them in for groups answered with NONE: the v3-5 Dead placeholder, not v6's
    # GROUP_ID_NOT_FOUND nor NOT_COORDINATOR.
    expected = dead(ON_2, version, GROUP_OPERATIONS if version < 6 else INT32_MIN)
    assert resp.groups == [expected, DescribedGroup(error_code=ErrorCode.NOT_COORDINATOR, group_id=ON_1)]
    await client.close()


# -- ListGroups ------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", range(6))
async def test_list_groups_is_empty_on_every_broker(cluster: MockCluster, version: int) -> None:
    req = ListGroupsRequest(
        states_filter=["Stable", " empty "] if version >= 4 else [],
        types_filter=["classic", "no-such-type"] if version >= 5 else [],
    )
    for node_id in cluster.brokers:
        client = await connect(cluster, node_id)
        for body in (ListGroupsRequest(), req):
            resp = await client.request(LIST_GROUPS, version, body)
            assert (resp.error_code, resp.groups) == (0, [])
        await client.close()


# -- OffsetFetch -----------------------------------------------------------------------------------


def old_partitions(version: int, indexes: list[int], error: int = 0) -> list[OffsetFetchResponsePartition]:
    # CommittedLeaderEpoch exists from v5; below it decodes as the default -1 anyway.
    return [OffsetFetchResponsePartition(p, -1, -1, "", error) for p in indexes]


def new_partitions(indexes: list[int], error: int = 0) -> list[OffsetFetchResponsePartitions]:
    return [OffsetFetchResponsePartitions(p, -1, -1, "", error) for p in indexes]


@pytest.mark.parametrize("version", range(1, 8))
async def test_offset_fetch_single_group(cluster: MockCluster, version: int) -> None:
    topics = [OffsetFetchRequestTopic("t", [0, 2]), OffsetFetchRequestTopic("never-created", [5])]
    on_coordinator = await connect(cluster, 2)
    resp = await on_coordinator.request(OFFSET_FETCH, version, OffsetFetchRequest(group_id=ON_2, topics=topics))
    assert resp.error_code == 0
    assert resp.topics == [
        OffsetFetchResponseTopic("t", old_partitions(version, [0, 2])),
        OffsetFetchResponseTopic("never-created", old_partitions(version, [5])),
    ]
    if version >= 2:  # null topics: every committed partition, of which there are none
        resp = await on_coordinator.request(OFFSET_FETCH, version, OffsetFetchRequest(group_id=ON_2, topics=None))
        assert (resp.error_code, resp.topics) == (0, [])

    wrong = await connect(cluster, 3)
    resp = await wrong.request(OFFSET_FETCH, version, OffsetFetchRequest(group_id=ON_2, topics=topics))
    if version == 1:  # no top-level error field: the group error goes on every partition
        assert resp.topics == [
            OffsetFetchResponseTopic("t", old_partitions(version, [0, 2], ErrorCode.NOT_COORDINATOR)),
            OffsetFetchResponseTopic("never-created", old_partitions(version, [5], ErrorCode.NOT_COORDINATOR)),
        ]
    else:
        assert (resp.error_code, resp.topics) == (ErrorCode.NOT_COORDINATOR, [])
        resp = await wrong.request(OFFSET_FETCH, version, OffsetFetchRequest(group_id=ON_2, topics=None))
        assert (resp.error_code, resp.topics) == (ErrorCode.NOT_COORDINATOR, [])
    await on_coordinator.close()
    await wrong.close()


@pytest.mark.parametrize("version", [8, 9])
async def test_offset_fetch_batched_groups_each_on_its_own(cluster: MockCluster, version: int) -> None:
    client = await connect(cluster, 1)
    t = [OffsetFetchRequestTopics(name="t", partition_indexes=[1, 0])]
    req = OffsetFetchRequest(
        groups=[
            OffsetFetchRequestGroup(ON_1, None, -1, t),
            OffsetFetchRequestGroup(ON_3, None, -1, t),  # coordinated by broker 3
            OffsetFetchRequestGroup(EMPTY, "some-member", 5, None),  # member fields ignored: no such group
            OffsetFetchRequestGroup(ON_2, None, -1, None),  # coordinated by broker 2
        ]
    )
    resp = await client.request(OFFSET_FETCH, version, req)
    assert resp.groups == [
        OffsetFetchResponseGroup(ON_1, [OffsetFetchResponseTopics("t", ZERO_UUID, new_partitions([1, 0]))], 0),
        OffsetFetchResponseGroup(ON_3, [], ErrorCode.NOT_COORDINATOR),
        OffsetFetchResponseGroup(EMPTY, [], 0),
        OffsetFetchResponseGroup(ON_2, [], ErrorCode.NOT_COORDINATOR),
    ]
    await client.close()


async def test_offset_fetch_v10_topic_ids(cluster: MockCluster) -> None:
    known = cluster.create_topic("known", 3)
    unknown = uuid.uuid4()
    client = await connect(cluster, 3)
    topics = [
        OffsetFetchRequestTopics(topic_id=known.topic_id, partition_indexes=[0, 2]),
        OffsetFetchRequestTopics(topic_id=unknown, partition_indexes=[1]),
    ]
    req = OffsetFetchRequest(
        groups=[OffsetFetchRequestGroup(ON_3, None, -1, topics), OffsetFetchRequestGroup(ON_1, None, -1, topics)],
        require_stable=True,
    )
    resp = await client.request(OFFSET_FETCH, 10, req)
    assert resp.groups == [
        OffsetFetchResponseGroup(
            ON_3,
            [
                OffsetFetchResponseTopics("", known.topic_id, new_partitions([0, 2])),
                OffsetFetchResponseTopics("", unknown, new_partitions([1], ErrorCode.UNKNOWN_TOPIC_ID)),
            ],
            0,
        ),
        # The group-level NOT_COORDINATOR replaces the group's topics, UNKNOWN_TOPIC_ID included.
        OffsetFetchResponseGroup(ON_1, [], ErrorCode.NOT_COORDINATOR),
    ]
    await client.close()


# -- DeleteGroups ----------------------------------------------------------------------------------


@pytest.mark.parametrize("version", range(3))
async def test_delete_groups(cluster: MockCluster, version: int) -> None:
    client = await connect(cluster, 1)
    resp = await client.request(DELETE_GROUPS, version, DeleteGroupsRequest(groups_names=[ON_1, ON_2, EMPTY, ON_1, ON_3]))
    assert resp.results == [
        DeletableGroupResult(ON_1, ErrorCode.GROUP_ID_NOT_FOUND),
        DeletableGroupResult(ON_2, ErrorCode.NOT_COORDINATOR),
        DeletableGroupResult(EMPTY, ErrorCode.GROUP_ID_NOT_FOUND),
        DeletableGroupResult(ON_3, ErrorCode.NOT_COORDINATOR),
    ]
    await client.close()


# -- kafka-python ----------------------------------------------------------------------------------


async def test_kafka_python_admin_sees_no_groups(cluster: MockCluster) -> None:
    """kafka-python 3.x's names for list_consumer_groups / describe_consumer_groups /
    list_consumer_group_offsets are list_groups / describe_groups / list_group_offsets. It finds
    each group's coordinator (FindCoordinator v4+), then asks that broker."""

    def admin_calls() -> dict[str, Any]:
        admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap_servers, client_id="unknown-groups-test")
        try:
            return {
                "list": admin.list_groups(),
                "describe": admin.describe_groups(["nope", ON_3]),
                "offsets": admin.list_group_offsets(["nope", ON_1]),
                "partitions": admin.list_group_offsets({"nope": [TopicPartition("t", 0)]}),
                "delete": admin.delete_groups(["nope"]),
            }
        finally:
            admin.close()

    got = await asyncio.wait_for(asyncio.to_thread(admin_calls), 60)
    assert got["list"] == []
    # DescribeGroups v6: GROUP_ID_NOT_FOUND with Kafka's message; the Dead placeholder otherwise empty.
    for group_id in ("nope", ON_3):
        assert got["describe"][group_id] == {
            "group_id": group_id,
            "group_state": "Dead",
            "protocol_type": "",
            "protocol_data": "",
            "members": [],
            "authorized_operations": None,
            "error": f"[Error 69] GroupIdNotFoundError: Group {group_id} not found.",
        }
    assert got["offsets"] == {"nope": {}, ON_1: {}}
    assert got["partitions"] == {"nope": {TopicPartition("t", 0): OffsetAndMetadata(-1, "", -1)}}
    assert got["delete"] == {"nope": "GroupIdNotFoundError"}
