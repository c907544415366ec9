"""Wire helpers for the compiled codec shape: small typed functions that mypyc turns into C calls.

Used only by the generated modules of this package (see mockbroker_protocol/_codegen_compiled.py), which are
built with mypyc at install time; nothing imports them interpreted. Each reader takes the frame
(``bytes``) and a position and returns ``(value, new position)``, which mypyc passes as a C struct
(no tuple object); each writer appends byte strings to a list of parts that the top-level encoder
joins once. Integers are assembled from single bytes, which mypyc compiles to native arithmetic,
instead of going through ``struct`` (a generic call from compiled code).

Failures are the same as the pure shape's: a read past the end raises IndexError (the message
classes map it to TruncatedError), malformed lengths raise InvalidValueError/TruncatedError, and
an unencodable value raises a plain exception that the classes turn into EncodeError.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from mockbroker_protocol.errors import InvalidValueError, TruncatedError

# one-byte parts for lengths and counts under 128 (no allocation per length)
BYTE: Final = [bytes((i,)) for i in range(256)]
ZERO: Final = b"\x00"


# -- reading ------------------------------------------------------------------------------------


def i8(data: bytes, pos: int) -> int:
    v = data[pos]
    return v - 0x100 if v & 0x80 else v


def i16(data: bytes, pos: int) -> int:
    v = (data[pos] << 8) | data[pos + 1]
    return v - 0x10000 if v & 0x8000 else v


def i32(data: bytes, pos: int) -> int:
    v = (data[pos] << 24) | (data[pos + 1] << 16) | (data[pos + 2] << 8) | data[pos + 3]
    return v - 0x100000000 if v & 0x80000000 else v


def i64(data: bytes, pos: int) -> int:
    hi = (data[pos] << 24) | (data[pos + 1] << 16) | (data[pos + 2] << 8) | data[pos + 3]
    lo = (data[pos + 4] << 24) | (data[pos + 5] << 16) | (data[pos + 6] << 8) | data[pos + 7]
    # offsets and timestamps fit in 32 bits or are small negatives (-1): no wide arithmetic then
    if hi == 0:
        return lo
    if hi == 0xFFFFFFFF and lo & 0x80000000:
        return lo - 0x100000000
    if hi & 0x80000000:
        return ((hi - 0x100000000) << 32) | lo
    return (hi << 32) | lo


def raw(data: bytes, pos: int, size: int) -> bytes:
    """``size`` bytes at ``pos`` (a uuid), refusing a short read."""
    if pos + size > len(data):
        raise TruncatedError(f"needs {pos + size} bytes, buffer has {len(data)}")
    return data[pos : pos + size]


def uvarint(data: bytes, pos: int) -> tuple[int, int]:
    """Unsigned LEB128, at most 5 bytes (Kafka's 32-bit unsigned varint)."""
    result = 0
    shift = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7
        if shift > 28:
            raise InvalidValueError("unsigned varint longer than 5 bytes")


def compact_len(data: bytes, pos: int) -> tuple[int, int]:
    """A compact length or count: the varint minus one (-1 for null)."""
    n = data[pos]
    if n < 128:
        return n - 1, pos + 1
    n, pos = uvarint(data, pos)
    return n - 1, pos


def too_long(name: str, n: int) -> InvalidValueError:
    """Kafka's generated readers refuse a compact string over 0x7fff bytes (MessageDataGenerator:
    "string field X had invalid length N"); checked only on the multi-byte length path."""
    return InvalidValueError("string field " + name[:1].lower() + name[1:] + " had invalid length " + str(n))


def cstr(data: bytes, pos: int, name: str) -> tuple[str, int]:
    n = data[pos]
    if n < 128:
        pos += 1
    else:
        n, pos = uvarint(data, pos)
        if n > 0x8000:
            raise too_long(name, n - 1)
    if n == 0:
        raise InvalidValueError(name + ": null, which this field does not allow")
    end = pos + n - 1
    return data[pos:end].decode(), end


def cnstr(data: bytes, pos: int, name: str) -> tuple[str | None, int]:
    n = data[pos]
    if n < 128:
        pos += 1
    else:
        n, pos = uvarint(data, pos)
        if n > 0x8000:
            raise too_long(name, n - 1)
    if n == 0:
        return None, pos
    end = pos + n - 1
    return data[pos:end].decode(), end


def cbytes(data: bytes, pos: int, name: str) -> tuple[bytes, int]:
    n = data[pos]
    if n < 128:
        pos += 1
    else:
        n, pos = uvarint(data, pos)
    if n == 0:
        raise InvalidValueError(name + ": null, which this field does not allow")
    end = pos + n - 1
    return data[pos:end], end


def cnbytes(data: bytes, pos: int) -> tuple[bytes | None, int]:
    n = data[pos]
    if n < 128:
        pos += 1
    else:
        n, pos = uvarint(data, pos)
    if n == 0:
        return None, pos
    end = pos + n - 1
    return data[pos:end], end


def string(data: bytes, pos: int, name: str) -> tuple[str, int]:
    n = i16(data, pos)
    if n < 0:
        raise InvalidValueError(name + ": null or negative length")
    end = pos + 2 + n
    return data[pos + 2 : end].decode(), end


def nstring(data: bytes, pos: int, name: str) -> tuple[str | None, int]:
    n = i16(data, pos)
    if n < 0:
        if n != -1:
            raise InvalidValueError(name + ": length " + str(n))
        return None, pos + 2
    end = pos + 2 + n
    return data[pos + 2 : end].decode(), end


def bytes_(data: bytes, pos: int, name: str) -> tuple[bytes, int]:
    n = i32(data, pos)
    if n < 0:
        raise InvalidValueError(name + ": null or negative length")
    end = pos + 4 + n
    return data[pos + 4 : end], end


def nbytes(data: bytes, pos: int, name: str) -> tuple[bytes | None, int]:
    n = i32(data, pos)
    if n < 0:
        if n != -1:
            raise InvalidValueError(name + ": length " + str(n))
        return None, pos + 4
    end = pos + 4 + n
    return data[pos + 4 : end], end


def count(data: bytes, pos: int, n: int, name: str) -> int:
    """Check an array's element count (``n``, -1 for null, already read) against what is left: a
    forged count cannot make a decoder loop for long, as every element takes at least a byte."""
    if n < 0:
        raise InvalidValueError(name + ": null or negative length")
    if n > len(data) - pos:
        raise TruncatedError(name + ": " + str(n) + " elements in " + str(len(data) - pos) + " bytes")
    return n


def ncount(data: bytes, pos: int, n: int, name: str) -> int:
    """As ``count`` for a nullable array: -1 stays -1 (null), other negatives are refused."""
    if n < 0:
        if n != -1:
            raise InvalidValueError(name + ": length " + str(n))
        return -1
    if n > len(data) - pos:
        raise TruncatedError(name + ": " + str(n) + " elements in " + str(len(data) - pos) + " bytes")
    return n


def tags(data: bytes, pos: int) -> int:
    """Skip a tagged-fields section whose tags this struct does not define (KIP-482)."""
    if data[pos] == 0:
        return pos + 1
    nt, pos = uvarint(data, pos)
    for _ in range(nt):
        _, pos = uvarint(data, pos)
        size, pos = uvarint(data, pos)
        pos += size
    if pos > len(data):
        raise TruncatedError("a tagged field runs past the end")
    return pos


# -- writing ------------------------------------------------------------------------------------


def w_uvarint(parts: list[bytes], n: int) -> None:
    if n < 128:
        parts.append(BYTE[n])
        return
    if n < 0 or n > 0xFFFFFFFF:
        raise ValueError(f"unsigned varint out of range: {n}")
    b = bytearray()
    while n >= 0x80:
        b.append((n & 0x7F) | 0x80)
        n >>= 7
    b.append(n)
    parts.append(bytes(b))


def w_cstr(parts: list[bytes], s: str) -> None:
    b = s.encode()
    n = len(b) + 1
    if n < 128:
        parts.append(BYTE[n])
    else:
        w_uvarint(parts, n)
    parts.append(b)


def w_cnstr(parts: list[bytes], s: str | None) -> None:
    if s is None:
        parts.append(ZERO)
    else:
        w_cstr(parts, s)


def w_cbytes(parts: list[bytes], b: bytes) -> None:
    n = len(b) + 1
    if n < 128:
        parts.append(BYTE[n])
    else:
        w_uvarint(parts, n)
    parts.append(b)


def w_cnbytes(parts: list[bytes], b: bytes | None) -> None:
    if b is None:
        parts.append(ZERO)
    else:
        w_cbytes(parts, b)


def w_string(parts: list[bytes], s: str) -> None:
    b = s.encode()
    parts.append(len(b).to_bytes(2, "big", signed=True))
    parts.append(b)


def w_nstring(parts: list[bytes], s: str | None) -> None:
    if s is None:
        parts.append(b"\xff\xff")
    else:
        w_string(parts, s)


def w_bytes(parts: list[bytes], b: bytes) -> None:
    parts.append(len(b).to_bytes(4, "big", signed=True))
    parts.append(b)


def w_nbytes(parts: list[bytes], b: bytes | None) -> None:
    if b is None:
        parts.append(b"\xff\xff\xff\xff")
    else:
        w_bytes(parts, b)


def w_count(parts: list[bytes], a: Sequence[object] | None, compact: bool) -> None:
    """An array's count: int32 (-1 null) or, in flexible versions, unsigned varint count + 1 (0 null)."""
    if compact:
        w_uvarint(parts, 0 if a is None else len(a) + 1)
    else:
        parts.append(b"\xff\xff\xff\xff" if a is None else len(a).to_bytes(4, "big", signed=True))
