"""Differential: DescribeCluster, DeleteRecords, OffsetForLeaderEpoch, InitProducerId and the
idempotent producer's sequence checks."""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker_protocol.messages.delete_records import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsTopic,
)
from mockbroker_protocol.messages.describe_cluster import DescribeClusterRequest
from mockbroker_protocol.messages.init_producer_id import InitProducerIdRequest
from mockbroker_protocol.messages.offset_for_leader_epoch import (
    OffsetForLeaderEpochRequest,
    OffsetForLeaderPartition,
    OffsetForLeaderTopic,
)
from mockbroker_protocol.records import SimpleRecord, build_batch
from tests.differential.harness import Context, Step, Target, differential
from tests.differential.test_data_path import (
    EARLIEST,
    LIST_OFFSETS,
    PRODUCE,
    T0,
    batch,
    created,
    fetch,
    list_offsets,
    produce,
)

DESCRIBE_CLUSTER, DELETE_RECORDS, INIT_PRODUCER_ID, OFFSET_FOR_LEADER_EPOCH = 60, 21, 22, 23
FETCH = 1


@pytest.mark.parametrize("version", range(3))
def test_describe_cluster(targets: tuple[Target, Target], version: int) -> None:
    differential(*targets, [Step(DESCRIBE_CLUSTER, version, DescribeClusterRequest(endpoint_type=1))])


def delete_records(offset: int, partition: int = 0, name: str | None = None) -> Any:
    def build(ctx: Context) -> DeleteRecordsRequest:
        wanted = [DeleteRecordsPartition(partition, offset)]
        return DeleteRecordsRequest([DeleteRecordsTopic(name or ctx.topic, wanted)], timeout_ms=10000)

    return build


@pytest.mark.parametrize("offset", [2, -1, 9])
@pytest.mark.parametrize("version", [0, 2])
def test_delete_records(targets: tuple[Target, Target], offset: int, version: int) -> None:
    differential(
        *targets,
        [
            *created(),
            Step(PRODUCE, 9, produce(batch(b"a", b"b", b"c"))),
            Step(DELETE_RECORDS, version, delete_records(offset)),
            Step(LIST_OFFSETS, 7, list_offsets(EARLIEST)),
            Step(FETCH, 12, fetch(0)),
        ],
    )


def test_delete_records_unknown(targets: tuple[Target, Target]) -> None:
    differential(
        *targets,
        [
            *created(),
            Step(DELETE_RECORDS, 2, delete_records(0, partition=3)),
            Step(DELETE_RECORDS, 2, delete_records(0, name="no-such-topic-differential")),
        ],
    )


@pytest.mark.parametrize("epoch", [0, 1, -1])
@pytest.mark.parametrize("version", [2, 3, 4])
def test_offset_for_leader_epoch(targets: tuple[Target, Target], epoch: int, version: int) -> None:
    def request(ctx: Context) -> OffsetForLeaderEpochRequest:
        return OffsetForLeaderEpochRequest(
            replica_id=-1, topics=[OffsetForLeaderTopic(ctx.topic, [OffsetForLeaderPartition(0, -1, epoch), OffsetForLeaderPartition(5, -1, 0)])]
        )

    differential(*targets, [*created(), Step(PRODUCE, 9, produce(batch(b"a", b"b"))), Step(OFFSET_FOR_LEADER_EPOCH, version, request)])


def idempotent(pid_label: str, sequence: int, *values: bytes) -> Any:
    def build(ctx: Context) -> Any:
        answer = ctx.answers[pid_label]
        records = build_batch(
            [SimpleRecord(key=b"k", value=v, timestamp=T0) for v in values],
            producer_id=answer.producer_id,
            producer_epoch=answer.producer_epoch,
            base_sequence=sequence,
        )
        return produce(records)(ctx)

    return build


init_producer_id = InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000)


@pytest.mark.parametrize("version", [2, 3, 4, 5])
def test_idempotent_producer_sequences(targets: tuple[Target, Target], version: int) -> None:
    """InitProducerId, then in-order, duplicate and out-of-order sequences (KIP-98)."""
    differential(
        *targets,
        [
            *created(),
            # Kafka's producer id manager answers COORDINATOR_LOAD_IN_PROGRESS until it has a block of ids.
            Step(INIT_PRODUCER_ID, version, init_producer_id, label="pid", compare=False, until=lambda a: a.error_code == 0),
            Step(INIT_PRODUCER_ID, version, init_producer_id, label="another"),
            Step(PRODUCE, 9, idempotent("pid", 0, b"a", b"b")),
            Step(PRODUCE, 9, idempotent("pid", 0, b"a", b"b")),  # a retry: the same offsets, nothing appended
            Step(PRODUCE, 9, idempotent("pid", 5, b"c")),  # a gap: OUT_OF_ORDER_SEQUENCE_NUMBER
            Step(PRODUCE, 9, idempotent("pid", 2, b"c")),
            Step(LIST_OFFSETS, 7, list_offsets(-1)),
        ],
    )
