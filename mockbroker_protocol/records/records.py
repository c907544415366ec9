"""The records inside a v2 batch: decode them for inspection, build batches for tests and markers.

Never on the produce/fetch path (that keeps batches as bytes, see batch.py): this is for test
assertions, the admin API's "what is in this partition", and for writing batches the broker
itself authors (transaction markers). Record layout (DefaultRecord.java, KIP-98), all varints
zigzag-encoded:

    length          varint   bytes after this field
    attributes      int8     unused, 0
    timestamp_delta varlong  from the batch's base_timestamp
    offset_delta    varint   from the batch's base_offset
    key             varint length (-1 for null) + bytes
    value           varint length (-1 for null) + bytes
    headers         varint count, then per header: varint length + UTF-8 key,
                    varint length (-1 for null) + value
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from struct import Struct
from struct import error as StructError

from mockbroker_protocol.errors import CorruptRecordError, DecodeError
from mockbroker_protocol.primitives import Buffer, read_varint, read_varlong, write_varint
from mockbroker_protocol.records.batch import (
    ATTRIBUTES_OFFSET,
    COMPRESSION_CODEC_MASK,
    CONTROL_FLAG_MASK,
    CRC_OFFSET,
    HEADER,
    LOG_OVERHEAD,
    MAGIC_VALUE_V2,
    NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    NO_TIMESTAMP,
    RECORD_BATCH_OVERHEAD,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG_MASK,
    RecordBatchHeader,
    TimestampType,
    iter_batches,
    validate_batch,
)
from mockbroker_protocol.records.compression import Compression, compress, decompress
from mockbroker_protocol.records.crc import crc32c

__all__ = [
    "ControlRecord",
    "ControlRecordType",
    "Header",
    "Record",
    "SimpleRecord",
    "build_batch",
    "build_end_txn_marker",
    "decode_batch",
    "decode_batches",
    "parse_control_record",
]

Header = tuple[str, bytes | None]

_UINT32 = Struct(">I")
_CONTROL_KEY = Struct(">hh")  # version, type (ControlRecordType.recordKey)
_END_TXN_MARKER_VALUE = Struct(">hi")  # version, coordinator_epoch (EndTransactionMarker)
# The smallest record body: attributes, and one-byte timestamp delta, offset delta, key length,
# value length and header count; with its one-byte length, the smallest record. The second bounds
# a forged records_count before looping.
_MIN_RECORD_BODY = 6
_MIN_RECORD_SIZE = 7


@dataclass(frozen=True, slots=True)
class Record:
    """One decoded record. ``offset`` and ``timestamp`` are absolute (base plus delta; for a
    LogAppendTime batch every record's timestamp is the batch's max_timestamp, as in
    DefaultRecordBatch); the deltas are what the wire carries."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: list[Header] = field(default_factory=list)
    attributes: int = 0
    offset_delta: int = 0
    timestamp_delta: int = 0


@dataclass(frozen=True, slots=True)
class SimpleRecord:
    """A record to write (Java's SimpleRecord): build_batch gives it the next offset delta, and
    the batch's base_timestamp when ``timestamp`` is None."""

    key: bytes | None = None
    value: bytes | None = None
    headers: Sequence[Header] = ()
    timestamp: int | None = None


class ControlRecordType(IntEnum):
    """The type in a control record's key (ControlRecordType.java)."""

    ABORT = 0
    COMMIT = 1
    # KRaft quorum records (KIP-595, KIP-630, KIP-853); never in a topic a client produces to.
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


@dataclass(frozen=True, slots=True)
class ControlRecord:
    """A control record's key, and for transaction markers (ABORT/COMMIT) the coordinator epoch
    from the value. ``control_type`` stays an int: Java maps unknown ids to UNKNOWN and skips them."""

    version: int
    control_type: int
    coordinator_epoch: int | None = None


# -- decoding -----------------------------------------------------------------------------------


def decode_batch(buf: Buffer) -> tuple[RecordBatchHeader, list[Record]]:
    """Validate one whole batch (validate_batch), decompress it and decode every record.

    Raises CorruptRecordError for anything wrong, including what Java reports as
    InvalidRecordException while iterating (bad record sizes, leftover bytes after the declared
    count, negative header counts)."""
    header = validate_batch(buf)
    size = header.batch_length + LOG_OVERHEAD
    body = memoryview(buf)[RECORD_BATCH_OVERHEAD:size]
    codec = header.attributes & COMPRESSION_CODEC_MASK
    data: Buffer = decompress(codec, body) if codec else body
    try:
        records = _decode_records(data, header)
    except CorruptRecordError:
        raise
    except DecodeError as exc:  # a varint running off the end of the data, inside a sound batch
        raise CorruptRecordError(f"invalid record structure: {exc}") from None
    return header, records


def decode_batches(buf: Buffer) -> list[tuple[RecordBatchHeader, list[Record]]]:
    """Every complete batch of a records field (a fetch response's, a partition's log),
    decoded; a partial batch at the end is ignored, as in iter_batches."""
    return [decode_batch(view) for _, view in iter_batches(buf)]


def _decode_records(data: Buffer, header: RecordBatchHeader) -> list[Record]:
    count = header.records_count
    end = len(data)
    if count * _MIN_RECORD_SIZE > end:
        raise CorruptRecordError(f"{count} records cannot fit in {end} bytes")
    base_offset = header.base_offset
    base_timestamp = header.base_timestamp
    log_append_time = header.max_timestamp if header.attributes & TIMESTAMP_TYPE_MASK else None
    records: list[Record] = []
    pos = 0
    for _ in range(count):
        length, pos = read_varint(data, pos)
        record_end = pos + length
        if length < _MIN_RECORD_BODY or record_end > end:
            # DefaultRecord.readFrom: "Invalid record size: expected N bytes in record payload,
            # but instead the buffer has only M remaining bytes".
            raise CorruptRecordError(f"record of {length} bytes with {end - pos} bytes left")
        start = pos
        attributes = data[pos]
        pos += 1
        timestamp_delta, pos = read_varlong(data, pos)
        offset_delta, pos = read_varint(data, pos)
        key, pos = _read_nullable(data, pos, record_end)
        value, pos = _read_nullable(data, pos, record_end)
        header_count, pos = read_varint(data, pos)
        if header_count < 0 or header_count > record_end - pos:
            raise CorruptRecordError(f"invalid number of record headers {header_count}")
        headers: list[Header] = []
        for _ in range(header_count):
            key_length, pos = read_varint(data, pos)
            if key_length < 0 or pos + key_length > record_end:
                raise CorruptRecordError(f"invalid header key size {key_length}")
            # Java decodes header keys leniently (Utils.utf8 never fails); surrogateescape is as
            # lenient and, unlike replacement characters, gives the bytes back when re-encoded.
            h_key = bytes(data[pos : pos + key_length]).decode("utf-8", "surrogateescape")
            pos += key_length
            h_value, pos = _read_nullable(data, pos, record_end)
            headers.append((h_key, h_value))
        if pos != record_end:
            raise CorruptRecordError(
                f"invalid record size: expected to read {length} bytes in record payload, but read {pos - start}"
            )
        records.append(
            Record(
                offset=base_offset + offset_delta,
                timestamp=base_timestamp + timestamp_delta if log_append_time is None else log_append_time,
                key=key,
                value=value,
                headers=headers,
                attributes=attributes - 256 if attributes > 127 else attributes,
                offset_delta=offset_delta,
                timestamp_delta=timestamp_delta,
            )
        )
    if pos != end:
        # DefaultRecordBatch's iterators: "Incorrect declared batch size, records still remaining".
        raise CorruptRecordError(f"{end - pos} bytes left after the declared {count} records")
    return records


def _read_nullable(data: Buffer, pos: int, limit: int) -> tuple[bytes | None, int]:
    n, pos = read_varint(data, pos)
    if n < 0:
        # Any negative length is null: DefaultRecord.readFrom tests "size >= 0", not "== -1".
        return None, pos
    end = pos + n
    if end > limit:
        raise CorruptRecordError(f"field of {n} bytes overruns its record")
    return bytes(data[pos:end]), end


def parse_control_record(record: Record) -> ControlRecord:
    """The key (and for ABORT/COMMIT the value) of a record from a control batch
    (ControlRecordType.parse, EndTransactionMarker.deserializeValue)."""
    key = record.key
    if key is None or len(key) < _CONTROL_KEY.size:
        raise CorruptRecordError(f"control record key of {0 if key is None else len(key)} bytes, needs 4")
    version, control_type = _CONTROL_KEY.unpack_from(key)
    if version < 0:
        raise CorruptRecordError(f"invalid control record version {version}")
    coordinator_epoch = None
    if control_type in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        value = record.value
        if value is None or len(value) < _END_TXN_MARKER_VALUE.size:
            raise CorruptRecordError("invalid value size found for end transaction marker")
        _, coordinator_epoch = _END_TXN_MARKER_VALUE.unpack_from(value)
    return ControlRecord(version=version, control_type=control_type, coordinator_epoch=coordinator_epoch)


# -- building -----------------------------------------------------------------------------------


def build_batch(
    records: Iterable[SimpleRecord | Record],
    *,
    base_offset: int = 0,
    compression: Compression | int = Compression.NONE,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    is_transactional: bool = False,
    is_control: bool = False,
    timestamp_type: TimestampType | int = TimestampType.CREATE_TIME,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
    base_timestamp: int | None = None,
    max_timestamp: int | None = None,
    last_offset_delta: int | None = None,
) -> bytes:
    """A complete v2 batch with a correct CRC, records encoded as DefaultRecord writes them.

    A SimpleRecord takes the offset delta after the previous record's (0 first) and, without a
    timestamp, ``base_timestamp`` (else -1, NO_TIMESTAMP); a Record keeps its offset_delta,
    timestamp and attributes, so decoded records can be rebuilt (say, with another codec).
    ``base_timestamp`` defaults to the first record's timestamp, ``max_timestamp`` to the
    largest, ``last_offset_delta`` to the last record's delta (0 for an empty batch); override
    them to write batches a real producer would not (for tests of the broker's checks). The
    records are compressed whatever the gain (unlike kafka-python, which falls back to none).
    """
    entries: list[tuple[int, int | None, int, bytes | None, bytes | None, Sequence[Header]]] = []
    next_delta = 0
    for rec in records:
        if isinstance(rec, Record):
            entries.append((rec.offset_delta, rec.timestamp, rec.attributes, rec.key, rec.value, rec.headers))
            next_delta = rec.offset_delta + 1
        else:
            entries.append((next_delta, rec.timestamp, 0, rec.key, rec.value, rec.headers))
            next_delta += 1
    default_timestamp = NO_TIMESTAMP if base_timestamp is None else base_timestamp
    resolved = [default_timestamp if entry[1] is None else entry[1] for entry in entries]
    if base_timestamp is None:
        base_timestamp = resolved[0] if resolved else NO_TIMESTAMP
    if max_timestamp is None:
        max_timestamp = max(resolved) if resolved else NO_TIMESTAMP
    if last_offset_delta is None:
        last_offset_delta = entries[-1][0] if entries else 0

    records_section = bytearray()
    body = bytearray()
    for (offset_delta, _, attributes, key, value, headers), timestamp in zip(entries, resolved, strict=True):
        body.clear()
        body.append(attributes & 0xFF)
        write_varint(body, timestamp - base_timestamp)
        write_varint(body, offset_delta)
        _write_nullable(body, key)
        _write_nullable(body, value)
        write_varint(body, len(headers))
        for h_key, h_value in headers:
            encoded = h_key.encode("utf-8", "surrogateescape")
            write_varint(body, len(encoded))
            body += encoded
            _write_nullable(body, h_value)
        write_varint(records_section, len(body))
        records_section += body

    codec = Compression(compression)
    out = bytearray(RECORD_BATCH_OVERHEAD)
    out += compress(codec, records_section) if codec is not Compression.NONE else records_section
    attributes = int(codec)
    if timestamp_type:
        attributes |= TIMESTAMP_TYPE_MASK
    if is_transactional:
        attributes |= TRANSACTIONAL_FLAG_MASK
    if is_control:
        attributes |= CONTROL_FLAG_MASK
    try:
        HEADER.pack_into(
            out,
            0,
            base_offset,
            len(out) - LOG_OVERHEAD,
            partition_leader_epoch,
            MAGIC_VALUE_V2,
            0,  # the CRC, computed below over the finished bytes
            attributes,
            last_offset_delta,
            base_timestamp,
            max_timestamp,
            producer_id,
            producer_epoch,
            base_sequence,
            len(entries),
        )
    except StructError as exc:
        raise ValueError(f"batch header field out of range: {exc}") from None
    _UINT32.pack_into(out, CRC_OFFSET, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
    return bytes(out)


def _write_nullable(out: bytearray, value: Buffer | None) -> None:
    if value is None:
        out.append(1)  # zigzag(-1)
    else:
        write_varint(out, len(value))
        out += value


def build_end_txn_marker(
    *,
    commit: bool,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
    timestamp: int,
    base_offset: int = 0,
    partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
) -> bytes:
    """A COMMIT or ABORT marker batch, as the broker appends to each partition of a transaction
    when it ends (KIP-98; MemoryRecords.withEndTransactionMarker): transactional, control, no
    sequence, one record with key (version 0, type) and value (version 0, coordinator epoch)."""
    control_type = ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
    marker = SimpleRecord(
        key=_CONTROL_KEY.pack(0, control_type),
        value=_END_TXN_MARKER_VALUE.pack(0, coordinator_epoch),
        timestamp=timestamp,
    )
    return build_batch(
        [marker],
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=NO_SEQUENCE,
        is_transactional=True,
        is_control=True,
        partition_leader_epoch=partition_leader_epoch,
    )
