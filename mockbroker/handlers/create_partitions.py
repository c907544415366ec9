"""CreatePartitions (key 37), v0-3: raise a topic's partition count, or only validate it.

v1: the same as v0 (responses sent before throttling). v2: flexible. v3 (KIP-599): may answer
THROTTLING_QUOTA_EXCEEDED (never here: no quotas).

Checks as KRaft makes them (ControllerApis.createPartitions, ReplicationControlManager):
a topic named twice is INVALID_REQUEST once; an unknown topic is UNKNOWN_TOPIC_OR_PARTITION;
a count equal to or below the current one is INVALID_PARTITIONS with Kafka's wording; manual
assignments must cover exactly the new partitions, with the topic's replication factor and
registered, distinct brokers (INVALID_REPLICA_ASSIGNMENT). New partitions without an
assignment are placed like the cluster places any partition. timeout_ms is not used.

The controller writes a PartitionRecord per new partition into one bounded batch
(MAX_RECORDS_PER_USER_OP): a topic whose new partitions would not fit in what is left fails with
the exception the bound raises, which createPartitions turns into UNKNOWN_SERVER_ERROR for that
topic, as for every later topic that adds partitions (issue #19: 2^31-1 used to freeze the broker).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from mockbroker.config.topics import ApiError
from mockbroker.handlers import _topic_admin as topic_admin
from mockbroker_protocol.api_keys import ApiKey
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.create_partitions import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreatePartitionsTopicResult,
)

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext

API_KEY = ApiKey.CREATE_PARTITIONS
VERSIONS = (0, 3)


async def handle(ctx: RequestContext, req: CreatePartitionsRequest) -> CreatePartitionsResponse:
    counts = Counter(topic.name for topic in req.topics)
    # ControllerApis puts the duplicates first, once per name.
    results = [
        CreatePartitionsTopicResult(name=name, error_code=ErrorCode.INVALID_REQUEST, error_message="Duplicate topic name.")
        for name, count in counts.items()
        if count > 1
    ]
    records = 0  # PartitionRecords of the request so far
    for topic in req.topics:
        if counts[topic.name] > 1:
            continue
        assignments = None if topic.assignments is None else [a.broker_ids for a in topic.assignments]
        error = topic_admin.create_partitions(ctx.cluster, topic.name, topic.count, assignments, validate_only=True)
        if error is None:
            additional = topic.count - len(ctx.cluster.topics[topic.name].partitions)
            if records + additional > topic_admin.MAX_RECORDS_PER_USER_OP:
                records = topic_admin.MAX_RECORDS_PER_USER_OP  # the batch is full
                error = ApiError(ErrorCode.UNKNOWN_SERVER_ERROR)
            else:
                records += additional
                if not req.validate_only:
                    error = topic_admin.create_partitions(
                        ctx.cluster, topic.name, topic.count, assignments, validate_only=False
                    )
        results.append(
            CreatePartitionsTopicResult(
                name=topic.name,
                error_code=ErrorCode.NONE if error is None else error.code,
                error_message=None if error is None else error.message,
            )
        )
    return CreatePartitionsResponse(throttle_time_ms=0, results=results)
