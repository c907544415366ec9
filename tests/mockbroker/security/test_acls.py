"""ACLs: StandardAuthorizer's decision (super users, DENY over ALLOW, implied DESCRIBE, wildcards,
prefixes, allow.everyone.if.no.acl.found), the filters of DescribeAcls/DeleteAcls, and the three
ACL APIs on the wire with and without an authorizer."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from mockbroker import MockCluster
from mockbroker.security.acls import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    Authorizer,
    PatternType,
    ResourceType,
)
from mockbroker_protocol import registry
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.create_acls import AclCreation, CreateAclsRequest
from mockbroker_protocol.messages.delete_acls import DeleteAclsFilter, DeleteAclsRequest
from mockbroker_protocol.messages.describe_acls import DescribeAclsRequest
from tests.mockbroker.security.support import plain_login, secured_cluster
from tests.mockbroker.wire import WireClient

TOPIC, GROUP, CLUSTER = ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER
LITERAL, PREFIXED, MATCH, ANY = PatternType.LITERAL, PatternType.PREFIXED, PatternType.MATCH, PatternType.ANY
READ, WRITE, DESCRIBE, ALL = AclOperation.READ, AclOperation.WRITE, AclOperation.DESCRIBE, AclOperation.ALL
ALLOW, DENY = AclPermissionType.ALLOW, AclPermissionType.DENY


def _acl(rtype: int, name: str, pattern: int, principal: str, op: int, perm: int, host: str = "*") -> AclBinding:
    return AclBinding(rtype, name, pattern, principal, host, op, perm)


def test_authorize_rules() -> None:
    auth = Authorizer(super_users={"User:admin"})
    auth.add(_acl(TOPIC, "orders", LITERAL, "User:alice", READ, ALLOW))
    auth.add(_acl(TOPIC, "pay-", PREFIXED, "User:*", WRITE, ALLOW))
    auth.add(_acl(TOPIC, "pay-secret", LITERAL, "User:bob", ALL, DENY))
    auth.add(_acl(GROUP, "*", LITERAL, "User:alice", ALL, ALLOW, host="10.0.0.1"))
    assert auth.authorize("User:alice", "1.2.3.4", READ, TOPIC, "orders")
    assert auth.authorize("User:alice", "1.2.3.4", DESCRIBE, TOPIC, "orders")  # READ implies DESCRIBE
    assert not auth.authorize("User:alice", "1.2.3.4", WRITE, TOPIC, "orders")
    assert not auth.authorize("User:bob", "1.2.3.4", READ, TOPIC, "orders")
    assert auth.authorize("User:bob", "1.2.3.4", WRITE, TOPIC, "pay-in")  # prefixed, wildcard principal
    assert not auth.authorize("User:bob", "1.2.3.4", WRITE, TOPIC, "pay-secret")  # DENY wins
    assert auth.authorize("User:admin", "1.2.3.4", WRITE, TOPIC, "pay-secret")  # super user
    assert auth.authorize("User:alice", "10.0.0.1", READ, GROUP, "any-group")  # wildcard name, host
    assert not auth.authorize("User:alice", "10.0.0.2", READ, GROUP, "any-group")
    assert not auth.authorize("User:alice", "1.2.3.4", READ, TOPIC, "no-acls")  # default: deny
    assert Authorizer(allow_everyone_if_no_acl_found=True).authorize("User:x", "h", READ, TOPIC, "no-acls")
    # a resource with any ACL is not "no ACL found", even for another principal
    open_auth = Authorizer(allow_everyone_if_no_acl_found=True)
    open_auth.add(_acl(TOPIC, "orders", LITERAL, "User:alice", READ, ALLOW))
    assert not open_auth.authorize("User:bob", "h", READ, TOPIC, "orders")


def test_filters_match_as_kafka() -> None:
    lit = _acl(TOPIC, "orders", LITERAL, "User:alice", READ, ALLOW)
    wild = _acl(TOPIC, "*", LITERAL, "User:alice", READ, ALLOW)
    pre = _acl(TOPIC, "ord", PREFIXED, "User:alice", READ, ALLOW)

    def f(name: str | None, pattern: int, principal: str | None = None) -> AclBindingFilter:
        return AclBindingFilter(TOPIC, name, pattern, principal, None, AclOperation.ANY, AclPermissionType.ANY)

    assert [a for a in (lit, wild, pre) if f("orders", MATCH).matches(a)] == [lit, wild, pre]
    assert [a for a in (lit, wild, pre) if f("orders", ANY).matches(a)] == [lit]
    assert [a for a in (lit, wild, pre) if f("ord", PREFIXED).matches(a)] == [pre]
    assert [a for a in (lit, wild, pre) if f(None, LITERAL).matches(a)] == [lit, wild]
    assert not f(None, ANY, "User:bob").matches(lit)


_authenticated = plain_login


@pytest.fixture
async def acl_cluster() -> AsyncIterator[MockCluster]:
    async with secured_cluster({"admin": "admin-secret", "alice": "alice-secret"}, super_users="User:admin") as cluster:
        yield cluster


@pytest.mark.parametrize("version", [1, 2, 3])
async def test_create_describe_delete_on_the_wire(acl_cluster: MockCluster, version: int) -> None:
    admin = await _authenticated(acl_cluster, "admin", "admin-secret")
    creations = [
        AclCreation(TOPIC, "orders", LITERAL, "User:alice", "*", READ, ALLOW),
        AclCreation(TOPIC, "orders", LITERAL, "User:alice", "*", READ, ALLOW),  # a duplicate: kept once
        AclCreation(CLUSTER, "other", LITERAL, "User:alice", "*", READ, ALLOW),
        AclCreation(TOPIC, "", LITERAL, "User:alice", "*", READ, ALLOW),
        AclCreation(TOPIC, "pay-", PREFIXED, "User:alice", "*", WRITE, ALLOW),
    ]
    created = await admin.request(ApiKey.CREATE_ACLS, version, CreateAclsRequest(creations))
    assert [(r.error_code, r.error_message) for r in created.results] == [
        (0, ""),
        (0, ""),
        (ErrorCode.INVALID_REQUEST, "The only valid name for the CLUSTER resource is kafka-cluster"),
        (ErrorCode.INVALID_REQUEST, "Invalid empty resource name"),
        (0, ""),
    ]
    # a binding Kafka cannot build (ANY, MATCH): the whole request UNKNOWN_SERVER_ERROR, nothing added
    for bad in (
        AclCreation(ResourceType.ANY, "x", LITERAL, "User:alice", "*", READ, ALLOW),
        AclCreation(TOPIC, "x", MATCH, "User:alice", "*", READ, ALLOW),
        AclCreation(TOPIC, "x", LITERAL, "User:alice", "*", AclOperation.ANY, ALLOW),
        AclCreation(TOPIC, "x", LITERAL, "User:alice", "*", READ, AclPermissionType.ANY),
    ):
        refused = await admin.request(ApiKey.CREATE_ACLS, version, CreateAclsRequest([creations[0], bad]))
        assert [(r.error_code, r.error_message) for r in refused.results] == [(ErrorCode.UNKNOWN_SERVER_ERROR, None)] * 2
    described = await admin.request(
        ApiKey.DESCRIBE_ACLS, version, DescribeAclsRequest(TOPIC, "pay-in", MATCH, None, None, AclOperation.ANY, AclPermissionType.ANY)
    )
    assert described.error_code == 0
    assert [(r.resource_name, r.pattern_type, [a.operation for a in r.acls]) for r in described.resources] == [("pay-", PREFIXED, [WRITE])]
    everything = await admin.request(ApiKey.DESCRIBE_ACLS, version, DescribeAclsRequest(ResourceType.ANY, None, ANY, None, None, 1, 1))
    assert sorted(r.resource_name for r in everything.resources) == ["orders", "pay-"]
    deleted = await admin.request(
        ApiKey.DELETE_ACLS,
        version,
        DeleteAclsRequest([DeleteAclsFilter(TOPIC, None, ANY, "User:alice", None, READ, 1)]),
    )
    (first,) = deleted.filter_results
    assert first.error_code == 0 and [m.resource_name for m in first.matching_acls] == ["orders"]
    assert [a.resource_name for a in acl_cluster.authorizer.acls] == ["pay-"]  # type: ignore[union-attr]

    alice = await _authenticated(acl_cluster, "alice", "alice-secret")
    refused = await alice.request(ApiKey.CREATE_ACLS, version, CreateAclsRequest(creations[:1]))
    assert [r.error_code for r in refused.results] == [ErrorCode.CLUSTER_AUTHORIZATION_FAILED]
    refused_d = await alice.request(ApiKey.DESCRIBE_ACLS, version, DescribeAclsRequest(1, None, 1, None, None, 1, 1))
    assert refused_d.error_code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED
    assert any(e.type == "authorization.denied" and e.details.get("principal") == "User:alice" for e in acl_cluster.events.filter("authorization.denied"))
    # an UNKNOWN part: Kafka's request does not parse, the connection closes (as admin too)
    await admin.send_raw(registry.encode_request(
        RequestHeader(ApiKey.DELETE_ACLS, version, 7, "t"), DeleteAclsRequest([DeleteAclsFilter(0, None, ANY, None, None, 1, 1)])
    ))
    assert await admin.closed_by_peer()


async def test_without_an_authorizer_security_disabled() -> None:
    async with MockCluster() as cluster:
        node = next(iter(cluster.brokers.values()))
        client = await WireClient.connect(node.host, node.port)
        created = await client.request(ApiKey.CREATE_ACLS, 3, CreateAclsRequest([AclCreation(TOPIC, "t", LITERAL, "User:a", "*", READ, ALLOW)]))
        assert [(r.error_code, r.error_message) for r in created.results] == [(ErrorCode.SECURITY_DISABLED, "No Authorizer is configured.")]
        described = await client.request(ApiKey.DESCRIBE_ACLS, 3, DescribeAclsRequest(1, None, 1, None, None, 1, 1))
        assert (described.error_code, described.error_message) == (ErrorCode.SECURITY_DISABLED, "No Authorizer is configured on the broker")
        deleted = await client.request(ApiKey.DELETE_ACLS, 3, DeleteAclsRequest([DeleteAclsFilter(1, None, 1, None, None, 1, 1)]))
        assert [r.error_code for r in deleted.filter_results] == [ErrorCode.SECURITY_DISABLED]


async def test_enforcement_codes_on_the_wire(acl_cluster: MockCluster) -> None:
    from mockbroker_protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
    from mockbroker_protocol.messages.describe_configs import DescribeConfigsRequest, DescribeConfigsResource
    from mockbroker_protocol.messages.find_coordinator import FindCoordinatorRequest
    from mockbroker_protocol.messages.init_producer_id import InitProducerIdRequest
    from mockbroker_protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
    from mockbroker_protocol.messages.metadata import MetadataRequest, MetadataRequestTopic

    acl_cluster.create_topic("visible", 1)
    acl_cluster.create_topic("hidden", 1)
    acl_cluster.authorizer.add(_acl(TOPIC, "visible", LITERAL, "User:alice", WRITE, ALLOW))  # type: ignore[union-attr]
    alice = await _authenticated(acl_cluster, "alice", "alice-secret")

    every = await alice.request(ApiKey.METADATA, 12, MetadataRequest(topics=None, include_topic_authorized_operations=True))
    assert [(t.name, t.topic_authorized_operations) for t in every.topics] == [("visible", (1 << WRITE) | (1 << DESCRIBE))]
    named = await alice.request(ApiKey.METADATA, 12, MetadataRequest(topics=[MetadataRequestTopic(name=n) for n in ("visible", "hidden", "new")]))
    assert [(t.name, t.error_code) for t in named.topics] == [
        ("visible", 0), ("hidden", ErrorCode.TOPIC_AUTHORIZATION_FAILED), ("new", ErrorCode.TOPIC_AUTHORIZATION_FAILED),
    ]
    assert "new" not in acl_cluster.topics  # no auto-creation without CREATE
    coordinator = await alice.request(ApiKey.FIND_COORDINATOR, 4, FindCoordinatorRequest(key_type=0, coordinator_keys=["g"]))
    assert coordinator.coordinators[0].error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    join = await alice.request(
        ApiKey.JOIN_GROUP, 9, JoinGroupRequest("g", 10000, 10000, "", None, "consumer", [JoinGroupRequestProtocol("range", b"")])
    )
    assert join.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
    txn = await alice.request(ApiKey.INIT_PRODUCER_ID, 5, InitProducerIdRequest(transactional_id="tx", transaction_timeout_ms=60000))
    assert txn.error_code == ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    idempotent = await alice.request(ApiKey.INIT_PRODUCER_ID, 5, InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000))
    assert idempotent.error_code == 0  # WRITE on some topic is enough (KIP-679)
    created = await alice.request(ApiKey.CREATE_TOPICS, 7, CreateTopicsRequest([CreatableTopic("mine", 1, 1)], 30000))
    assert created.topics[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    configs = await alice.request(ApiKey.DESCRIBE_CONFIGS, 4, DescribeConfigsRequest([DescribeConfigsResource(2, "visible", None)]))
    assert configs.results[0].error_code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
    from mockbroker_protocol.messages.offset_delete import OffsetDeleteRequest

    deleted = await alice.request(ApiKey.OFFSET_DELETE, 0, OffsetDeleteRequest("g", []))
    assert deleted.error_code == ErrorCode.GROUP_AUTHORIZATION_FAILED
