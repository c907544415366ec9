"""Kafka's hashes as the Java broker and clients compute them (String.hashCode, Utils.murmur2,
Utils.abs) and the iteration order of a java.util.HashMap or HashSet.

One implementation of each, shared by the broker (coordinator placement: GroupCoordinator and
TransactionStateManager ``partitionFor``; the default partitioner of ``control.produce``; every
answer Kafka builds by iterating a HashMap of names) and the assignors. Pure functions of their
arguments; tests/protocol/test_hashing.py checks them against values Java computed.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Sequence

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


# -- java.util.HashMap's iteration order ------------------------------------------------------------


def java_hash_map_capacity(size: int, initial_capacity: int | None = None) -> int:
    """The table length of a ``java.util.HashMap`` after ``size`` distinct ``put``s.

    ``initial_capacity`` is the constructor argument (``None`` for ``new HashMap<>()``, which starts
    at 16; ``HashMap(n)`` starts at ``tableSizeFor(n)``); the table doubles as soon as the size passes
    0.75 of it, and the threshold of a table under 16 is recomputed rather than doubled
    (HashMap.putVal, HashMap.resize)."""
    if initial_capacity is None:
        capacity, threshold = 16, 12
    else:
        capacity = 1
        while capacity < initial_capacity:
            capacity <<= 1  # HashMap.tableSizeFor
        threshold = int(capacity * 0.75)
    while size > threshold:
        if capacity >= 16:
            capacity, threshold = capacity << 1, threshold << 1
        else:
            capacity <<= 1
            threshold = int(capacity * 0.75)
    return capacity


def java_hash_set_copy_capacity(size: int) -> int:
    """The table length of ``new HashSet<>(collection)`` of ``size`` elements: it is made with
    ``new HashMap<>(Math.max((int) (size / .75f) + 1, 16))`` and never grows while it is filled
    (``size * 4 // 3`` is ``(int) (size / .75f)`` for any size a float counts exactly)."""
    return java_hash_map_capacity(size, max(size * 4 // 3 + 1, 16))


def java_hash_map_bucket(hash32: int, capacity: int) -> int:
    """The bucket of a key whose ``hashCode()`` has the bits ``hash32`` in a table of ``capacity``:
    ``HashMap.hash`` spreads the high bits down (``h ^ (h >>> 16)``), then the low bits index."""
    hash32 &= _MASK32
    return (hash32 ^ (hash32 >> 16)) & (capacity - 1)


def java_hash_map_order(
    keys: Sequence[str], initial_capacity: int | None = None, *, kept: Collection[str] | None = None
) -> list[str]:
    """The iteration order of a HashMap/HashSet into which ``keys`` were ``put`` in this order (a
    key put again keeps its place), and from which all but ``kept`` were then removed (removal
    never shrinks the table): bucket by bucket, and within a bucket in insertion order (new nodes
    go to the tail, and a resize splits buckets without reordering them).

    >>> java_hash_map_order(["OAUTHBEARER", "SCRAM-SHA-512", "PLAIN"])
    ['SCRAM-SHA-512', 'PLAIN', 'OAUTHBEARER']
    >>> java_hash_map_order(["BB", "Aa"])  # one hash, one bucket: insertion order
    ['BB', 'Aa']
    """
    distinct = list(dict.fromkeys(keys))
    capacity = java_hash_map_capacity(len(distinct), initial_capacity)
    position = {key: i for i, key in enumerate(distinct)}
    remaining = distinct if kept is None else [key for key in distinct if key in kept]
    return sorted(remaining, key=lambda key: (java_hash_map_bucket(java_string_hash(key), capacity), position[key]))
