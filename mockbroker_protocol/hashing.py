"""Kafka's hashes as the Java broker and clients compute them: String.hashCode, Utils.murmur2, Utils.abs.

One implementation of each, shared by the broker (coordinator placement: GroupCoordinator and
TransactionStateManager ``partitionFor``; the default partitioner of ``control.produce``) and the
assignors (Java's HashMap iteration order). Pure functions of their arguments.
"""

from __future__ import annotations

import functools

_MASK32 = 0xFFFFFFFF
_INT_MIN = -(1 << 31)


@functools.lru_cache(maxsize=1 << 16)
def java_string_hash(s: str) -> int:
    """``String.hashCode()`` over UTF-16 code units, as an unsigned 32-bit int (its bit pattern).

    >>> java_string_hash("hello"), java_string_hash("Aa") == java_string_hash("BB")
    (99162322, True)
    >>> java_string_hash("polygenelubricants")  # Integer.MIN_VALUE's bits
    2147483648
    """
    h = 0
    if s.isascii():
        for unit in s.encode("ascii"):
            h = (31 * h + unit) & _MASK32
        return h
    data = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & _MASK32
    return h


def to_int32(bits: int) -> int:
    """A 32-bit pattern read as Java's signed ``int``."""
    bits &= _MASK32
    return bits - (1 << 32) if bits >= 1 << 31 else bits


def kafka_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: like ``Math.abs``, except that Integer.MIN_VALUE maps to 0, not to itself."""
    return 0 if n == _INT_MIN else abs(n)


def partition_for(key: str, partitions: int) -> int:
    """The internal-topic partition that owns ``key`` (a group id, a transactional id, a share key):
    ``Utils.abs(key.hashCode()) % partitions``, as the broker's coordinators compute it.

    >>> partition_for("my-group", 50)
    12
    """
    return kafka_abs(to_int32(java_string_hash(key))) % partitions


def murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2`` (the default partitioner's hash), as an unsigned 32-bit int."""
    m, seed = 0x5BD1E995, 0x9747B28C
    length = len(data)
    h = (seed ^ length) & _MASK32
    whole = length - length % 4
    for i in range(0, whole, 4):
        k = data[i] | data[i + 1] << 8 | data[i + 2] << 16 | data[i + 3] << 24
        k = (k * m) & _MASK32
        k ^= k >> 24
        k = (k * m) & _MASK32
        h = ((h * m) & _MASK32) ^ k
    tail = length % 4
    if tail == 3:
        h ^= data[whole + 2] << 16
    if tail >= 2:
        h ^= data[whole + 1] << 8
    if tail >= 1:
        h ^= data[whole]
        h = (h * m) & _MASK32
    h ^= h >> 13
    h = (h * m) & _MASK32
    h ^= h >> 15
    return h


def to_positive(n: int) -> int:
    """Kafka's ``Utils.toPositive``: the low 31 bits (the default partitioner's ``murmur2`` to a partition)."""
    return n & 0x7FFFFFFF
