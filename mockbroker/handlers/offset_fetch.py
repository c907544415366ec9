"""OffsetFetch (key 9), v1-10: a group's committed offsets.

v1: the baseline (v0 read ZooKeeper and is gone in 4.0); no top-level error, so group errors go on
every requested partition. v2: Topics may be null (all committed partitions) and a top-level
ErrorCode. v3: throttle time. v5: CommittedLeaderEpoch. v6: flexible. v7: RequireStable
(UNSTABLE_OFFSET_COMMIT, KIP-447). v8 (KIP-709): Groups[], each answered on its own with its own
ErrorCode. v9 (KIP-848): MemberId/MemberEpoch, checked only for consumer-protocol groups. v10: topic
ids instead of names; an id the cluster does not know is UNKNOWN_TOPIC_ID on each of its partitions.

The coordinator answers (OffsetMetadataManager.fetchOffsets / fetchAllOffsets, kafka-group-semantics
§8.3), each group on its own:
- a committed partition: its offset, leader epoch (-1 for none) and metadata;
- a partition with nothing committed, or any partition of an unknown (or Dead) group: CommittedOffset
  -1, CommittedLeaderEpoch -1, Metadata "", NONE (there is no UNKNOWN_TOPIC_OR_PARTITION on fetch:
  an unknown topic name is just not committed);
- Topics null (v2+, "all committed"): every committed partition, none for an unknown group;
- RequireStable (v7+) and a pending transactional offset on the partition: UNSTABLE_OFFSET_COMMIT
  with offset -1; without it the last committed value;
- no generation or member check for classic groups; v9's MemberId/MemberEpoch are checked for
  KIP-848 consumer groups only: a null MemberId with a negative epoch is an admin fetch, an
  unknown member is UNKNOWN_MEMBER_ID, another epoch STALE_MEMBER_EPOCH (group-level errors).
- "" is a valid group id (only a null one is INVALID_GROUP_ID, which GroupIds cannot carry here).

NOT_COORDINATOR on a broker that does not lead the group's partition, shaped by
OffsetFetchResponse.groupError and OffsetFetchResponse.Builder: v1 puts it on every requested
partition (offset -1, metadata "", leader epoch -1), v2-7 in the top-level ErrorCode with no
topics, v8+ in that group's ErrorCode with no topics. It wins over per-topic answers such as
UNKNOWN_TOPIC_ID, as in Kafka, where the group-level error replaces the group's topics.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker.handlers._coordinator import is_group_coordinator
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.offset_fetch import (
    OffsetFetchRequest,
    OffsetFetchRequestTopics,
    OffsetFetchResponse,
    OffsetFetchResponseGroup,
    OffsetFetchResponsePartition,
    OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic,
    OffsetFetchResponseTopics,
)
from mockbroker_protocol.primitives import ZERO_UUID

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.OFFSET_FETCH
VERSIONS = (1, 10)

INVALID_OFFSET = -1  # OffsetFetchResponse.INVALID_OFFSET
NO_PARTITION_LEADER_EPOCH = -1  # RecordBatch.NO_PARTITION_LEADER_EPOCH
NO_METADATA = ""  # OffsetFetchResponse.NO_METADATA
TOP_LEVEL_ERROR_MIN_VERSION = 2  # OffsetFetchRequest.TOP_LEVEL_ERROR_AND_NULL_TOPICS_MIN_VERSION
BATCH_MIN_VERSION = 8  # OffsetFetchRequest.BATCH_MIN_VERSION
TOPIC_ID_MIN_VERSION = 10


def no_offset(partition_index: int, error: ErrorCode = ErrorCode.NONE) -> OffsetFetchResponsePartitions:
    return OffsetFetchResponsePartitions(
        partition_index, INVALID_OFFSET, NO_PARTITION_LEADER_EPOCH, NO_METADATA, error
    )


def fetch_group_offsets(
    ctx: RequestContext, group_id: str, topics: list[OffsetFetchRequestTopics] | None, require_stable: bool
) -> OffsetFetchResponseGroup:
    """The committed offsets of a group on its coordinator."""
    by_topic_id = ctx.api_version >= TOPIC_ID_MIN_VERSION
    groups = ctx.cluster.groups
    if topics is None:  # all committed partitions
        answer = groups.fetch_offsets(group_id, None, require_stable=require_stable)
        if by_topic_id:
            for t in answer.topics:
                known = ctx.cluster.topics.get(t.name)
                t.topic_id = ZERO_UUID if known is None else known.topic_id
        return answer
    answered: list[OffsetFetchResponseTopics] = []
    for topic in topics:
        name = topic.name
        if by_topic_id:
            known = ctx.cluster.topic_by_id(topic.topic_id)
            if known is None:
                answered.append(
                    OffsetFetchResponseTopics(
                        "", topic.topic_id, [no_offset(p, ErrorCode.UNKNOWN_TOPIC_ID) for p in topic.partition_indexes]
                    )
                )
                continue
            name = known.name
        fetched = groups.fetch_offsets(group_id, [(name, topic.partition_indexes)], require_stable=require_stable)
        for t in fetched.topics:
            t.topic_id = topic.topic_id
            answered.append(t)
    return OffsetFetchResponseGroup(group_id=group_id, topics=answered, error_code=ErrorCode.NONE)


def group_error(
    group_id: str, topics: list[OffsetFetchRequestTopics] | None, error: ErrorCode, version: int
) -> OffsetFetchResponseGroup:
    """OffsetFetchResponse.groupError: v1 has nowhere else to put it than each partition."""
    if version >= TOP_LEVEL_ERROR_MIN_VERSION:
        return OffsetFetchResponseGroup(group_id=group_id, topics=[], error_code=error)
    return OffsetFetchResponseGroup(
        group_id=group_id,
        topics=[
            OffsetFetchResponseTopics(t.name, t.topic_id, [no_offset(p, error) for p in t.partition_indexes])
            for t in topics or []
        ],
        error_code=ErrorCode.NONE,
    )


def answer_group(
    ctx: RequestContext,
    group_id: str,
    topics: list[OffsetFetchRequestTopics] | None,
    require_stable: bool = False,
    member_id: str | None = None,
    member_epoch: int = -1,
) -> OffsetFetchResponseGroup:
    if ctx.cluster.authorizer is not None and not authorized(ctx, AclOperation.DESCRIBE, ResourceType.GROUP, group_id):
        return group_error(group_id, topics, ErrorCode.GROUP_AUTHORIZATION_FAILED, ctx.api_version)
    if not is_group_coordinator(ctx, group_id):
        return group_error(group_id, topics, ErrorCode.NOT_COORDINATOR, ctx.api_version)
    # v9+ (KIP-848): a consumer group checks the member and its epoch; below v9 the codec leaves
    # MemberId null and MemberEpoch -1, which every group accepts.
    error = ctx.cluster.groups.validate_offset_fetch(group_id, member_id, member_epoch)
    if error is not None:
        return group_error(group_id, topics, error, ctx.api_version)
    answer = fetch_group_offsets(ctx, group_id, topics, require_stable)
    if ctx.cluster.authorizer is not None:
        _authorize_topics(ctx, answer, all_topics=topics is None)
    return answer


def _authorize_topics(ctx: RequestContext, group: OffsetFetchResponseGroup, *, all_topics: bool) -> None:
    """KafkaApis.handleOffsetFetchRequest: DESCRIBE on each topic. Topics asked by name without it
    answer TOPIC_AUTHORIZATION_FAILED (offset -1); asked for all, they are left out."""
    kept = []
    for topic in group.topics:
        if authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, topic.name, log_denial=not all_topics):
            kept.append(topic)
        elif not all_topics:
            for p in topic.partitions:
                p.committed_offset, p.committed_leader_epoch, p.metadata = -1, -1, ""
                p.error_code = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            kept.append(topic)
    group.topics = kept


def single_group_response(group: OffsetFetchResponseGroup) -> OffsetFetchResponse:
    """OffsetFetchResponse.Builder for v1-7: one group flattened into the old layout."""
    return OffsetFetchResponse(
        error_code=group.error_code,
        topics=[
            OffsetFetchResponseTopic(
                t.name,
                [
                    OffsetFetchResponsePartition(
                        p.partition_index, p.committed_offset, p.committed_leader_epoch, p.metadata, p.error_code
                    )
                    for p in t.partitions
                ],
            )
            for t in group.topics
        ],
    )


async def handle(ctx: RequestContext, req: OffsetFetchRequest) -> OffsetFetchResponse:
    if ctx.api_version >= BATCH_MIN_VERSION:
        # Each group on its own; duplicates are answered twice, as Kafka does.
        return OffsetFetchResponse(
            groups=[
                answer_group(ctx, g.group_id, g.topics, req.require_stable, g.member_id, g.member_epoch)
                for g in req.groups
            ]
        )
    # v1-7: OffsetFetchRequest.groups() turns the single group into the batched shape.
    topics = (
        None
        if req.topics is None
        else [OffsetFetchRequestTopics(t.name, ZERO_UUID, t.partition_indexes) for t in req.topics]
    )
    # RequireStable exists from v7; below that the codec leaves it False.
    return single_group_response(answer_group(ctx, req.group_id, topics, req.require_stable))
