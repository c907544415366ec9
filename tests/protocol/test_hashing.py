"""mockbroker_protocol.hashing against Java: String.hashCode and java.util.HashMap's iteration order.

Every expected value below was printed by Java (OpenJDK 17.0.15, ``java HashOrders.java``, a
single-file program run once): ``s.hashCode()`` for each string; for each key list, the
``keySet()`` of a ``new HashMap<>()`` (or ``new HashMap<>(capacity)``) after ``put``ting the keys in
that order; the same after removing keys; and ``new HashSet<>(list)``. The program's output was
pasted here as it came, so a change to our emulation that Java would not make fails these tests.
"""

from __future__ import annotations

import pytest

from mockbroker_protocol.hashing import (
    java_hash_map_bucket,
    java_hash_map_capacity,
    java_hash_map_order,
    java_hash_set_copy_capacity,
    java_string_hash,
    to_int32,
)

# (string, String.hashCode()) as Java printed them (signed ints)
JAVA_HASHES = [
    ("", 0),
    ("A", 65),
    ("hello", 99162322),
    ("Aa", 2112),
    ("BB", 2112),
    ("polygenelubricants", -2147483648),
    ("my-group", -1906497762),
    ("caf\u00e9", 3045921),
    ("\ud83d\ude00", 1772899),
    ("\u65e5\u672c\u8a9e", 25921943),
    ("app-KSTREAM-AGGREGATE-STATE-STORE-0000000003-changelog", 1174966222),
    ("app-KSTREAM-AGGREGATE-STATE-STORE-0000000003-repartition", -1953069615),
]

# (keys put in this order, the HashMap constructor's capacity or None for new HashMap<>(), keySet() order)
JAVA_HASH_MAP_ORDERS = [
    (["Aa", "BB"], None, ["Aa", "BB"]),
    (["BB", "Aa"], None, ["BB", "Aa"]),
    (["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"], None, ["PLAIN", "SCRAM-SHA-512", "SCRAM-SHA-256", "OAUTHBEARER"]),
    (["OAUTHBEARER", "SCRAM-SHA-512", "PLAIN"], None, ["SCRAM-SHA-512", "PLAIN", "OAUTHBEARER"]),
    (["topic-0", "topic-1", "topic-2", "topic-3", "topic-4", "topic-5", "topic-6", "topic-7", "topic-8", "topic-9", "topic-10", "topic-11"], None, ["topic-6", "topic-7", "topic-8", "topic-9", "topic-0", "topic-1", "topic-2", "topic-3", "topic-10", "topic-4", "topic-11", "topic-5"]),
    (["topic-0", "topic-1", "topic-2", "topic-3", "topic-4", "topic-5", "topic-6", "topic-7", "topic-8", "topic-9", "topic-10", "topic-11", "topic-12"], None, ["topic-6", "topic-7", "topic-8", "topic-9", "topic-0", "topic-1", "topic-2", "topic-3", "topic-10", "topic-4", "topic-11", "topic-5", "topic-12"]),
    (["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8", "t9", "t10", "t11", "t12", "t13", "t14", "t15", "t16", "t17", "t18", "t19", "t20", "t21", "t22", "t23", "t24", "t25", "t26", "t27", "t28", "t29", "t30", "t31", "t32", "t33", "t34", "t35", "t36", "t37", "t38", "t39"], None, ["t4", "t5", "t6", "t7", "t8", "t9", "t30", "t10", "t32", "t31", "t12", "t34", "t11", "t33", "t14", "t36", "t13", "t35", "t16", "t38", "t15", "t37", "t18", "t17", "t39", "t19", "t21", "t20", "t23", "t22", "t25", "t24", "t27", "t26", "t29", "t28", "t0", "t1", "t2", "t3"]),
    (["member10", "member2", "member1", "member3", "process-b", "process-a"], None, ["member10", "member2", "member3", "member1", "process-b", "process-a"]),
    (["x1", "x2", "x1", "x3", "x2"], None, ["x1", "x2", "x3"]),
    (["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"], 0, ["bravo", "golf", "foxtrot", "alpha", "delta", "hotel", "echo", "india", "charlie"]),
    (["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"], 1, ["bravo", "golf", "foxtrot", "alpha", "delta", "hotel", "echo", "india", "charlie"]),
    (["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"], 3, ["bravo", "golf", "foxtrot", "alpha", "delta", "hotel", "echo", "india", "charlie"]),
    (["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"], 5, ["bravo", "golf", "foxtrot", "alpha", "delta", "hotel", "echo", "india", "charlie"]),
    (["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"], 64, ["foxtrot", "delta", "echo", "india", "bravo", "golf", "alpha", "hotel", "charlie"]),
    (["alpha", "bravo", "charlie"], 0, ["bravo", "alpha", "charlie"]),
    (["alpha", "bravo", "charlie"], 1, ["bravo", "alpha", "charlie"]),
    (["alpha", "bravo", "charlie"], 2, ["bravo", "alpha", "charlie"]),
    (["alpha", "bravo", "charlie"], 3, ["bravo", "alpha", "charlie"]),
    (["alpha", "bravo", "charlie"], 4, ["bravo", "alpha", "charlie"]),
    (["alpha", "bravo", "charlie", "delta", "echo"], 0, ["bravo", "delta", "echo", "alpha", "charlie"]),
    (["alpha", "bravo", "charlie", "delta", "echo"], 1, ["bravo", "delta", "echo", "alpha", "charlie"]),
    (["alpha", "bravo", "charlie", "delta", "echo"], 2, ["bravo", "delta", "echo", "alpha", "charlie"]),
    (["alpha", "bravo", "charlie", "delta", "echo"], 3, ["bravo", "delta", "echo", "alpha", "charlie"]),
    (["alpha", "bravo", "charlie", "delta", "echo"], 4, ["bravo", "delta", "echo", "alpha", "charlie"]),
]

# new HashMap<>() of these keys, then remove() of all but the second list's: the rest's keySet() order
JAVA_AFTER_REMOVALS = (
    ["topic-0", "topic-1", "topic-2", "topic-3", "topic-4", "topic-5", "topic-6", "topic-7", "topic-8", "topic-9", "topic-10", "topic-11", "topic-12", "topic-13"],
    ["topic-6", "topic-1", "topic-2", "topic-4", "topic-5"],
)

# (list, new HashSet<>(list)'s iteration order)
JAVA_HASH_SET_COPIES = [
    (["member-0", "member-1", "member-2", "member-3", "member-4", "member-5", "member-6", "member-7", "member-8", "member-9", "member-10", "member-11"], ["member-5", "member-6", "member-3", "member-4", "member-9", "member-11", "member-10", "member-7", "member-8", "member-1", "member-2", "member-0"]),
    (["member-0", "member-1", "member-2", "member-3", "member-4", "member-5", "member-6", "member-7", "member-8", "member-9", "member-10", "member-11", "member-12", "member-13", "member-14", "member-15", "member-16", "member-17", "member-18", "member-19"], ["member-19", "member-18", "member-17", "member-16", "member-5", "member-15", "member-6", "member-14", "member-3", "member-13", "member-4", "member-12", "member-9", "member-11", "member-10", "member-7", "member-8", "member-1", "member-2", "member-0"]),
]


@pytest.mark.parametrize(("text", "java"), JAVA_HASHES)
def test_string_hash_is_java_s(text: str, java: int) -> None:
    assert to_int32(java_string_hash(text)) == java
    assert java_string_hash(text) == java & 0xFFFFFFFF  # the unsigned bit pattern


@pytest.mark.parametrize(("keys", "capacity", "java"), JAVA_HASH_MAP_ORDERS)
def test_hash_map_order_is_java_s(keys: list[str], capacity: int | None, java: list[str]) -> None:
    assert java_hash_map_order(keys, capacity) == java


def test_hash_map_order_after_removals_is_java_s() -> None:
    keys, java = JAVA_AFTER_REMOVALS
    assert java_hash_map_order(keys, kept=set(java)) == java


@pytest.mark.parametrize(("keys", "java"), JAVA_HASH_SET_COPIES)
def test_hash_set_copy_order_is_java_s(keys: list[str], java: list[str]) -> None:
    capacity = java_hash_set_copy_capacity(len(keys))
    assert sorted(keys, key=lambda k: (java_hash_map_bucket(java_string_hash(k), capacity), keys.index(k))) == java


# (HashMap constructor's capacity or None, puts of distinct keys, the table's length): read by
# reflection from HashMap.table (java --add-opens java.base/java.util=ALL-UNNAMED Cap.java)
JAVA_CAPACITIES = [
    (None, [1, 2, 3, 4, 6, 7, 12, 13, 24, 25], [16, 16, 16, 16, 16, 16, 16, 32, 32, 64]),
    (1, [1, 2, 3, 4, 6, 7, 12, 13, 24, 25], [2, 4, 4, 8, 8, 16, 16, 32, 32, 64]),
    (5, [1, 2, 3, 4, 6, 7, 12, 13, 24, 25], [8, 8, 8, 8, 8, 16, 16, 32, 32, 64]),
]
# (elements, the table's length of new HashSet<>(a list of them)), read the same way
JAVA_COPY_CAPACITIES = [(11, 16), (12, 32), (20, 32)]


@pytest.mark.parametrize(("initial", "sizes", "java"), JAVA_CAPACITIES)
def test_hash_map_capacity_is_java_s(initial: int | None, sizes: list[int], java: list[int]) -> None:
    assert [java_hash_map_capacity(n, initial) for n in sizes] == java


def test_hash_set_copy_capacity_is_java_s() -> None:
    assert [(n, java_hash_set_copy_capacity(n)) for n, _ in JAVA_COPY_CAPACITIES] == JAVA_COPY_CAPACITIES
