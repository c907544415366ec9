"""ShareGroupDescribe and StreamsGroupDescribe under an authorizer, over the wire: a group whose
answer names a topic the client may not DESCRIBE (a share group's assignments, a streams group's
topology: source, repartition and changelog topics) is TOPIC_AUTHORIZATION_FAILED with Kafka
4.3.1's message and nothing else (KafkaApis.handleShareGroupDescribe /
handleStreamsGroupDescribe), group by group; the topic denials are logged; DESCRIBE on every
topic named lets the group be described. ConsumerGroupDescribe's own case is in
test_consumer_group_acls.py; Kafka's answers are compared in tests/differential/test_acls.py."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from mockbroker import MockCluster
from mockbroker.security.acls import AclOperation, PatternType, ResourceType
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages import share_group_describe as sgd
from mockbroker_protocol.messages import streams_group_describe as stgd
from mockbroker_protocol.messages import streams_group_heartbeat as sgh
from mockbroker_protocol.messages.share_group_describe import ShareGroupDescribeRequest
from mockbroker_protocol.messages.share_group_heartbeat import ShareGroupHeartbeatRequest
from mockbroker_protocol.messages.streams_group_describe import StreamsGroupDescribeRequest
from tests.mockbroker.security.support import allow, plain_login, secured_cluster
from tests.mockbroker.wire import WireClient

USERS = {"admin": "admin-secret", "bob": "bob-secret"}
SHARE_REFUSAL = "The group has described topic(s) that the client is not authorized to describe."
STREAMS_REFUSAL = "The described group uses topics that the client is not authorized to describe."


@pytest.fixture
async def cluster() -> AsyncIterator[MockCluster]:
    async with secured_cluster(USERS, super_users="User:admin") as cluster:
        yield cluster


def _allow(cluster: MockCluster, rtype: int, name: str, op: int, pattern: int = PatternType.LITERAL) -> None:
    allow(cluster, rtype, name, "User:bob", op, pattern)


async def _login(cluster: MockCluster, user: str) -> WireClient:
    return await plain_login(cluster, user, USERS[user])


def _denied_topics(cluster: MockCluster) -> set[str]:
    return {e.details["resource_name"] for e in cluster.events.filter("authorization.denied") if e.details["resource_type"] == "TOPIC"}


async def test_share_group_describe_refuses_a_group_assigned_an_undescribable_topic(cluster: MockCluster) -> None:
    """Two share groups in one request: the one assigned "secret" is refused, the one assigned
    "open" is described; DESCRIBE on "secret" then lets the first be described too."""
    cluster.create_topic("secret", 2)
    cluster.create_topic("open", 2)
    admin = await _login(cluster, "admin")  # a super user creates the groups
    for group_id, topic in (("s-secret", "secret"), ("s-open", "open")):
        joined = await admin.request(ApiKey.SHARE_GROUP_HEARTBEAT, 1, ShareGroupHeartbeatRequest(
            group_id=group_id, member_id=str(uuid.uuid4()), member_epoch=0, subscribed_topic_names=[topic],
        ))  # fmt: skip
        assert joined.error_code == 0 and joined.assignment is not None and joined.assignment.topic_partitions, joined
    for group_id in ("s-secret", "s-open"):
        _allow(cluster, ResourceType.GROUP, group_id, AclOperation.DESCRIBE)
    _allow(cluster, ResourceType.TOPIC, "open", AclOperation.DESCRIBE)
    bob = await _login(cluster, "bob")
    answer = await bob.request(ApiKey.SHARE_GROUP_DESCRIBE, 1, ShareGroupDescribeRequest(["s-secret", "s-open"], True))
    refused, described = answer.groups
    # nothing but the group id, the code and the message (no state, members or operations)
    assert refused == sgd.DescribedGroup(ErrorCode.TOPIC_AUTHORIZATION_FAILED, SHARE_REFUSAL, "s-secret")
    assert (described.group_id, described.error_code, len(described.members)) == ("s-open", 0, 1)
    assert [tp.topic_name for tp in described.members[0].assignment.topic_partitions] == ["open"]
    assert "secret" in _denied_topics(cluster) and "open" not in _denied_topics(cluster)

    _allow(cluster, ResourceType.TOPIC, "secret", AclOperation.DESCRIBE)
    again = await bob.request(ApiKey.SHARE_GROUP_DESCRIBE, 1, ShareGroupDescribeRequest(["s-secret"], False))
    assert (again.groups[0].error_code, len(again.groups[0].members)) == (0, 1)
    await admin.close()
    await bob.close()


def _word_count(source: str) -> sgh.Topology:
    """A word count (as tests/differential/test_streams_groups.py's): subtopology 0 reads the
    source and writes "app-repartition", subtopology 1 reads it into a store logged to
    "app-changelog"."""
    return sgh.Topology(epoch=1, subtopologies=[
        sgh.Subtopology(subtopology_id="0", source_topics=[source], repartition_sink_topics=["app-repartition"]),
        sgh.Subtopology(
            subtopology_id="1",
            repartition_source_topics=[sgh.TopicInfo("app-repartition", 0, 0, [sgh.KeyValue("cleanup.policy", "delete")])],
            state_changelog_topics=[sgh.TopicInfo("app-changelog", 0, 0, [sgh.KeyValue("cleanup.policy", "compact")])],
        ),
    ])  # fmt: skip


async def test_streams_group_describe_refuses_a_topology_naming_an_undescribable_topic(cluster: MockCluster) -> None:
    """Every topic of the topology counts, the internal ones too: DESCRIBE on the source alone is
    not enough; on the source and the group's internal topics it is."""
    cluster.create_topic("words", 2)
    admin = await _login(cluster, "admin")
    joined = await admin.request(ApiKey.STREAMS_GROUP_HEARTBEAT, 0, sgh.StreamsGroupHeartbeatRequest(
        group_id="app", member_id=str(uuid.uuid4()), member_epoch=0, rebalance_timeout_ms=30_000,
        topology=_word_count("words"), process_id="process-1", active_tasks=[], standby_tasks=[], warmup_tasks=[],
    ))  # fmt: skip
    assert joined.error_code == 0, joined
    _allow(cluster, ResourceType.GROUP, "app", AclOperation.DESCRIBE)
    _allow(cluster, ResourceType.TOPIC, "words", AclOperation.DESCRIBE)
    bob = await _login(cluster, "bob")
    answer = await bob.request(ApiKey.STREAMS_GROUP_DESCRIBE, 0, StreamsGroupDescribeRequest(["app"], True))
    [refused] = answer.groups
    assert refused == stgd.DescribedGroup(ErrorCode.TOPIC_AUTHORIZATION_FAILED, STREAMS_REFUSAL, "app")
    assert {"app-repartition", "app-changelog"} <= _denied_topics(cluster)

    _allow(cluster, ResourceType.TOPIC, "app-", AclOperation.DESCRIBE, PatternType.PREFIXED)
    again = await bob.request(ApiKey.STREAMS_GROUP_DESCRIBE, 0, StreamsGroupDescribeRequest(["app"], False))
    [described] = again.groups
    assert (described.error_code, described.group_id, len(described.members)) == (0, "app", 1)
    assert described.topology is not None and described.topology.subtopologies
    await admin.close()
    await bob.close()
