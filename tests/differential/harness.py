"""The differential harness: one request sequence sent to the real Kafka and to mockbroker, answers compared.

A sequence is a list of ``Step``s (a request, or a function of the run's ``Context`` building one,
and its version), run in order on one connection to each target, on names fresh for the sequence
(``Context.topic``, ``Context.group``: the same names on both targets, unique in the session).
Each answer is turned into a plain tree (dataclasses -> dicts, record batches decoded) and
normalised where the two brokers are free to differ by design: throttle time, cluster id, host and
port, and identities the broker makes up (node ids, topic ids, member ids, timestamps) become
``<kind#n>`` in order of first appearance, so that "the leader is the member that joined first"
or "Fetch by topic id returns the id Metadata gave" still compare. Then the trees are compared
field by field, error messages included; a mismatch fails with every differing field path.

A mismatch mockbroker makes on purpose is listed in docs/divergences.md under an id; a step
names the id and the field paths (fnmatch patterns over ``a.0.b``) it covers, and those fields
are left out of the comparison only if they really differ (a listing nothing needs fails too, so
a fixed divergence gets its listing removed).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import itertools
import os
import re
import socket
import struct
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mockbroker.testing import start_cluster
from mockbroker_protocol import registry
from mockbroker_protocol.hashing import java_hash_map_bucket, java_string_hash
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.records.records import decode_batches

ROOT = Path(__file__).resolve().parents[2]
DIVERGENCES_MD = ROOT / "docs" / "divergences.md"
CLIENT_ID = "differential"
DEADLINE_S = 15.0
_SIZE = struct.Struct(">i")
_names = itertools.count()
_RUN = os.environ.get("MOCKBROKER_DIFFERENTIAL_RUN") or uuid.uuid4().hex[:6]
# How fresh names fall in Java's HashMaps (an audit of answers Kafka gives in a HashMap's order,
# docs/oracle.md): "random" (the default: as the run id falls); "same-bucket": every name shares
# one bucket of any table up to 64 (Kafka answers in insertion order) and later names sort first;
# "reverse-buckets": later names sort last but take earlier buckets (Kafka's order is neither).
_NAMES = os.environ.get("MOCKBROKER_DIFFERENTIAL_NAMES", "random")
_SUFFIX_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789"


def unique(prefix: str) -> str:
    """A name no other sequence of this session (on either broker) uses."""
    n = next(_names)
    if _NAMES == "random":
        return f"{prefix}-{_RUN}-{n}"
    if _NAMES == "same-bucket":
        return _in_bucket(f"n{99999 - n:05d}-{prefix}-{_RUN}-", 0)
    if _NAMES == "reverse-buckets":
        return _in_bucket(f"{prefix}-{_RUN}-{n:05d}-", 63 - n % 64)
    raise ValueError(f"MOCKBROKER_DIFFERENTIAL_NAMES={_NAMES!r}: random, same-bucket or reverse-buckets")


def _in_bucket(stem: str, bucket: int) -> str:
    """``stem`` and two more characters, chosen so that the name's HashMap bucket in a table of
    64 is ``bucket`` (and so ``bucket % 16`` in one of 16, ``bucket % 32`` in one of 32)."""
    for first, second in itertools.product(_SUFFIX_CHARS, repeat=2):
        name = stem + first + second
        if java_hash_map_bucket(java_string_hash(name), 64) == bucket:
            return name
    raise AssertionError(f"no suffix puts {stem!r} in bucket {bucket}")


def listed_divergences() -> set[str]:
    """The ids docs/divergences.md lists (headings ``### D<n>: ...``)."""
    return set(re.findall(r"^### (D\d+)\b", DIVERGENCES_MD.read_text(), re.MULTILINE))


# -- a target -------------------------------------------------------------------------------------


class Connection:
    """One blocking connection speaking our codec; answers decoded with the request's version."""

    def __init__(self, address: tuple[str, int]) -> None:
        self.sock = socket.create_connection(address, timeout=DEADLINE_S)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.correlation = itertools.count(1)

    def send(self, api_key: int, version: int, request: Any) -> int:
        cid = next(self.correlation)
        self.sock.sendall(registry.encode_request(RequestHeader(api_key, version, cid, CLIENT_ID), request))
        return cid

    def send_raw(self, frame: bytes) -> None:
        self.sock.sendall(frame)

    def read(self, api_key: int, version: int, correlation_id: int | None = None) -> Any:
        data = self.read_frame()
        cid, body = registry.decode_response(api_key, version, data)
        if correlation_id is not None and cid != correlation_id:
            raise AssertionError(f"correlation id {cid}, expected {correlation_id}")
        return body

    def read_frame(self) -> bytes:
        size = _SIZE.unpack(self._recv(4))[0]
        return self._recv(size)

    def call(self, api_key: int, version: int, request: Any) -> Any:
        return self.read(api_key, version, self.send(api_key, version, request))

    def closed_by_peer(self) -> bool:
        """True when the broker closes the connection (within the deadline) instead of answering."""
        try:
            return self.sock.recv(1) == b""
        except (ConnectionResetError, TimeoutError):
            return True

    def _recv(self, n: int) -> bytes:
        chunks = []
        while n:
            chunk = self.sock.recv(n)
            if not chunk:
                raise ConnectionError("broker closed the connection")
            chunks.append(chunk)
            n -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        self.sock.close()


@dataclass
class Target:
    """A broker under comparison: its name ("kafka", "mockbroker") and bootstrap address."""

    name: str
    address: tuple[str, int]

    def connect(self) -> Connection:
        return Connection(self.address)


@contextmanager
def mockbroker_target(**settings: Any) -> Iterator[Target]:
    """A mockbroker in its own thread with Kafka's defaults (``kafka_defaults``) and ``settings``,
    no request log, as the target its first bootstrap address names; closed at the end."""
    cluster = start_cluster(kafka_defaults=True, request_log=False, **settings)
    try:
        host, port = cluster.bootstrap_servers.split(",")[0].rsplit(":", 1)
        yield Target("mockbroker", (host, int(port)))
    finally:
        cluster.close()


# -- a sequence -----------------------------------------------------------------------------------


@dataclass
class Context:
    """What a sequence's steps see: its fresh names and the raw answers so far (by step label)."""

    target: Target
    topic: str
    topic2: str
    group: str
    answers: dict[str, Any] = field(default_factory=dict)
    connections: dict[str, Connection] = field(default_factory=dict)

    def conn(self, name: str = "main") -> Connection:
        if name not in self.connections:
            self.connections[name] = self.target.connect()
        return self.connections[name]


Request = Any | Callable[[Context], Any]


@dataclass
class Step:
    """One request of a sequence and how its answer is judged.

    ``until`` repeats the request (deadline DEADLINE_S) until it holds for the raw answer (say,
    a created topic visible in Metadata); only the last answer is compared. ``compare=False``
    keeps the answer for later steps only. ``ignore``: field patterns not compared, for values
    a broker is free to choose (each use says why). ``divergences``: {"D<n>": [patterns]} for
    fields docs/divergences.md lists. ``normalise(tree, ctx)`` rewrites the plain tree before comparison.
    ``conn`` names the connection (several members of a group each use their own); ``send_only``
    sends without reading, a later ``Read(label)`` reads the answer.
    """

    api_key: int
    version: int
    request: Request
    label: str = ""
    until: Callable[[Any], bool] | None = None
    compare: bool = True
    ignore: tuple[str, ...] = ()
    divergences: Mapping[str, Iterable[str]] = field(default_factory=dict)
    normalise: Callable[[Any, Context], Any] | None = None
    conn: str = "main"
    send_only: bool = False


@dataclass
class Read:
    """Read the answer of an earlier ``send_only`` step (by its label), then judged like it."""

    label: str


@dataclass
class Raw:
    """Send raw bytes on a connection (a request our codec would refuse to encode); the answer is
    decoded as ``decode`` (api key, version) says, or, with ``read_frame``, one size-prefixed frame
    kept as bytes (a SASL v0 token: no Kafka header) in ``ctx.answers[label]`` and compared as
    ``normalise`` makes it, or, without either, only whether the broker closed the connection is
    compared."""

    frame: Callable[[Context], bytes]
    label: str = "raw"
    conn: str = "raw"
    decode: tuple[int, int] | None = None
    normalise: Callable[[Any, Context], Any] | None = None
    read_frame: bool = False
    ignore: tuple[str, ...] = ()
    divergences: Mapping[str, Iterable[str]] = field(default_factory=dict)  # as a Step's


Item = Step | Read | Raw


@dataclass
class Outcome:
    """One target's normalised answers, by step label, in order."""

    answers: list[tuple[str, Any]]


def run(target: Target, steps: list[Item], names: tuple[str, str, str]) -> Outcome:
    ctx = Context(target, *names)
    pending: dict[str, tuple[Step, int]] = {}
    steps_by_label: dict[str, Step] = {}
    out: list[tuple[str, Any]] = []
    canon = Canon()
    try:
        for index, item in enumerate(steps):
            if isinstance(item, Raw):
                conn = ctx.conn(item.conn)
                conn.send_raw(item.frame(ctx))
                if item.read_frame:
                    ctx.answers[item.label] = frame = conn.read_frame()
                    out.append((item.label, item.normalise(frame, ctx) if item.normalise else frame.hex()))
                    continue
                if item.decode is None:
                    out.append((item.label, {"closed": conn.closed_by_peer()}))
                    continue
                tree = canon.tree(plain(conn.read(*item.decode)))
                out.append((item.label, item.normalise(tree, ctx) if item.normalise else tree))
                continue
            if isinstance(item, Read):
                step = steps_by_label[item.label]
                _, cid = pending.pop(item.label)
                answer = ctx.conn(step.conn).read(step.api_key, step.version, cid)
            else:
                step = item
                step.label = step.label or f"{index}:{registry.APIS[step.api_key].name}v{step.version}"
                steps_by_label[step.label] = step
                request = step.request(ctx) if callable(step.request) else step.request
                conn = ctx.conn(step.conn)
                if step.send_only:
                    pending[step.label] = (step, conn.send(step.api_key, step.version, request))
                    continue
                answer = conn.call(step.api_key, step.version, request)
                if step.until is not None:
                    end = time.monotonic() + DEADLINE_S
                    while not step.until(answer):
                        if time.monotonic() > end:
                            raise AssertionError(
                                f"{target.name}: {step.label} never satisfied its condition: {answer}"
                            )
                        time.sleep(0.02)  # polling another process's state, with a deadline
                        request = step.request(ctx) if callable(step.request) else step.request
                        answer = conn.call(step.api_key, step.version, request)
            ctx.answers[step.label] = answer
            if step.compare:
                tree = canon.tree(plain(answer))
                if step.normalise is not None:
                    tree = step.normalise(tree, ctx)
                out.append((step.label, tree))
    finally:
        for conn in ctx.connections.values():
            conn.close()
    return Outcome(out)


# -- plain trees and normalisation ----------------------------------------------------------------


def plain(value: Any) -> Any:
    """A generated message as dicts, lists and scalars; a records field as its decoded batches."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        tree = {}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if f.name == "records" and isinstance(item, (bytes, bytearray, memoryview)):
                tree[f.name] = decoded_records(bytes(item))
            else:
                tree[f.name] = plain(item)
        return tree
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def decoded_records(data: bytes) -> Any:
    if not data:
        return data.hex()
    return [
        {"header": dataclasses.asdict(header), "records": [plain(r) for r in records]}
        for header, records in decode_batches(data)
    ]


ZERO_UUID = "00000000-0000-0000-0000-000000000000"
# Field name -> the kind of identity a broker makes up (compared by order of first appearance).
IDENTITY_FIELDS = {
    "node_id": "node",
    "leader_id": "node",
    "controller_id": "node",
    "broker_id": "node",
    "replica_nodes": "node",
    "isr_nodes": "node",
    "offline_replicas": "node",
    "topic_id": "uuid",
    "member_id": "member",
    "leader": "member",
    "log_append_time_ms": "time",
    "producer_id": "producer",
}
# Field name -> a fixed placeholder (values that depend on the machine or the broker's start).
MASKED_FIELDS = {
    "throttle_time_ms": "<throttle>",
    "cluster_id": "<cluster>",
    "host": "<host>",
    "port": "<port>",
    "client_host": "<host>",
}


class Canon:
    """Per target and sequence: made-up identities -> ``<kind#n>`` by first appearance."""

    def __init__(self) -> None:
        self.seen: dict[tuple[str, Any], str] = {}

    def name(self, kind: str, value: Any) -> Any:
        if value in (None, "", -1, ZERO_UUID) or (kind == "node" and isinstance(value, int) and value < 0):
            return value
        key = (kind, value)
        if key not in self.seen:
            self.seen[key] = f"<{kind}#{sum(1 for k in self.seen if k[0] == kind)}>"
        return self.seen[key]

    def tree(self, value: Any, key: str = "") -> Any:
        if isinstance(value, dict):
            return {k: self._field(k, v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.tree(v, key) for v in value]
        return value

    def _field(self, key: str, value: Any) -> Any:
        if key in MASKED_FIELDS and value is not None:
            return MASKED_FIELDS[key]
        kind = IDENTITY_FIELDS.get(key)
        if kind is not None:
            if isinstance(value, list):
                return [self.name(kind, v) for v in value]
            if not isinstance(value, (dict, list)):
                return self.name(kind, value)
        return self.tree(value, key)


# -- comparison -----------------------------------------------------------------------------------


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """``{"a.0.b": leaf}`` for every leaf (an empty list or dict is a leaf too)."""
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, v in enumerate(value):
            out.update(flatten(v, f"{prefix}.{i}" if prefix else str(i)))
        return out
    return {prefix: value}


_MISSING = "<absent>"


def compare(steps: list[Item], kafka: Outcome, mock: Outcome) -> None:
    """Fail with every differing field path neither ignored nor listed; fail on a listing nothing needs."""
    by_label = {s.label: s for s in steps if isinstance(s, (Step, Raw))}
    known = listed_divergences()
    problems: list[str] = []
    used: set[tuple[str, str, str]] = set()
    declared: set[tuple[str, str, str]] = set()
    if [label for label, _ in kafka.answers] != [label for label, _ in mock.answers]:
        problems.append(
            f"answered steps differ: {[lb for lb, _ in kafka.answers]} vs {[lb for lb, _ in mock.answers]}"
        )
    for (label, k_tree), (_, m_tree) in zip(kafka.answers, mock.answers, strict=False):
        step = by_label.get(label)
        ignore = step.ignore if step else ()
        listed = dict(step.divergences) if step else {}
        for div_id, patterns in listed.items():
            if div_id not in known:
                problems.append(f"{label}: divergence {div_id} is not listed in docs/divergences.md")
            for p in patterns:
                declared.add((label, div_id, p))
        k_flat, m_flat = flatten(k_tree), flatten(m_tree)
        for path in sorted(set(k_flat) | set(m_flat), key=_path_key):
            k_val, m_val = k_flat.get(path, _MISSING), m_flat.get(path, _MISSING)
            if k_val == m_val or any(fnmatch.fnmatchcase(path, p) for p in ignore):
                continue
            hit = [(d, p) for d, ps in listed.items() for p in ps if fnmatch.fnmatchcase(path, p)]
            if hit:
                used.update((label, d, p) for d, p in hit)
                continue
            problems.append(f"{label}: {path}: kafka={k_val!r} mockbroker={m_val!r}")
    for label, div_id in sorted({(lb, d) for lb, d, _ in declared} - {(lb, d) for lb, d, _ in used}):
        problems.append(f"{label}: listed divergence {div_id} did not occur: fixed? remove the listing")
    if problems:
        raise AssertionError("Kafka and mockbroker differ:\n  " + "\n  ".join(problems))


def _path_key(path: str) -> list[Any]:
    return [(0, int(p), "") if p.isdigit() else (1, 0, p) for p in path.split(".")]


def differential(
    kafka: Target, mock: Target, steps: list[Item], names: tuple[str, str, str] | None = None
) -> tuple[Outcome, Outcome]:
    """Run ``steps`` on both targets (same fresh names) and compare; both outcomes returned."""
    names = names or (unique("dt"), unique("dt2"), unique("dg"))
    k = run(kafka, steps, names)
    m = run(mock, steps, names)
    compare(steps, k, m)
    return k, m
