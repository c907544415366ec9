"""CreateTopics (key 19), v0-7: create topics, or only validate them; any broker accepts it.

v1: validate_only, per-topic error message. v2: throttle time. v4 (KIP-464): num_partitions and
replication_factor may be -1 for the broker defaults. v5 (KIP-525): flexible; a created topic's
partition count, replication factor and configs (with their sources) come back. v6 (KIP-599):
may answer THROTTLING_QUOTA_EXCEEDED (never here: no quotas). v7 (KIP-516): the new topic's id.
Kafka 4.x serves v2-7 (KIP-896); v0-1 are served too because sarama (ClusterAdmin at
V0_10_1_0-V0_11_0_0) sends them without asking ApiVersions.

As a KRaft broker does, every broker accepts the request (forwarding to the controller is
implicit here) and answers with the controller's checks (ControllerApis.createTopics, then
ReplicationControlManager.createTopics): a name given twice gets one INVALID_REQUEST entry,
"__cluster_metadata" is refused, and each remaining topic is checked on its own (name,
existence, configs, assignment or counts). Manual assignments are applied (leader = first replica).
timeout_ms is not used: creation is immediate.

The controller's bounds on one request (issue #19: 2^31-1 partitions used to freeze the broker):
more than MAX_PARTITIONS_PER_BATCH partitions in all (counted before anything is placed), or more
than MAX_RECORDS_PER_USER_OP metadata records (a TopicRecord, a ConfigRecord per config and a
PartitionRecord per partition of every topic that would be created, validate_only too), fail the
whole request: every topic gets POLICY_VIOLATION (CreateTopicsRequest.getErrorResponse).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from mockbroker.config.topics import ApiError, topic_config_entries
from mockbroker.handlers import _topic_admin as topic_admin
from mockbroker.handlers._authz import AclOperation, ResourceType, authorized, cluster_authorized
from mockbroker.handlers._topic_admin import CLUSTER_METADATA_TOPIC
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.create_topics import (
    CreatableTopic,
    CreatableTopicConfigs,
    CreatableTopicResult,
    CreateTopicsRequest,
    CreateTopicsResponse,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext
    from mockbroker.model import Topic
    from mockbroker.state import ClusterState

API_KEY = ApiKey.CREATE_TOPICS
VERSIONS = (0, 7)
# Kafka 4.x advertises 2-7 (KIP-896); dispatch advertises the served minimum today.
ADVERTISED_MIN = 2


def _error(name: str, error: ApiError) -> CreatableTopicResult:
    return CreatableTopicResult(name=name, error_code=error.code, error_message=error.message)


def _partitions_asked(cluster: ClusterState, topic: CreatableTopic) -> int:
    """validateTotalNumberOfPartitions's count for one topic."""
    if topic.assignments:
        return len(topic.assignments)
    if topic.num_partitions == -1:
        return cluster.config.num_partitions
    return max(topic.num_partitions, 0)


def _batch_error(cluster: ClusterState, topics: list[CreatableTopic]) -> ApiError | None:
    """The controller's refusal of the whole request for its size, if any."""
    if sum(_partitions_asked(cluster, topic) for topic in topics) > topic_admin.MAX_PARTITIONS_PER_BATCH:
        return topic_admin.EXCESSIVELY_MANY_PARTITIONS
    bound = sum(1 + len(topic.configs) + _partitions_asked(cluster, topic) for topic in topics)
    if bound <= topic_admin.MAX_RECORDS_PER_USER_OP:
        return None
    # Near the bound: count the records of the topics that would really be created.
    records = 0
    for topic in topics:
        created = _create(cluster, topic, validate_only=True)
        if not isinstance(created, ApiError):
            records += 1 + len(topic.configs) + len(created.partitions)
    return topic_admin.EXCESSIVELY_LARGE_BATCH if records > topic_admin.MAX_RECORDS_PER_USER_OP else None


def _create(cluster: ClusterState, topic: CreatableTopic, *, validate_only: bool) -> Topic | ApiError:
    return topic_admin.create_topic(
        cluster,
        topic.name,
        topic.num_partitions,
        topic.replication_factor,
        [(a.partition_index, a.broker_ids) for a in topic.assignments],
        {config.name: config.value for config in topic.configs},
        validate_only=validate_only,
    )


async def handle(ctx: RequestContext, req: CreateTopicsRequest) -> CreateTopicsResponse:
    cluster = ctx.cluster
    counts = Counter(topic.name for topic in req.topics)
    effective = [t for t in req.topics if counts[t.name] == 1 and t.name != CLUSTER_METADATA_TOPIC]
    too_large = _batch_error(cluster, effective)
    if too_large is not None:
        return CreateTopicsResponse(throttle_time_ms=0, topics=[_error(topic.name, too_large) for topic in req.topics])
    results: list[CreatableTopicResult] = []
    # ControllerApis.createTopics: CREATE on the cluster, or else on each topic.
    may_create_all = cluster.authorizer is None or cluster_authorized(ctx, AclOperation.CREATE, log_denial=False)
    # KIP-525: a created topic's configs are answered only to who may DESCRIBE_CONFIGS it
    may_describe_all = cluster.authorizer is None or cluster_authorized(ctx, AclOperation.DESCRIBE_CONFIGS, log_denial=False)
    for topic in effective:
        if not may_create_all and not authorized(ctx, AclOperation.CREATE, ResourceType.TOPIC, topic.name):
            results.append(_error(topic.name, ApiError(ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")))
            continue
        created = _create(cluster, topic, validate_only=req.validate_only)
        if isinstance(created, ApiError):
            results.append(_error(topic.name, created))
            continue
        describable = may_describe_all or authorized(ctx, AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC, topic.name, log_denial=False)
        results.append(_created(ctx, created) if describable else _created_undescribable(created))
    # ControllerApis.createTopics appends these after the controller's results, once per name.
    for name, count in counts.items():
        if count > 1:
            results.append(_error(name, ApiError(ErrorCode.INVALID_REQUEST, "Duplicate topic name.")))
    if CLUSTER_METADATA_TOPIC in counts and counts[CLUSTER_METADATA_TOPIC] == 1:
        results.append(
            _error(
                CLUSTER_METADATA_TOPIC,
                ApiError(ErrorCode.INVALID_REQUEST, f"Creation of internal topic {CLUSTER_METADATA_TOPIC} is prohibited."),
            )
        )
    return CreateTopicsResponse(throttle_time_ms=0, topics=results)


def _created(ctx: RequestContext, created: Topic) -> CreatableTopicResult:
    return CreatableTopicResult(
        name=created.name,
        topic_id=created.topic_id,
        error_code=ErrorCode.NONE,
        error_message=None,
        num_partitions=len(created.partitions),
        replication_factor=len(created.partitions[0].replica_ids),
        configs=[
            CreatableTopicConfigs(
                name=entry.name,
                value=None if entry.is_sensitive else entry.value,
                read_only=entry.read_only,
                config_source=entry.source,
                is_sensitive=entry.is_sensitive,
            )
            for entry in topic_config_entries(created.configs, ctx.cluster.config)
        ],
    )


def _created_undescribable(created: Topic) -> CreatableTopicResult:
    """ControllerApis.createTopics for a topic the principal may not DESCRIBE_CONFIGS (KIP-525):
    TopicConfigErrorCode TOPIC_AUTHORIZATION_FAILED, partitions and replication factor -1, no configs."""
    return CreatableTopicResult(
        name=created.name,
        topic_id=created.topic_id,
        error_code=ErrorCode.NONE,
        error_message=None,
        topic_config_error_code=ErrorCode.TOPIC_AUTHORIZATION_FAILED,
        num_partitions=-1,
        replication_factor=-1,
        configs=[],
    )
