"""Wire primitives: fixed-width ints, varints, (compact) (nullable) strings and bytes, uuids, tagged fields.

The generated message modules inline the common cases (fixed-width runs through one precompiled
Struct, one-byte varint lengths) and call these functions for the rest, so every function here
has the same shape: ``read_x(data, pos) -> (value, new_pos)`` and ``write_x(out, value)`` appending
to a bytearray. Decoders take ``bytes`` (slicing bytes and decoding is the fastest path in CPython);
records fields are the exception and come back as memoryview slices of the frame, uncopied.

Encodings (KIP-482 for the compact and tagged forms):
- STRING: int16 length + UTF-8; NULLABLE_STRING: length -1 for null.
- COMPACT_STRING: unsigned varint (length + 1); 0 for null.
- BYTES / COMPACT_BYTES: the same with an int32 / unsigned varint length.
- ARRAY: int32 count (-1 null); COMPACT_ARRAY: unsigned varint (count + 1), 0 for null.
- tagged fields: unsigned varint count, then per field unsigned varint tag, unsigned varint size, data.
"""

from __future__ import annotations

from struct import Struct
from typing import TYPE_CHECKING, TypeAlias

from mockbroker_protocol.errors import InvalidValueError, TruncatedError

# A records field: decoded as a memoryview slice of the frame; encoded from one buffer or a
# sequence of buffers (a partition's batches as stored), which go to the socket as separate chunks.
Buffer: TypeAlias = bytes | bytearray | memoryview
Records: TypeAlias = bytes | bytearray | memoryview | list[Buffer] | tuple[Buffer, ...]

INT8 = Struct(">b")
INT16 = Struct(">h")
INT32 = Struct(">i")
INT64 = Struct(">q")
UINT16 = Struct(">H")
UINT32 = Struct(">I")
FLOAT64 = Struct(">d")

if TYPE_CHECKING:
    import uuid

    ZERO_UUID: uuid.UUID  # the null topic id; made on first use (below)
else:

    def __getattr__(name: str) -> object:
        # ZERO_UUID is made when first imported (PEP 562): uuid imports platform, ~2.5% of a broker's
        # cold start, and only the codecs with uuid fields use it (they import uuid themselves).
        if name == "ZERO_UUID":
            import uuid

            value = globals()["ZERO_UUID"] = uuid.UUID(int=0)
            return value
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# -- varints ------------------------------------------------------------------------------------


def read_uvarint(data: Buffer, pos: int) -> tuple[int, int]:
    """Unsigned LEB128 varint, at most 5 bytes (Kafka's 32-bit unsigned varint)."""
    result = 0
    shift = 0
    try:
        while True:
            b = data[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if b < 0x80:
                return result, pos
            shift += 7
            if shift > 28:
                raise InvalidValueError("unsigned varint longer than 5 bytes")
    except IndexError:
        raise TruncatedError("buffer ended inside a varint") from None


def read_uvarlong(data: Buffer, pos: int) -> tuple[int, int]:
    """Unsigned LEB128 varint, at most 10 bytes (64-bit)."""
    result = 0
    shift = 0
    try:
        while True:
            b = data[pos]
            pos += 1
            result |= (b & 0x7F) << shift
            if b < 0x80:
                return result, pos
            shift += 7
            if shift > 63:
                raise InvalidValueError("unsigned varlong longer than 10 bytes")
    except IndexError:
        raise TruncatedError("buffer ended inside a varint") from None


def read_varint(data: Buffer, pos: int) -> tuple[int, int]:
    """Zigzag-encoded signed 32-bit varint (record fields)."""
    raw, pos = read_uvarint(data, pos)
    return (raw >> 1) ^ -(raw & 1), pos


def read_varlong(data: Buffer, pos: int) -> tuple[int, int]:
    """Zigzag-encoded signed 64-bit varint (record fields)."""
    raw, pos = read_uvarlong(data, pos)
    return (raw >> 1) ^ -(raw & 1), pos


def write_uvarint(out: bytearray, value: int) -> None:
    if value < 0:
        raise ValueError(f"unsigned varint cannot hold {value}")
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def write_varint(out: bytearray, value: int) -> None:
    """Zigzag signed varint; 64-bit wide, so it serves varint and varlong alike."""
    write_uvarint(out, ((value << 1) ^ (value >> 63)) & 0xFFFFFFFFFFFFFFFF)



# -- lengths, strings, bytes --------------------------------------------------------------------


def read_compact_length(data: Buffer, pos: int) -> tuple[int, int]:
    """A compact length: the varint minus one, so -1 means null."""
    if pos < len(data) and data[pos] < 0x80:
        return data[pos] - 1, pos + 1
    n, pos = read_uvarint(data, pos)
    return n - 1, pos


def _check(data: Buffer, end: int) -> None:
    if end > len(data):
        raise TruncatedError(f"needs {end} bytes, buffer has {len(data)}")


def _utf8(data: Buffer, pos: int, end: int) -> str:
    try:
        return bytes(data[pos:end]).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidValueError(f"string is not UTF-8: {exc}") from None


def read_string(data: Buffer, pos: int) -> tuple[str, int]:
    try:
        (n,) = INT16.unpack_from(data, pos)
    except Exception:
        raise TruncatedError("buffer ended inside a string length") from None
    pos += 2
    if n < 0:
        raise InvalidValueError(f"non-nullable string has length {n}")
    end = pos + n
    _check(data, end)
    return _utf8(data, pos, end), end


def read_nullable_string(data: Buffer, pos: int) -> tuple[str | None, int]:
    try:
        (n,) = INT16.unpack_from(data, pos)
    except Exception:
        raise TruncatedError("buffer ended inside a string length") from None
    pos += 2
    if n < 0:
        if n == -1:
            return None, pos
        raise InvalidValueError(f"nullable string has length {n}")
    end = pos + n
    _check(data, end)
    return _utf8(data, pos, end), end


# Kafka's generated readers refuse a compact string longer than a classic (int16-prefixed) one
# could be: "string field X had invalid length N" (MessageDataGenerator, `length > 0x7fff`), and
# the request then fails to parse. The generated decoders here read lengths under 127 inline and
# come to these two only for longer ones, so the check costs the common path nothing.
MAX_STRING_LENGTH = 0x7FFF


def _string_too_long(name: str, n: int) -> InvalidValueError:
    return InvalidValueError(f"string field {name or '(unnamed)'} had invalid length {n}")


def read_compact_string(data: Buffer, pos: int, name: str = "") -> tuple[str, int]:
    n, pos = read_compact_length(data, pos)
    if n < 0:
        raise InvalidValueError(f"non-nullable field {name or '(unnamed)'} was serialized as null")
    if n > MAX_STRING_LENGTH:
        raise _string_too_long(name, n)
    end = pos + n
    _check(data, end)
    return _utf8(data, pos, end), end


def read_compact_nullable_string(data: Buffer, pos: int, name: str = "") -> tuple[str | None, int]:
    n, pos = read_compact_length(data, pos)
    if n < 0:
        return None, pos
    if n > MAX_STRING_LENGTH:
        raise _string_too_long(name, n)
    end = pos + n
    _check(data, end)
    return _utf8(data, pos, end), end


def read_bytes(data: Buffer, pos: int) -> tuple[bytes, int]:
    b, pos = read_nullable_bytes(data, pos)
    if b is None:
        raise InvalidValueError("non-nullable bytes field is null")
    return b, pos


def read_nullable_bytes(data: Buffer, pos: int) -> tuple[bytes | None, int]:
    try:
        (n,) = INT32.unpack_from(data, pos)
    except Exception:
        raise TruncatedError("buffer ended inside a bytes length") from None
    pos += 4
    if n < 0:
        if n == -1:
            return None, pos
        raise InvalidValueError(f"bytes field has length {n}")
    end = pos + n
    _check(data, end)
    return bytes(data[pos:end]), end


def read_compact_bytes(data: Buffer, pos: int) -> tuple[bytes, int]:
    b, pos = read_compact_nullable_bytes(data, pos)
    if b is None:
        raise InvalidValueError("non-nullable compact bytes field is null")
    return b, pos


def read_compact_nullable_bytes(data: Buffer, pos: int) -> tuple[bytes | None, int]:
    n, pos = read_compact_length(data, pos)
    if n < 0:
        return None, pos
    end = pos + n
    _check(data, end)
    return bytes(data[pos:end]), end




def write_string(out: bytearray, value: str) -> None:
    b = value.encode("utf-8")
    if len(b) > 0x7FFF:
        raise ValueError(f"string of {len(b)} bytes does not fit an int16 length")
    out += INT16.pack(len(b))
    out += b


def write_nullable_string(out: bytearray, value: str | None) -> None:
    if value is None:
        out += b"\xff\xff"
    else:
        write_string(out, value)


def write_compact_string(out: bytearray, value: str | None) -> None:
    """Compact (nullable) string: null is written as length 0."""
    if value is None:
        out.append(0)
        return
    b = value.encode("utf-8")
    n = len(b) + 1
    if n < 0x80:
        out.append(n)
    else:
        write_uvarint(out, n)
    out += b


def write_bytes(out: bytearray, value: Buffer | None) -> None:
    if value is None:
        out += b"\xff\xff\xff\xff"
    else:
        out += INT32.pack(len(value))
        out += value


def write_compact_bytes(out: bytearray, value: Buffer | None) -> None:
    if value is None:
        out.append(0)
    else:
        write_uvarint(out, len(value) + 1)
        out += value



def records_size(value: Records) -> int:
    if isinstance(value, list | tuple):
        return sum(len(c) for c in value)
    return len(value)


def write_records(out: bytearray, chunks: list[Buffer] | None, value: Records | None, compact: bool) -> None:
    """Write a records field. With ``chunks`` the record bytes are not copied: ``out`` so far is
    moved into ``chunks``, the record buffers follow as chunks of their own, and ``out`` is
    cleared to carry on. Without it (a plain ``bytes`` encode) they are appended to ``out``."""
    if value is None:
        if compact:
            out.append(0)
        else:
            out += b"\xff\xff\xff\xff"
        return
    size = records_size(value)
    if compact:
        write_uvarint(out, size + 1)
    else:
        out += INT32.pack(size)
    parts = value if isinstance(value, list | tuple) else (value,)
    if chunks is None:
        for part in parts:
            out += part
        return
    chunks.append(bytes(out))
    out.clear()
    chunks.extend(part for part in parts if len(part))


def skip_tagged_value(data: Buffer, pos: int) -> int:
    """Skip one unknown tagged field (KIP-482: unknown tags are ignored); returns the new pos."""
    _, pos = read_uvarint(data, pos)
    size, pos = read_uvarint(data, pos)
    end = pos + size
    _check(data, end)
    return end


def skip_tagged_fields(data: Buffer, pos: int) -> int:
    """Skip a whole tagged-fields section none of whose tags the reader knows."""
    count, pos = read_uvarint(data, pos)
    for _ in range(count):
        pos = skip_tagged_value(data, pos)
    return pos
