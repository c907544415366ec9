"""The partition-level checks and the append path shared by the data handlers, after Kafka's
ReplicaManager / Partition / UnifiedLog.

- ``partition_error``: Partition.localLogWithEpochOrThrow (leadership and KIP-320 leader epochs)
  for Fetch, ListOffsets and OffsetForLeaderEpoch.
- ``append_records``: one partition of a Produce request, checked in Kafka's order
  (ProduceRequest.validateRecords, ReplicaManager.appendToLocalLog,
  UnifiedLog.analyzeAndValidateRecords, LogValidator.validateBatch, the producer state), then
  appended (copied at most once) and retention applied.

Errors are values: every outcome is an ``AppendResult`` carrying a Kafka error code.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from mockbroker.config.cluster import RETENTION_CHECK_INTERVAL_MS
from mockbroker.config.topics import LONG_MAX, TOPIC_CONFIGS, effective_value
from mockbroker_protocol.errors import CorruptRecordError, DecodeError, ErrorCode
from mockbroker_protocol.framing import OwnedFrame
from mockbroker_protocol.messages.produce import BatchIndexAndErrorMessage
from mockbroker_protocol.primitives import Buffer
from mockbroker_protocol.records import (
    Compression,
    Record,
    RecordBatchHeader,
    TimestampType,
    UnsupportedMagicError,
    decode_batch,
    iter_batches,
    parse_batch_header,
    patch_log_append_time,
    patch_max_timestamp,
    validate_batch,
)
from mockbroker_protocol.records.batch import MAGIC_OFFSET, NO_TIMESTAMP

if TYPE_CHECKING:
    from mockbroker.config.cluster import Configured
    from mockbroker.log.partition import PartitionLog
    from mockbroker.model import BrokerNode, Partition, Topic

# AdminUtils.ADMIN_CLIENT_ID: the only client id allowed to produce to internal topics.
ADMIN_CLIENT_ID = "__admin_client"
NO_LEADER_EPOCH = -1  # RecordBatch.NO_PARTITION_LEADER_EPOCH: "the client did not say"
ZSTD_MIN_PRODUCE_VERSION = 7  # KIP-110: older produce requests may not carry zstd batches


def topic_int_config(cluster: Configured, topic: Topic, name: str) -> int:
    """A numeric topic config as the topic runs with it: its override, else the cluster's or
    Kafka's default (an unparsable override falls back to the default, as validation at
    CreateTopics/AlterConfigs time keeps them out)."""
    value = effective_value(name, topic.configs, cluster.config)
    return value if isinstance(value, int) and not isinstance(value, bool) else -1


def is_log_append_time(cluster: Configured, topic: Topic) -> bool:
    return effective_value("message.timestamp.type", topic.configs, cluster.config) == "LogAppendTime"


def partition_error(
    broker: BrokerNode, partition: Partition, current_leader_epoch: int, *, require_leader: bool = True
) -> ErrorCode:
    """Partition.localLogWithEpochOrThrow: a broker holding no replica answers
    NOT_LEADER_OR_FOLLOWER (the topic exists, ReplicaManager.getPartitionOrException); a replica
    checks the client's leader epoch first (KIP-320: older -> FENCED_LEADER_EPOCH, newer ->
    UNKNOWN_LEADER_EPOCH), then leadership."""
    if broker.node_id not in partition.replica_ids:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER
    if current_leader_epoch != NO_LEADER_EPOCH:
        if current_leader_epoch < partition.log.leader_epoch:
            return ErrorCode.FENCED_LEADER_EPOCH
        if current_leader_epoch > partition.log.leader_epoch:
            return ErrorCode.UNKNOWN_LEADER_EPOCH
    if require_leader and partition.leader_id != broker.node_id:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER
    return ErrorCode.NONE


@dataclass(frozen=True, slots=True)
class AppendResult:
    """One partition's produce outcome (ProduceResponse.PartitionResponse): on error the offsets
    are -1, as Kafka's LogAppendInfo.UNKNOWN_LOG_APPEND_INFO has them."""

    error: ErrorCode = ErrorCode.NONE
    base_offset: int = -1
    log_append_time_ms: int = -1
    log_start_offset: int = -1
    error_message: str | None = None
    record_errors: tuple[BatchIndexAndErrorMessage, ...] = ()


def _fail(error: ErrorCode, message: str | None = None) -> AppendResult:
    return AppendResult(error, error_message=message)


def append_records(
    cluster: Configured,
    broker: BrokerNode,
    topic: Topic,
    partition: Partition,
    records: Buffer | None,
    *,
    acks: int,
    api_version: int,
    client_id: str,
    now_ms: int,
    record_now_ms: int | None = None,
    may_keep_frame: bool = False,
) -> AppendResult:
    """Validate and append one partition's records of a Produce request, checked in Kafka's order.

    ``record_now_ms``: a second time CreateTime bounds may hold against (mockbroker.clock's
    client_clock_ms: the wall clock under a manual clock); a record is refused only when it is out
    of bounds of both. ``may_keep_frame``: nobody but this request sees its frame (no interceptor or request log),
    so a batch that is nearly all of a frame the broker read into a buffer of its own may be kept
    in that buffer rather than copied (``_batch_to_store``)."""
    where = f"{topic.name}-{partition.index}"
    data = records if records is not None else b""
    parsed = _the_one_batch(data, api_version)
    if isinstance(parsed, AppendResult):
        return parsed
    header, view = parsed
    refused = _leader_checks(cluster, broker, topic, partition, header, acks, api_version, client_id, where)
    if refused is None:
        refused = _batch_checks(cluster, topic, header, view, where)
    log = partition.log
    if refused is None:
        refused = _validate_records(cluster, topic, header, view, where, now_ms)
        if refused is not None and record_now_ms is not None and record_now_ms != now_ms:
            refused = _validate_records(cluster, topic, header, view, where, record_now_ms)
        if refused is not None:
            # ReplicaManager.appendToLocalLog: a RecordValidationException is answered with the
            # partition's log start offset (processFailedRecord) and the record errors.
            return replace(refused, log_start_offset=log.log_start_offset)
    if refused is not None:
        return refused
    if header.has_producer_id:
        answered = _producer_check(log, header, where)
        if answered is not None:
            return answered
    batch = _batch_to_store(view, may_keep_frame)
    log_append_time_ms = -1
    if is_log_append_time(cluster, topic):
        patch_log_append_time(batch, now_ms)  # LogValidator: in place for v2, the CRC recomputed
        header = parse_batch_header(batch)
        log_append_time_ms = now_ms
    elif header.timestamp_type == TimestampType.LOG_APPEND_TIME:
        # A producer's LogAppendTime flag on a CreateTime topic, its records accepted: Kafka stores
        # the batch as CreateTime (LogValidator's setMaxTimestamp with the topic's type).
        patch_max_timestamp(batch, TimestampType.CREATE_TIME, header.max_timestamp)
        header = parse_batch_header(batch)
    base_offset = log.append(batch, header)
    enforce_retention(cluster, topic, log, now_ms)
    return AppendResult(
        base_offset=base_offset, log_append_time_ms=log_append_time_ms, log_start_offset=log.log_start_offset
    )


def _producer_check(log: PartitionLog, header: RecordBatchHeader, where: str) -> AppendResult | None:
    """The producer state's verdict on an idempotent or transactional batch, when it answers the
    request itself (a duplicate or an error); None to append."""
    check = log.producers.check(header, where)
    if check.duplicate is not None:
        # A retry of one of the producer's last five batches: answered with the original's
        # offsets and nothing appended (UnifiedLog.append: logAppendTime = the batch's timestamp).
        return AppendResult(
            base_offset=check.duplicate.first_offset,
            log_append_time_ms=check.duplicate.timestamp,
            log_start_offset=log.log_start_offset,
        )
    if check.error == ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER:
        # ReplicaManager.appendToLocalLog's catch-all: no message (not a RecordValidationException),
        # the partition's log start offset (processFailedRecord), as a real 4.3 broker answers.
        return AppendResult(check.error, log_start_offset=log.log_start_offset)
    if check.error != ErrorCode.NONE:
        return _fail(check.error, check.message)
    return None


def _the_one_batch(data: Buffer, api_version: int) -> tuple[RecordBatchHeader, memoryview] | AppendResult:
    """ProduceRequest.validateRecords (v3+): exactly one batch, magic 2, no zstd before v7. KafkaApis
    answers its exceptions with the error code alone (no message), as a real 4.3 broker shows."""
    try:
        batches = iter_batches(data)
        first = next(batches, None)
        if first is None:
            return _fail(ErrorCode.INVALID_RECORD)
        if next(batches, None) is not None:
            return _fail(
                ErrorCode.INVALID_RECORD,
                f"Produce requests with version {api_version} are only allowed to contain exactly one record batch per partition",
            )
    except UnsupportedMagicError:
        return _fail(
            ErrorCode.INVALID_RECORD,
            f"Produce requests with version {api_version} are only allowed to contain record batches with magic version 2",
        )
    except CorruptRecordError:
        # ByteBufferLogInputStream's check of the magic byte is the one that keeps its message.
        magic = int.from_bytes(bytes(data[MAGIC_OFFSET : MAGIC_OFFSET + 1]), "big", signed=True) if data else 2
        message = f"Invalid magic found in record: {magic}" if not 0 <= magic <= 2 else None
        return _fail(ErrorCode.CORRUPT_MESSAGE, message)
    header, view = first
    if api_version < ZSTD_MIN_PRODUCE_VERSION and header.compression_type == Compression.ZSTD:
        return _fail(
            ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
            f"Produce requests with version {api_version} are not allowed to use ZStandard compression",
        )
    return header, view


def _leader_checks(
    cluster: Configured, broker: BrokerNode, topic: Topic, partition: Partition, header: RecordBatchHeader,
    acks: int, api_version: int, client_id: str, where: str,
) -> AppendResult | None:  # fmt: skip
    """ReplicaManager.appendToLocalLog and Partition.appendRecordsToLeader: internal topics are
    written by the broker itself; the leader appends; acks=all needs min.insync.replicas in sync."""
    if topic.is_internal and client_id != ADMIN_CLIENT_ID:
        return _fail(ErrorCode.INVALID_TOPIC_EXCEPTION, f"Cannot append to internal topic {topic.name}")
    if partition.leader_id != broker.node_id:
        return _fail(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    min_insync = topic_int_config(cluster, topic, "min.insync.replicas")
    if acks == -1 and len(partition.isr_ids) < min_insync:
        return _fail(
            ErrorCode.NOT_ENOUGH_REPLICAS,
            f"The size of the current ISR {partition.isr_ids} is insufficient to satisfy the min.isr "
            f"requirement of {min_insync} for partition {where}",
        )
    return None


def _batch_checks(
    cluster: Configured, topic: Topic, header: RecordBatchHeader, view: memoryview, where: str
) -> AppendResult | None:
    """UnifiedLog.analyzeAndValidateRecords (base offset, size, then the CRC) and
    LogValidator.validateBatch."""
    if header.base_offset != 0:
        return _fail(
            ErrorCode.INVALID_RECORD,
            f"The baseOffset of the record batch in the append to {where} should be 0, but it is {header.base_offset}",
        )
    max_message_bytes = topic_int_config(cluster, topic, "max.message.bytes")
    if header.size_in_bytes > max_message_bytes:
        return _fail(
            ErrorCode.MESSAGE_TOO_LARGE,
            f"The record batch size in the append to {where} is {header.size_in_bytes} bytes which exceeds "
            f"the maximum configured value of {max_message_bytes}.",
        )
    try:
        validate_batch(view, header)
    except CorruptRecordError:
        # DefaultRecordBatch.ensureValid's CorruptRecordException is not a RecordValidationException:
        # LogAppendResult.errorMessage is null for it (a real 4.3 broker answers no message).
        return _fail(ErrorCode.CORRUPT_MESSAGE)
    invalid = _validate_client_batch(header)
    return None if invalid is None else _fail(ErrorCode.INVALID_RECORD, invalid)


def _batch_to_store(view: memoryview, may_keep_frame: bool) -> bytearray | memoryview:
    """The buffer the log keeps. The records are a view into the request frame; the log keeps a
    buffer it may patch in place (base offset, leader epoch, LogAppendTime) and later writes to
    fetchers as it is. A large frame was read into a buffer of its own (OwnedFrame) that only this
    request refers to: when this batch is nearly all of it (one partition per request, as
    librdkafka sends), the log keeps the frame itself, so the produced bytes are never copied after
    the socket read; at most 1/8 more is held than the batch. Otherwise (a bytes frame, several
    partitions, a caller's own buffer, or an interceptor or the request log that may look at the
    request later) the batch is copied once."""
    frame = view.obj
    if may_keep_frame and isinstance(frame, OwnedFrame) and 8 * len(view) >= 7 * len(frame):
        return view
    return bytearray(view)


def _validate_client_batch(header: RecordBatchHeader) -> str | None:
    """LogValidator.validateBatch for a client's v2 batch: why it is INVALID_RECORD, or None."""
    count_from_offsets = header.last_offset_delta + 1
    if count_from_offsets <= 0:
        return f"Batch has an invalid offset range: [0, {header.last_offset_delta}]"
    if header.records_count <= 0:
        return f"Invalid reported count for record batch: {header.records_count}"
    if count_from_offsets != header.records_count:
        return f"Inconsistent batch offset range [0, {header.last_offset_delta}] and record count {header.records_count}"
    if header.is_control_batch:
        return "Clients are not allowed to write control records"
    if header.has_producer_id and header.base_sequence < 0:
        return f"Invalid sequence number {header.base_sequence} in record batch with producerId {header.producer_id}"
    return None


@dataclass(frozen=True, slots=True)
class _RecordRules:
    """What LogValidator.validateRecord checks on one topic."""

    compacted: bool
    create_time: bool
    before_max_ms: int
    after_max_ms: int
    log_append_time_flag: bool  # the producer's batch claims LogAppendTime


def _validate_records(
    cluster: Configured, topic: Topic, header: RecordBatchHeader, view: memoryview, where: str, now_ms: int
) -> AppendResult | None:
    """LogValidator.validateRecord for each record: a key on a compacted topic, then the CreateTime
    bounds of KIP-937 (message.timestamp.before/after.max.ms) or a LogAppendTime flag a producer
    must not set. Every record is checked and every error reported (RecordError per batch index);
    the partition gets INVALID_TIMESTAMP if any record's timestamp is refused, else INVALID_RECORD
    (LogValidator.processRecordErrors), and nothing is appended.

    The records are decoded only when some record could fail: on a compacted topic, when a lower
    bound is configured, when the batch's max timestamp is past the upper bound, or when the batch
    claims LogAppendTime. Otherwise the header settles it (the usual produce costs nothing more).
    (A record timestamp below now - Long.MAX_VALUE in a batch whose header looks sane, which Kafka's
    long arithmetic refuses, is not looked for.)"""
    lat_flag = header.timestamp_type == TimestampType.LOG_APPEND_TIME
    # A topic without overrides runs with Kafka's defaults for all four configs (none of them has a
    # cluster-level default here): only the upper bound can refuse, and the header settles it.
    if (
        not topic.configs
        and not lat_flag
        and header.base_timestamp >= -1
        and header.max_timestamp - now_ms <= _DEFAULT_AFTER_MAX_MS
    ):
        return None
    policy = effective_value("cleanup.policy", topic.configs, cluster.config)
    rules = _RecordRules(
        compacted=isinstance(policy, list) and "compact" in policy,
        create_time=not is_log_append_time(cluster, topic),
        before_max_ms=topic_int_config(cluster, topic, "message.timestamp.before.max.ms"),
        after_max_ms=topic_int_config(cluster, topic, "message.timestamp.after.max.ms"),
        log_append_time_flag=lat_flag,
    )
    upper_passed = _java_long(header.max_timestamp - now_ms) > rules.after_max_ms
    if not (rules.compacted or lat_flag or (rules.create_time and (rules.before_max_ms != LONG_MAX or upper_passed))):
        return None
    try:
        _, records = decode_batch(view)
    except DecodeError:
        return None  # validate_batch accepted the CRC; a body we cannot read is the log's to keep
    errors: list[BatchIndexAndErrorMessage] = []
    bad_timestamp = False
    for index, record in enumerate(records):
        found = _record_error(rules, record, where, now_ms)
        if found is not None:
            bad_timestamp |= found[0]
            errors.append(BatchIndexAndErrorMessage(index, found[1]))
    if not errors:
        return None
    if bad_timestamp:
        return AppendResult(
            ErrorCode.INVALID_TIMESTAMP,
            error_message="One or more records have been rejected due to invalid timestamp",
            record_errors=tuple(errors),
        )
    shown = ", ".join(
        f"RecordError(batchIndex={e.batch_index}, message='{e.batch_index_error_message}')" for e in errors[:3]
    )
    return AppendResult(
        ErrorCode.INVALID_RECORD,
        error_message=f"One or more records have been rejected due to {len(errors)} record errors in total, "
        f"and only showing the first three errors at most: [{shown}]",
        record_errors=tuple(errors),
    )


def _record_error(rules: _RecordRules, record: Record, where: str, now_ms: int) -> tuple[bool, str] | None:
    """(is it a timestamp error, Kafka's message) for one refused record, or None
    (LogValidator.validateKey, then validateTimestamp)."""
    if rules.compacted and record.key is None:
        return False, f"Compacted topic cannot accept message without key in topic partition {where}"
    if rules.create_time and record.timestamp != NO_TIMESTAMP:
        diff = _java_long(now_ms - record.timestamp)
        if diff > rules.before_max_ms or _java_long(-diff) > rules.after_max_ms:
            low, high = _java_long(now_ms - rules.before_max_ms), _java_long(now_ms + rules.after_max_ms)
            return True, (
                f"Timestamp {record.timestamp} of message with offset {record.offset} is out of range. "
                f"The timestamp should be within [{low}, {high}]"
            )
        return None
    if rules.log_append_time_flag:
        key_size = 0 if record.key is None else len(record.key)
        value_size = 0 if record.value is None else len(record.value)
        return True, (
            f"Invalid timestamp type in message DefaultRecord(offset={record.offset}, timestamp={record.timestamp}, "
            f"key={key_size} bytes, value={value_size} bytes). Producer should not set timestamp type to LogAppendTime."
        )
    return None


# The topic configs the record checks read; none is in config.topics' _CLUSTER_DEFAULTS, so a topic
# that overrides none of them runs with Kafka's defaults (tests/mockbroker/log pins this).
RECORD_CHECK_CONFIGS = (
    "cleanup.policy",
    "message.timestamp.type",
    "message.timestamp.before.max.ms",
    "message.timestamp.after.max.ms",
)
_DEFAULT_AFTER_MAX_MS = int(str(TOPIC_CONFIGS["message.timestamp.after.max.ms"].default))


def _java_long(value: int) -> int:
    """``value`` as Java's long arithmetic leaves it (two's complement, 64 bits): the bounds are
    computed in longs, and before.max.ms defaults to Long.MAX_VALUE."""
    return ((value + (1 << 63)) % (1 << 64)) - (1 << 63)


def enforce_retention(cluster: Configured, topic: Topic, log: PartitionLog, now_ms: int) -> None:
    """retention.bytes at once (it is what keeps memory bounded); retention.ms at most once per
    log.retention.check.interval.ms per partition, as Kafka's scheduled check: deleting by time
    on every append would drop a test's old-timestamped records at once, where Kafka keeps them
    until its next check."""
    retention_ms = -1
    if log.retention_checked_ms is None:
        log.retention_checked_ms = now_ms
    elif now_ms - log.retention_checked_ms >= RETENTION_CHECK_INTERVAL_MS:
        log.retention_checked_ms = now_ms
        retention_ms = topic_int_config(cluster, topic, "retention.ms")
    retention_bytes = topic_int_config(cluster, topic, "retention.bytes")
    if retention_ms >= 0 or retention_bytes >= 0:
        log.enforce_retention(now_ms, retention_ms, retention_bytes)
