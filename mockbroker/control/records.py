"""Control over topics and records: create and delete topics, append records as a producer
would, read them back."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mockbroker.clock import client_clock_ms
from mockbroker.control.base import NO_LEADER, ControlBase
from mockbroker.control.errors import NotFound, ProduceError
from mockbroker.control.snapshots import ConsumedRecord, TopicSnapshot, topic_snapshot
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.hashing import murmur2, to_positive
from mockbroker_protocol.records import Compression, SimpleRecord, build_batch, decode_batch

CONTROL_CLIENT_ID = "mockbroker-control"
# Produce is appended as a v11 request would be (zstd allowed from v7, KIP-110).
_PRODUCE_VERSION = 11

RecordLike = bytes | str | None | tuple[Any, Any] | Mapping[str, Any] | SimpleRecord


class TopicControl(ControlBase):
    """Topics and their records."""

    async def topics(self, include_internal: bool = False) -> dict[str, TopicSnapshot]:
        return {name: topic_snapshot(t) for name, t in self.cluster.topics.items() if include_internal or not t.is_internal}

    async def topic(self, name: str) -> TopicSnapshot:
        return topic_snapshot(self._topic(name))

    async def create_topic(
        self, name: str, partitions: int = 1, replication_factor: int = 1, configs: Mapping[str, str] | None = None
    ) -> TopicSnapshot:
        """Create a topic (TopicError with Kafka's error code when refused; configs are checked as
        CreateTopics checks them: INVALID_CONFIG with Kafka's message)."""
        from mockbroker.config.topics import validate_topic_configs
        from mockbroker.model import TopicError

        problem = validate_topic_configs(dict(configs or {}))
        if problem is not None:
            raise TopicError(problem.code, problem.message or "invalid topic config")
        return topic_snapshot(self.cluster.create_topic(name, partitions, replication_factor, dict(configs or {})))

    async def delete_topic(self, name: str) -> None:
        self.cluster.delete_topic(name)

    async def produce(
        self,
        topic: str,
        records: Iterable[RecordLike],
        *,
        partition: int | None = None,
        compression: str | Compression = "none",
        timestamp_ms: int | None = None,
    ) -> list[tuple[int, int]]:
        """Append records as a producer would (one batch per partition, through the broker's own
        append checks); returns (partition, offset) per record, in order. A record is a value
        (bytes or str), a (key, value) pair, a dict with key/value/headers/timestamp/partition,
        or a SimpleRecord. Without ``partition``: keyed records go where Kafka's default
        partitioner puts them (murmur2 of the key), unkeyed ones round-robin."""
        from mockbroker.log.replica_manager import append_records

        t = self._topic(topic)
        codec = compression if isinstance(compression, Compression) else _codec(compression)
        now = self.cluster.clock.now_ms()
        by_partition: dict[int, list[tuple[int, SimpleRecord]]] = {}
        for position, item in enumerate(records):
            rec, where = _to_record(item, timestamp_ms if timestamp_ms is not None else now)
            index = partition if partition is not None else where
            if index is None:
                index = (
                    to_positive(murmur2(rec.key)) % len(t.partitions) if rec.key is not None
                    else next(self._round_robin) % len(t.partitions)
                )  # fmt: skip
            if not 0 <= index < len(t.partitions):
                raise NotFound(f"{topic} has no partition {index} (it has {len(t.partitions)})")
            by_partition.setdefault(index, []).append((position, rec))
        placed: dict[int, tuple[int, int]] = {}
        for index, entries in by_partition.items():
            p = t.partitions[index]
            if p.leader_id == NO_LEADER:
                raise ProduceError(ErrorCode.LEADER_NOT_AVAILABLE, f"{topic}-{index} has no live leader")
            batch = build_batch([rec for _, rec in entries], compression=codec)
            result = append_records(
                self.cluster, self.cluster.brokers[p.leader_id], t, p, batch,
                acks=-1, api_version=_PRODUCE_VERSION, client_id=CONTROL_CLIENT_ID, now_ms=now,
                record_now_ms=client_clock_ms(self.cluster.clock, now),
            )  # fmt: skip
            if result.error != ErrorCode.NONE:
                raise ProduceError(ErrorCode(result.error), result.error_message)
            for delta, (position, _) in enumerate(entries):
                placed[position] = (index, result.base_offset + delta)
        return [placed[i] for i in range(len(placed))]

    async def read(
        self, topic: str, partition: int = 0, offset: int = 0, max_records: int | None = None, *, include_control: bool = False
    ) -> list[ConsumedRecord]:
        """A partition's records from ``offset`` on, decoded (transaction markers left out
        unless ``include_control``)."""
        p = self._partition(topic, partition)
        out: list[ConsumedRecord] = []
        for stored in p.log.batches:
            if stored.last_offset < offset or (stored.is_control and not include_control):
                continue
            header, decoded = decode_batch(bytes(stored.data))
            codec = Compression(header.compression_type).name.lower()
            for r in decoded:
                if r.offset < offset:
                    continue
                out.append(
                    ConsumedRecord(
                        topic, partition, r.offset, r.timestamp, r.key, r.value,
                        tuple(r.headers), header.partition_leader_epoch, codec,
                    )
                )  # fmt: skip
                if max_records is not None and len(out) >= max_records:
                    return out
        return out

    async def log_end_offsets(self, topic: str) -> dict[int, int]:
        return {p.index: p.log.log_end_offset for p in self._topic(topic).partitions}

def _codec(name: str) -> Compression:
    try:
        return Compression[name.upper()]
    except KeyError:
        raise ValueError(f"unknown compression {name!r}; use none, gzip, snappy, lz4 or zstd") from None


def _bytes(value: Any) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.encode()
    return bytes(value)


def _to_record(item: RecordLike, default_ts: int) -> tuple[SimpleRecord, int | None]:
    """(record, partition named by the item or None)."""
    if isinstance(item, SimpleRecord):
        ts = item.timestamp if item.timestamp is not None else default_ts
        return SimpleRecord(item.key, item.value, item.headers, ts), None
    if isinstance(item, Mapping):
        headers: Sequence[tuple[str, Any]] = item.get("headers") or ()
        if isinstance(headers, Mapping):
            headers = list(headers.items())
        return SimpleRecord(
            _bytes(item.get("key")),
            _bytes(item.get("value")),
            [(str(k), _bytes(v)) for k, v in headers],
            item.get("timestamp", default_ts),
        ), item.get("partition")  # fmt: skip
    if isinstance(item, tuple):
        key, value = item
        return SimpleRecord(_bytes(key), _bytes(value), (), default_ts), None
    return SimpleRecord(None, _bytes(item), (), default_ts), None
