"""Shared pieces of the real-client tests: a cluster on its own thread for blocking clients, the
messages every client produces, and the checks every client's results go through.

Blocking clients (kafka-python, confluent-kafka, kcat in a subprocess) block the test's thread,
so their broker runs on a thread of its own with its own event loop. Every touch of cluster
state goes through that loop (``BrokerThread.call``/``run``): the broker has no locks, by design.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from mockbroker import MockCluster
from mockbroker.testing import KafkaCluster
from mockbroker_protocol.records import Compression, decode_batch, parse_batch_header

BROKERS = 3
PARTITIONS = 6
CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
CODEC_IDS = {
    "none": Compression.NONE,
    "gzip": Compression.GZIP,
    "snappy": Compression.SNAPPY,
    "lz4": Compression.LZ4,
    "zstd": Compression.ZSTD,
}
# Fixed, past CreateTime timestamps: deterministic, and well inside Kafka's default
# message.timestamp.before.max.ms (unbounded) whatever the day the suite runs.
BASE_TIMESTAMP_MS = 1_700_000_000_000
# Upper bound on any wait for a condition. Never an assertion on speed: only a guard against a hang.
DEADLINE_S = 60.0


# -- tools and waiting ---------------------------------------------------------------------------


def in_ci() -> bool:
    """True when the environment says CI (GitHub, GitLab and most others set CI=true)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require_tool(name: str) -> str:
    """The path of command-line tool ``name``. When it is missing the test fails under CI (the
    suite must not silently skip there; `make deps` installs it) and skips on a user's machine."""
    path = shutil.which(name)
    if path is not None:
        return path
    message = (
        f"{name} is not installed (Debian/Ubuntu: apt-get install -y {name}; or run `make deps` as root)"
    )
    if in_ci():
        pytest.fail(f"{message}; CI must run every test")
    pytest.skip(message)


def wait_for(
    predicate: Callable[[], Any], what: str, explain: Callable[[], str] | None = None, timeout: float = DEADLINE_S
) -> Any:
    """Poll ``predicate`` until it returns something truthy, and return that; fail naming
    ``what`` (and whatever ``explain`` says about the state of things) after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() > deadline:
            detail = f"\n{explain()}" if explain is not None else ""
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}{detail}")
        time.sleep(0.01)


def wait_until(predicate: Callable[[], bool], what: str, timeout: float = DEADLINE_S) -> None:
    """Block until ``predicate()`` is true; fail naming ``what`` after ``timeout`` seconds."""
    wait_for(predicate, what, timeout=timeout)


async def async_wait_until(predicate: Callable[[], bool], what: str, timeout: float = DEADLINE_S) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(0.01)


# -- a cluster on its own thread -----------------------------------------------------------------


class BrokerThread(KafkaCluster):
    """The public fixture's cluster (mockbroker.testing.KafkaCluster: its own thread and loop,
    teardown checks), with the helpers these tests share. ``cluster`` is for reading after
    ``stop()`` only; while the thread runs, go through ``call``/``run`` or the control methods."""

    def __init__(self, **settings: Any) -> None:
        super().__init__(request_log=False, **settings)

    @property
    def _cluster(self) -> MockCluster:
        return self.cluster

    def create_topic(self, name: str, partitions: int) -> dict[int, int]:  # type: ignore[override]
        """Create ``name`` on the broker's loop; return its partitions' leaders (index -> node id)."""

        def create() -> dict[int, int]:
            topic = self._cluster.create_topic(name, partitions)
            return {p.index: p.leader_id for p in topic.partitions}

        return self.call(create)

    def stored_batches(self, topic: str) -> dict[int, list[bytes]]:
        """Copies, taken on the broker's loop, of every batch stored for ``topic``, per partition."""
        return self.call(lambda: stored_batches(self._cluster, topic))

    def stop(self) -> list[BaseException]:
        """Stop the cluster and the loop; return the broker bugs it recorded, and anything the
        teardown checks found left behind (threads, sockets, tasks), as errors."""
        problems = self.close(check=False)
        bugs = list(self.cluster.internal_errors)
        leaks = [p for p in problems if not p.startswith(("broker bug:", "strict mode:"))]
        strict = [p for p in problems if p.startswith("strict mode:")]
        return bugs + [RuntimeError(p) for p in strict + leaks]


def stored_batches(cluster: MockCluster, topic: str) -> dict[int, list[bytes]]:
    """Copies of ``topic``'s stored batches per partition; call on the cluster's loop."""
    return {p.index: [bytes(b.data) for b in p.log.batches] for p in cluster.topics[topic].partitions}


def assert_leaders_span_brokers(leaders: dict[int, int], broker_ids: Iterable[int]) -> None:
    """The topic's partitions are led by every broker, so a client talks to all of them."""
    assert set(leaders.values()) == set(broker_ids), (
        f"partition leaders {leaders} do not span brokers {sorted(broker_ids)}"
    )


# -- what is produced, what comes back -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Message:
    """One record as produced, or as a client consumed it (``offset`` set), normalised to bytes."""

    partition: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    timestamp: int | None  # None: the client chose it (kcat); compared against the stored log
    offset: int | None = None

    def without_offset(self) -> Message:
        return Message(self.partition, self.key, self.value, self.headers, self.timestamp)


def make_messages(
    label: str,
    count: int,
    partitions: int = PARTITIONS,
    *,
    null_keys: bool = True,
    headers: bool = True,
    timestamps: bool = True,
) -> list[Message]:
    """``count`` messages spread round-robin over ``partitions``. Values are a few hundred bytes of
    repetitive text so that every codec shrinks even a one-record batch (librdkafka sends a batch
    uncompressed when compressing does not make it smaller); every tenth key is null."""
    filler = (f"{label} payload, compressible; " * 12).encode()
    out = []
    for i in range(count):
        key = None if null_keys and i % 10 == 3 else f"key-{i:06d}".encode()
        value = f"{label} #{i:06d} ".encode() + filler
        hdrs = (("idx", str(i).encode()), ("codec", label.encode())) if headers else ()
        ts = BASE_TIMESTAMP_MS + i * 7 if timestamps else None
        out.append(Message(i % partitions, key, value, hdrs, ts))
    return out


def by_partition(messages: Iterable[Message]) -> dict[int, list[Message]]:
    out: dict[int, list[Message]] = {}
    for m in messages:
        out.setdefault(m.partition, []).append(m)
    return out


def normalise_headers(headers: Sequence[tuple[str, Any]] | None) -> tuple[tuple[str, bytes | None], ...]:
    return tuple((k, None if v is None else bytes(v)) for k, v in headers or ())


def assert_consumed_exactly(sent: Sequence[Message], consumed: Sequence[Message]) -> None:
    """Per partition: offsets 0..n-1 in order, and exactly the sent records in send order."""
    want = by_partition(sent)
    got = by_partition(consumed)
    assert sorted(got) == sorted(want), f"consumed partitions {sorted(got)}, produced to {sorted(want)}"
    for p, records in want.items():
        offsets = [m.offset for m in got[p]]
        assert offsets == list(range(len(records))), (
            f"partition {p}: offsets {_summary(offsets)}, want 0..{len(records) - 1}"
        )
        received = [m.without_offset() for m in got[p]]
        if received != records:
            pairs = zip(received, records, strict=False)
            first = next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(received), len(records)))
            pytest.fail(
                f"partition {p}: {len(received)} records consumed, {len(records)} produced; first difference at "
                f"offset {first}:\n  got  {received[first] if first < len(received) else None}\n"
                f"  want {records[first] if first < len(records) else None}"
            )


def _summary(values: Sequence[Any]) -> str:
    return (
        repr(list(values))
        if len(values) <= 12
        else f"{list(values[:6])}...{list(values[-6:])} ({len(values)})"
    )


def decode_stored(batches: dict[int, list[bytes]]) -> dict[int, list[Message]]:
    """The stored log, decoded record by record (what the broker holds, never re-encoded)."""
    out: dict[int, list[Message]] = {}
    for p, datas in batches.items():
        records = out.setdefault(p, [])
        for data in datas:
            _, decoded = decode_batch(data)
            for r in decoded:
                records.append(
                    Message(p, r.key, r.value, normalise_headers(r.headers), r.timestamp, r.offset)
                )
    return out


def assert_stored_codec(batches: dict[int, list[bytes]], codec: str) -> None:
    """Every stored batch carries ``codec``: the client really compressed what it sent."""
    want = CODEC_IDS[codec]
    seen = {p: [parse_batch_header(b).compression_type for b in datas] for p, datas in batches.items()}
    bad = {p: codecs for p, codecs in seen.items() if any(c != want for c in codecs)}
    assert not bad, f"stored batches should all be {want.name}; codec ids per partition: {bad}"
    assert any(seen.values()), "nothing was stored"


def assert_stored_exactly(batches: dict[int, list[bytes]], sent: Sequence[Message]) -> None:
    """The broker stored exactly what was sent, per partition in send order, from offset 0."""
    stored = decode_stored(batches)
    stored_no_empty = {p: ms for p, ms in stored.items() if ms}
    assert_consumed_exactly(sent, [m for ms in stored_no_empty.values() for m in ms])
