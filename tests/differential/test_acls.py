"""Differential: ACL decisions against a Kafka 4.3.1 with StandardAuthorizer and SASL PLAIN
(``secured_targets``, tests/differential/conftest.py; a second Kafka for the session): the ACL
APIs' checks and answers, and the codes each API refuses with for a principal without the ACLs."""

from __future__ import annotations

import uuid
from typing import Any

from mockbroker_protocol import registry
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.create_acls import AclCreation, CreateAclsRequest
from mockbroker_protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from mockbroker_protocol.messages.delete_acls import DeleteAclsFilter, DeleteAclsRequest
from mockbroker_protocol.messages.describe_acls import DescribeAclsRequest
from mockbroker_protocol.messages.describe_configs import DescribeConfigsRequest, DescribeConfigsResource
from mockbroker_protocol.messages.describe_groups import DescribeGroupsRequest
from mockbroker_protocol.messages.find_coordinator import FindCoordinatorRequest
from mockbroker_protocol.messages.init_producer_id import InitProducerIdRequest
from mockbroker_protocol.messages.join_group import JoinGroupRequest, JoinGroupRequestProtocol
from mockbroker_protocol.messages.sasl_authenticate import SaslAuthenticateRequest
from mockbroker_protocol.messages.sasl_handshake import SaslHandshakeRequest
from tests.differential.conftest import SASL_USERS
from tests.differential.harness import Context, Item, Raw, Step, Target, differential
from tests.differential.steps import create, metadata
from tests.differential.test_data_path import batch, produce

(SASL_HANDSHAKE, SASL_AUTHENTICATE, CREATE_ACLS, DESCRIBE_ACLS, DELETE_ACLS, METADATA, PRODUCE, FIND_COORDINATOR,
 JOIN_GROUP, DESCRIBE_GROUPS, INIT_PRODUCER_ID, CREATE_TOPICS, DESCRIBE_CONFIGS) = (17, 36, 30, 29, 31, 3, 0, 10, 11, 15, 22, 19, 32)  # fmt: skip
TOPIC, GROUP, CLUSTER, ANY_TYPE = 2, 3, 4, 1
LITERAL, PREFIXED, MATCH, ANY_PATTERN = 3, 4, 2, 1
READ, DESCRIBE, ANY_OP, ALL = 3, 8, 1, 2
CREATE, DELETE, DESCRIBE_CONFIGS = 5, 6, 10
ALLOW, ANY_PERM = 3, 1


def login(user: str, conn: str) -> list[Item]:
    token = f"\x00{user}\x00{SASL_USERS[user]}".encode()
    return [
        Step(SASL_HANDSHAKE, 1, SaslHandshakeRequest("PLAIN"), conn=conn, label=f"handshake-{conn}"),
        Step(SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(token), conn=conn, label=f"auth-{conn}"),
    ]


def acls_visible(*resources: tuple[int, Any, int]) -> list[Step]:
    """Wait (not compared) until the admin sees each (resource type, name of ctx, pattern type)'s
    bindings: Kafka's brokers apply ACLs once the controller's records reach them."""
    return [
        Step(DESCRIBE_ACLS, 3, lambda ctx, t=t, n=n, p=p: DescribeAclsRequest(t, n(ctx), p, None, None, ANY_OP, ANY_PERM),
             conn="admin", until=lambda answer: len(answer.resources) == 1, compare=False)
        for t, n, p in resources
    ]  # fmt: skip


def as_admin(steps: list[Step]) -> list[Step]:
    for step in steps:
        step.conn = "admin"
    return steps


def _sorted_resources(tree: Any, ctx: Context) -> Any:
    """Kafka lists DescribeAcls' resources in its authorizer's index order; compare them as a set."""
    tree["resources"] = sorted(tree["resources"], key=repr)
    for resource in tree["resources"]:
        resource["acls"] = sorted(resource["acls"], key=repr)
    return tree


def test_acl_apis_and_decisions(secured_targets: tuple[Target, Target]) -> None:
    def creations(ctx: Context) -> CreateAclsRequest:
        return CreateAclsRequest([
            AclCreation(TOPIC, ctx.topic, LITERAL, "User:alice", "*", READ, ALLOW),
            AclCreation(TOPIC, ctx.topic, LITERAL, "User:alice", "*", READ, ALLOW),  # kept once
            AclCreation(GROUP, ctx.group[:6], PREFIXED, "User:alice", "*", DESCRIBE, ALLOW),
            AclCreation(CLUSTER, "other", LITERAL, "User:alice", "*", READ, ALLOW),
            AclCreation(TOPIC, "", LITERAL, "User:alice", "*", READ, ALLOW),
        ])  # fmt: skip

    def unbuildable(resource_type: int, pattern: int, op: int, perm: int) -> Step:
        # Kafka cannot build such a binding: the whole request is UNKNOWN_SERVER_ERROR
        return Step(CREATE_ACLS, 3, lambda ctx: CreateAclsRequest([
            AclCreation(TOPIC, ctx.topic2, LITERAL, "User:alice", "*", READ, ALLOW),
            AclCreation(resource_type, ctx.topic2, pattern, "User:alice", "*", op, perm),
        ]), conn="admin")  # fmt: skip

    steps: list[Item] = [
        *login("admin", "admin"),
        *login("alice", "main"),
        *as_admin(create()),
        Step(CREATE_ACLS, 3, creations, conn="admin"),
        unbuildable(ANY_TYPE, LITERAL, READ, ALLOW),
        unbuildable(TOPIC, MATCH, READ, ALLOW),
        unbuildable(TOPIC, LITERAL, ANY_OP, ALLOW),
        unbuildable(TOPIC, LITERAL, READ, ANY_PERM),
        # Kafka's brokers apply ACLs once the controller's record reaches them: wait for it
        Step(DESCRIBE_ACLS, 3, lambda ctx: DescribeAclsRequest(TOPIC, ctx.topic, MATCH, None, None, ANY_OP, ANY_PERM), conn="admin",
             normalise=_sorted_resources, until=lambda answer: len(answer.resources) == 1),
        Step(DESCRIBE_ACLS, 2, lambda ctx: DescribeAclsRequest(ANY_TYPE, ctx.group, MATCH, "User:alice", None, ANY_OP, ANY_PERM),
             conn="admin", normalise=_sorted_resources, until=lambda answer: len(answer.resources) == 1),
        # alice: READ on the topic (DESCRIBE implied), DESCRIBE on the group's prefix, nothing else
        Step(METADATA, 12, metadata([lambda ctx: ctx.topic, lambda ctx: ctx.topic2], allow_auto=True)),
        Step(PRODUCE, 9, produce(batch(b"a"))),
        # Kafka makes __consumer_offsets on the first lookup (COORDINATOR_NOT_AVAILABLE until then)
        Step(FIND_COORDINATOR, 4, lambda ctx: FindCoordinatorRequest(key_type=0, coordinator_keys=[ctx.group, "other-group"]),
             until=lambda answer: answer.coordinators[0].error_code == 0),
        Step(JOIN_GROUP, 9, lambda ctx: JoinGroupRequest(ctx.group, 10000, 10000, "", None, "consumer", [JoinGroupRequestProtocol("range", b"")])),
        Step(DESCRIBE_GROUPS, 5, lambda ctx: DescribeGroupsRequest([ctx.group, "other-group"], False),
             until=lambda answer: answer.groups[1].error_code not in (14, 16)),  # Kafka's coordinator may still load
        Step(INIT_PRODUCER_ID, 5, lambda ctx: InitProducerIdRequest(transactional_id=ctx.group, transaction_timeout_ms=60000)),
        Step(INIT_PRODUCER_ID, 5, InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000)),
        Step(CREATE_TOPICS, 7, lambda ctx: CreateTopicsRequest([CreatableTopic(ctx.topic2, 1, 1)], 30000)),
        Step(DESCRIBE_CONFIGS, 4, lambda ctx: DescribeConfigsRequest([DescribeConfigsResource(2, ctx.topic, None)])),
        Step(DELETE_ACLS, 3, lambda ctx: DeleteAclsRequest([DeleteAclsFilter(TOPIC, ctx.topic, LITERAL, None, None, ANY_OP, ANY_PERM)]),
             conn="admin", normalise=_sorted_matches),
        Step(METADATA, 12, metadata([lambda ctx: ctx.topic])),
    ]  # fmt: skip
    differential(*secured_targets, steps)


def _by_name(tree: Any, ctx: Context) -> Any:
    tree["responses"] = sorted(tree["responses"], key=lambda r: r["name"])
    return tree


def _frame(api_key: int, request: Any) -> Any:
    def build(ctx: Context) -> bytes:
        return registry.encode_request(RequestHeader(api_key, 3, 99, "differential"), request)

    return build


def _sorted_matches(tree: Any, ctx: Context) -> Any:
    for result in tree["filter_results"]:
        result["matching_acls"] = sorted(result["matching_acls"], key=repr)
    return tree


def test_consumer_path_decisions(secured_targets: tuple[Target, Target]) -> None:
    """alice may READ the group and the first topic only: commits, offset fetches, fetches and
    deletions of the second topic are refused as Kafka refuses them."""
    from mockbroker_protocol.messages.delete_topics import DeleteTopicsRequest, DeleteTopicState
    from mockbroker_protocol.messages.list_groups import ListGroupsRequest
    from mockbroker_protocol.messages.offset_commit import (
        OffsetCommitRequest,
        OffsetCommitRequestPartition,
        OffsetCommitRequestTopic,
    )
    from mockbroker_protocol.messages.offset_fetch import (
        OffsetFetchRequest,
        OffsetFetchRequestGroup,
        OffsetFetchRequestTopics,
    )
    from tests.differential.test_data_path import fetch, list_offsets

    def grants(ctx: Context) -> CreateAclsRequest:
        return CreateAclsRequest([
            AclCreation(TOPIC, ctx.topic, LITERAL, "User:alice", "*", READ, ALLOW),
            AclCreation(GROUP, ctx.group, LITERAL, "User:alice", "*", READ, ALLOW),
        ])  # fmt: skip

    def commit(ctx: Context) -> OffsetCommitRequest:
        topics = [OffsetCommitRequestTopic(name=t, partitions=[OffsetCommitRequestPartition(0, 1, -1, -1, "m")]) for t in (ctx.topic, ctx.topic2)]
        return OffsetCommitRequest(group_id=ctx.group, generation_id_or_member_epoch=-1, member_id="", topics=topics)

    def offsets(group: str | None, names: bool) -> Any:
        def build(ctx: Context) -> OffsetFetchRequest:
            topics = [OffsetFetchRequestTopics(name=t, partition_indexes=[0]) for t in (ctx.topic, ctx.topic2)] if names else None
            return OffsetFetchRequest(groups=[OffsetFetchRequestGroup(group_id=group or ctx.group, topics=topics)])

        return build

    def groups_only_mine(tree: Any, ctx: Context) -> Any:
        tree["groups"] = [g for g in tree["groups"] if g["group_id"] == ctx.group]  # the session's other groups
        return tree

    steps: list[Item] = [
        *login("admin", "admin"),
        *login("alice", "main"),
        *as_admin(create()),
        *as_admin(create(lambda ctx: ctx.topic2)),
        Step(CREATE_ACLS, 3, grants, conn="admin"),
        Step(DESCRIBE_ACLS, 3, lambda ctx: DescribeAclsRequest(GROUP, ctx.group, LITERAL, None, None, ANY_OP, ANY_PERM), conn="admin",
             until=lambda answer: len(answer.resources) == 1),
        Step(DESCRIBE_ACLS, 3, lambda ctx: DescribeAclsRequest(TOPIC, ctx.topic, LITERAL, None, None, ANY_OP, ANY_PERM), conn="admin",
             until=lambda answer: len(answer.resources) == 1),
        Step(FIND_COORDINATOR, 4, lambda ctx: FindCoordinatorRequest(key_type=0, coordinator_keys=[ctx.group]),
             until=lambda answer: answer.coordinators[0].error_code == 0),
        Step(8, 8, commit, until=lambda answer: answer.topics[0].partitions[0].error_code not in (14, 16)),
        Step(9, 8, offsets(None, True)),
        Step(9, 8, offsets(None, False)),
        Step(9, 8, offsets("other-group", True)),
        Step(1, 12, fetch(0, name=None)),
        Step(1, 12, lambda ctx: fetch(0, name=ctx.topic2)(ctx)),
        Step(2, 7, lambda ctx: list_offsets(-1, name=ctx.topic2)(ctx)),
        Step(16, 4, ListGroupsRequest(states_filter=[]), normalise=groups_only_mine),
        Step(20, 6, lambda ctx: DeleteTopicsRequest(topics=[DeleteTopicState(name=ctx.topic2), DeleteTopicState(name="no-such-topic-acl")], timeout_ms=30000),
             normalise=_by_name),  # Kafka's answer order is its map's
        Step(DESCRIBE_ACLS, 3, DescribeAclsRequest(ANY_TYPE, None, ANY_PATTERN, None, None, ANY_OP, ANY_PERM),
             divergences={"D22": ["error_message"]}),
        # an UNKNOWN part: Kafka's request does not parse and the connection closes (each its own admin connection)
        Raw(_frame(DELETE_ACLS, DeleteAclsRequest([DeleteAclsFilter(0, None, ANY_PATTERN, None, None, ANY_OP, ANY_PERM)])),
            conn="admin", label="delete-unknown"),
        *login("admin", "admin2"),
        Raw(_frame(CREATE_ACLS, CreateAclsRequest([AclCreation(TOPIC, "x", LITERAL, "User:alice", "*", 0, ALLOW)])),
            conn="admin2", label="create-unknown"),
        *login("admin", "admin3"),
        Raw(_frame(DESCRIBE_ACLS, DescribeAclsRequest(TOPIC, None, 0, None, None, ANY_OP, ANY_PERM)),
            conn="admin3", label="describe-unknown"),
    ]  # fmt: skip
    differential(*secured_targets, steps)


def test_group_protocol_decisions(secured_targets: tuple[Target, Target]) -> None:
    """alice may READ the groups whose names start with the sequence's group and the first topic:
    the KIP-848 and share heartbeats subscribing to the second topic too, and share fetches and
    acknowledgements of it, are refused as Kafka refuses them."""
    from mockbroker_protocol.messages.share_acknowledge import (
        AcknowledgementBatch,
        AcknowledgePartition,
        AcknowledgeTopic,
        ShareAcknowledgeRequest,
    )
    from mockbroker_protocol.messages.share_fetch import FetchPartition, FetchTopic, ShareFetchRequest
    from mockbroker_protocol.messages.share_group_describe import ShareGroupDescribeRequest
    from tests.differential.test_classic_groups import coordinator_ready
    from tests.differential.test_consumer_groups import hb as consumer_hb
    from tests.differential.test_consumer_groups import sorted_assignment
    from tests.differential.test_share_groups import hb as share_hb

    def grants(ctx: Context) -> CreateAclsRequest:
        return CreateAclsRequest([
            AclCreation(TOPIC, ctx.topic, LITERAL, "User:alice", "*", READ, ALLOW),
            AclCreation(GROUP, ctx.group, LITERAL, "User:alice", "*", READ, ALLOW),
            # the share group; "<group>-" is a prefix of no other sequence's group name
            AclCreation(GROUP, f"{ctx.group}-", PREFIXED, "User:alice", "*", READ, ALLOW),
        ])  # fmt: skip

    def share_group(build: Any) -> Any:
        def rebuilt(ctx: Context) -> Any:
            request = build(ctx)
            request.group_id = f"{ctx.group}-share"
            return request

        return rebuilt

    def both(ctx: Context) -> list[str]:
        return [ctx.topic, ctx.topic2]

    def share_fetch(ctx: Context) -> ShareFetchRequest:
        topics = [FetchTopic(ctx.answers["created2"].topics[0].topic_id, [FetchPartition(0)])]
        return ShareFetchRequest(
            group_id=f"{ctx.group}-share", member_id=str(uuid.UUID(int=7)), share_session_epoch=0, max_wait_ms=0,
            min_bytes=1, max_bytes=1 << 20, max_records=10, batch_size=10, topics=topics,
        )  # fmt: skip

    def share_ack(ctx: Context) -> ShareAcknowledgeRequest:
        batch = AcknowledgementBatch(first_offset=0, last_offset=0, acknowledge_types=[1])
        topic = AcknowledgeTopic(ctx.answers["created2"].topics[0].topic_id, [AcknowledgePartition(0, [batch])])
        return ShareAcknowledgeRequest(group_id=f"{ctx.group}-share", member_id=str(uuid.UUID(int=7)), share_session_epoch=1, topics=[topic])

    created, created2 = as_admin(create()), as_admin(create(lambda ctx: ctx.topic2))
    created[0].label, created2[0].label = "created", "created2"
    steps: list[Item] = [
        *login("admin", "admin"),
        *login("alice", "main"),
        *created,
        *created2,
        Step(CREATE_ACLS, 3, grants, conn="admin"),
        *acls_visible((GROUP, lambda ctx: ctx.group, LITERAL), (GROUP, lambda ctx: f"{ctx.group}-", PREFIXED),
                      (TOPIC, lambda ctx: ctx.topic, LITERAL)),
        *coordinator_ready(),
        Step(68, 1, lambda ctx: consumer_hb(0, topics=both(ctx))(ctx), label="consumer-both"),
        Step(76, 1, share_group(lambda ctx: share_hb(0, topics=both(ctx))(ctx)), label="share-both"),
        Step(78, 1, share_fetch, label="share-fetch"),
        Step(79, 1, share_ack, label="share-ack"),
        # subscribed to the first topic only: a member (its assignment compared), then it leaves
        Step(68, 1, lambda ctx: consumer_hb(0, topics=[ctx.topic], owned=False)(ctx), label="consumer-ours",
             normalise=sorted_assignment),
        Step(68, 1, consumer_hb(-1, topics=None), label="consumer-leave"),
        # a share group alice may READ: its KIP-430 operations (READ, DESCRIBE)
        Step(76, 1, share_group(lambda ctx: share_hb(0, topics=[ctx.topic])(ctx)), label="share-ours", compare=False),
        Step(77, 1, lambda ctx: ShareGroupDescribeRequest([f"{ctx.group}-share"], True), label="share-describe",
             ignore=("groups.*.members", "groups.*.members.*", "groups.*.group_epoch", "groups.*.assignment_epoch")),
    ]  # fmt: skip
    differential(*secured_targets, steps)


def test_authorized_operations(secured_targets: tuple[Target, Target]) -> None:
    """KIP-430's authorized-operation bits (Metadata, DescribeGroups, ConsumerGroupDescribe,
    DescribeCluster) for alice's ACLs, and CreateTopics' configs left out without DESCRIBE_CONFIGS
    (KIP-525)."""
    from mockbroker_protocol.messages.consumer_group_describe import ConsumerGroupDescribeRequest
    from mockbroker_protocol.messages.describe_cluster import DescribeClusterRequest
    from mockbroker_protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
    from mockbroker_protocol.messages.share_group_describe import ShareGroupDescribeRequest
    from mockbroker_protocol.messages.streams_group_describe import StreamsGroupDescribeRequest
    from tests.differential.test_classic_groups import coordinator_ready
    from tests.differential.test_consumer_groups import hb as consumer_hb

    def grants(ctx: Context) -> CreateAclsRequest:
        return CreateAclsRequest([
            AclCreation(TOPIC, ctx.topic, LITERAL, "User:alice", "*", READ, ALLOW),
            AclCreation(TOPIC, ctx.topic, LITERAL, "User:alice", "*", DESCRIBE_CONFIGS, ALLOW),
            AclCreation(TOPIC, ctx.topic2, LITERAL, "User:alice", "*", CREATE, ALLOW),
            AclCreation(GROUP, ctx.group, LITERAL, "User:alice", "*", READ, ALLOW),
            AclCreation(GROUP, ctx.group, LITERAL, "User:alice", "*", DELETE, ALLOW),
            AclCreation(CLUSTER, "kafka-cluster", LITERAL, "User:alice", "*", DESCRIBE, ALLOW),
        ])  # fmt: skip

    def described(version: int, cluster: bool) -> Any:
        def build(ctx: Context) -> MetadataRequest:
            return MetadataRequest(
                topics=[MetadataRequestTopic(name=ctx.topic)], allow_auto_topic_creation=False,
                include_cluster_authorized_operations=cluster, include_topic_authorized_operations=True,
            )  # fmt: skip

        return Step(METADATA, version, build, label=f"metadata-v{version}")

    created = as_admin(create())
    created[0].label = "created"
    steps: list[Item] = [
        *login("admin", "admin"),
        *login("alice", "main"),
        *created,
        Step(CREATE_ACLS, 3, grants, conn="admin"),
        *acls_visible((GROUP, lambda ctx: ctx.group, LITERAL), (TOPIC, lambda ctx: ctx.topic, LITERAL),
                      (TOPIC, lambda ctx: ctx.topic2, LITERAL), (CLUSTER, lambda ctx: "kafka-cluster", LITERAL)),
        described(12, False),
        described(10, True),
        *coordinator_ready(),
        Step(68, 1, lambda ctx: consumer_hb(0, topics=[ctx.topic], owned=False)(ctx), label="joined", compare=False),
        Step(DESCRIBE_GROUPS, 5, lambda ctx: DescribeGroupsRequest([ctx.group, "other-group"], True), label="describe-groups",
             ignore=("groups.*.members.*.member_metadata", "groups.*.members.*.member_assignment")),
        Step(69, 1, lambda ctx: ConsumerGroupDescribeRequest([ctx.group, "other-group"], True), label="consumer-group-describe",
             ignore=("groups.*.members.*", "groups.*.assignment_epoch", "groups.*.group_epoch")),
        Step(77, 1, ShareGroupDescribeRequest(["other-group"], True), label="share-group-describe"),
        Step(89, 0, StreamsGroupDescribeRequest(["other-group"], True), label="streams-group-describe"),
        Step(60, 1, DescribeClusterRequest(include_cluster_authorized_operations=True), label="describe-cluster"),
        Step(CREATE_TOPICS, 7, lambda ctx: CreateTopicsRequest([CreatableTopic(ctx.topic2, 1, 1)], 30000), label="create-no-describe-configs"),
    ]  # fmt: skip
    differential(*secured_targets, steps)


def test_streams_topology_decisions(secured_targets: tuple[Target, Target]) -> None:
    """StreamsGroupHeartbeat with a topology: alice may READ the group and the source topic; the
    topology's internal topics need DESCRIBE, and their creation CREATE (KafkaApis)."""
    from tests.differential.test_classic_groups import coordinator_ready
    from tests.differential.test_streams_groups import join, sorted_tasks

    def grants(ctx: Context) -> CreateAclsRequest:
        return CreateAclsRequest([
            AclCreation(TOPIC, ctx.topic, LITERAL, "User:alice", "*", READ, ALLOW),
            AclCreation(GROUP, ctx.group, LITERAL, "User:alice", "*", READ, ALLOW),
        ])  # fmt: skip

    def internal(ctx: Context) -> CreateAclsRequest:  # the internal topics are named after the group
        return CreateAclsRequest([AclCreation(TOPIC, f"{ctx.group}-", PREFIXED, "User:alice", "*", DESCRIBE, ALLOW)])

    steps: list[Item] = [
        *login("admin", "admin"),
        *login("alice", "main"),
        *as_admin(create(partitions=2)),
        Step(CREATE_ACLS, 3, grants, conn="admin"),
        *acls_visible((GROUP, lambda ctx: ctx.group, LITERAL), (TOPIC, lambda ctx: ctx.topic, LITERAL)),
        *coordinator_ready(),
        Step(88, 0, join(), label="internal-not-describable", normalise=sorted_tasks),
        Step(CREATE_ACLS, 3, internal, conn="admin"),
        *acls_visible((TOPIC, lambda ctx: f"{ctx.group}-", PREFIXED)),
        Step(88, 0, join(), label="internal-not-creatable", normalise=sorted_tasks),
    ]  # fmt: skip
    differential(*secured_targets, steps)


def test_scram_admin_decisions(secured_targets: tuple[Target, Target]) -> None:
    """DescribeUserScramCredentials needs DESCRIBE on the cluster (KafkaApis), AlterUserScramCredentials
    ALTER (ControllerApis): alice, without either, is refused as Kafka refuses her (each user named
    gets the error; Describe's results carry no user name); the admin, a super user, is served.
    (Alice describing every user, users null, is left out: Kafka 4.3.1 never answers it, D25.)"""
    from mockbroker_protocol.messages.alter_user_scram_credentials import (
        AlterUserScramCredentialsRequest,
        ScramCredentialDeletion,
        ScramCredentialUpsertion,
    )
    from mockbroker_protocol.messages.describe_user_scram_credentials import (
        DescribeUserScramCredentialsRequest,
        UserName,
    )

    alter = AlterUserScramCredentialsRequest(
        deletions=[ScramCredentialDeletion("nobody", 1)],
        upsertions=[ScramCredentialUpsertion("zed", 2, 4096, b"salt-salt-salt", bytes(64)), ScramCredentialUpsertion("bea", 1, 4096, b"salt", bytes(32))],
    )
    steps: list[Item] = [
        *login("admin", "admin"),
        *login("alice", "main"),
        # test_authorized_operations lets alice DESCRIBE the cluster: not here (the session shares the brokers)
        Step(DELETE_ACLS, 3, DeleteAclsRequest([DeleteAclsFilter(CLUSTER, "kafka-cluster", LITERAL, "User:alice", None, ANY_OP, ANY_PERM)]),
             conn="admin", compare=False),
        Step(DESCRIBE_ACLS, 3, DescribeAclsRequest(CLUSTER, "kafka-cluster", LITERAL, "User:alice", None, ANY_OP, ANY_PERM),
             conn="admin", until=lambda answer: not answer.resources, compare=False),
        Step(50, 0, DescribeUserScramCredentialsRequest(users=[UserName("alice"), UserName("nobody")]), label="describe-alice"),
        Step(51, 0, alter, label="alter-alice", divergences={"D22": ["results.0.error_message", "results.1.error_message", "results.2.error_message"]}),
        Step(50, 0, DescribeUserScramCredentialsRequest(users=[UserName("alice"), UserName("zed")]), conn="admin", label="describe-admin",
             normalise=_mechanisms_sorted),
    ]
    differential(*secured_targets, steps)


def _mechanisms_sorted(tree: Any, ctx: Context) -> Any:
    """A user's credentials come from Kafka's map keyed by the mechanism enum (identity hashes): no
    fixed order there, by mechanism here."""
    for result in tree["results"]:
        result["credential_infos"] = sorted(result["credential_infos"], key=lambda c: c["mechanism"])
    return tree


def test_regex_subscription_decisions(secured_targets: tuple[Target, Target]) -> None:
    """A KIP-848 member subscribing by regex is assigned only the matching topics it may DESCRIBE
    (TopicRegexResolver); an ACL added later is no reason to resolve the regex again, a new topic is
    (maybeUpdateRegularExpressions); ConsumerGroupDescribe refuses a group whose assignment names a
    topic the client may no longer DESCRIBE (KafkaApis). The topics are ``<topic>-a`` (alice may
    READ it), ``<topic>-b`` (granted later) and ``<topic>-c`` (never): two topics assigned are
    compared sorted by (normalised) topic id, not in Kafka's HashMap order."""
    from mockbroker_protocol.messages.consumer_group_describe import ConsumerGroupDescribeRequest
    from mockbroker_protocol.messages.consumer_group_heartbeat import ConsumerGroupHeartbeatRequest
    from tests.differential.test_classic_groups import coordinator_ready

    def named(suffix: str) -> Any:
        return lambda ctx: f"{ctx.topic}-{suffix}"

    def grant(suffix: str) -> Any:
        return lambda ctx: CreateAclsRequest([AclCreation(TOPIC, f"{ctx.topic}-{suffix}", LITERAL, "User:alice", "*", READ, ALLOW)])

    def join(ctx: Context) -> ConsumerGroupHeartbeatRequest:  # epoch 0 again: a full answer each time (KAFKA-19233)
        return ConsumerGroupHeartbeatRequest(
            group_id=ctx.group, member_id=str(uuid.UUID(int=5)), member_epoch=0, rebalance_timeout_ms=30_000,
            subscribed_topic_regex=f"{ctx.topic}-.*", topic_partitions=[],
        )  # fmt: skip

    def assigned(count: int) -> Any:
        return lambda answer: answer.error_code == 0 and answer.assignment is not None and len(answer.assignment.topic_partitions) == count

    def by_topic_id(tree: Any, ctx: Context) -> Any:
        if isinstance(tree.get("assignment"), dict):
            tree["assignment"]["topic_partitions"] = sorted(tree["assignment"]["topic_partitions"], key=lambda t: t["topic_id"])
            for topic in tree["assignment"]["topic_partitions"]:
                topic["partitions"].sort()
        return tree

    def describe(ctx: Context) -> ConsumerGroupDescribeRequest:
        return ConsumerGroupDescribeRequest([ctx.group], False)

    def revoke(ctx: Context) -> DeleteAclsRequest:
        return DeleteAclsRequest([DeleteAclsFilter(TOPIC, f"{ctx.topic}-b", LITERAL, "User:alice", None, ANY_OP, ANY_PERM)])

    steps: list[Item] = [
        *login("admin", "admin"),
        *login("alice", "main"),
        *as_admin(create(named("a"), partitions=2)),
        *as_admin(create(named("b"), partitions=2)),
        Step(CREATE_ACLS, 3, lambda ctx: CreateAclsRequest([AclCreation(GROUP, ctx.group, LITERAL, "User:alice", "*", READ, ALLOW)]), conn="admin"),
        Step(CREATE_ACLS, 3, grant("a"), conn="admin"),
        *acls_visible((GROUP, lambda ctx: ctx.group, LITERAL), (TOPIC, named("a"), LITERAL)),
        *coordinator_ready(),
        Step(68, 1, join, label="regex-a", until=assigned(1), normalise=by_topic_id),
        Step(69, 0, describe, label="describe-a"),
        Step(CREATE_ACLS, 3, grant("b"), conn="admin"),
        *acls_visible((TOPIC, named("b"), LITERAL)),
        Step(68, 1, join, label="acl-alone", normalise=by_topic_id),  # still the first resolution
        *as_admin(create(named("c"))),  # a new topic: the regex is resolved again
        Step(68, 1, join, label="regex-ab", until=assigned(2), normalise=by_topic_id),
        Step(DELETE_ACLS, 3, revoke, conn="admin"),
        Step(DESCRIBE_ACLS, 3, lambda ctx: DescribeAclsRequest(TOPIC, f"{ctx.topic}-b", LITERAL, None, None, ANY_OP, ANY_PERM),
             conn="admin", until=lambda answer: not answer.resources, compare=False),
        Step(69, 0, describe, label="describe-refused"),
    ]  # fmt: skip
    differential(*secured_targets, steps)


def test_group_describes_refused_for_undescribable_topics(secured_targets: tuple[Target, Target]) -> None:
    """Consumer/Share/StreamsGroupDescribe under an authorizer (KafkaApis): a group whose
    assignments (a streams group: whose topology) name a topic the client may no longer DESCRIBE
    is answered TOPIC_AUTHORIZATION_FAILED with nothing else. alice READs the groups (named after
    the sequence's group), the source topic, and DESCRIBEs the streams group's internal topics;
    then her READ on the topic is revoked."""
    from mockbroker_protocol.messages.consumer_group_describe import ConsumerGroupDescribeRequest
    from mockbroker_protocol.messages.share_group_describe import ShareGroupDescribeRequest
    from mockbroker_protocol.messages.streams_group_describe import StreamsGroupDescribeRequest
    from tests.differential.test_classic_groups import coordinator_ready
    from tests.differential.test_consumer_groups import hb as consumer_hb
    from tests.differential.test_share_groups import hb as share_hb
    from tests.differential.test_streams_groups import join as streams_join

    def grants(ctx: Context) -> CreateAclsRequest:
        return CreateAclsRequest([
            AclCreation(GROUP, ctx.group, LITERAL, "User:alice", "*", READ, ALLOW),  # the streams group
            AclCreation(GROUP, f"{ctx.group}-", PREFIXED, "User:alice", "*", READ, ALLOW),  # consumer, share
            AclCreation(TOPIC, ctx.topic, LITERAL, "User:alice", "*", READ, ALLOW),
            AclCreation(TOPIC, f"{ctx.group}-", PREFIXED, "User:alice", "*", DESCRIBE, ALLOW),  # internal topics
        ])  # fmt: skip

    def revoke(ctx: Context) -> DeleteAclsRequest:
        return DeleteAclsRequest([DeleteAclsFilter(TOPIC, ctx.topic, LITERAL, "User:alice", None, ANY_OP, ANY_PERM)])

    def assigned(answer: Any) -> bool:
        return answer.error_code == 0 and answer.assignment is not None and bool(answer.assignment.topic_partitions)

    created = as_admin(create())
    created[0].label = "created"
    steps: list[Item] = [
        *login("admin", "admin"),
        *login("alice", "main"),
        *created,
        Step(CREATE_ACLS, 3, grants, conn="admin"),
        *acls_visible((GROUP, lambda ctx: ctx.group, LITERAL), (GROUP, lambda ctx: f"{ctx.group}-", PREFIXED),
                      (TOPIC, lambda ctx: ctx.topic, LITERAL), (TOPIC, lambda ctx: f"{ctx.group}-", PREFIXED)),
        *coordinator_ready(),
        Step(68, 1, lambda ctx: consumer_hb(0, owned=False, group=f"{ctx.group}-consumer")(ctx), until=assigned, compare=False),
        Step(76, 1, lambda ctx: share_hb(0, group=f"{ctx.group}-share")(ctx), until=assigned, compare=False),
        Step(88, 0, streams_join(), compare=False),
        Step(DELETE_ACLS, 3, revoke, conn="admin"),
        Step(DESCRIBE_ACLS, 3, lambda ctx: DescribeAclsRequest(TOPIC, ctx.topic, LITERAL, None, None, ANY_OP, ANY_PERM),
             conn="admin", until=lambda answer: not answer.resources, compare=False),
        Step(69, 1, lambda ctx: ConsumerGroupDescribeRequest([f"{ctx.group}-consumer"], True), label="consumer-describe"),
        Step(77, 1, lambda ctx: ShareGroupDescribeRequest([f"{ctx.group}-share"], True), label="share-describe"),
        Step(89, 0, lambda ctx: StreamsGroupDescribeRequest([ctx.group], True), label="streams-describe"),
    ]  # fmt: skip
    differential(*secured_targets, steps)
