"""DeleteTopics (key 20), v0-6: delete topics by name, or (v6) by topic id.

v1: throttle time. v3: may answer TOPIC_DELETION_DISABLED (never here: deletion is enabled).
v4: flexible. v5 (KIP-599): per-topic error message. v6 (KIP-516): topics[] with a name or an id
(UNKNOWN_TOPIC_ID for an id nobody has); names go in topic_names before v6.
Kafka 4.x serves v1-6 (KIP-896); v0 is served too for sarama (V0_10_1_0-V0_10_2_0).

Checks as ControllerApis.deleteTopics makes them: a topic named twice, or an id given twice, is
INVALID_REQUEST; so is an entry with both a name and an id, or neither, and a name that resolves
to an id also given (Kafka answers only the name then and drops the id silently; here both get
the INVALID_REQUEST, so every entry has an answer). Unknown names are UNKNOWN_TOPIC_OR_PARTITION. KRaft lets internal topics
be deleted, so this does too. Kafka shuffles the answers (so positions reveal nothing about
topics the caller may not see); with no ACLs here they stay in request order.
"""

from __future__ import annotations

import uuid
from collections import Counter
from typing import TYPE_CHECKING

from mockbroker.handlers._authz import AclOperation, ResourceType, authorized
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.delete_topics import (
    DeletableTopicResult,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
)
from mockbroker_protocol.primitives import ZERO_UUID

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext
    from mockbroker.model import Topic

API_KEY = ApiKey.DELETE_TOPICS
VERSIONS = (0, 6)
# Kafka 4.x advertises 1-6 (KIP-896); dispatch advertises the served minimum today.
ADVERTISED_MIN = 1


def _result(name: str | None, topic_id: uuid.UUID, code: ErrorCode, message: str | None = None) -> DeletableTopicResult:
    return DeletableTopicResult(name=name, topic_id=topic_id, error_code=code, error_message=message)


def _may_delete(ctx: RequestContext, name: str | None, topic: Topic | None) -> bool:
    """ControllerApis.deleteTopics: DELETE on a topic that exists; for a name that does not,
    DESCRIBE (so that a client without it cannot tell it does not exist)."""
    if topic is not None:
        return authorized(ctx, AclOperation.DELETE, ResourceType.TOPIC, topic.name)
    return name is None or authorized(ctx, AclOperation.DESCRIBE, ResourceType.TOPIC, name)


async def handle(ctx: RequestContext, req: DeleteTopicsRequest) -> DeleteTopicsResponse:
    cluster = ctx.cluster
    # Before v6 only topic_names is on the wire, from v6 only topics; Kafka reads both.
    wanted: list[tuple[str | None, uuid.UUID]] = [(name, ZERO_UUID) for name in req.topic_names]
    wanted += [(t.name, t.topic_id) for t in req.topics]
    names = Counter(name for name, topic_id in wanted if name is not None and topic_id == ZERO_UUID)
    ids = Counter(topic_id for name, topic_id in wanted if name is None and topic_id != ZERO_UUID)
    # A name whose topic is also named by id: Kafka refuses both rather than pick one.
    by_name = {name: cluster.topics[name].topic_id for name in names if names[name] == 1 and name in cluster.topics}
    clashing = {topic_id for topic_id in by_name.values() if ids[topic_id] == 1}
    results: list[DeletableTopicResult] = []
    answered: set[str | uuid.UUID] = set()
    for name, topic_id in wanted:
        if name is None and topic_id == ZERO_UUID:
            results.append(_result(None, ZERO_UUID, ErrorCode.INVALID_REQUEST, "Neither topic name nor id were specified."))
        elif name is not None and topic_id != ZERO_UUID:
            results.append(
                _result(name, topic_id, ErrorCode.INVALID_REQUEST, "You may not specify both topic name and topic id.")
            )
        elif (name is not None and names[name] > 1) or (name is None and ids[topic_id] > 1):
            key: str | uuid.UUID = name if name is not None else topic_id
            if key not in answered:  # one answer per duplicated name or id
                answered.add(key)
                what = "name" if name is not None else "id"
                results.append(_result(name, topic_id, ErrorCode.INVALID_REQUEST, f"Duplicate topic {what}."))
        else:
            topic = cluster.topics.get(name) if name is not None else cluster.topic_by_id(topic_id)
            if cluster.authorizer is not None and not _may_delete(ctx, name, topic):
                results.append(_result(name if topic is None else topic.name, topic_id, ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed."))
            elif topic is None:
                # ApiError.fromThrowable: the exception's default message, as Kafka 4.3 answers.
                if name is not None:
                    code, message = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition."
                else:
                    code, message = ErrorCode.UNKNOWN_TOPIC_ID, "This server does not host this topic ID."
                results.append(_result(name, topic_id, code, message))
            elif topic.topic_id in clashing:
                results.append(
                    _result(
                        topic.name,
                        topic.topic_id,
                        ErrorCode.INVALID_REQUEST,
                        "The provided topic name maps to an ID that was already supplied.",
                    )
                )
            else:
                cluster.delete_topic(topic.name)
                results.append(_result(topic.name, topic.topic_id, ErrorCode.NONE))
    return DeleteTopicsResponse(throttle_time_ms=0, responses=results)
