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

import weakref
from typing import TYPE_CHECKING, Any

from mockbroker.cluster import MockCluster, Topic, TopicError, validate_topic_name
from protocol.errors import ErrorCode
from protocol.messages.metadata import (
    MetadataRequest,
    MetadataResponse,
    MetadataResponseBroker,
    MetadataResponsePartition,
    MetadataResponseTopic,
)
from protocol.primitives import ZERO_UUID
from protocol.registry import Encoded

if TYPE_CHECKING:
    from mockbroker.dispatch import RequestContext

API_KEY = 3
VERSIONS = (0, 13)

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
    to_cache = None
    if not ctx.inspected:  # interceptors and the request log see (and edit) real objects
        cached = _lookup(cluster, req, version, all_topics, include_ops, include_cluster_ops)
        if isinstance(cached, Encoded):
            return cached
        to_cache = cached
    topics: list[MetadataResponseTopic] = []
    if all_topics:
        topics = [topic_entry(t, include_ops) for t in cluster.topics.values()]
    else:
        for wanted in req.topics or []:
            if wanted.name is None:
                topic = cluster.topic_by_id(wanted.topic_id)
                if topic is None:
                    topics.append(error_entry(ErrorCode.UNKNOWN_TOPIC_ID, None, wanted.topic_id))
                else:
                    topics.append(topic_entry(topic, include_ops))
                continue
            topic = cluster.topics.get(wanted.name)
            if topic is None:
                try:
                    validate_topic_name(wanted.name)
                except TopicError:
                    topics.append(error_entry(ErrorCode.INVALID_TOPIC_EXCEPTION, wanted.name))
                    continue
                topic = cluster.maybe_auto_create(wanted.name) if auto_create else None
            if topic is None:
                topics.append(error_entry(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, wanted.name))
            else:
                topics.append(topic_entry(topic, include_ops))
    brokers = [
        MetadataResponseBroker(node_id=n.node_id, host=n.advertised_host, port=n.advertised_port, rack=n.rack)
        for n in cluster.brokers.values()
        if n.node_id not in cluster.down_brokers  # a stopped broker leaves the cluster's metadata
    ]
    response = MetadataResponse(
        brokers=brokers,
        cluster_id=cluster.config.cluster_id,
        controller_id=cluster.controller_id,
        topics=topics,
        cluster_authorized_operations=CLUSTER_OPERATIONS if include_cluster_ops else NOT_REQUESTED,
    )
    if to_cache is not None:
        key, state = to_cache
        return _store(cluster, key, state, response.encode(version))
    return response


# -- the answer cache --------------------------------------------------------------------------------
#
# Clients ask the same question over and over (librdkafka refreshes its topics' metadata, every
# producer and consumer polls it), and building and encoding the answer was most of a Metadata
# request's cost. Answers are kept encoded, per cluster, keyed by what was asked (version, flags,
# topics); each is stored with the state it was built from (brokers, controller, and for every
# topic in it its id and each partition's leader, leader epoch, replicas and offline replicas) and
# reused only while that state is unchanged. The state is read anew for every request, so any
# change (topics created or deleted, partitions added, a leader moved, a broker down or up, even a
# test editing a partition by hand) is seen at once; no code path has to remember to invalidate.
# A question naming a topic that does not exist (an error entry, or an auto-creation) is not cached.

_CACHE_SIZE = 256  # answers per cluster; the cache is emptied when full
_CACHE: weakref.WeakKeyDictionary[MockCluster, dict[tuple[Any, ...], tuple[list[Any], bytes]]] = (
    weakref.WeakKeyDictionary()
)


def _lookup(
    cluster: MockCluster, req: MetadataRequest, version: int, all_topics: bool, include_ops: bool, include_cluster_ops: bool
) -> Encoded | tuple[tuple[Any, ...], list[Any]] | None:
    """The cached answer (Encoded) if still valid; else (key, state) to store the answer under,
    or None when this question is not cached."""
    if all_topics:
        asked: tuple[Any, ...] | None = None
        topics = list(cluster.topics.values())
    else:
        asked = tuple(w.topic_id if w.name is None else w.name for w in req.topics or ())
        topics = []
        for w in req.topics or ():
            topic = cluster.topic_by_id(w.topic_id) if w.name is None else cluster.topics.get(w.name)
            if topic is None:
                return None
            topics.append(topic)
    # Flat, for speed (this runs for every Metadata request): the topic's partition count
    # delimits its partitions, and replica lists are copied (tuples), never referenced.
    down = cluster.down_brokers
    state: list[Any] = [cluster.config.cluster_id, cluster.controller_id]
    for n in cluster.brokers.values():
        if n.node_id not in down:
            state += (n.node_id, n.advertised_host, n.advertised_port, n.rack)
    state.append(len(topics))
    for t in topics:
        state += (t.topic_id, t.name, t.is_internal, len(t.partitions))
        for p in t.partitions:
            state += (p.leader_id, p.log.leader_epoch, tuple(p.replica_ids), tuple(p.offline_replica_ids))
    key = (version, include_ops, include_cluster_ops, asked)
    hit = _CACHE.get(cluster, {}).get(key)
    if hit is not None and hit[0] == state:
        return Encoded(hit[1])
    return key, state


def _store(cluster: MockCluster, key: tuple[Any, ...], state: list[Any], body: bytes) -> Encoded:
    answers = _CACHE.setdefault(cluster, {})
    if len(answers) >= _CACHE_SIZE:
        answers.clear()
    answers[key] = (state, body)
    return Encoded(body)
