"""Record batch v2 (magic 2) headers: parse, validate, walk a records field and patch in place,
all without touching (copying, decompressing) the records themselves.

This is the broker's produce path: it calls these on memoryview slices of the request frame,
checks the CRC, writes the base offset (and, for LogAppendTime topics, the timestamp) in place
and keeps the client's bytes. Layout (DefaultRecordBatch.java, KIP-98; 61 bytes, big-endian):

    offset  field                  type    notes
    0       base_offset            int64   assigned by the broker; not covered by the CRC
    8       batch_length           int32   bytes after this field (the whole batch minus 12)
    12      partition_leader_epoch int32   assigned by the broker (KIP-101); not covered by the CRC
    16      magic                  int8    2; at the same offset in legacy message sets (v0/v1)
    17      crc                    uint32  CRC-32C of bytes 21..end
    21      attributes             int16   bits 0-2 codec, 3 timestamp type, 4 transactional,
                                           5 control, 6 delete horizon (KIP-534)
    23      last_offset_delta      int32
    27      base_timestamp         int64   first timestamp (the delete horizon when bit 6 is set)
    35      max_timestamp          int64
    43      producer_id            int64   -1 without idempotence (KIP-98)
    51      producer_epoch         int16
    53      base_sequence          int32
    57      records_count          int32
    61      records                        compressed as one block when the codec is not none
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from enum import IntEnum
from struct import Struct

from mockbroker_protocol.errors import CorruptRecordError, TruncatedError
from mockbroker_protocol.primitives import Buffer
from mockbroker_protocol.records.compression import Compression
from mockbroker_protocol.records.crc import crc32c

__all__ = [
    "ATTRIBUTES_OFFSET",
    "COMPRESSION_CODEC_MASK",
    "CONTROL_FLAG_MASK",
    "CRC_OFFSET",
    "DELETE_HORIZON_FLAG_MASK",
    "LOG_OVERHEAD",
    "MAGIC_OFFSET",
    "MAGIC_VALUE_V2",
    "NO_PARTITION_LEADER_EPOCH",
    "NO_PRODUCER_EPOCH",
    "NO_PRODUCER_ID",
    "NO_SEQUENCE",
    "NO_TIMESTAMP",
    "RECORD_BATCH_OVERHEAD",
    "TIMESTAMP_TYPE_MASK",
    "TRANSACTIONAL_FLAG_MASK",
    "RecordBatchHeader",
    "TimestampType",
    "TruncatedBatchError",
    "UnsupportedMagicError",
    "iter_batches",
    "parse_batch_header",
    "patch_base_offset",
    "patch_log_append_time",
    "patch_max_timestamp",
    "patch_partition_leader_epoch",
    "read_magic",
    "validate_batch",
]

# The whole header in one precompiled Struct: one unpack_from per batch on the produce path.
HEADER = Struct(">qiibIhiqqqhii")
RECORD_BATCH_OVERHEAD = HEADER.size  # 61
# base_offset + batch_length: the bytes batch_length does not count (Records.LOG_OVERHEAD).
LOG_OVERHEAD = 12

BASE_OFFSET_OFFSET = 0
LENGTH_OFFSET = 8
PARTITION_LEADER_EPOCH_OFFSET = 12
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
MAX_TIMESTAMP_OFFSET = 35
# Up to and including magic: the bytes shared by every message format (Records.HEADER_SIZE_UP_TO_MAGIC).
HEADER_SIZE_UP_TO_MAGIC = MAGIC_OFFSET + 1

MAGIC_VALUE_V2 = 2
# The smallest legacy (v0) message: crc, magic, attributes, key length, value length
# (LegacyRecord.RECORD_OVERHEAD_V0). A batch length below it is garbage whatever the magic.
_LEGACY_RECORD_OVERHEAD_V0 = 14
_MIN_V2_BATCH_LENGTH = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD  # 49

COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG_MASK = 0x10
CONTROL_FLAG_MASK = 0x20
DELETE_HORIZON_FLAG_MASK = 0x40

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1
NO_TIMESTAMP = -1
_INT32_MAX = 0x7FFFFFFF

_INT8 = Struct(">b")
_INT16 = Struct(">h")
_INT32 = Struct(">i")
_INT64 = Struct(">q")
_UINT32 = Struct(">I")


class TimestampType(IntEnum):
    """Bit 3 of the attributes (TimestampType.java): whose clock the timestamps are."""

    CREATE_TIME = 0
    LOG_APPEND_TIME = 1


class UnsupportedMagicError(CorruptRecordError):
    """A legacy message set (magic 0 or 1) where a v2 batch was expected. Java answers produce
    v3+ carrying one with InvalidRecordException ("Produce requests with version N are only
    allowed to contain record batches with magic version 2"), which is INVALID_RECORD (87)."""

    def __init__(self, magic: int, pos: int = 0) -> None:
        super().__init__(f"message set at byte {pos} has magic {magic}; only magic 2 is supported")
        self.magic = magic
        self.pos = pos


class TruncatedBatchError(CorruptRecordError, TruncatedError):
    """A buffer that ends inside a batch: corrupt for the broker (CORRUPT_MESSAGE), truncated
    for code that reads the DecodeError family generically."""


@dataclass(frozen=True, slots=True)
class RecordBatchHeader:
    """The 61-byte header of a v2 record batch, fields in wire order and named as in the spec."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def size_in_bytes(self) -> int:
        """The whole batch, header included."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def compression_type(self) -> int:
        """The raw codec id (0-7); see ``compression`` for the enum."""
        return self.attributes & COMPRESSION_CODEC_MASK

    @property
    def compression(self) -> Compression:
        """The codec; ids 5-7 are not codecs and raise CorruptRecordError (validate_batch rejects them)."""
        codec = self.attributes & COMPRESSION_CODEC_MASK
        if codec > Compression.ZSTD:
            raise CorruptRecordError(f"unknown compression codec id {codec}")
        return Compression(codec)

    @property
    def timestamp_type(self) -> TimestampType:
        return TimestampType.LOG_APPEND_TIME if self.attributes & TIMESTAMP_TYPE_MASK else TimestampType.CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG_MASK)

    @property
    def is_control_batch(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG_MASK)

    @property
    def has_delete_horizon_ms(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_FLAG_MASK)

    @property
    def delete_horizon_ms(self) -> int | None:
        """KIP-534: the log cleaner stores the tombstone delete horizon in base_timestamp."""
        return self.base_timestamp if self.attributes & DELETE_HORIZON_FLAG_MASK else None

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id > NO_PRODUCER_ID

    @property
    def last_sequence(self) -> int:
        """The sequence of the last record; sequences wrap at Int32.MAX to 0
        (DefaultRecordBatch.incrementSequence)."""
        base = self.base_sequence
        if base == NO_SEQUENCE:
            return NO_SEQUENCE
        delta = self.last_offset_delta
        if base > _INT32_MAX - delta:
            return delta - (_INT32_MAX - base) - 1
        return base + delta


def read_magic(buf: Buffer, pos: int = 0) -> int:
    """The magic byte of the batch or legacy message set at ``pos``: every format has it at
    offset 16 (v0/v1: offset, size, crc, magic), so the broker can tell a legacy message set from
    a v2 batch before parsing either."""
    if len(buf) - pos < HEADER_SIZE_UP_TO_MAGIC:
        raise TruncatedBatchError(f"{len(buf) - pos} bytes at {pos} cannot hold a magic byte")
    magic: int = _INT8.unpack_from(buf, pos + MAGIC_OFFSET)[0]
    return magic


def _bad_magic(magic: int, pos: int) -> CorruptRecordError:
    if magic in (0, 1):
        return UnsupportedMagicError(magic, pos)
    # ByteBufferLogInputStream: "Invalid magic found in record".
    return CorruptRecordError(f"invalid magic {magic} in the batch at byte {pos}")


def parse_batch_header(buf: Buffer, pos: int = 0) -> RecordBatchHeader:
    """The header of the v2 batch at ``pos``. Checks only the magic (a legacy message set raises
    UnsupportedMagicError); lengths and the CRC are validate_batch's job."""
    available = len(buf) - pos
    if available >= RECORD_BATCH_OVERHEAD:
        fields = HEADER.unpack_from(buf, pos)
        if fields[3] != MAGIC_VALUE_V2:
            raise _bad_magic(fields[3], pos)
        return RecordBatchHeader(*fields)
    # Report a legacy message set as such even when it is shorter than a v2 header.
    magic = read_magic(buf, pos)
    if magic != MAGIC_VALUE_V2:
        raise _bad_magic(magic, pos)
    raise TruncatedBatchError(f"{available} bytes at {pos} cannot hold a {RECORD_BATCH_OVERHEAD}-byte batch header")


def validate_batch(buf: Buffer, header: RecordBatchHeader | None = None) -> RecordBatchHeader:
    """Check that ``buf`` is exactly one sound v2 batch and return its header: magic 2, a length
    that matches the buffer, a known codec, a non-negative count and the CRC (the checks of
    DefaultRecordBatch.ensureValid). Raises CorruptRecordError (UnsupportedMagicError for
    magic 0/1, TruncatedBatchError when the buffer is short).

    ``header``: this batch's header when already parsed (iter_batches yields it with the slice),
    to save parsing it twice on the produce path; a frozen header costs a few microseconds."""
    if header is None:
        header = parse_batch_header(buf)
    size = header.batch_length + LOG_OVERHEAD
    if header.batch_length < _MIN_V2_BATCH_LENGTH:
        raise CorruptRecordError(
            f"record batch is corrupt (the size {size} is smaller than the minimum allowed overhead {RECORD_BATCH_OVERHEAD})"
        )
    if size != len(buf):
        if size > len(buf):
            raise TruncatedBatchError(f"batch of {size} bytes in a buffer of {len(buf)}")
        raise CorruptRecordError(f"batch of {size} bytes followed by {len(buf) - size} more bytes")
    # KIP-98: the CRC covers the attributes to the end of the batch, so the broker can assign
    # base_offset and partition_leader_epoch without recomputing it.
    computed = crc32c(memoryview(buf)[ATTRIBUTES_OFFSET:size])
    if computed != header.crc:
        raise CorruptRecordError(f"record is corrupt (stored crc = {header.crc}, computed crc = {computed})")
    if header.attributes & COMPRESSION_CODEC_MASK > Compression.ZSTD:
        raise CorruptRecordError(f"unknown compression codec id {header.attributes & COMPRESSION_CODEC_MASK}")
    if header.records_count < 0:
        raise CorruptRecordError(f"invalid record count {header.records_count}")
    return header


def iter_batches(buf: Buffer) -> Iterator[tuple[RecordBatchHeader, memoryview]]:
    """Walk a records field: each complete v2 batch's header and a zero-copy slice of it.

    A partial batch at the end ends the walk without an error: fetch responses may cut the last
    batch (KIP-74), and Kafka trims a produce request's trailing partial bytes the same way
    (ByteBufferLogInputStream returns null for it). Callers that care compare the slices' total
    length with len(buf). Batches are not validated (no CRC check): see validate_batch.
    Like ByteBufferLogInputStream.nextBatchSize: a length below the smallest legacy message and a
    magic outside 0-2 are corrupt even in a partial tail; a complete legacy message set raises
    UnsupportedMagicError.
    """
    view = buf if isinstance(buf, memoryview) else memoryview(buf)
    n = len(view)
    pos = 0
    while n - pos >= LOG_OVERHEAD:
        length: int = _INT32.unpack_from(view, pos + LENGTH_OFFSET)[0]
        if length < _LEGACY_RECORD_OVERHEAD_V0:
            raise CorruptRecordError(f"batch at byte {pos} has length {length}, below the minimum {_LEGACY_RECORD_OVERHEAD_V0}")
        if n - pos < HEADER_SIZE_UP_TO_MAGIC:
            return
        magic: int = _INT8.unpack_from(view, pos + MAGIC_OFFSET)[0]
        if magic < 0 or magic > MAGIC_VALUE_V2:
            raise _bad_magic(magic, pos)
        end = pos + LOG_OVERHEAD + length
        if end > n:
            return
        if magic != MAGIC_VALUE_V2:
            raise UnsupportedMagicError(magic, pos)
        if length < _MIN_V2_BATCH_LENGTH:
            raise CorruptRecordError(f"batch at byte {pos} has length {length}, below the v2 minimum {_MIN_V2_BATCH_LENGTH}")
        yield RecordBatchHeader(*HEADER.unpack_from(view, pos)), view[pos:end]
        pos = end


# -- in-place patches ---------------------------------------------------------------------------
# These write into the caller's buffer: a bytearray or a writable memoryview (a memoryview of
# bytes is read-only and raises TypeError). Validate the batch first: a patch that recomputes the
# CRC would otherwise launder a corrupt batch.


def _batch_end(buf: bytearray | memoryview, pos: int) -> int:
    if len(buf) - pos < RECORD_BATCH_OVERHEAD:
        raise TruncatedBatchError(f"{len(buf) - pos} bytes at {pos} cannot hold a {RECORD_BATCH_OVERHEAD}-byte batch header")
    length: int = _INT32.unpack_from(buf, pos + LENGTH_OFFSET)[0]
    end = pos + LOG_OVERHEAD + length
    if length < _MIN_V2_BATCH_LENGTH or end > len(buf):
        raise TruncatedBatchError(f"batch length {length} at {pos} does not fit a buffer of {len(buf)} bytes")
    return end


def patch_base_offset(buf: bytearray | memoryview, base_offset: int, pos: int = 0) -> None:
    """Write the batch's base offset in place (the broker assigns offsets on append). The CRC
    does not cover base_offset (KIP-98), so it stays valid and nothing else is touched."""
    if len(buf) - pos < LOG_OVERHEAD:
        raise TruncatedBatchError(f"{len(buf) - pos} bytes at {pos} cannot hold a base offset")
    _INT64.pack_into(buf, pos + BASE_OFFSET_OFFSET, base_offset)


def patch_partition_leader_epoch(buf: bytearray | memoryview, partition_leader_epoch: int, pos: int = 0) -> None:
    """Write the partition leader epoch in place (the leader stamps its epoch on append, KIP-101).
    Outside the CRC by design, so the CRC stays valid."""
    if len(buf) - pos < HEADER_SIZE_UP_TO_MAGIC:
        raise TruncatedBatchError(f"{len(buf) - pos} bytes at {pos} cannot hold a partition leader epoch")
    _INT32.pack_into(buf, pos + PARTITION_LEADER_EPOCH_OFFSET, partition_leader_epoch)


def patch_max_timestamp(
    buf: bytearray | memoryview, timestamp_type: TimestampType | int, max_timestamp: int, pos: int = 0
) -> None:
    """Set the timestamp type bit and max_timestamp in place and recompute the CRC, which covers
    both (DefaultRecordBatch.setMaxTimestamp; nothing is written when neither changes)."""
    end = _batch_end(buf, pos)
    attributes, current_max = _read_attributes_and_max_timestamp(buf, pos)
    new_attributes = attributes | TIMESTAMP_TYPE_MASK if timestamp_type else attributes & ~TIMESTAMP_TYPE_MASK
    if new_attributes == attributes and current_max == max_timestamp:
        return
    _INT16.pack_into(buf, pos + ATTRIBUTES_OFFSET, new_attributes)
    _INT64.pack_into(buf, pos + MAX_TIMESTAMP_OFFSET, max_timestamp)
    _UINT32.pack_into(buf, pos + CRC_OFFSET, crc32c(memoryview(buf)[pos + ATTRIBUTES_OFFSET : end]))


def patch_log_append_time(buf: bytearray | memoryview, log_append_time_ms: int, pos: int = 0) -> None:
    """Stamp a batch with the broker's clock for a topic with message.timestamp.type=LogAppendTime:
    set the LOG_APPEND_TIME bit and max_timestamp = now, leaving the records alone (readers then
    give every record max_timestamp). That is what LogValidator does in place for v2 batches; as
    both fields are under the CRC, the CRC is recomputed."""
    patch_max_timestamp(buf, TimestampType.LOG_APPEND_TIME, log_append_time_ms, pos)


def _read_attributes_and_max_timestamp(buf: bytearray | memoryview, pos: int) -> tuple[int, int]:
    attributes: int = _INT16.unpack_from(buf, pos + ATTRIBUTES_OFFSET)[0]
    max_timestamp: int = _INT64.unpack_from(buf, pos + MAX_TIMESTAMP_OFFSET)[0]
    return attributes, max_timestamp
