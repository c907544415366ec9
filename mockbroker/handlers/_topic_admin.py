"""The controller's side of the topic admin APIs: what KRaft's ReplicationControlManager and
ConfigurationControlManager check before they create topics, add partitions or change configs.

Handlers call these and shape the answers; every refusal is an ``ApiError`` value carrying Kafka's
error code and message. Built on ClusterState's public methods and attributes; manual replica
assignments are applied by setting the new partitions' replicas and leader directly (the leader
is the first replica, as Kafka's buildPartitionRegistration picks the first ISR member).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mockbroker.config.topics import ApiError, null_configs_error, validate_topic_configs
from mockbroker.model import OFFSETS_TOPIC, TRANSACTION_TOPIC, Partition, Topic, TopicError
from mockbroker.model import validate_topic_name as _validate_topic_name
from mockbroker.state import ClusterState
from mockbroker_protocol.errors import ErrorCode

# KRaft's own metadata log; CreateTopics refuses the name (ControllerApis.createTopics).
CLUSTER_METADATA_TOPIC = "__cluster_metadata"
# org.apache.kafka.common.internals.Topic.isInternal
INTERNAL_TOPICS = frozenset({OFFSETS_TOPIC, TRANSACTION_TOPIC, "__share_group_state"})


# QuorumController.MAX_RECORDS_PER_USER_OP (= MAX_RECORDS_PER_BATCH): a user operation whose
# metadata records (a TopicRecord, its ConfigRecords, a PartitionRecord per partition) would pass
# it fails (BoundedListTooLongException). ReplicationControlManager.MAX_PARTITIONS_PER_BATCH:
# a CreateTopics asking for more partitions in all is refused before anything is placed.
MAX_RECORDS_PER_USER_OP = 10_000
MAX_PARTITIONS_PER_BATCH = 10_000
# What QuorumController answers for a BoundedListTooLongException (EventHandlerExceptionInfo).
EXCESSIVELY_LARGE_BATCH = ApiError(ErrorCode.POLICY_VIOLATION, "Unable to perform excessively large batch operation.")
# ReplicationControlManager.validateTotalNumberOfPartitions's PolicyViolationException.
EXCESSIVELY_MANY_PARTITIONS = ApiError(ErrorCode.POLICY_VIOLATION, "Excessively large number of partitions per request.")


def is_internal(topic: Topic) -> bool:
    return topic.is_internal or topic.name in INTERNAL_TOPICS


def validate_topic_name(name: str) -> ApiError | None:
    try:
        _validate_topic_name(name)
    except TopicError as exc:
        return ApiError(exc.code, exc.message)
    return None


def validate_manual_assignment(cluster: ClusterState, broker_ids: Sequence[int], replication_factor: int | None) -> ApiError | None:
    """ReplicationControlManager.validateManualPartitionAssignment."""
    if not broker_ids:
        return ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes an empty replica list.")
    previous = None
    for broker_id in sorted(broker_ids):
        if broker_id not in cluster.brokers:
            return ApiError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment includes broker {broker_id}, but no such broker is registered.",
            )
        if broker_id == previous:
            return ApiError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"The manual partition assignment includes the broker {previous} more than once.",
            )
        previous = broker_id
    if replication_factor is not None and len(broker_ids) != replication_factor:
        return ApiError(
            ErrorCode.INVALID_REPLICA_ASSIGNMENT,
            f"The manual partition assignment includes a partition with {len(broker_ids)} replica(s), but this is "
            f"not consistent with previous partitions, which have {replication_factor} replica(s).",
        )
    return None


def _assign(partition: Partition, broker_ids: Sequence[int]) -> None:
    partition.replica_ids = list(broker_ids)
    partition.leader_id = broker_ids[0]


def create_topic(
    cluster: ClusterState,
    name: str,
    num_partitions: int,
    replication_factor: int,
    assignments: Sequence[tuple[int, Sequence[int]]],
    configs: Mapping[str, str | None],
    *,
    validate_only: bool,
) -> Topic | ApiError:
    """One topic of a CreateTopics request, checked in the controller's order: name, existence,
    configs, then the manual assignment or the partition count and replication factor
    (-1 means the broker default, KIP-464)."""
    error = validate_topic_name(name)
    if error is not None:
        return error
    if name in cluster.topics:
        return ApiError(ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
    nulls = [key for key, value in configs.items() if value is None]
    if nulls:
        return null_configs_error(nulls)
    overrides = {key: value for key, value in configs.items() if value is not None}
    error = validate_topic_configs(overrides)
    if error is not None:
        return error
    if assignments:
        if replication_factor != -1:
            return ApiError(
                ErrorCode.INVALID_REQUEST,
                "A manual partition assignment was specified, but replication factor was not set to -1.",
            )
        if num_partitions != -1:
            return ApiError(
                ErrorCode.INVALID_REQUEST,
                "A manual partition assignment was specified, but numPartitions was not set to -1.",
            )
        rf: int | None = None
        placement: dict[int, Sequence[int]] = {}
        for index, broker_ids in assignments:
            if index in placement:
                return ApiError(
                    ErrorCode.INVALID_REPLICA_ASSIGNMENT, f"Found multiple manual partition assignments for partition {index}"
                )
            error = validate_manual_assignment(cluster, broker_ids, rf)
            if error is not None:
                return error
            rf = len(broker_ids)
            placement[index] = broker_ids
        if sorted(placement) != list(range(len(placement))):
            return ApiError(ErrorCode.INVALID_REPLICA_ASSIGNMENT, "partitions should be a consecutive 0-based integer sequence")
        num_partitions, replication_factor = len(placement), rf or 1
    elif replication_factor < -1 or replication_factor == 0:
        return ApiError(
            ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0, or -1 to use the default value."
        )
    elif num_partitions < -1 or num_partitions == 0:
        return ApiError(ErrorCode.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value.")
    try:
        topic = cluster.create_topic(name, num_partitions, replication_factor, overrides, validate_only=validate_only)
    except TopicError as exc:
        return ApiError(exc.code, exc.message)
    for index, broker_ids in assignments:
        _assign(topic.partitions[index], broker_ids)
    return topic


def create_partitions(
    cluster: ClusterState, name: str, count: int, assignments: Sequence[Sequence[int]] | None, *, validate_only: bool
) -> ApiError | None:
    """ReplicationControlManager.createPartitions for one topic."""
    topic = cluster.topics.get(name)
    if topic is None:
        return ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
    current = len(topic.partitions)
    if count == current:
        return ApiError(ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partition(s).")
    if count < current:
        return ApiError(
            ErrorCode.INVALID_PARTITIONS,
            f"The topic {name} currently has {current} partition(s); {count} would not be an increase.",
        )
    additional = count - current
    if assignments is not None:
        if len(assignments) != additional:
            return ApiError(
                ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"Attempted to add {additional} additional partition(s), but only {len(assignments)} assignment(s) "
                "were specified.",
            )
        # New partitions keep the topic's replication factor: that of its first partition.
        rf = len(topic.partitions[0].replica_ids)
        for broker_ids in assignments:
            error = validate_manual_assignment(cluster, broker_ids, rf)
            if error is not None:
                return error
    if validate_only:
        return None
    try:
        cluster.add_partitions(name, count)
    except TopicError as exc:
        return ApiError(exc.code, exc.message)
    if assignments is not None:
        for i, broker_ids in enumerate(assignments):
            _assign(topic.partitions[current + i], broker_ids)
    return None


def alter_topic_configs(
    cluster: ClusterState, name: str, new_configs: Mapping[str, str], *, validate_only: bool
) -> ApiError | None:
    """Replace a topic's overrides with ``new_configs`` after the controller's checks
    (ControllerConfigurationValidator, then the existence check), in that order."""
    if not name:
        return ApiError(ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.")
    error = validate_topic_name(name)
    if error is not None:
        return error
    error = validate_topic_configs(new_configs)
    if error is not None:
        return error
    topic = cluster.topics.get(name)
    if topic is None:
        return ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.")
    if not validate_only:
        topic.configs = dict(new_configs)
    return None
