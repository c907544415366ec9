"""Differential: Produce, Fetch and ListOffsets: acks, versions, errors, corrupt batches, timestamps."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from mockbroker_protocol.messages.fetch import FetchPartition, FetchRequest, FetchTopic
from mockbroker_protocol.messages.list_offsets import (
    ListOffsetsPartition,
    ListOffsetsRequest,
    ListOffsetsTopic,
)
from mockbroker_protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from mockbroker_protocol.records import Compression, SimpleRecord, build_batch
from tests.differential.harness import Context, Step, Target, differential
from tests.differential.steps import FETCH, LIST_OFFSETS, PRODUCE, create

# CreateTime timestamps a minute old: inside Kafka's default bounds, equal on both targets.
T0 = int(time.time() * 1000) - 60_000
EARLIEST, LATEST, MAX_TIMESTAMP = -2, -1, -3


def batch(*values: bytes, timestamp: int = T0, **kwargs: Any) -> bytes:
    return build_batch(
        [SimpleRecord(key=b"k", value=v, timestamp=timestamp + i) for i, v in enumerate(values)], **kwargs
    )


def topic_id(ctx: Context) -> Any:
    return ctx.answers["created"].topics[0].topic_id


def produce(
    records: bytes | None, *, acks: int = -1, partition: int = 0, version: int = 9, name: str | None = None
) -> Any:
    def build(ctx: Context) -> ProduceRequest:
        data = TopicProduceData(
            name=name or ctx.topic, partition_data=[PartitionProduceData(partition, records)]
        )
        if version >= 13:
            data.name = ""
            data.topic_id = topic_id(ctx) if name is None else __import__("uuid").uuid4()
        return ProduceRequest(acks=acks, timeout_ms=10000, topic_data=[data])

    return build


def fetch(
    offset: int = 0,
    *,
    version: int = 12,
    partition: int = 0,
    name: str | None = None,
    max_bytes: int = 1 << 20,
) -> Any:
    def build(ctx: Context) -> FetchRequest:
        topic = FetchTopic(
            topic=name or ctx.topic,
            partitions=[
                FetchPartition(partition=partition, fetch_offset=offset, partition_max_bytes=max_bytes)
            ],
        )
        if version >= 13:
            topic.topic = ""
            topic.topic_id = topic_id(ctx) if name is None else __import__("uuid").uuid4()
        return FetchRequest(max_wait_ms=0, min_bytes=1, max_bytes=50 << 20, session_epoch=-1, topics=[topic])

    return build


def list_offsets(timestamp: int, *, partition: int = 0, name: str | None = None, isolation: int = 0) -> Any:
    def build(ctx: Context) -> ListOffsetsRequest:
        return ListOffsetsRequest(
            replica_id=-1,
            isolation_level=isolation,
            topics=[ListOffsetsTopic(name or ctx.topic, [ListOffsetsPartition(partition, -1, timestamp)])],
        )

    return build


def created(partitions: int = 1, configs: dict[str, str | None] | None = None) -> list[Step]:
    steps = create(partitions=partitions, configs=configs)
    steps[0].label = "created"
    return steps


@pytest.mark.parametrize("version", range(3, 14))
@pytest.mark.parametrize("acks", [1, -1])
def test_produce_then_read(targets: tuple[Target, Target], version: int, acks: int) -> None:
    differential(
        *targets,
        [
            *created(),
            Step(PRODUCE, version, produce(batch(b"a", b"b", b"c"), acks=acks, version=version)),
            Step(PRODUCE, version, produce(batch(b"d"), acks=acks, version=version)),
            Step(FETCH, 12, fetch(0)),
            Step(LIST_OFFSETS, 7, list_offsets(LATEST)),
        ],
    )


@pytest.mark.parametrize("version", range(4, 19))
def test_fetch_versions(targets: tuple[Target, Target], version: int) -> None:
    differential(
        *targets,
        [
            *created(),
            Step(PRODUCE, 9, produce(batch(b"a", b"b"))),
            Step(PRODUCE, 9, produce(batch(b"c", compression=Compression.GZIP))),
            Step(FETCH, version, fetch(0, version=version)),
            Step(FETCH, version, fetch(2, version=version)),
            Step(FETCH, version, fetch(3, version=version)),
        ],
    )


@pytest.mark.parametrize("version", [4, 11, 12, 13, 17, 18])
@pytest.mark.parametrize("offset", [4, 100, -5])
def test_fetch_out_of_range(targets: tuple[Target, Target], version: int, offset: int) -> None:
    differential(
        *targets,
        [
            *created(),
            Step(PRODUCE, 9, produce(batch(b"a", b"b"))),
            Step(FETCH, version, fetch(offset, version=version)),
        ],
    )


@pytest.mark.parametrize("version", [4, 12, 13, 18])
def test_fetch_unknown_topic_and_partition(targets: tuple[Target, Target], version: int) -> None:
    differential(
        *targets,
        [
            *created(),
            Step(FETCH, version, fetch(0, version=version, partition=7)),
            Step(FETCH, version, fetch(0, version=version, name="no-such-topic-differential")),
        ],
    )


def test_fetch_partition_max_bytes_returns_first_batch_whole(targets: tuple[Target, Target]) -> None:
    """KIP-74: a batch larger than the partition's limit is still returned whole when it is the first."""
    differential(
        *targets,
        [
            *created(),
            Step(PRODUCE, 9, produce(batch(b"x" * 300, b"y" * 300))),
            Step(PRODUCE, 9, produce(batch(b"z" * 300))),
            Step(FETCH, 12, fetch(0, max_bytes=10)),
        ],
    )


def test_acks_zero_has_no_answer_but_appends(targets: tuple[Target, Target]) -> None:
    differential(
        *targets,
        [
            *created(),
            Step(PRODUCE, 9, produce(batch(b"a"), acks=0), send_only=True),
            Step(LIST_OFFSETS, 7, list_offsets(LATEST)),
            Step(FETCH, 12, fetch(0)),
        ],
    )


@pytest.mark.parametrize("acks", [2, -2, 5])
def test_invalid_acks(targets: tuple[Target, Target], acks: int) -> None:
    differential(*targets, [*created(), Step(PRODUCE, 9, produce(batch(b"a"), acks=acks))])


@pytest.mark.parametrize("version", [3, 9, 12, 13])
def test_produce_unknown_topic_and_partition(targets: tuple[Target, Target], version: int) -> None:
    differential(
        *targets,
        [
            *created(),
            Step(PRODUCE, version, produce(batch(b"a"), partition=3, version=version)),
            Step(PRODUCE, version, produce(batch(b"a"), version=version, name="no-such-topic-differential")),
        ],
    )


def corrupt(data: bytes, at: int) -> bytes:
    out = bytearray(data)
    out[at] ^= 0xFF
    return bytes(out)


CORRUPTIONS = {
    "crc": lambda: corrupt(
        batch(b"a", b"b"), len(batch(b"a", b"b")) - 2
    ),  # a record byte: the CRC no longer matches
    "crc-field": lambda: corrupt(batch(b"a"), 18),  # the CRC itself
    "magic-1": lambda: corrupt(batch(b"a"), 16),  # magic 2 -> 253
    "truncated": lambda: batch(b"a", b"b")[:-3],
}


@pytest.mark.parametrize("case", sorted(CORRUPTIONS))
@pytest.mark.parametrize("version", [3, 9, 11])
def test_corrupt_batches(targets: tuple[Target, Target], case: str, version: int) -> None:
    differential(
        *targets,
        [
            *created(),
            Step(PRODUCE, version, produce(CORRUPTIONS[case](), version=version)),
            Step(LIST_OFFSETS, 7, list_offsets(LATEST)),
        ],
    )


def test_produce_empty_records(targets: tuple[Target, Target]) -> None:
    """Null records are not compared: Kafka 4.3 never answers them (D5)."""
    differential(*targets, [*created(), Step(PRODUCE, 9, produce(b""))])


BOUNDS = re.compile(r"within \[-?\d+, -?\d+\]")


def mask_bounds(tree: Any, ctx: Context | None = None) -> Any:
    """The accepted range in an INVALID_TIMESTAMP record error is each broker's clock +/- the
    bounds: equal in shape, not in value."""
    for topic in tree["responses"]:
        for partition in topic["partition_responses"]:
            for error in partition["record_errors"]:
                error["batch_index_error_message"] = BOUNDS.sub(
                    "within [<now - before>, <now + after>]", error["batch_index_error_message"]
                )
    return tree


@pytest.mark.parametrize(
    ("offset_hours", "configs"),
    [
        (-24 * 365, None),  # before.max.ms is unbounded by default
        (2, None),  # past after.max.ms (one hour): refused
        (0.5, None),
        (-24, {"message.timestamp.before.max.ms": "3600000"}),  # a day old, one hour allowed: refused
        (-0.5, {"message.timestamp.before.max.ms": "3600000"}),
        (0.5, {"message.timestamp.after.max.ms": "60000"}),  # refused
    ],
)
def test_create_time_bounds(
    targets: tuple[Target, Target], offset_hours: float, configs: dict[str, str | None] | None
) -> None:
    """KIP-937: CreateTime timestamps within message.timestamp.{before,after}.max.ms of the
    broker's clock (LogValidator.validateTimestamp), each refused record with its RecordError."""
    when = int(time.time() * 1000) + int(offset_hours * 3_600_000)
    differential(
        *targets,
        [
            *created(configs=configs),
            Step(PRODUCE, 11, produce(batch(b"a", b"b", timestamp=when)), normalise=mask_bounds),
            Step(LIST_OFFSETS, 8, list_offsets(MAX_TIMESTAMP)),
        ],
    )


def test_producer_sets_log_append_time(targets: tuple[Target, Target]) -> None:
    """A producer's batch flagged LogAppendTime is refused on a CreateTime topic only when a record
    has no timestamp; on a LogAppendTime topic always (LogValidator.validateTimestamp)."""
    flagged = build_batch([SimpleRecord(key=b"k", value=b"v", timestamp=-1)], timestamp_type=1)
    differential(
        *targets,
        [
            *created(),
            Step(PRODUCE, 9, produce(flagged)),
            Step(PRODUCE, 9, produce(batch(b"a", timestamp_type=1))),
            Step(LIST_OFFSETS, 8, list_offsets(LATEST)),
            Step(FETCH, 12, fetch(0)),
        ],
    )


def test_compacted_topic_needs_keys(targets: tuple[Target, Target]) -> None:
    keyless = build_batch(
        [SimpleRecord(key=b"k", value=b"a", timestamp=T0), SimpleRecord(value=b"b", timestamp=T0)]
    )
    differential(
        *targets,
        [
            *created(configs={"cleanup.policy": "compact"}),
            Step(PRODUCE, 9, produce(keyless)),
            Step(PRODUCE, 9, produce(batch(b"a"))),
            Step(LIST_OFFSETS, 8, list_offsets(LATEST)),
        ],
    )


def mask_append_times(tree: Any, ctx: Context | None = None) -> Any:
    """LogAppendTime batches carry the broker's clock: the max timestamp and record timestamps."""
    for topic in tree["responses"]:
        for partition in topic["partitions"]:
            for entry in partition["records"] if isinstance(partition["records"], list) else []:
                entry["header"]["max_timestamp"] = "<append-time>"
                entry["header"]["crc"] = "<crc over the append time>"
                for record in entry["records"]:
                    record["timestamp"] = "<append-time>"
    return tree


def test_log_append_time_topic(targets: tuple[Target, Target]) -> None:
    differential(
        *targets,
        [
            *created(configs={"message.timestamp.type": "LogAppendTime"}),
            Step(PRODUCE, 9, produce(batch(b"a", b"b"))),
            Step(FETCH, 12, fetch(0), normalise=mask_append_times),
        ],
    )


@pytest.mark.parametrize("version", range(1, 12))
def test_list_offsets_versions(targets: tuple[Target, Target], version: int) -> None:
    steps: list[Any] = [*created(), Step(PRODUCE, 9, produce(batch(b"a", b"b", b"c")))]
    for ts in (EARLIEST, LATEST, T0 + 1, T0 + 99):
        steps.append(Step(LIST_OFFSETS, version, list_offsets(ts)))
    if version >= 7:
        steps.append(Step(LIST_OFFSETS, version, list_offsets(MAX_TIMESTAMP)))
    differential(*targets, steps)


@pytest.mark.parametrize("version", [1, 6, 9, 11])
def test_list_offsets_unknown(targets: tuple[Target, Target], version: int) -> None:
    differential(
        *targets,
        [
            *created(),
            Step(LIST_OFFSETS, version, list_offsets(LATEST, partition=4)),
            Step(LIST_OFFSETS, version, list_offsets(LATEST, name="no-such-topic-differential")),
        ],
    )


@pytest.mark.parametrize("timestamp", [-4, -5, -6, -7])
def test_list_offsets_special_timestamps(targets: tuple[Target, Target], timestamp: int) -> None:
    """KIP-405/1005 specials: earliest-local (-4), latest-tiered (-5), and unknown ones."""
    differential(
        *targets,
        [*created(), Step(PRODUCE, 9, produce(batch(b"a"))), Step(LIST_OFFSETS, 11, list_offsets(timestamp))],
    )


def test_list_offsets_on_empty_partition(targets: tuple[Target, Target]) -> None:
    differential(
        *targets,
        [
            *created(),
            *(Step(LIST_OFFSETS, 9, list_offsets(ts)) for ts in (EARLIEST, LATEST, MAX_TIMESTAMP, T0)),
        ],
    )
