"""Codec benchmark: mockbroker's generated message codecs vs kafka-python's, side by side.

Not a test: it measures, in one process and one run, how fast each codec does the same work
on the same bytes, and prints the ratio ours / kafka-python (higher is better for us).

    python bench/codec.py                  # full run, prints the table
    python bench/codec.py --quick          # short run (smoke check, numbers are rough)
    python bench/codec.py --write          # also append a dated section to bench/RESULTS.md
    python bench/codec.py --json out.json  # also write the results as JSON
    python bench/codec.py --profile        # also cProfile our JoinGroup decode+encode
    python bench/codec.py --baseline REV   # also time mockbroker_protocol/messages/ as of git REV, same run
    python bench/codec.py --instructions   # also count instructions per op under valgrind
                                           # (load-independent; add --no-timing to skip timing)
    python bench/codec.py --no-pure        # skip the pure-shape rows

When the compiled codecs (mockbroker_protocol/_compiled/, mypyc) are in use, "ours" is the compiled shape and
rows "ours pure shape" run mockbroker_protocol/messages/ of this checkout with the compiled shape refused,
in the same process on the same bytes (MOCKBROKER_PURE_CODEC=1 makes "ours" pure altogether).

Scenarios:
  * decode+encode ops/s: Heartbeat v4 request; JoinGroup v9 response (leader's view, 50 members,
    ids like ``consumer-<n>-<uuid4>``, ~60-byte subscription metadata); OffsetCommit v9 request
    (one topic, 50 partitions, metadata strings).
  * MB/s: Produce v9 request decode (10 partitions x one 64 KiB record batch each) and Fetch v12
    response encode (10 partitions x one 64 KiB batch each; ours via ``encode_chunks``, the
    zero-copy path the broker writes with, kafka-python via ``encode``). A row for our plain
    ``encode`` (which copies the batches into one bytes object) is shown for reference.

Method: every scenario is checked first (both codecs must produce identical bytes for the same
message, or the run stops). Each timed body is warmed up, then an iteration count is
calibrated so one repeat takes about ``--target`` seconds; that count is fixed, and the median
of ``--repeats`` repeats is reported. Repeats of ours and kafka-python's alternate (in
alternating order), so load drifting on a shared machine hits both alike; the ratio reported is
the median of the per-repeat ratios of back-to-back timings, with their range, and it is the
number to read on a noisy machine. The garbage collector is off while a repeat is timed (as
``timeit`` does). Only the standard library's ``time.perf_counter_ns`` does the timing, so
anyone can rerun this.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import gc
import importlib
import io
import json
import os
import platform
import pstats
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path

import kafka.protocol.consumer.fetch as k_fetch
import kafka.protocol.consumer.group as k_group
import kafka.protocol.producer.produce as k_produce

from mockbroker_protocol import _runtime
from mockbroker_protocol.consumer_protocol import ConsumerProtocolSubscription, encode_subscription
from mockbroker_protocol.messages.fetch import FetchableTopicResponse, FetchResponse, PartitionData
from mockbroker_protocol.messages.heartbeat import HeartbeatRequest
from mockbroker_protocol.messages.join_group import JoinGroupResponse, JoinGroupResponseMember
from mockbroker_protocol.messages.offset_commit import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from mockbroker_protocol.messages.produce import PartitionProduceData, ProduceRequest, TopicProduceData
from mockbroker_protocol.records import SimpleRecord, build_batch

RESULTS_PATH = Path(__file__).with_name("RESULTS.md")
RESULTS_HEADER = """\
# Codec benchmark results

Results appended by `bench/codec.py` (`python bench/codec.py --write`; `--quick` for a short
smoke run; `--json PATH` for machine-readable output). Each section is one run: mockbroker's
generated codecs (`mockbroker_protocol.messages`) and kafka-python's, timed side by side in the same process
on the same bytes (checked identical before timing), median of several repeats per scenario.

This runs on a shared, noisy machine: absolute ops/s and MB/s move with the load (2x between
runs is normal), so read the **ratio ours / kafka-python** (higher means ours is faster). Repeats
of the two codecs are interleaved; the ratio is the median of the per-repeat ratios of
back-to-back timings, and its range is shown. The load average recorded with each run says how
noisy it was. For produce decode and fetch encode, MB/s is message bytes handled per second: on
our zero-copy paths it measures per-partition overhead, not copying speed. Rows marked [ref] are
for reference (our copying `encode` of a fetch response, which the broker does not use).

Targets: **>= 5x kafka-python on the group APIs** (Heartbeat, JoinGroup, OffsetCommit
decode+encode), and **zero copy** of record batches on produce decode (records are memoryview
slices of the request bytes) and fetch encode (the stored batch objects themselves are handed
to the socket as chunks). The zero-copy facts are verified by code on every run.
"""

MIB = 1024 * 1024
BATCH_SIZE = 64 * 1024
N_RECORD_PARTITIONS = 10


# --------------------------------------------------------------------------- scenario data


def _member_id(rng: random.Random, n: int) -> str:
    return f"consumer-{n}-{uuid.UUID(int=rng.getrandbits(128), version=4)}"


def _subscription_metadata() -> bytes:
    """A ConsumerProtocolSubscription v1 blob (~60 bytes), as a consumer sends in JoinGroup."""
    sub = ConsumerProtocolSubscription(
        topics=["orders-events", "payments-events", "inventory"], user_data=None
    )
    return encode_subscription(sub, 1)


def _batch(rng: random.Random, size: int = BATCH_SIZE) -> bytes:
    """One uncompressed v2 record batch of exactly ``size`` bytes (1 KiB-ish values)."""
    n = size // 1040
    last = 1000
    for _ in range(20):
        values = [rng.randbytes(1000) for _ in range(n - 1)] + [rng.randbytes(max(0, last))]
        batch = build_batch(
            [SimpleRecord(key=b"key-%d" % i, value=v) for i, v in enumerate(values)],
            base_timestamp=1_700_000_000_000,
        )
        if len(batch) == size:
            return batch
        last += size - len(batch)
    raise RuntimeError(f"could not build a batch of exactly {size} bytes (got {len(batch)})")


@dataclass
class Scenario:
    name: str
    unit: str  # "ops/s" or "MB/s"
    ours: Callable[[], object]
    kafka: Callable[[], object]
    bytes_per_op: int = 0  # for MB/s
    note: str = ""
    extra_ours: dict[str, Callable[[], object]] = field(default_factory=dict)
    # what our body does, so --baseline can do the same with another revision's classes:
    # our top-level class, the version, the message bytes, and "roundtrip" (decode+encode),
    # "decode" or "encode_chunks" (of the decoded message)
    subject: tuple[type, int, bytes, str] | None = None


def _check(name: str, ours: bytes, theirs: bytes) -> None:
    if bytes(ours) != bytes(theirs):
        raise SystemExit(
            f"FAIL {name}: the codecs disagree ({len(ours)} vs {len(theirs)} bytes); "
            f"first difference at {next((i for i, (a, b) in enumerate(zip(ours, theirs, strict=False)) if a != b), None)}"
        )


def _k_roundtrip(kcls: type, data: bytes, version: int) -> bytes:
    obj = kcls.decode(data, version=version)
    # Harness workaround: kafka-python's decode returns objects without `_header` set, and its
    # encode reads it, so encoding a decoded object raises AttributeError. Set it to None.
    obj._header = None
    return obj.encode(version=version)


def heartbeat() -> Scenario:
    v = 4
    rng = random.Random(4)
    fields = dict(
        group_id="orders-service", generation_id=17, member_id=_member_id(rng, 3), group_instance_id=None
    )
    data = HeartbeatRequest(**fields).encode(v)
    _check("Heartbeat v4 build", data, k_group.HeartbeatRequest[v](**fields).encode(version=v))
    _check("Heartbeat v4 ours round trip", HeartbeatRequest.decode(data, v).encode(v), data)
    _check("Heartbeat v4 kafka-python round trip", _k_roundtrip(k_group.HeartbeatRequest, data, v), data)

    decode, kdecode = HeartbeatRequest.decode, k_group.HeartbeatRequest.decode

    def ours() -> bytes:
        return decode(data, v).encode(v)

    def kafka() -> bytes:
        obj = kdecode(data, version=v)
        obj._header = None  # harness workaround, see _k_roundtrip
        return obj.encode(version=v)

    return Scenario(
        "Heartbeat v4 request decode+encode",
        "ops/s",
        ours,
        kafka,
        note=f"{len(data)} B",
        subject=(HeartbeatRequest, v, data, "roundtrip"),
    )


def join_group_fields() -> tuple[dict, list[dict]]:
    rng = random.Random(9)
    meta = _subscription_metadata()
    members = [
        dict(member_id=_member_id(rng, n), group_instance_id=None, metadata=meta) for n in range(1, 51)
    ]
    top = dict(
        throttle_time_ms=0,
        error_code=0,
        generation_id=42,
        protocol_type="consumer",
        protocol_name="cooperative-sticky",
        leader=members[0]["member_id"],
        skip_assignment=False,
        member_id=members[0]["member_id"],
    )
    return top, members


def join_group() -> Scenario:
    v = 9
    top, members = join_group_fields()
    ours_obj = JoinGroupResponse(**top, members=[JoinGroupResponseMember(**m) for m in members])
    KJ = k_group.JoinGroupResponse
    k_obj = KJ[v](**top, members=[KJ.JoinGroupResponseMember(**m) for m in members])
    data = ours_obj.encode(v)
    _check("JoinGroup v9 build", data, k_obj.encode(version=v))
    _check("JoinGroup v9 ours round trip", JoinGroupResponse.decode(data, v).encode(v), data)
    _check("JoinGroup v9 kafka-python round trip", _k_roundtrip(KJ, data, v), data)

    decode, kdecode = JoinGroupResponse.decode, KJ.decode

    def ours() -> bytes:
        return decode(data, v).encode(v)

    def kafka() -> bytes:
        obj = kdecode(data, version=v)
        obj._header = None  # harness workaround, see _k_roundtrip
        return obj.encode(version=v)

    meta_len = len(members[0]["metadata"])
    return Scenario(
        "JoinGroup v9 response decode+encode",
        "ops/s",
        ours,
        kafka,
        note=f"{len(data)} B; 50 members, {meta_len} B metadata",
        subject=(JoinGroupResponse, v, data, "roundtrip"),
    )


def offset_commit() -> Scenario:
    v = 9
    rng = random.Random(8)
    top = dict(
        group_id="orders-service",
        generation_id_or_member_epoch=42,
        member_id=_member_id(rng, 7),
        group_instance_id=None,
    )
    parts = [
        dict(
            partition_index=p,
            committed_offset=1_000_000 + rng.randrange(10_000_000),
            committed_leader_epoch=3,
            committed_metadata=f"host=worker-{p % 8}.example;ts={1_700_000_000 + p}",
        )
        for p in range(50)
    ]
    ours_obj = OffsetCommitRequest(
        **top,
        topics=[
            OffsetCommitRequestTopic(
                name="orders-events", partitions=[OffsetCommitRequestPartition(**p) for p in parts]
            )
        ],
    )
    KO = k_group.OffsetCommitRequest
    KT = KO.OffsetCommitRequestTopic
    k_obj = KO[v](
        **top,
        topics=[KT(name="orders-events", partitions=[KT.OffsetCommitRequestPartition(**p) for p in parts])],
    )
    data = ours_obj.encode(v)
    _check("OffsetCommit v9 build", data, k_obj.encode(version=v))
    _check("OffsetCommit v9 ours round trip", OffsetCommitRequest.decode(data, v).encode(v), data)
    _check("OffsetCommit v9 kafka-python round trip", _k_roundtrip(KO, data, v), data)

    decode, kdecode = OffsetCommitRequest.decode, KO.decode

    def ours() -> bytes:
        return decode(data, v).encode(v)

    def kafka() -> bytes:
        obj = kdecode(data, version=v)
        obj._header = None  # harness workaround, see _k_roundtrip
        return obj.encode(version=v)

    return Scenario(
        "OffsetCommit v9 request decode+encode",
        "ops/s",
        ours,
        kafka,
        note=f"{len(data)} B; 1 topic, 50 partitions",
        subject=(OffsetCommitRequest, v, data, "roundtrip"),
    )


def record_batches() -> list[bytes]:
    rng = random.Random(64)
    return [_batch(rng) for _ in range(N_RECORD_PARTITIONS)]


def produce(batches: list[bytes]) -> tuple[Scenario, list[str]]:
    v = 9
    top = dict(transactional_id=None, acks=-1, timeout_ms=30_000)
    ours_obj = ProduceRequest(
        **top,
        topic_data=[
            TopicProduceData(
                name="orders-events",
                partition_data=[PartitionProduceData(index=i, records=b) for i, b in enumerate(batches)],
            )
        ],
    )
    KP = k_produce.ProduceRequest
    KT = KP.TopicProduceData
    k_obj = KP[v](
        **top,
        topic_data=[
            KT(
                name="orders-events",
                partition_data=[KT.PartitionProduceData(index=i, records=b) for i, b in enumerate(batches)],
            )
        ],
    )
    data = ours_obj.encode(v)
    _check("Produce v9 build", data, k_obj.encode(version=v))
    _check("Produce v9 ours round trip", ProduceRequest.decode(data, v).encode(v), data)
    _check("Produce v9 kafka-python round trip", _k_roundtrip(KP, data, v), data)

    # Zero-copy fact 1, verified: every decoded records field is a memoryview over `data` itself.
    decoded = ProduceRequest.decode(data, v)
    recs = [p.records for t in decoded.topic_data for p in t.partition_data]
    if len(recs) != N_RECORD_PARTITIONS:
        raise SystemExit(f"FAIL Produce v9: {len(recs)} partitions decoded, expected {N_RECORD_PARTITIONS}")
    for i, r in enumerate(recs):
        if not (isinstance(r, memoryview) and r.obj is data):
            raise SystemExit(
                f"FAIL zero copy, Produce v9 decode: partition {i} records is {type(r).__name__}"
                + (f" over {type(r.obj).__name__} id {id(r.obj)}" if isinstance(r, memoryview) else "")
                + f", not a memoryview over the input bytes (id {id(data)})"
            )
        if bytes(r) != batches[i]:
            raise SystemExit(f"FAIL Produce v9 decode: partition {i} records differ from the batch sent")
    k_recs = [p.records for t in KP.decode(data, version=v).topic_data for p in t.partition_data]
    k_kind = type(k_recs[0]).__name__ + (
        " over the input" if isinstance(k_recs[0], memoryview) and k_recs[0].obj is data else ""
    )
    facts = [
        f"zero copy, Produce v9 decode: all {len(recs)} partitions' records are memoryview slices whose "
        f".obj is the input bytes object (verified; kafka-python gives {k_kind})"
    ]

    decode, kdecode = ProduceRequest.decode, KP.decode

    def ours() -> object:
        return decode(data, v)

    def kafka() -> object:
        return kdecode(data, version=v)

    sc = Scenario(
        "Produce v9 request decode",
        "MB/s",
        ours,
        kafka,
        bytes_per_op=len(data),
        note=f"{len(data)} B; {N_RECORD_PARTITIONS} x 64 KiB batch",
        subject=(ProduceRequest, v, data, "decode"),
    )
    return sc, facts


def fetch(batches: list[bytes]) -> tuple[Scenario, list[str]]:
    v = 12

    def part_fields(i: int) -> dict:
        return dict(
            partition_index=i,
            error_code=0,
            high_watermark=123_456 + i,
            last_stable_offset=123_456 + i,
            log_start_offset=0,
            aborted_transactions=None,
            preferred_read_replica=-1,
        )

    ours_obj = FetchResponse(
        throttle_time_ms=0,
        error_code=0,
        session_id=987_654,
        responses=[
            FetchableTopicResponse(
                topic="orders-events",
                partitions=[PartitionData(**part_fields(i), records=b) for i, b in enumerate(batches)],
            )
        ],
    )
    KF = k_fetch.FetchResponse
    KT = KF.FetchableTopicResponse
    k_obj = KF[v](
        throttle_time_ms=0,
        error_code=0,
        session_id=987_654,
        responses=[
            KT(
                topic="orders-events",
                partitions=[KT.PartitionData(**part_fields(i), records=b) for i, b in enumerate(batches)],
            )
        ],
    )
    chunks = ours_obj.encode_chunks(v)
    joined = b"".join(chunks)
    _check("Fetch v12 build (ours encode_chunks vs kafka-python encode)", joined, k_obj.encode(version=v))
    _check("Fetch v12 ours encode vs encode_chunks", ours_obj.encode(v), joined)
    _check("Fetch v12 ours round trip", FetchResponse.decode(joined, v).encode(v), joined)

    # Zero-copy fact 2, verified: the batch objects themselves are in the chunk list.
    for i, b in enumerate(batches):
        if not any(c is b for c in chunks):
            raise SystemExit(
                f"FAIL zero copy, Fetch v12 encode_chunks: batch {i} is not in the chunks by identity"
            )
    facts = [
        f"zero copy, Fetch v12 encode_chunks: all {len(batches)} record batches appear in the "
        f"{len(chunks)}-chunk list as the very same objects (`is`, verified); "
        f"{sum(len(c) for c in chunks if not any(c is b for b in batches))} B of framing copied"
    ]

    def ours() -> object:
        return ours_obj.encode_chunks(v)

    def kafka() -> object:
        return k_obj.encode(version=v)

    def ours_copying() -> object:
        return ours_obj.encode(v)

    sc = Scenario(
        "Fetch v12 response encode",
        "MB/s",
        ours,
        kafka,
        bytes_per_op=len(joined),
        note=f"{len(joined)} B; {N_RECORD_PARTITIONS} x 64 KiB batch; ours = encode_chunks",
        extra_ours={"Fetch v12 response encode, ours .encode (copies) [ref]": ours_copying},
        subject=(FetchResponse, v, joined, "encode_chunks"),
    )
    return sc, facts


# --------------------------------------------------------------------------- baseline


def load_baseline(rev: str) -> tuple[str, str]:
    """Export mockbroker_protocol/messages/ as of git revision ``rev`` into a temporary package.

    Returns (package name, short hash). The old modules import mockbroker_protocol._runtime, primitives and
    schema from this checkout, so they must still be compatible (they are across codegen changes
    that only reshape the generated functions)."""
    root = Path(__file__).resolve().parent.parent

    def git(*a: str) -> bytes:
        return subprocess.run(["git", "-C", str(root), *a], check=True, capture_output=True).stdout

    short = git("rev-parse", "--short", rev).decode().strip()
    names = git("ls-tree", "--name-only", rev, "mockbroker_protocol/messages/").decode().split()
    tmp = Path(tempfile.mkdtemp(prefix="codec-baseline-"))
    pkg = tmp / f"baseline_{short}"
    pkg.mkdir()
    for name in names:
        if name.endswith(".py"):
            (pkg / Path(name).name).write_bytes(git("show", f"{rev}:{name}"))
    sys.path.insert(0, str(tmp))
    return pkg.name, short


def load_pure_shape() -> str | None:
    """When the compiled shape is in use: mockbroker_protocol/messages/ of this checkout imported a second
    time, as package ``pure_shape``, with the compiled shape refused (MOCKBROKER_PURE_CODEC=1 while
    it is imported), so both shapes run in one process on the same bytes. None when this process
    already runs the pure shape."""
    shapes = _runtime.codec_shapes()
    if set(shapes.values()) != {"compiled"}:
        return None
    root = Path(__file__).resolve().parent.parent
    tmp = Path(tempfile.mkdtemp(prefix="codec-pure-"))
    pkg = tmp / "pure_shape"
    pkg.mkdir()
    for src in (root / "mockbroker_protocol" / "messages").glob("*.py"):
        (pkg / src.name).write_bytes(src.read_bytes())
    sys.path.insert(0, str(tmp))
    before = os.environ.get(_runtime.PURE_CODEC_ENV)
    os.environ[_runtime.PURE_CODEC_ENV] = "1"
    try:
        for name in shapes:
            importlib.import_module(f"pure_shape.{name}")
    finally:
        if before is None:
            del os.environ[_runtime.PURE_CODEC_ENV]
        else:
            os.environ[_runtime.PURE_CODEC_ENV] = before
        _runtime.SHAPES.update(shapes)  # the copies recorded "pure" under the same names
    return pkg.name


def baseline_body(sc: Scenario, package: str) -> Callable[[], object]:
    """The scenario's body done by the baseline's class of the same name, on the same bytes."""
    assert sc.subject is not None
    cls, v, data, kind = sc.subject
    module = importlib.import_module(f"{package}.{cls.__module__.rsplit('.', 1)[1]}")
    bcls = getattr(module, cls.__name__)
    decode = bcls.decode
    if kind == "roundtrip":
        _check(f"{sc.name}: baseline round trip", decode(data, v).encode(v), data)
        return lambda: decode(data, v).encode(v)
    if kind == "decode":
        return lambda: decode(data, v)
    obj = decode(data, v)
    _check(f"{sc.name}: baseline encode_chunks", b"".join(obj.encode_chunks(v)), data)
    return lambda: obj.encode_chunks(v)


# --------------------------------------------------------------------------- instruction counts


def _count_instructions(body_spec: str, iterations: int, baseline: str | None) -> int:
    """Instructions executed by a child process that runs one body ``iterations`` times."""
    cmd = [
        "valgrind",
        "--tool=cachegrind",
        "--cache-sim=no",
        "--cachegrind-out-file=/dev/null",
        sys.executable,
        str(Path(__file__).resolve()),
        "--run-body",
        f"{body_spec}:{iterations}",
    ]
    if baseline:
        cmd += ["--baseline", baseline]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stderr
    m = re.search(r"I\s+refs:\s+([\d,]+)", out)
    if not m:
        raise SystemExit(f"no instruction count in valgrind's output:\n{out[-2000:]}")
    return int(m.group(1).replace(",", ""))


def instruction_counts(scenarios: list[Scenario], base_iterations: int, baseline: str | None) -> list[dict]:
    """Per-op instruction counts of each ops/s scenario's bodies (difference of two runs).

    Small messages get more iterations (about ``base_iterations`` x 4 KiB of message in all), so
    the difference stands well above the few thousand instructions two start-ups differ by."""
    results = []
    for i, sc in enumerate(scenarios):
        if sc.unit != "ops/s" or sc.subject is None:
            continue
        iterations = base_iterations * max(1, round(4096 / len(sc.subject[2])))
        keys = ["ours", "kafka"] + (["pure"] if f"{sc.name}, ours pure shape" in sc.extra_ours else [])
        keys += ["baseline"] if baseline else []
        counts = {}
        for key in keys:
            print(f"counting instructions: {sc.name}, {key} ...", file=sys.stderr, flush=True)
            spec = f"{i}:{key}"
            counts[key] = round(
                (_count_instructions(spec, iterations, baseline) - _count_instructions(spec, 0, baseline))
                / iterations
            )
        results.append({"scenario": sc.name, "iterations": iterations, **counts})
    return results


def instruction_table(results: list[dict], baseline_label: str | None) -> str:
    head = ["scenario", "ours", "kafka-python", "kafka-python / ours"]
    pure = any("pure" in r for r in results)
    if pure:
        head += ["ours pure shape", "kafka-python / ours pure shape"]
    if baseline_label:
        head += [f"ours at {baseline_label}", f"kafka-python / ours at {baseline_label}"]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]
    for r in results:
        cells = [r["scenario"], f"{r['ours']:,}", f"{r['kafka']:,}", f"**{r['kafka'] / r['ours']:.2f}x**"]
        if pure:
            cells += [f"{r['pure']:,}", f"{r['kafka'] / r['pure']:.2f}x"] if "pure" in r else ["", ""]
        if baseline_label:
            cells += [f"{r['baseline']:,}", f"{r['kafka'] / r['baseline']:.2f}x"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------------- timing


def _time_loop(fn: Callable[[], object], iterations: int) -> int:
    """Nanoseconds for ``iterations`` calls of ``fn``, with the GC off (as timeit does)."""
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter_ns()
        for _ in range(iterations):
            fn()
        return time.perf_counter_ns() - t0
    finally:
        if gc_was_on:
            gc.enable()


def _calibrate(fn: Callable[[], object], target_s: float) -> int:
    """Warm up, then the iteration count that takes about ``target_s``."""
    n = 1
    while True:
        ns = _time_loop(fn, n)
        if ns >= 0.2e9 * target_s or n >= 1 << 24:
            break
        n *= 2
    return max(1, int(n * target_s * 1e9 / max(ns, 1)))


@dataclass
class Row:
    scenario: str
    unit: str
    note: str
    ours: float  # median rate over the repeats
    kafka: float  # median rate over the repeats
    ratio: float  # median over the repeats of ours / kafka-python, each pair timed back to back
    ratio_min: float
    ratio_max: float
    ours_iterations: int
    kafka_iterations: int
    ours_rates: list[float]
    kafka_rates: list[float]


def _rate(sc_unit: str, bytes_per_op: int, iterations: int, ns: int) -> float:
    ops = iterations * 1e9 / ns
    return ops * bytes_per_op / MIB if sc_unit == "MB/s" else ops


def run_scenario(sc: Scenario, repeats: int, target_s: float) -> list[Row]:
    bodies = {"ours": sc.ours, "kafka": sc.kafka, **sc.extra_ours}
    iters = {k: _calibrate(fn, target_s) for k, fn in bodies.items()}
    rates: dict[str, list[float]] = {k: [] for k in bodies}
    order = list(bodies)
    for _ in range(repeats):
        # Interleaved, in alternating order, so load drifting on a shared machine hits each body
        # alike; each repeat's ratio compares bodies timed back to back.
        for k in order:
            rates[k].append(_rate(sc.unit, sc.bytes_per_op, iters[k], _time_loop(bodies[k], iters[k])))
        order.reverse()
    rows = []
    for k in ["ours", *sc.extra_ours]:
        ratios = [a / b for a, b in zip(rates[k], rates["kafka"], strict=True)]
        rows.append(
            Row(
                sc.name if k == "ours" else k,
                sc.unit,
                sc.note if k == "ours" else "",
                statistics.median(rates[k]),
                statistics.median(rates["kafka"]),
                statistics.median(ratios),
                min(ratios),
                max(ratios),
                iters[k],
                iters["kafka"],
                [round(r, 1) for r in rates[k]],
                [round(r, 1) for r in rates["kafka"]],
            )
        )
    return rows


# --------------------------------------------------------------------------- reporting


def _fmt(value: float, unit: str) -> str:
    if unit == "MB/s":
        return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"
    return f"{value:,.0f}"


def table(rows: list[Row]) -> str:
    head = ["scenario", "unit", "ours", "kafka-python", "ours / kafka-python", "ratio range", "message"]
    body = [
        [
            r.scenario,
            r.unit,
            _fmt(r.ours, r.unit),
            _fmt(r.kafka, r.unit),
            f"**{r.ratio:.2f}x**",
            f"{r.ratio_min:.2f}-{r.ratio_max:.2f}",
            r.note,
        ]
        for r in rows
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * 5 + ["---"]) + "|"]
    lines += ["| " + " | ".join(b) + " |" for b in body]
    return "\n".join(lines)


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def environment(args: argparse.Namespace) -> dict:
    return {
        "utc": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "kafka_python": metadata.version("kafka-python"),
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "mode": "quick" if args.quick else "full",
        "codec_shapes": dict(_runtime.SHAPES),
        "repeats": args.repeats,
        "target_s_per_repeat": args.target,
    }


def profile_join_group(seconds: float) -> str:
    """cProfile of our JoinGroup v9 decode+encode loop; the top functions by own time."""
    sc = join_group()
    n = max(1, int(_calibrate(sc.ours, seconds)))
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(n):
        sc.ours()
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).strip_dirs().sort_stats("tottime").print_stats(12)
    return f"{n} iterations of ours JoinGroup v9 decode+encode under cProfile:\n" + buf.getvalue()


def write_results(env: dict, rows: list[Row], facts: list[str], extra: list[str]) -> None:
    existing = RESULTS_PATH.read_text() if RESULTS_PATH.exists() else ""
    if not existing.strip():
        existing = RESULTS_HEADER
    section = [
        "",
        f"## {env['utc']} ({env['mode']} run)",
        "",
        f"- Python: {env['python']}; kafka-python: {env['kafka_python']}",
        "- codec shapes ('ours' rows): "
        + ", ".join(f"{k} {v}" for k, v in env["codec_shapes"].items())
        + "; other modules pure",
        f"- CPU: {env['cpu']} ({env['cpus']} logical CPUs); load average (1/5/15 min): "
        + " / ".join(f"{x:.2f}" for x in env["loadavg"]),
        f"- method: median of {env['repeats']} interleaved repeats, ~{env['target_s_per_repeat']} s each, GC off; "
        "ratio = median (and range) of the per-repeat ratios of back-to-back timings",
        "- load average after the run: " + " / ".join(f"{x:.2f}" for x in env["loadavg_after"]),
        "",
        table(rows) if rows else "(timing skipped: --no-timing)",
        "",
        *[f"- {f}" for f in facts],
        "",
        *extra,
    ]
    RESULTS_PATH.write_text(existing.rstrip("\n") + "\n" + "\n".join(section).rstrip("\n") + "\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="short run: 3 repeats of ~0.05 s")
    ap.add_argument("--repeats", type=int, help="repeats per body (default 7, quick 3)")
    ap.add_argument("--target", type=float, help="seconds per repeat (default 0.25, quick 0.05)")
    ap.add_argument("--write", action="store_true", help=f"append a dated section to {RESULTS_PATH.name}")
    ap.add_argument("--json", metavar="PATH", help="write the results as JSON to PATH")
    ap.add_argument("--profile", action="store_true", help="cProfile our JoinGroup decode+encode")
    ap.add_argument(
        "--baseline",
        metavar="REV",
        help="also time mockbroker_protocol/messages/ as of git revision REV (same bytes, same run, interleaved)",
    )
    ap.add_argument(
        "--instructions",
        nargs="?",
        const=100,
        type=int,
        metavar="N",
        help="also count instructions per op of the ops/s scenarios under valgrind (N ops, default 100)",
    )
    ap.add_argument("--no-timing", action="store_true", help="skip the timed runs (with --instructions)")
    ap.add_argument(
        "--no-pure",
        action="store_true",
        help="do not also run the pure shape (rows 'ours pure shape' appear when the compiled shape is in use)",
    )
    ap.add_argument("--run-body", help=argparse.SUPPRESS)  # internal: SCENARIO:BODY:N, for --instructions
    args = ap.parse_args(argv)
    args.repeats = args.repeats or (3 if args.quick else 7)
    args.target = args.target or (0.05 if args.quick else 0.25)

    batches = record_batches()
    facts: list[str] = []
    scenarios = [heartbeat(), join_group(), offset_commit()]
    for make in (produce, fetch):
        sc, f = make(batches)
        scenarios.append(sc)
        facts += f
    pure_pkg = None if args.no_pure else load_pure_shape()
    if pure_pkg:
        for sc in scenarios:
            if sc.subject is not None and sc.subject[0].__module__.rsplit(".", 1)[1] in _runtime.SHAPES:
                sc.extra_ours[f"{sc.name}, ours pure shape"] = baseline_body(sc, pure_pkg)
    baseline_label = None
    if args.baseline:
        package, short = load_baseline(args.baseline)
        baseline_label = f"{args.baseline} ({short})" if args.baseline != short else short
        for sc in scenarios:
            sc.extra_ours[f"{sc.name}, ours at {baseline_label}"] = baseline_body(sc, package)

    if args.run_body:
        index, key, n = args.run_body.split(":")
        sc = scenarios[int(index)]
        suffix = "ours pure shape" if key == "pure" else f"ours at {baseline_label}"
        body = {"ours": sc.ours, "kafka": sc.kafka}.get(key) or next(
            fn for name, fn in sc.extra_ours.items() if name.endswith(suffix)
        )
        for _ in range(3):  # warm up: first calls fill caches (kafka-python compiles its codecs)
            body()
        gc.disable()  # as when timing; a collection landing in one run and not the other is noise
        for _ in range(int(n)):
            body()
        return 0
    print("verified: both codecs give identical bytes for every scenario's message", flush=True)

    env = environment(args)
    rows: list[Row] = []
    for sc in scenarios if not args.no_timing else []:
        print(f"timing {sc.name} ...", file=sys.stderr, flush=True)
        rows += run_scenario(sc, args.repeats, args.target)
    env["loadavg_after"] = [round(x, 2) for x in os.getloadavg()]
    extra: list[str] = []
    if baseline_label:
        facts.append(
            f"rows 'ours at {baseline_label}': mockbroker_protocol/messages/ as of {baseline_label}, timed in the same "
            "run on the same bytes, interleaved with the others"
        )
    if args.instructions:
        counts = instruction_counts(scenarios, args.instructions, args.baseline)
        extra = [
            "Instructions per decode+encode (valgrind cachegrind `I refs`, PYTHONHASHSEED=0, GC off; "
            "difference between N ops and 0 ops in fresh processes after 3 warm-up ops, N = "
            + ", ".join(f"{c['iterations']:,}" for c in counts)
            + "; independent of the machine's load):",
            "",
            instruction_table(counts, baseline_label),
            "",
        ]

    print()
    print(
        f"{env['utc']}  {env['python']}  kafka-python {env['kafka_python']}  {env['cpu']}  "
        f"load {env['loadavg']}  ({env['mode']}: median of {args.repeats} x ~{args.target} s)"
    )
    if rows:
        print(table(rows))
    print()
    for f in facts:
        print(f"- {f}")
    if extra:
        print()
        print("\n".join(extra))

    if args.profile:
        print()
        print(profile_join_group(1.0))
    if args.write:
        write_results(env, rows, facts, extra)
        print(f"appended to {RESULTS_PATH}")
    if args.json:
        Path(args.json).write_text(
            json.dumps({"environment": env, "rows": [asdict(r) for r in rows], "facts": facts}, indent=2)
            + "\n"
        )
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
