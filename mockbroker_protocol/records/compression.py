"""Compression codecs of record batches (attributes bits 0-2): gzip, snappy, lz4, zstd via cramjam.

Used only to inspect and to build batches (tests, the admin API): the produce and fetch paths
never decompress, they keep the client's bytes. The formats are the ones Kafka's Java client
writes and reads (org.apache.kafka.common.compress):
- gzip: a gzip stream (GZIPOutputStream); readers accept concatenated members.
- snappy: the xerial snappy-java stream (SnappyOutputStream, 32 KiB blocks), which the Java client
  and kafka-python write; librdkafka writes raw snappy. xerial's SnappyInputStream reads both, by
  looking for its magic header, and so do we.
- lz4: the LZ4 frame format with independent blocks (KIP-57; Lz4BlockOutputStream, whose reader
  rejects linked blocks with "Dependent block stream is unsupported").
- zstd: a zstd frame (KIP-110, produce v7+); readers accept several frames.
"""

from __future__ import annotations

from enum import IntEnum
from struct import Struct

import cramjam

from mockbroker_protocol.errors import CorruptRecordError
from mockbroker_protocol.primitives import Buffer

__all__ = ["XERIAL_MAGIC", "Compression", "compress", "decompress"]


class Compression(IntEnum):
    """The compression codec id in bits 0-2 of a batch's attributes (CompressionType.java)."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4


# xerial snappy-java's stream header (SnappyCodec.java): the 8-byte magic, then the format version
# and the minimum compatible version as big-endian int32s, both 1.
XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = XERIAL_MAGIC + b"\x00\x00\x00\x01\x00\x00\x00\x01"
_XERIAL_HEADER_SIZE = 16
# SnappyOutputStream's default block size: the uncompressed bytes per block.
_XERIAL_BLOCK_SIZE = 32 * 1024
_INT32 = Struct(">i")

# A raw snappy block opens with the uncompressed length; no element expands by more than 64 bytes
# out per 3 bytes in (a 2-byte-offset copy of 64 bytes), so a claimed length beyond this is a lie,
# and checking it stops a 5-byte block from asking for a 4 GiB buffer.
_SNAPPY_MAX_RATIO = 22


def compress(codec: Compression | int, data: Buffer) -> bytes:
    """Compress the records section of a batch (everything after the 61-byte header)."""
    codec = Compression(codec)
    if codec is Compression.NONE:
        return bytes(data)
    if codec is Compression.GZIP:
        return bytes(cramjam.gzip.compress(data))
    if codec is Compression.SNAPPY:
        return snappy_xerial_compress(data)
    if codec is Compression.LZ4:
        # cramjam.lz4.compress writes linked blocks, which Java's reader refuses: ask for
        # independent ones (and no content checksum, which older Java readers do not expect).
        # The streaming Compressor takes only bytes.
        c = cramjam.lz4.Compressor(content_checksum=False, block_linked=False)
        c.compress(data if isinstance(data, bytes) else bytes(data))
        return bytes(c.finish())
    return bytes(cramjam.zstd.compress(data))


def decompress(codec: Compression | int, data: Buffer) -> bytes:
    """Decompress the records section of a batch; any failure is the producer's fault and comes
    out as CorruptRecordError (Kafka answers CORRUPT_MESSAGE, or fails the fetch)."""
    try:
        codec = Compression(codec)
    except ValueError:
        raise CorruptRecordError(f"unknown compression codec id {codec}") from None
    if codec is Compression.NONE:
        return bytes(data)
    if codec is Compression.SNAPPY:
        return snappy_decompress(data)
    try:
        if codec is Compression.GZIP:
            return bytes(cramjam.gzip.decompress(data))
        if codec is Compression.LZ4:
            return bytes(cramjam.lz4.decompress(data))
        return bytes(cramjam.zstd.decompress(data))
    except Exception as exc:  # cramjam.DecompressionError, and whatever else a codec throws
        raise CorruptRecordError(f"cannot decompress {codec.name} records: {exc}") from None


def snappy_raw_compress(data: Buffer) -> bytes:
    """One raw snappy block (what librdkafka writes)."""
    return bytes(cramjam.snappy.compress_raw(data))


def snappy_xerial_compress(data: Buffer, block_size: int = _XERIAL_BLOCK_SIZE) -> bytes:
    """The xerial stream: header, then per ``block_size`` input bytes an int32 length and a raw
    snappy block (SnappyOutputStream)."""
    view = memoryview(data)
    out = bytearray(_XERIAL_HEADER)
    for start in range(0, len(view), block_size):
        block = cramjam.snappy.compress_raw(view[start : start + block_size])
        out += _INT32.pack(len(block))
        out += block
    return bytes(out)


def snappy_decompress(data: Buffer) -> bytes:
    """Raw snappy or a xerial stream, told apart by the xerial magic (as SnappyInputStream does)."""
    view = memoryview(data)
    if len(view) < _XERIAL_HEADER_SIZE or view[:8] != XERIAL_MAGIC:
        return _snappy_raw_block(view)
    # The version fields are not checked: some producers (Redpanda) write them little-endian, and
    # readers ignore them (kafka-python issue #2414).
    out = bytearray()
    pos = _XERIAL_HEADER_SIZE
    end = len(view)
    while pos < end:
        # SnappyInputStream accepts concatenated streams: a header where a block length should be.
        if end - pos >= _XERIAL_HEADER_SIZE and view[pos : pos + 8] == XERIAL_MAGIC:
            pos += _XERIAL_HEADER_SIZE
            continue
        if end - pos < 4:
            raise CorruptRecordError("xerial snappy stream ends inside a block length")
        (size,) = _INT32.unpack_from(view, pos)
        pos += 4
        if size < 0 or pos + size > end:
            raise CorruptRecordError(f"xerial snappy block of {size} bytes with {end - pos} left")
        out += _snappy_raw_block(view[pos : pos + size])
        pos += size
    return bytes(out)


def _snappy_raw_block(block: memoryview) -> bytes:
    try:
        claimed = cramjam.snappy.decompress_raw_len(block)
        if claimed > _SNAPPY_MAX_RATIO * len(block):
            raise CorruptRecordError(f"snappy block of {len(block)} bytes claims {claimed} bytes")
        return bytes(cramjam.snappy.decompress_raw(block))
    except CorruptRecordError:
        raise
    except Exception as exc:
        raise CorruptRecordError(f"cannot decompress SNAPPY records: {exc}") from None
