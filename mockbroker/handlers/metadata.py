"""Metadata (key 3), v0-13: brokers, cluster id, controller, topics and their partitions.

v0: an empty topic list means all topics. v1: null means all, empty means none; rack,
controller, is_internal. v2: cluster id. v4: allow_auto_topic_creation (before v4 Metadata
always may auto-create). v5: offline replicas. v7: leader epoch. v8: authorized operations
(cluster ones until v10, KIP-430). v9: flexible. v10: topic ids; v12: a topic may be asked for
by id alone (KIP-516). v13: top-level error code (KIP-1102).

Differs from Kafka on purpose: an auto-created topic is answered at once with its partitions,
where Kafka first answers LEADER_NOT_AVAILABLE until the new topic's metadata propagates.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mockbroker.handlers._authz import (
    CLUSTER_NAME,
    AclOperation,
    ResourceType,
    authorized,
    authorized_operations,
    cluster_authorized,
)
from mockbroker.model import Topic, TopicError, validate_topic_name
from mockbroker.state import MemoKey
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.metadata import (
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from mockbroker_protocol.primitives import ZERO_UUID
from mockbroker_protocol.registry import Encoded

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext
    from mockbroker.state import ClusterState

API_KEY = ApiKey.METADATA
VERSIONS = (0, 13)
TOP_LEVEL_ERROR_MIN_VERSION = 13  # KIP-1102

# Authorized-operations bitfields (AclOperation codes) for a cluster with no ACLs: everything.
# Topic: READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11.
TOPIC_OPERATIONS = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))
# Cluster: CREATE 5, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12.
CLUSTER_OPERATIONS = sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12))
NOT_REQUESTED = -2147483648
NO_LEADER = -1


def topic_entry(topic: Topic, include_ops: bool) -> MetadataResponseTopic:
    return MetadataResponseTopic(
        error_code=ErrorCode.NONE,
        name=topic.name,
        topic_id=topic.topic_id,
        is_internal=topic.is_internal,
        partitions=[
            MetadataResponsePartition(
                # No live replica (every one on a broker that is down): leader -1, as Kafka answers.
                error_code=ErrorCode.LEADER_NOT_AVAILABLE if p.leader_id == NO_LEADER else ErrorCode.NONE,
                partition_index=p.index,
                leader_id=p.leader_id,
                leader_epoch=p.log.leader_epoch,
                replica_nodes=list(p.replica_ids),
                isr_nodes=p.isr_ids,
                offline_replicas=list(p.offline_replica_ids),
            )
            for p in topic.partitions
        ],
        topic_authorized_operations=TOPIC_OPERATIONS if include_ops else NOT_REQUESTED,
    )


def error_entry(code: ErrorCode, name: str | None, topic_id=ZERO_UUID) -> MetadataResponseTopic:  # type: ignore[no-untyped-def]
    return MetadataResponseTopic(error_code=code, name=name, topic_id=topic_id, partitions=[])


async def handle(ctx: RequestContext, req: MetadataRequest) -> MetadataResponse | Encoded:
    cluster = ctx.cluster
    version = ctx.api_version
    include_ops = version >= 8 and req.include_topic_authorized_operations
    include_cluster_ops = 8 <= version <= 10 and req.include_cluster_authorized_operations
    all_topics = req.topics is None or (version == 0 and not req.topics)
    auto_create = version < 4 or req.allow_auto_topic_creation
    key = None
    if not ctx.inspected:  # interceptors and the request log see (and edit) real objects
        asked = None if all_topics else tuple(w.topic_id if w.name is None else w.name for w in req.topics or ())
        key = (version, include_ops, include_cluster_ops, asked, ctx.listener)
        answers = cluster.memos.get(_ANSWERS)
        hit = None if answers is None else answers.get(key)
        if hit is not None and hit[0](cluster):
            return Encoded(hit[1], hit[0])
        if asked is not None and _topics(cluster, asked) is None:
            key = None  # a topic is missing (an error entry, or an auto-creation): not cached
    authz = cluster.authorizer is not None
    if authz:
        key = None  # the answer depends on who asks
    if all_topics:
        topics = [topic_entry(t, include_ops) for t in cluster.topics.values()]
        if authz:  # KafkaApis: unauthorized topics are left out (no denial logged)
            topics = [t for t in topics if authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, t.name or "", log_denial=False)]
    else:
        topics = _named_topics(ctx, req, include_ops, auto_create)
    if authz and include_ops:
        for t in topics:
            if t.error_code == ErrorCode.NONE:
                t.topic_authorized_operations = authorized_operations(ctx, ResourceType.TOPIC, t.name or "", TOPIC_OPERATIONS)
    brokers = [
        MetadataResponseBroker(node_id=n.node_id, host=address[0], port=address[1], rack=n.rack)
        for n in cluster.brokers.values()
        # a stopped broker leaves the cluster's metadata; one without this listener is left out
        if n.node_id not in cluster.down_brokers and (address := n.address(ctx.listener)) is not None
    ]
    if not brokers and ctx.listener and cluster.brokers:
        _listener_not_found(topics, version, ctx.listener, cluster)
    response = MetadataResponse(
        brokers=brokers,
        cluster_id=cluster.config.cluster_id,
        controller_id=cluster.controller_id,
        topics=topics,
        cluster_authorized_operations=(
            (authorized_operations(ctx, ResourceType.CLUSTER, CLUSTER_NAME, CLUSTER_OPERATIONS) if authz else CLUSTER_OPERATIONS)
            if include_cluster_ops
            else NOT_REQUESTED
        ),
    )
    faults = ctx.faults  # a pushed request-level error (mockbroker/control/faults.py); None: none
    if faults is not None and faults.request_error is not None:
        _fail(response, faults.request_error, version)
    if key is not None:
        return _store(cluster, key, response.encode(version))
    return response


def _named_topics(ctx: RequestContext, req: MetadataRequest, include_ops: bool, auto_create: bool) -> list[MetadataResponseTopic]:
    """The topics asked by name or id. With an authorizer (KafkaApis.handleTopicMetadataRequest):
    one without DESCRIBE is TOPIC_AUTHORIZATION_FAILED whether or not it exists; one to auto-create
    needs CREATE on the cluster or the topic, else TOPIC_AUTHORIZATION_FAILED."""
    cluster = ctx.cluster
    authz = cluster.authorizer is not None
    topics: list[MetadataResponseTopic] = []
    for wanted in req.topics or []:
        if wanted.name is None:
            topic = cluster.topic_by_id(wanted.topic_id)
            if topic is None:
                topics.append(error_entry(ErrorCode.UNKNOWN_TOPIC_ID, None, wanted.topic_id))
            elif authz and not authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, topic.name):
                topics.append(error_entry(ErrorCode.TOPIC_AUTHORIZATION_FAILED, None, wanted.topic_id))
            else:
                topics.append(topic_entry(topic, include_ops))
            continue
        if authz and not authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, wanted.name):
            topics.append(error_entry(ErrorCode.TOPIC_AUTHORIZATION_FAILED, wanted.name))
            continue
        topic = cluster.topics.get(wanted.name)
        if topic is None:
            try:
                validate_topic_name(wanted.name)
            except TopicError:
                topics.append(error_entry(ErrorCode.INVALID_TOPIC_EXCEPTION, wanted.name))
                continue
            if auto_create and authz and not _may_create(ctx, wanted.name):
                topics.append(error_entry(ErrorCode.TOPIC_AUTHORIZATION_FAILED, wanted.name))
                continue
            topic = cluster.maybe_auto_create(wanted.name) if auto_create else None
        if topic is None:
            topics.append(error_entry(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, wanted.name))
        else:
            topics.append(topic_entry(topic, include_ops))
    return topics


def _may_create(ctx: RequestContext, name: str) -> bool:
    """CREATE on the cluster, or else on the topic (AuthHelper's two-level check)."""
    return cluster_authorized(ctx, AclOperation.CREATE, log_denial=False) or authorized(
        ctx, AclOperation.CREATE, ResourceType.TOPIC, name
    )


def _listener_not_found(topics: list[MetadataResponseTopic], version: int, listener: str, cluster: ClusterState) -> None:
    """No broker advertises the request's listener (advertised.listeners leaves it out; every
    broker has the same listeners): KRaftMetadataCache.getPartitionMetadata gives each partition
    no leader and every replica offline, with LISTENER_NOT_FOUND from v6 (LEADER_NOT_AVAILABLE
    before). A listener none of the brokers has is no case of ours: a request came in on it."""
    if not any(listener in n.endpoints for n in cluster.brokers.values()):
        return
    code = ErrorCode.LISTENER_NOT_FOUND if version >= 6 else ErrorCode.LEADER_NOT_AVAILABLE
    for topic in topics:
        for p in topic.partitions:
            p.error_code, p.leader_id = code, NO_LEADER
            p.offline_replicas = list(p.replica_nodes)
            if version == 0:  # errorUnavailableEndpoints: v0 lists only replicas it can reach
                p.replica_nodes, p.isr_nodes = [], []


def _fail(response: MetadataResponse, code: int, version: int) -> None:
    """A pushed error in every topic entry (and at the top from v13, KIP-1102): how a client
    meets LEADER_NOT_AVAILABLE or UNKNOWN_TOPIC_OR_PARTITION; the brokers stay listed."""
    for topic in response.topics:
        topic.error_code = code
        topic.partitions = []
    if version >= TOP_LEVEL_ERROR_MIN_VERSION:
        response.error_code = code


# -- the answer cache --------------------------------------------------------------------------------
#
# Clients ask the same question over and over (librdkafka refreshes its topics' metadata, every
# producer and consumer polls it), and building and encoding the answer was most of a Metadata
# request's cost. Answers are kept encoded, per cluster, keyed by what was asked (version, flags,
# topics); each is stored with the state it was built from (cluster id, controller, brokers down,
# each broker's id, address and rack, and for every topic in it its id, name, internal flag and each
# partition's index, leader, leader epoch, replicas and offline replicas) and reused only while that
# state is unchanged. The state is read anew for every reuse, so any change (topics created or
# deleted, partitions added, a leader moved, a broker down or up, even a test editing a partition by
# hand) is seen at once; no code path has to remember to invalidate (a cluster epoch would need every
# path to bump it). The same check lets the request path answer identical request bytes without
# decoding them (``registry.Encoded.valid``). A question naming a topic that does not exist (an
# error entry, or an auto-creation) is not cached.
#
# Reading the state: one tuple per partition, compared with a copy taken when the answer was built
# (a comprehension: CPython 3.11's specialised attribute loads make it about half the instructions of
# ``operator.attrgetter``). The live tuples hold the live replica lists; the stored ones hold copies,
# so an in-place edit of a list is seen.

_CACHE_SIZE = 256  # answers per cluster; the cache is emptied when full
# The answers, by question, in the cluster's memos (so they go with the cluster).
_ANSWERS: MemoKey[dict[tuple[Any, ...], tuple[Callable[[ClusterState], bool], bytes]]] = MemoKey("metadata.answers")


def _topics(cluster: ClusterState, asked: tuple[Any, ...] | None) -> list[Topic] | None:
    """The topics an answer describes (all, or those asked by name or id); None if one is missing."""
    if asked is None:
        return list(cluster.topics.values())
    by_name = cluster.topics
    topics = []
    for wanted in asked:
        topic = by_name.get(wanted) if type(wanted) is str else cluster.topic_by_id(wanted)
        if topic is None:
            return None
        topics.append(topic)
    return topics


def _state(cluster: ClusterState, topics: list[Topic], listener: str) -> list[Any]:
    """What an answer about ``topics`` is built from, as read now (holding the live lists)."""
    state: list[Any] = [
        cluster.config.cluster_id,
        cluster.controller_id,
        cluster.down_brokers,
        [(n.node_id, n.address(listener), n.rack) for n in cluster.brokers.values()],
    ]
    for t in topics:
        state.append((t.topic_id, t.name, t.is_internal))
        # A partition's index is its position (partitions are only ever appended).
        state.append([(p.leader_id, p.log.leader_epoch, p.replica_ids, p.offline_replica_ids) for p in t.partitions])
    return state


def _snapshot(state: list[Any]) -> list[Any]:
    """``state`` with its mutable parts copied: what a later ``_state`` is compared with."""
    copy = state[:4]
    copy[2] = set(copy[2])
    for i in range(4, len(state), 2):
        copy.append(state[i])
        copy.append([(leader, epoch, list(replicas), list(offline)) for leader, epoch, replicas, offline in state[i + 1]])
    return copy


class _Unchanged:
    """The validity of one cached answer: true while its topics and their state are as they were."""

    __slots__ = ("asked", "listener", "state")

    def __init__(self, asked: tuple[Any, ...] | None, listener: str, state: list[Any]) -> None:
        self.asked = asked
        self.listener = listener
        self.state = state

    def __call__(self, cluster: ClusterState) -> bool:
        topics = _topics(cluster, self.asked)
        return topics is not None and _state(cluster, topics, self.listener) == self.state


def _store(cluster: ClusterState, key: tuple[Any, ...], body: bytes) -> Encoded:
    asked, listener = key[3], key[4]
    topics = _topics(cluster, asked)
    assert topics is not None  # only questions about existing topics get here
    valid = _Unchanged(asked, listener, _snapshot(_state(cluster, topics, listener)))
    answers = cluster.memos.get(_ANSWERS) or cluster.memos.set(_ANSWERS, {})
    if len(answers) >= _CACHE_SIZE:
        answers.clear()
    answers[key] = (valid, body)
    return Encoded(body, valid)
