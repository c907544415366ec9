"""KIP-848 consumer groups under an authorizer, over the wire: ConsumerGroupHeartbeat's regex
matches only the topics the member may DESCRIBE (TopicRegexResolver), the topics left out are not
logged as denials, and ConsumerGroupDescribe refuses a group whose assignments name a topic the
client may not DESCRIBE (KafkaApis.handleConsumerGroupDescribe)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import pytest

from mockbroker import MockCluster
from mockbroker.security.acls import AclOperation, ResourceType
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.consumer_group_describe import ConsumerGroupDescribeRequest
from mockbroker_protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest
from tests.mockbroker.security.support import allow, plain_login, secured_cluster
from tests.mockbroker.wire import WireClient

USERS = {"admin": "admin-secret", "alice": "alice-secret", "bob": "bob-secret"}


@pytest.fixture
async def cluster() -> AsyncIterator[MockCluster]:
    async with secured_cluster(USERS, super_users="User:admin") as cluster:
        yield cluster


def _allow(cluster: MockCluster, rtype: int, name: str, principal: str, op: int) -> None:
    allow(cluster, rtype, name, principal, op)


async def _login(cluster: MockCluster, user: str) -> WireClient:
    return await plain_login(cluster, user, USERS[user])


def _join(regex: str) -> ConsumerGroupHeartbeatRequest:
    return ConsumerGroupHeartbeatRequest(
        group_id="g", member_id=str(uuid.UUID(int=1)), member_epoch=0, rebalance_timeout_ms=30_000,
        subscribed_topic_regex=regex, topic_partitions=[],
    )  # fmt: skip


async def test_a_regex_is_resolved_with_the_members_describe_acls(cluster: MockCluster) -> None:
    for name in ("orders-a", "orders-b"):
        cluster.create_topic(name, 2)
    _allow(cluster, ResourceType.GROUP, "g", "User:alice", AclOperation.READ)
    _allow(cluster, ResourceType.TOPIC, "orders-a", "User:alice", AclOperation.READ)  # READ implies DESCRIBE
    alice = await _login(cluster, "alice")
    joined = await alice.request(ApiKey.CONSUMER_GROUP_HEARTBEAT, 1, _join("orders-.*"))
    assert joined.error_code == 0 and joined.assignment is not None
    assert [(t.topic_id, sorted(t.partitions)) for t in joined.assignment.topic_partitions] == [
        (cluster.topics["orders-a"].topic_id, [0, 1])
    ]
    # a topic left out of a regex is a filter's decision, not a logged denial (logIfDenied=false)
    assert not [e for e in cluster.events.filter("authorization.denied") if e.details.get("resource_name") == "orders-b"]

    # bob may describe the group but not the topic its members are given
    _allow(cluster, ResourceType.GROUP, "g", "User:bob", AclOperation.DESCRIBE)
    bob = await _login(cluster, "bob")
    refused = await bob.request(ApiKey.CONSUMER_GROUP_DESCRIBE, 1, ConsumerGroupDescribeRequest(["g"], True))
    assert [(g.group_id, g.error_code, g.error_message, g.members, g.group_state, g.authorized_operations) for g in refused.groups] == [
        ("g", ErrorCode.TOPIC_AUTHORIZATION_FAILED,
         "The group has described topic(s) that the client is not authorized to describe.", [], "", -2147483648),
    ]  # fmt: skip
    assert any(e.details.get("resource_name") == "orders-a" for e in cluster.events.filter("authorization.denied"))
    _allow(cluster, ResourceType.TOPIC, "orders-a", "User:bob", AclOperation.DESCRIBE)
    described = await bob.request(ApiKey.CONSUMER_GROUP_DESCRIBE, 1, ConsumerGroupDescribeRequest(["g"], False))
    assert described.groups[0].error_code == 0 and len(described.groups[0].members) == 1
    await alice.close()
    await bob.close()
