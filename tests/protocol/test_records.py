"""Record batch v2: CRC-32C, codecs, header parse/validate/patch, decode/build, kafka-python differential, fuzzing."""

from __future__ import annotations

import contextlib
import struct
from typing import Any

import kafka.codec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords, MemoryRecordsBuilder

from mockbroker_protocol.errors import CorruptRecordError, DecodeError, TruncatedError
from mockbroker_protocol.records import (
    Compression,
    ControlRecordType,
    Record,
    RecordBatchHeader,
    SimpleRecord,
    TimestampType,
    TruncatedBatchError,
    UnsupportedMagicError,
    build_batch,
    build_end_txn_marker,
    compress,
    crc32c,
    decode_batch,
    decode_batches,
    decompress,
    iter_batches,
    parse_batch_header,
    parse_control_record,
    patch_base_offset,
    patch_log_append_time,
    patch_partition_leader_epoch,
    read_magic,
    validate_batch,
)
from mockbroker_protocol.records import crc as crc_module
from mockbroker_protocol.records.compression import (
    XERIAL_MAGIC,
    snappy_decompress,
    snappy_raw_compress,
    snappy_xerial_compress,
)

FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FUZZ = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ALL_CODECS = list(Compression)
CODEC_IDS = [c.name for c in ALL_CODECS]
BASE_TS = 1_700_000_000_000


def sample_records(n: int = 5) -> list[SimpleRecord]:
    # Repetitive values, so that every codec actually shrinks them (kafka-python falls back to
    # an uncompressed batch otherwise, and the codec would go untested).
    return [
        SimpleRecord(
            key=None if i % 3 == 0 else f"key-{i}".encode(),
            value=None if i == 2 else b"value " * (10 + i),
            headers=[("trace", b"abc"), ("null", None)] if i % 2 else [],
            timestamp=BASE_TS + i * 7 - (20 if i == 3 else 0),
        )
        for i in range(n)
    ]


def as_tuples(records: list[Record]) -> list[tuple[Any, ...]]:
    return [(r.offset, r.timestamp, r.key, r.value, [tuple(h) for h in r.headers]) for r in records]


def kafka_python_records(data: bytes) -> list[tuple[Any, ...]]:
    """Every record of a records field as kafka-python sees it, CRCs checked."""
    out: list[tuple[Any, ...]] = []
    mr = MemoryRecords(data)
    while mr.has_next():
        batch = mr.next_batch()
        assert isinstance(batch, DefaultRecordBatch)
        assert batch.validate_crc()
        out.extend((r.offset, r.timestamp, r.key, r.value, [tuple(h) for h in r.headers]) for r in batch)
    return out


def fix_crc(buf: bytearray) -> None:
    struct.pack_into(">I", buf, 17, crc32c(memoryview(buf)[21:]))


# -- CRC-32C ------------------------------------------------------------------------------------

# RFC 3720 appendix B.4 and the usual check value.
CRC_VECTORS = [
    (b"", 0),
    (b"123456789", 0xE3069283),
    (bytes(32), 0x8A9136AA),
    (b"\xff" * 32, 0x62A8AB43),
    (bytes(range(32)), 0x46DD794E),
    (bytes(range(31, -1, -1)), 0x113FDB5C),
]


@pytest.mark.parametrize(("data", "expected"), CRC_VECTORS)
def test_crc32c_known_vectors(data: bytes, expected: int) -> None:
    assert crc32c(data) == expected
    assert crc_module.crc32c_python(data) == expected
    assert crc32c(memoryview(bytearray(data))) == expected


def test_crc32c_uses_the_c_package_here() -> None:
    assert crc_module.CRC32C_BACKEND == "crc32c"


@FAST
@given(st.binary(max_size=300), st.binary(max_size=50))
def test_crc32c_python_fallback_agrees_with_c(data: bytes, more: bytes) -> None:
    assert crc_module.crc32c_python(data) == crc32c(data)
    # Chaining: the fallback continues from a previous value.
    assert crc_module.crc32c_python(more, crc_module.crc32c_python(data)) == crc32c(data + more)


# -- compression --------------------------------------------------------------------------------

PAYLOADS = [b"", b"x", b"hello kafka " * 50, bytes(range(256)) * 400]  # the last spans several blocks


@pytest.mark.parametrize("codec", ALL_CODECS, ids=CODEC_IDS)
@pytest.mark.parametrize("payload", PAYLOADS, ids=["empty", "one", "text", "100k"])
def test_codec_round_trip(codec: Compression, payload: bytes) -> None:
    packed = compress(codec, payload)
    assert decompress(codec, packed) == payload
    assert decompress(int(codec), memoryview(packed)) == payload


def test_snappy_xerial_framing_and_raw_detection() -> None:
    payload = bytes(range(256)) * 300  # 76800 bytes: three 32 KiB xerial blocks
    framed = snappy_xerial_compress(payload)
    assert framed[:16] == XERIAL_MAGIC + b"\x00\x00\x00\x01\x00\x00\x00\x01"
    blocks, pos = 0, 16
    while pos < len(framed):
        (n,) = struct.unpack_from(">i", framed, pos)
        pos += 4 + n
        blocks += 1
    assert (blocks, pos) == (3, len(framed))
    assert compress(Compression.SNAPPY, payload) == framed  # what the Java client writes
    raw = snappy_raw_compress(payload)  # what librdkafka writes
    assert decompress(Compression.SNAPPY, raw) == payload
    assert decompress(Compression.SNAPPY, framed) == payload
    # xerial's SnappyInputStream also reads concatenated streams.
    assert snappy_decompress(framed + snappy_xerial_compress(b"tail")) == payload + b"tail"


def test_snappy_xerial_accepts_little_endian_version_fields() -> None:
    framed = bytearray(snappy_xerial_compress(b"abc" * 100))
    framed[8:16] = b"\x01\x00\x00\x00\x01\x00\x00\x00"  # as Redpanda writes them
    assert snappy_decompress(framed) == b"abc" * 100


def test_lz4_frame_has_independent_blocks() -> None:
    packed = compress(Compression.LZ4, b"data " * 1000)
    assert packed[:4] == b"\x04\x22\x4d\x18"
    flg = packed[4]
    assert flg >> 6 == 1  # frame version 1
    assert flg & 0x20  # block independence: Java's reader rejects linked blocks
    assert not flg & 0x04  # no content checksum
    assert not flg & 0x03  # reserved bits


@pytest.mark.parametrize("codec", [c for c in ALL_CODECS if c], ids=[c.name for c in ALL_CODECS if c])
@pytest.mark.parametrize(
    "garbage",
    [b"", b"\x00", b"not compressed at all", XERIAL_MAGIC + b"\x00" * 8 + b"\x00\x00\x00\x09abc", b"\xff" * 40],
)
def test_decompress_garbage_is_corrupt(codec: Compression, garbage: bytes) -> None:
    if codec is Compression.SNAPPY and garbage == b"\x00":
        assert decompress(codec, garbage) == b""  # a valid raw block of nothing
        return
    with pytest.raises(CorruptRecordError):
        decompress(codec, garbage)


def test_decompress_unknown_codec_is_corrupt() -> None:
    with pytest.raises(CorruptRecordError):
        decompress(5, b"x")


def test_snappy_block_claiming_a_huge_length_is_corrupt() -> None:
    with pytest.raises(CorruptRecordError, match="claims"):
        decompress(Compression.SNAPPY, b"\xff\xff\xff\xff\x0f\x00")


@pytest.mark.parametrize("codec", ALL_CODECS, ids=CODEC_IDS)
@FUZZ
@given(data=st.binary(max_size=200))
def test_fuzz_decompress_raises_only_corrupt(codec: Compression, data: bytes) -> None:
    with contextlib.suppress(CorruptRecordError):
        decompress(codec, data)


@pytest.mark.parametrize("codec", [c for c in ALL_CODECS if c], ids=[c.name for c in ALL_CODECS if c])
@FAST
@given(data=st.data())
def test_fuzz_decompress_mutated_streams(codec: Compression, data: st.DataObject) -> None:
    packed = bytearray(compress(codec, b"some records " * 40))
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(packed) - 1))
        packed[i] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(packed)))
    with contextlib.suppress(CorruptRecordError):
        decompress(codec, bytes(packed[:cut]))


# -- header parsing -----------------------------------------------------------------------------


def test_parse_batch_header_fields_and_properties() -> None:
    data = build_batch(
        sample_records(4),
        base_offset=100,
        compression=Compression.ZSTD,
        producer_id=7,
        producer_epoch=3,
        base_sequence=0x7FFFFFFE,
        is_transactional=True,
        partition_leader_epoch=9,
    )
    h = parse_batch_header(data)
    assert isinstance(h, RecordBatchHeader)
    assert (h.base_offset, h.partition_leader_epoch, h.magic) == (100, 9, 2)
    assert h.size_in_bytes == h.batch_length + 12 == len(data)
    assert (h.last_offset_delta, h.last_offset, h.next_offset) == (3, 103, 104)
    assert h.compression is Compression.ZSTD and h.compression_type == 4
    assert h.timestamp_type is TimestampType.CREATE_TIME
    assert h.is_transactional and not h.is_control_batch
    assert not h.has_delete_horizon_ms and h.delete_horizon_ms is None
    assert (h.base_timestamp, h.max_timestamp) == (BASE_TS, BASE_TS + 14)  # record 3 goes back in time
    assert (h.producer_id, h.producer_epoch, h.base_sequence, h.records_count) == (7, 3, 0x7FFFFFFE, 4)
    assert h.has_producer_id
    # Sequences wrap from Int32.MAX to 0 (DefaultRecordBatch.incrementSequence).
    assert h.last_sequence == 1
    assert validate_batch(data) == h
    # Works on a memoryview at an offset, too.
    assert parse_batch_header(memoryview(b"xx" + data), 2) == h


def test_header_agrees_with_kafka_python() -> None:
    data = build_batch(sample_records(), base_offset=5, producer_id=1, producer_epoch=0, base_sequence=10)
    ours = parse_batch_header(data)
    theirs = DefaultRecordBatch(data)
    assert (ours.base_offset, ours.last_offset, ours.next_offset) == (theirs.base_offset, theirs.last_offset, theirs.next_offset)
    assert (ours.crc, ours.attributes, ours.base_timestamp, ours.max_timestamp) == (
        theirs.crc, theirs.attributes, theirs.first_timestamp, theirs.max_timestamp,
    )
    assert (ours.producer_id, ours.producer_epoch, ours.base_sequence, ours.last_sequence, ours.records_count) == (
        theirs.producer_id, theirs.producer_epoch, theirs.base_sequence, theirs.last_sequence, theirs.records_count,
    )


def test_delete_horizon_bit() -> None:
    buf = bytearray(build_batch(sample_records(1)))
    struct.pack_into(">h", buf, 21, 0x40)
    h = parse_batch_header(buf)
    assert h.has_delete_horizon_ms and h.delete_horizon_ms == h.base_timestamp


def test_truncated_header() -> None:
    data = build_batch(sample_records(1))
    for cut in (0, 5, 16, 17, 60):
        with pytest.raises(TruncatedBatchError) as info:
            parse_batch_header(data[:cut])
        assert isinstance(info.value, TruncatedError) and isinstance(info.value, CorruptRecordError)


@pytest.mark.parametrize("magic", [0, 1])
def test_legacy_message_sets_are_reported_by_magic(magic: int) -> None:
    builder = LegacyRecordBatchBuilder(magic=magic, compression_type=0, batch_size=1 << 20)
    builder.append(0, timestamp=BASE_TS, key=b"k", value=b"v")
    legacy = bytes(builder.build())
    assert read_magic(legacy) == magic
    assert read_magic(b"pad" + legacy, 3) == magic
    for call in (parse_batch_header, validate_batch, decode_batch, lambda b: list(iter_batches(b))):
        with pytest.raises(UnsupportedMagicError) as info:
            call(legacy)
        assert info.value.magic == magic
    # A legacy message shorter than a v2 header is still reported by its magic.
    assert len(legacy) < 61
    with pytest.raises(TruncatedBatchError):
        read_magic(legacy[:16])


def test_unknown_magic_is_corrupt_not_unsupported() -> None:
    buf = bytearray(build_batch(sample_records(1)))
    buf[16] = 3
    with pytest.raises(CorruptRecordError) as info:
        parse_batch_header(buf)
    assert not isinstance(info.value, UnsupportedMagicError)
    with pytest.raises(CorruptRecordError):
        list(iter_batches(buf))


# -- validation ---------------------------------------------------------------------------------


def test_validate_accepts_a_sound_batch() -> None:
    data = build_batch(sample_records(), compression=Compression.GZIP)
    assert validate_batch(data).records_count == 5
    assert validate_batch(memoryview(bytearray(data))).records_count == 5


def test_crc_tampering_is_corrupt() -> None:
    data = build_batch(sample_records(3))
    for i in range(17, len(data)):  # the CRC field itself and everything it covers
        buf = bytearray(data)
        buf[i] ^= 0x01
        with pytest.raises(CorruptRecordError):
            validate_batch(buf)
        with pytest.raises(CorruptRecordError):
            decode_batch(buf)


def test_base_offset_and_leader_epoch_are_outside_the_crc() -> None:
    buf = bytearray(build_batch(sample_records(3)))
    for i in (*range(8), *range(12, 16)):
        buf[i] ^= 0x5A
    validate_batch(buf)


def test_length_inconsistencies() -> None:
    data = build_batch(sample_records(3))
    with pytest.raises(TruncatedBatchError):
        validate_batch(data[:-1])
    with pytest.raises(CorruptRecordError, match="followed by"):
        validate_batch(data + b"\x00")
    buf = bytearray(data)
    struct.pack_into(">i", buf, 8, 48)  # below the v2 minimum of 49
    with pytest.raises(CorruptRecordError, match="minimum"):
        validate_batch(buf)


def test_unknown_codec_and_negative_count_are_corrupt() -> None:
    buf = bytearray(build_batch(sample_records(1)))
    struct.pack_into(">h", buf, 21, 5)
    fix_crc(buf)
    with pytest.raises(CorruptRecordError, match="codec"):
        validate_batch(buf)
    with pytest.raises(CorruptRecordError):
        parse_batch_header(buf).compression  # noqa: B018
    buf = bytearray(build_batch(sample_records(1)))
    struct.pack_into(">i", buf, 57, -1)
    fix_crc(buf)
    with pytest.raises(CorruptRecordError, match="count"):
        validate_batch(buf)


# -- in-place patches ---------------------------------------------------------------------------


def test_patch_base_offset_in_place_on_a_memoryview() -> None:
    frame = bytearray(b"request-frame-prefix" + build_batch(sample_records(3), compression=Compression.LZ4) + b"tail")
    view = memoryview(frame)[20:-4]
    before_crc = parse_batch_header(view).crc
    patch_base_offset(view, 1_000_000)
    assert struct.unpack_from(">q", frame, 20)[0] == 1_000_000  # written into the frame itself
    h = validate_batch(view)  # CRC untouched and still valid
    assert h.crc == before_crc and h.base_offset == 1_000_000
    assert [r.offset for r in decode_batch(view)[1]] == [1_000_000, 1_000_001, 1_000_002]
    assert frame.startswith(b"request-frame-prefix") and frame.endswith(b"tail")
    # pos addresses a batch inside a larger buffer.
    patch_base_offset(frame, 42, pos=20)
    assert parse_batch_header(frame, 20).base_offset == 42


def test_patch_partition_leader_epoch_keeps_the_crc() -> None:
    buf = bytearray(build_batch(sample_records(2)))
    patch_partition_leader_epoch(memoryview(buf), 17)
    assert validate_batch(buf).partition_leader_epoch == 17


def test_patch_log_append_time_recomputes_the_crc() -> None:
    original = build_batch(sample_records(4), compression=Compression.SNAPPY, base_offset=10)
    buf = bytearray(original)
    patch_log_append_time(memoryview(buf), BASE_TS + 99_999)
    h = validate_batch(buf)
    assert h.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert h.max_timestamp == BASE_TS + 99_999
    assert h.base_timestamp == BASE_TS  # records and base timestamp untouched, as in LogValidator
    assert buf[61:] == original[61:]
    assert [r.timestamp for r in decode_batch(buf)[1]] == [BASE_TS + 99_999] * 4
    # kafka-python agrees: every record carries the log append time.
    theirs = DefaultRecordBatch(bytes(buf))
    assert theirs.validate_crc() and theirs.timestamp_type == 1
    # Unchanged values write nothing (DefaultRecordBatch.setMaxTimestamp).
    again = bytes(buf)
    patch_log_append_time(buf, BASE_TS + 99_999)
    assert bytes(buf) == again


def test_patches_refuse_read_only_and_short_buffers() -> None:
    data = build_batch(sample_records(1))
    with pytest.raises(TypeError):
        patch_base_offset(memoryview(data), 1)
    with pytest.raises(TruncatedBatchError):
        patch_base_offset(bytearray(5), 1)
    with pytest.raises(TruncatedBatchError):
        patch_log_append_time(bytearray(data[:-1]), 1)


# -- walking a records field --------------------------------------------------------------------


def test_iter_batches_over_several_batches() -> None:
    batches = [
        build_batch(sample_records(2), base_offset=0),
        build_batch(sample_records(3), base_offset=2, compression=Compression.GZIP),
        build_end_txn_marker(commit=True, producer_id=4, producer_epoch=0, coordinator_epoch=1, timestamp=BASE_TS, base_offset=5),
    ]
    field = b"".join(batches)
    walked = list(iter_batches(field))
    assert [bytes(v) for _, v in walked] == batches
    assert [h.base_offset for h, _ in walked] == [0, 2, 5]
    assert all(isinstance(v, memoryview) and v.obj is not None for _, v in walked)
    # The produce path hands the yielded header to validate_batch instead of parsing twice.
    assert [validate_batch(v, h) for h, v in walked] == [h for h, _ in walked]
    decoded = decode_batches(field)
    assert [r.offset for _, records in decoded for r in records] == [0, 1, 2, 3, 4, 5]
    assert list(iter_batches(b"")) == []


def test_iter_batches_stops_at_a_truncated_tail() -> None:
    first = build_batch(sample_records(2))
    second = build_batch(sample_records(3), base_offset=2)
    field = first + second
    for cut in range(len(first), len(field)):
        walked = list(iter_batches(field[:cut]))
        assert [bytes(v) for _, v in walked] == [first]
    assert len(list(iter_batches(field))) == 2
    for cut in range(len(first)):
        assert list(iter_batches(first[:cut])) == []


def test_iter_batches_rejects_impossible_lengths() -> None:
    buf = bytearray(build_batch(sample_records(1)))
    struct.pack_into(">i", buf, 8, 13)  # below the smallest legacy message: corrupt even as a tail
    with pytest.raises(CorruptRecordError):
        list(iter_batches(buf))
    struct.pack_into(">i", buf, 8, 30)  # a complete v2 batch shorter than a v2 header
    with pytest.raises(CorruptRecordError):
        list(iter_batches(buf[:42]))


# -- decode / build -----------------------------------------------------------------------------


@pytest.mark.parametrize("codec", ALL_CODECS, ids=CODEC_IDS)
def test_build_decode_round_trip_every_codec(codec: Compression) -> None:
    records = sample_records(6)
    data = build_batch(records, base_offset=50, compression=codec, partition_leader_epoch=2)
    h, decoded = decode_batch(data)
    assert h.compression is codec and h.records_count == 6
    assert [(r.key, r.value, r.headers, r.timestamp) for r in decoded] == [
        (s.key, s.value, list(s.headers), s.timestamp) for s in records
    ]
    assert [r.offset for r in decoded] == list(range(50, 56))
    assert [r.offset_delta for r in decoded] == list(range(6))
    assert [r.timestamp_delta for r in decoded] == [s.timestamp - BASE_TS for s in records if s.timestamp is not None]
    # Decoded records rebuild to the same batch.
    assert build_batch(decoded, base_offset=50, compression=codec, partition_leader_epoch=2) == data


def test_build_defaults_and_overrides() -> None:
    data = build_batch([SimpleRecord(value=b"a"), SimpleRecord(value=b"b")], base_timestamp=BASE_TS)
    h, records = decode_batch(data)
    assert (h.base_timestamp, h.max_timestamp, h.partition_leader_epoch, h.producer_id) == (BASE_TS, BASE_TS, -1, -1)
    assert [r.timestamp for r in records] == [BASE_TS, BASE_TS]
    h, records = decode_batch(build_batch([SimpleRecord(value=b"a")]))
    assert (h.base_timestamp, records[0].timestamp) == (-1, -1)  # NO_TIMESTAMP, no clock in mockbroker_protocol/
    h, records = decode_batch(build_batch([], last_offset_delta=4))
    assert (h.records_count, h.last_offset_delta, records) == (0, 4, [])
    # Records keep their offset deltas (a compacted batch with gaps).
    gaps = [Record(offset=0, timestamp=BASE_TS, key=None, value=b"x", offset_delta=d) for d in (0, 3, 7)]
    h, records = decode_batch(build_batch(gaps, base_offset=10))
    assert [r.offset for r in records] == [10, 13, 17] and h.last_offset == 17
    with pytest.raises(ValueError):
        build_batch([SimpleRecord(value=b"x")], producer_epoch=1 << 20)


def test_log_append_time_batches_give_every_record_the_max_timestamp() -> None:
    data = build_batch(sample_records(3), timestamp_type=TimestampType.LOG_APPEND_TIME, max_timestamp=BASE_TS + 5000)
    h, records = decode_batch(data)
    assert h.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert {r.timestamp for r in records} == {BASE_TS + 5000}
    assert {t for _, t, *_ in kafka_python_records(data)} == {BASE_TS + 5000}


@pytest.mark.parametrize("commit", [True, False])
def test_end_txn_marker(commit: bool) -> None:
    data = build_end_txn_marker(
        commit=commit, producer_id=77, producer_epoch=3, coordinator_epoch=12, timestamp=BASE_TS, base_offset=40
    )
    h, records = decode_batch(data)
    assert h.is_control_batch and h.is_transactional and h.base_sequence == -1
    assert (h.producer_id, h.producer_epoch, h.base_offset, h.records_count) == (77, 3, 40, 1)
    control = parse_control_record(records[0])
    assert control.control_type == (ControlRecordType.COMMIT if commit else ControlRecordType.ABORT)
    assert (control.version, control.coordinator_epoch) == (0, 12)
    # kafka-python reads it as a control record of the right kind.
    (theirs,) = list(DefaultRecordBatch(data))
    assert theirs.commit is commit and theirs.abort is not commit and theirs.offset == 40


def test_parse_control_record_rejects_bad_keys() -> None:
    for key in (None, b"\x00", b"\xff\xff\x00\x01"):
        with pytest.raises(CorruptRecordError):
            parse_control_record(Record(offset=0, timestamp=0, key=key, value=b"\x00\x00\x00\x00\x00\x00"))
    with pytest.raises(CorruptRecordError):
        parse_control_record(Record(offset=0, timestamp=0, key=b"\x00\x00\x00\x01", value=b"\x00"))
    leader_change = parse_control_record(Record(offset=0, timestamp=0, key=b"\x00\x00\x00\x02", value=None))
    assert (leader_change.control_type, leader_change.coordinator_epoch) == (ControlRecordType.LEADER_CHANGE, None)


def test_record_structure_errors_are_corrupt() -> None:
    # A record whose declared length is one byte longer than its fields.
    buf = bytearray(build_batch([SimpleRecord(key=b"k", value=b"v", timestamp=0)]))
    assert buf[61] == 2 * 8  # zigzag(8)
    buf[61] = 2 * 9
    buf += b"\x00"
    struct.pack_into(">i", buf, 8, len(buf) - 12)
    fix_crc(buf)
    with pytest.raises(CorruptRecordError, match="record"):
        decode_batch(buf)
    # A declared count larger than the records present.
    buf = bytearray(build_batch([SimpleRecord(value=b"v" * 20, timestamp=0)]))
    struct.pack_into(">i", buf, 57, 2)
    fix_crc(buf)
    with pytest.raises(CorruptRecordError):
        decode_batch(buf)
    # Bytes left over after the declared count (DefaultRecordBatch: "records still remaining").
    buf = bytearray(build_batch([SimpleRecord(value=b"v", timestamp=0)] * 2))
    struct.pack_into(">i", buf, 57, 1)
    fix_crc(buf)
    with pytest.raises(CorruptRecordError, match="left after"):
        decode_batch(buf)


def test_header_keys_that_are_not_utf8_survive_a_round_trip() -> None:
    # Java decodes header keys leniently; ours keeps the bytes (surrogateescape).
    buf = bytearray(build_batch([SimpleRecord(value=b"v", headers=[("ab", b"1")], timestamp=0)]))
    i = buf.index(b"ab")
    buf[i] = 0xFF
    fix_crc(buf)
    (record,) = decode_batch(buf)[1]
    assert build_batch([record]) == bytes(buf)


# Hypothesis strategies for records.
keys = st.none() | st.binary(max_size=20)
header_lists = st.lists(st.tuples(st.text(max_size=8), st.none() | st.binary(max_size=10)), max_size=3)
simple_records = st.builds(
    SimpleRecord,
    key=keys,
    value=st.none() | st.binary(max_size=60),
    headers=header_lists,
    timestamp=st.integers(BASE_TS - 10_000, BASE_TS + 10_000),
)


@pytest.mark.parametrize("codec", ALL_CODECS, ids=CODEC_IDS)
@FAST
@given(records=st.lists(simple_records, min_size=1, max_size=8), base_offset=st.integers(0, 2**40))
def test_random_round_trip(codec: Compression, records: list[SimpleRecord], base_offset: int) -> None:
    data = build_batch(records, base_offset=base_offset, compression=codec)
    h, decoded = decode_batch(data)
    assert h.max_timestamp == max(r.timestamp for r in records if r.timestamp is not None)
    assert [(r.offset, r.key, r.value, r.headers, r.timestamp) for r in decoded] == [
        (base_offset + i, s.key, s.value, list(s.headers), s.timestamp) for i, s in enumerate(records)
    ]


# -- differential against kafka-python ----------------------------------------------------------


def test_kafka_python_uses_the_real_codec_libraries() -> None:
    # kafka.codec picks its codecs at import: python-snappy, lz4.frame and zstandard (the `test`
    # extra). Without them the differential tests below would fail on "codec not found"; this says
    # so directly. lz4.frame and zstandard are C libraries independent of our cramjam; python-snappy
    # 0.7 wraps cramjam's raw snappy, but kafka-python's xerial framing around it is its own.
    import lz4.frame
    import snappy
    import zstandard

    assert kafka.codec.has_snappy() and kafka.codec.snappy is snappy
    assert kafka.codec.has_lz4() and kafka.codec.lz4 is lz4.frame
    assert kafka.codec.has_zstd() and kafka.codec.zstd is zstandard


def kafka_python_build(
    records: list[SimpleRecord], codec: int = 0, transactional: bool = False, producer_id: int = -1,
    producer_epoch: int = -1, base_sequence: int = -1,
) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=codec, is_transactional=transactional, producer_id=producer_id,
        producer_epoch=producer_epoch, base_sequence=base_sequence, batch_size=1 << 30,
    )
    for i, r in enumerate(records):
        assert builder.append(i, timestamp=r.timestamp, key=r.key, value=r.value, headers=list(r.headers)) is not None
    return bytes(builder.build())


@FAST
@given(
    records=st.lists(simple_records, min_size=1, max_size=8),
    producer=st.sampled_from([(-1, -1, -1, False), (1234, 5, 42, False), (99, 0, 0, True)]),
)
def test_uncompressed_bytes_equal_kafka_python(records: list[SimpleRecord], producer: tuple[int, int, int, bool]) -> None:
    producer_id, producer_epoch, base_sequence, transactional = producer
    theirs = kafka_python_build(records, 0, transactional, producer_id, producer_epoch, base_sequence)
    ours = build_batch(
        records,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        is_transactional=transactional,
        partition_leader_epoch=0,  # kafka-python leaves it 0 for the broker to set
    )
    assert ours == theirs


@pytest.mark.parametrize("codec", ALL_CODECS, ids=CODEC_IDS)
def test_we_decode_kafka_python_batches(codec: Compression) -> None:
    records = sample_records(8)
    builder = MemoryRecordsBuilder(magic=2, compression_type=int(codec), batch_size=1 << 20)
    for r in records:
        builder.append(timestamp=r.timestamp, key=r.key, value=r.value, headers=list(r.headers))
    builder.close()
    data = bytes(builder.buffer())
    h, decoded = decode_batch(data)
    assert h.compression is codec  # the data compresses, so kafka-python did not fall back to none
    assert as_tuples(decoded) == kafka_python_records(data)


@pytest.mark.parametrize("codec", ALL_CODECS, ids=CODEC_IDS)
def test_kafka_python_decodes_our_batches(codec: Compression) -> None:
    data = build_batch(sample_records(8), base_offset=300, compression=codec)
    assert as_tuples(decode_batch(data)[1]) == kafka_python_records(data)
    # Several batches in one records field, as a fetch response carries them.
    field = data + build_batch(sample_records(2), base_offset=308, compression=codec)
    assert [t[0] for t in kafka_python_records(field)] == list(range(300, 310))


@pytest.mark.parametrize("codec", ALL_CODECS, ids=CODEC_IDS)
def test_batch_builder_differential(codec: Compression) -> None:
    # kafka-python's DefaultRecordBatchBuilder (the producer's) rather than MemoryRecordsBuilder.
    theirs = kafka_python_build(sample_records(8), codec=int(codec))
    assert parse_batch_header(theirs).compression is codec
    assert as_tuples(decode_batch(theirs)[1]) == kafka_python_records(theirs)


@FAST
@given(records=st.lists(simple_records, min_size=1, max_size=8), codec=st.sampled_from(ALL_CODECS))
def test_random_batches_agree_with_kafka_python(records: list[SimpleRecord], codec: Compression) -> None:
    # kafka-python stores a batch uncompressed when compression does not shrink it; ours always
    # compresses, so our side exercises every codec even for small random records.
    theirs = kafka_python_build(records, int(codec))
    assert as_tuples(decode_batch(theirs)[1]) == kafka_python_records(theirs)
    ours = build_batch(records, compression=codec)
    assert as_tuples(decode_batch(ours)[1]) == kafka_python_records(ours)


# -- fuzzing: nothing but DecodeError escapes ---------------------------------------------------


def _exercise(data: bytes) -> None:
    for call in (
        parse_batch_header,
        read_magic,
        validate_batch,
        decode_batch,
        lambda b: list(iter_batches(b)),
        decode_batches,
    ):
        with contextlib.suppress(DecodeError):
            call(data)


@FUZZ
@given(st.binary(max_size=120))
def test_fuzz_random_bytes(data: bytes) -> None:
    _exercise(data)


_SEEDS = [
    build_batch(sample_records(3), compression=codec, producer_id=1, producer_epoch=0, base_sequence=0)
    for codec in ALL_CODECS
] + [build_end_txn_marker(commit=True, producer_id=1, producer_epoch=0, coordinator_epoch=0, timestamp=0)]


@FUZZ
@given(data=st.data(), seed=st.sampled_from(_SEEDS), recompute_crc=st.booleans())
def test_fuzz_mutated_batches(data: st.DataObject, seed: bytes, recompute_crc: bool) -> None:
    """Flip, insert and cut bytes of valid batches; with the CRC recomputed, the mutations reach
    the record decoder and the codecs instead of stopping at the CRC check."""
    buf = bytearray(seed)
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(["flip", "insert", "delete"]))
        i = data.draw(st.integers(0, len(buf) - 1))
        if op == "flip":
            buf[i] = data.draw(st.integers(0, 255))
        elif op == "insert":
            buf[i:i] = data.draw(st.binary(min_size=1, max_size=4))
        elif len(buf) > 62:
            del buf[i]
    if data.draw(st.booleans()):
        struct.pack_into(">i", buf, 8, len(buf) - 12)  # keep the length consistent
    if recompute_crc and len(buf) >= 61:
        fix_crc(buf)
    _exercise(bytes(buf))
    for cut in (len(buf) // 2, len(buf) - 1):
        _exercise(bytes(buf[:cut]))


@FUZZ
@given(body=st.binary(max_size=80), count=st.integers(-2, 5), codec=st.sampled_from(ALL_CODECS))
def test_fuzz_record_section_with_a_valid_header(body: bytes, count: int, codec: Compression) -> None:
    """A sound header and CRC around arbitrary record bytes (compressed or not)."""
    payload = compress(codec, body) if codec and body else body
    buf = bytearray(build_batch([], compression=Compression.NONE))
    buf += payload
    struct.pack_into(">i", buf, 8, len(buf) - 12)
    struct.pack_into(">h", buf, 21, int(codec))
    struct.pack_into(">i", buf, 57, count)
    fix_crc(buf)
    _exercise(bytes(buf))
