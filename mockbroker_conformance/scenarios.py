"""The scenarios: each drives one client's driver processes against one target cluster and checks
the outcome from the clients' reports, and from the broker's side when the target is mockbroker
(its control API: group snapshots, committed offsets, the request and event logs).

A scenario is an async function of a ``Context``. It raises ``ScenarioFailed`` (what was expected,
what was seen) or ``NotSupported`` (the client or the target cannot do it, and why); returning is
a pass, unless the client audit found something meanwhile (mockbroker only).
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mockbroker_conformance import share_scenarios as share
from mockbroker_conformance.clients import ClientSpec
from mockbroker_conformance.model import NotSupported, ScenarioFailed
from mockbroker_conformance.process import DriverProcess, Event, wait_for, wait_for_async
from mockbroker_conformance.streams_scenarios import KIND as STREAMS
from mockbroker_conformance.streams_scenarios import STREAMS_SCENARIOS
from mockbroker_conformance.targets import TargetCluster

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
WAIT_S = 20.0  # one expected outcome; generous: CI machines are shared and slow
SESSION_TIMEOUT_MS = 6000  # members that must survive; heartbeats every 300 ms
CRASH_SESSION_TIMEOUT_MS = 2000  # the member a scenario kills: its session runs out soon
API_KEYS = {"Produce": 0, "FindCoordinator": 10, "JoinGroup": 11}


class Context:
    """One scenario run: the client under test, the target cluster, the drivers it started."""

    def __init__(self, client: ClientSpec, cluster: TargetCluster, scenario: str, start_timeout: float = WAIT_S) -> None:
        self.client = client
        self.cluster = cluster
        self.scenario = scenario
        self.drivers: list[DriverProcess] = []
        self.start_timeout = start_timeout
        self._ids = itertools.count(1)

    @property
    def mockbroker(self) -> Any:
        """The async control facade when the target is mockbroker, else None."""
        return self.cluster.control

    async def spawn(self, role: str, requires: tuple[str, ...] = ()) -> DriverProcess:
        """Start a driver; NotSupported when its hello lists one of ``requires`` as unsupported."""
        client_id = f"{self.client.short}-{self.scenario}-{role}-{next(self._ids)}"
        d = DriverProcess(f"{self.client.name} {role}", self.client.argv(self.cluster.bootstrap, client_id), self.client.env(), client_id)
        self.drivers.append(d)
        await d.start(self.start_timeout)
        unsupported = d.hello.get("unsupported") or {}
        for feature in requires:
            if feature in unsupported:
                raise NotSupported(unsupported[feature])
        return d

    async def topic(self, base: str, partitions: int, replication_factor: int = 1) -> str:
        name = self.cluster.name(f"{self.scenario}-{base}")
        await self.cluster.create_topic(name, partitions, replication_factor)
        return name

    def group(self, base: str) -> str:
        return self.cluster.name(f"{self.scenario}-{base}")

    async def crash(self, d: DriverProcess) -> None:
        """Kill a driver on purpose (no LeaveGroup); the audit excuses its silence."""
        if self.cluster.auditor is not None:
            self.cluster.auditor.excuse(d.client_id)
        await d.crash()


# -- reading the drivers' events -------------------------------------------------------------------


def assignment(d: DriverProcess) -> set[int] | None:
    """The member's current partitions, from its last assignment event (None before the first)."""
    for e in reversed(d.events):
        if e.get("event") in ("assigned", "revoked", "lost"):
            return set(e.get("partitions") or [])
    return None


def records(d: DriverProcess, since: int = 0) -> list[Event]:
    return d.find(lambda e: e.get("event") == "record", since)


def values_by_partition(d: DriverProcess, since: int = 0) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for r in records(d, since):
        out.setdefault(r["partition"], []).append(r["value"])
    return out


def subscribe_cmd(topic: str, group: str, **extra: Any) -> dict[str, Any]:
    return {"cmd": "subscribe", "topic": topic, "group": group, "session_timeout_ms": SESSION_TIMEOUT_MS,
            "heartbeat_interval_ms": 300, "assignor": "range", **extra}  # fmt: skip


async def member(ctx: Context, role: str, topic: str, group: str, requires: tuple[str, ...] = (), **extra: Any) -> DriverProcess:
    d = await ctx.spawn(role, requires)
    await d.call(subscribe_cmd(topic, group, **extra), "subscribed", WAIT_S)
    return d


async def wait_assigned(what: str, want: Callable[[], bool], *drivers: DriverProcess) -> None:
    await wait_for(want, what, WAIT_S, *drivers)


def seed_records(partitions: int, per_partition: int, tag: str, start: int = 0) -> list[tuple[int, str | None, str]]:
    return [(p, f"k{p}", f"{tag}-{p}-{i}") for i in range(start, start + per_partition) for p in range(partitions)]


async def split_between(a: DriverProcess, b: DriverProcess, partitions: int) -> None:
    """Wait until a and b together own every partition, each some, none twice."""

    def split() -> bool:
        pa, pb = assignment(a), assignment(b)
        return bool(pa and pb and not pa & pb and pa | pb == set(range(partitions)))

    await wait_assigned(f"the {partitions} partitions split between two members", split, a, b)


async def produced(p: DriverProcess, topic: str, records_: list[dict[str, Any]], **extra: Any) -> list[Any]:
    event = await p.call({"cmd": "produce", "topic": topic, "records": records_, **extra}, "produced", WAIT_S)
    offsets: list[Any] = event.get("offsets") or []
    if len(offsets) != len(records_):
        raise ScenarioFailed(f"{len(records_)} records sent, {len(offsets)} acknowledged")
    return offsets


async def consume_all(ctx: Context, topic: str, partitions: int, expect: dict[int, list[str]], role: str = "consumer") -> DriverProcess:
    """A fresh consumer of the same client reads every partition from the start; the values must be
    exactly ``expect`` per partition, in order."""
    c = await ctx.spawn(role)
    await c.call({"cmd": "assign", "topic": topic, "partitions": list(range(partitions))}, "assigned", WAIT_S)
    total = sum(len(v) for v in expect.values())
    await wait_for(lambda: len(records(c)) >= total, f"{total} records", WAIT_S, c)
    got = values_by_partition(c)
    if got != {p: v for p, v in expect.items() if v}:
        raise ScenarioFailed(f"consumed {got}, expected {expect}")
    return c


# -- produce and consume ---------------------------------------------------------------------------


def produce_consume(codec: str) -> Callable[[Context], Awaitable[None]]:
    async def scenario(ctx: Context) -> None:
        topic = await ctx.topic("t", 3)
        p = await ctx.spawn("producer", (f"compression.{codec}",))
        # Compressible values: some clients send a batch uncompressed when compressing does not shrink it.
        sent: list[dict[str, Any]] = [
            {"key": f"k{i}", "value": f"{codec}-{i}-" + "abc" * 100, "partition": i % 3} for i in range(12)
        ]
        offsets = await produced(p, topic, sent, compression=codec)
        _check_offsets(offsets, sent)
        expect = {q: [r["value"] for r in sent if r["partition"] == q] for q in range(3)}
        await consume_all(ctx, topic, 3, expect)
        if ctx.mockbroker is not None:  # stored as the client compressed it (batches pass through)
            for q in range(3):
                stored = await ctx.mockbroker.read(topic, q)
                codecs = {r.compression for r in stored}
                if codecs != {codec}:
                    raise ScenarioFailed(f"partition {q} holds batches compressed with {sorted(codecs)}, not {codec}")

    return scenario


def _check_offsets(offsets: list[Any], sent: list[dict[str, Any]]) -> None:
    """Where the client reports offsets, each partition's run 0, 1, 2... in send order."""
    nxt: dict[int, int] = {}
    for ack, r in zip(offsets, sent, strict=True):
        if ack is None or ack[1] is None:
            continue  # this client does not report offsets (kcat)
        if ack[0] != r["partition"] or ack[1] != nxt.get(r["partition"], 0):
            raise ScenarioFailed(f"record {r['value']} acknowledged at {ack}, expected [{r['partition']}, {nxt.get(r['partition'], 0)}]")
        nxt[r["partition"]] = ack[1] + 1


async def idempotent_produce(ctx: Context) -> None:
    topic = await ctx.topic("t", 2)
    p = await ctx.spawn("producer", ("idempotence",))
    sent: list[dict[str, Any]] = [{"key": f"k{i}", "value": f"idem-{i}", "partition": i % 2} for i in range(10)]
    _check_offsets(await produced(p, topic, sent, idempotent=True), sent)
    await consume_all(ctx, topic, 2, {q: [r["value"] for r in sent if r["partition"] == q] for q in range(2)})
    if ctx.mockbroker is not None:
        inits = await ctx.mockbroker.requests("InitProducerId", client_id=p.client_id)
        if not inits:
            raise ScenarioFailed("the producer never sent InitProducerId: it did not produce idempotently")


# -- consumer groups -------------------------------------------------------------------------------


async def _group_with_records(ctx: Context, partitions: int = 4, per_partition: int = 2) -> tuple[str, str]:
    topic = await ctx.topic("t", partitions)
    await ctx.cluster.seed(topic, seed_records(partitions, per_partition, "seed"))
    group = ctx.group("g")
    await ctx.cluster.coordinator(group)
    return topic, group


async def group_join(ctx: Context) -> None:
    topic, group = await _group_with_records(ctx)
    a = await member(ctx, "a", topic, group)
    await wait_assigned("the member assigned all 4 partitions", lambda: assignment(a) == {0, 1, 2, 3}, a)
    await wait_for(lambda: len(records(a)) >= 8, "the 8 seeded records", WAIT_S, a)
    if ctx.mockbroker is not None:
        snap = await ctx.mockbroker.wait_for_group(group, members=1, timeout=WAIT_S)
        if snap.state != "Stable":
            raise ScenarioFailed(f"group {group} is {snap.state}, not Stable")


async def group_scale_out(ctx: Context) -> None:
    topic, group = await _group_with_records(ctx)
    a = await member(ctx, "a", topic, group)
    await wait_assigned("the first member assigned all 4 partitions", lambda: assignment(a) == {0, 1, 2, 3}, a)
    b = await member(ctx, "b", topic, group)
    await split_between(a, b, 4)
    if ctx.mockbroker is not None:
        await ctx.mockbroker.wait_for_group(group, members=2, timeout=WAIT_S)


async def group_scale_in(ctx: Context) -> None:
    topic, group = await _group_with_records(ctx)
    a = await member(ctx, "a", topic, group)
    await wait_assigned("the first member assigned all 4 partitions", lambda: assignment(a) == {0, 1, 2, 3}, a)
    b = await member(ctx, "b", topic, group)
    await split_between(a, b, 4)
    await b.close(WAIT_S)
    await wait_assigned("the remaining member given all 4 partitions back", lambda: assignment(a) == {0, 1, 2, 3}, a)
    if ctx.mockbroker is not None:
        cid = b.client_id
        leaves = await ctx.mockbroker.requests("LeaveGroup", client_id=cid)
        heartbeats = await ctx.mockbroker.requests("ConsumerGroupHeartbeat", client_id=cid)
        if not leaves and not any(r.request.member_epoch == -1 for r in heartbeats):
            raise ScenarioFailed("the closed member never said it was leaving (no LeaveGroup, no heartbeat with epoch -1)")


async def group_crash(ctx: Context) -> None:
    topic, group = await _group_with_records(ctx)
    a = await member(ctx, "a", topic, group)
    await wait_assigned("the first member assigned all 4 partitions", lambda: assignment(a) == {0, 1, 2, 3}, a)
    b = await member(ctx, "b", topic, group, session_timeout_ms=CRASH_SESSION_TIMEOUT_MS)
    await split_between(a, b, 4)
    await ctx.crash(b)
    await wait_assigned("the survivor given all 4 partitions once the crashed member's session expired",
                        lambda: assignment(a) == {0, 1, 2, 3}, a)  # fmt: skip
    if ctx.mockbroker is not None:
        expired = await ctx.mockbroker.events("member.expired", group_id=group)
        fenced = await ctx.mockbroker.events("consumer_group.member_fenced", group_id=group)
        if not expired and not fenced:
            raise ScenarioFailed("the broker recorded no session expiry for the crashed member")


async def static_restart(ctx: Context) -> None:
    topic, group = await _group_with_records(ctx)
    need = ("static-membership",)
    a = await member(ctx, "a", topic, group, need, instance_id="static-a")
    await wait_assigned("the static member assigned all 4 partitions", lambda: assignment(a) == {0, 1, 2, 3}, a)
    b = await member(ctx, "b", topic, group, need, instance_id="static-b")
    await split_between(a, b, 4)
    before = assignment(a)
    snap = await ctx.mockbroker.wait_for_group(group, members=2, timeout=WAIT_S) if ctx.mockbroker else None
    mark = b.mark()
    # A restart: the process closes (a static member sends no LeaveGroup, KIP-345; a KIP-848 one
    # leaves with epoch -2) and comes back under the same group.instance.id.
    await a.close(WAIT_S)
    a2 = await member(ctx, "a-restarted", topic, group, need, instance_id="static-a")
    await wait_assigned(f"the restarted static member given its partitions {sorted(before or ())} back",
                        lambda: assignment(a2) == before, a2)  # fmt: skip
    moved = b.find(lambda e: e.get("event") in ("revoked", "lost") and bool(e.get("removed")), mark)
    if moved:
        raise ScenarioFailed(f"the other member gave partitions up during the restart: {moved[0]}")
    if ctx.mockbroker is not None and snap is not None:
        after = await ctx.mockbroker.describe_group(group)
        if after.generation_id != snap.generation_id:
            raise ScenarioFailed(f"the group rebalanced over the static restart: generation {snap.generation_id} -> {after.generation_id}")


async def cooperative_rebalance(ctx: Context) -> None:
    topic, group = await _group_with_records(ctx)
    need = ("cooperative",)
    a = await member(ctx, "a", topic, group, need, assignor="cooperative-sticky")
    await wait_assigned("the first member assigned all 4 partitions", lambda: assignment(a) == {0, 1, 2, 3}, a)
    mark = a.mark()
    b = await member(ctx, "b", topic, group, need, assignor="cooperative-sticky")
    await split_between(a, b, 4)
    given_up: set[int] = set()
    for e in a.find(lambda e: e.get("event") in ("revoked", "lost"), mark):
        given_up |= set(e.get("removed") or [])
    kept = assignment(a) or set()
    if given_up & kept:
        raise ScenarioFailed(f"the first member revoked partitions {sorted(given_up & kept)} it kept: an eager rebalance")
    if given_up != assignment(b):
        raise ScenarioFailed(f"the first member gave up {sorted(given_up)}, but the new member owns {sorted(assignment(b) or ())}")


async def commit_resume(ctx: Context) -> None:
    topic, group = await _group_with_records(ctx, partitions=2, per_partition=4)
    a = await member(ctx, "a", topic, group, ("commit",))
    await wait_for(lambda: len(records(a)) >= 8, "the 8 seeded records", WAIT_S, a)
    await a.call({"cmd": "commit", "offsets": {"0": 2, "1": 2}}, "committed", WAIT_S)
    await a.close(WAIT_S)
    if ctx.mockbroker is not None:
        committed = await ctx.mockbroker.committed_offsets(group, topic)
        if committed.get(topic) != {0: 2, 1: 2}:
            raise ScenarioFailed(f"the broker holds committed offsets {committed}, expected {{0: 2, 1: 2}}")
    b = await member(ctx, "b", topic, group)
    await wait_for(lambda: len(records(b)) >= 4, "the 4 records after the committed offsets", WAIT_S, b)
    got = sorted((r["partition"], r["offset"]) for r in records(b))
    if got != [(0, 2), (0, 3), (1, 2), (1, 3)]:
        raise ScenarioFailed(f"the next member resumed at {got}, expected offsets 2 and 3 of each partition")


async def seek_pause_resume(ctx: Context) -> None:
    topic, group = await _group_with_records(ctx, partitions=2, per_partition=3)
    a = await member(ctx, "a", topic, group, ("seek", "pause"))
    await wait_for(lambda: len(records(a)) >= 6, "the 6 seeded records", WAIT_S, a)
    mark = a.mark()
    await a.call({"cmd": "seek", "partition": 0, "offset": 1}, "done", WAIT_S)

    def again() -> list[int]:
        return [r["offset"] for r in records(a, mark) if r["partition"] == 0]

    await wait_for(lambda: again()[:2] == [1, 2], "partition 0 read again from offset 1 after the seek", WAIT_S, a)
    await a.call({"cmd": "pause", "partitions": [1]}, "done", WAIT_S)
    paused = a.mark()
    await ctx.cluster.seed(topic, seed_records(2, 2, "later", start=3))

    def newer(p: int) -> list[int]:
        return [r["offset"] for r in records(a, paused) if r["partition"] == p and r["offset"] >= 3]

    await wait_for(lambda: newer(0) == [3, 4], "new records of the partition still running", WAIT_S, a)
    if newer(1):
        raise ScenarioFailed(f"records {newer(1)} of the paused partition 1 were delivered")
    await a.call({"cmd": "resume", "partitions": [1]}, "done", WAIT_S)
    await wait_for(lambda: newer(1) == [3, 4], "the paused partition's records once resumed", WAIT_S, a)


# -- faults ----------------------------------------------------------------------------------------


async def _other_broker(ctx: Context, current: int | None) -> int:
    others = [b for b in ctx.cluster.broker_ids if b != current]
    return others[0]


async def fault_coordinator_move(ctx: Context) -> None:
    ctx.cluster.require("move_coordinator")
    topic, group = await _group_with_records(ctx, partitions=2)
    a = await member(ctx, "a", topic, group)
    await wait_assigned("the member assigned both partitions", lambda: assignment(a) == {0, 1}, a)
    old = await ctx.cluster.coordinator(group)
    new = await _other_broker(ctx, old)
    seq = _last_request_seq(await ctx.mockbroker.requests()) if ctx.mockbroker else 0
    await ctx.cluster.move_coordinator(group, new)
    await ctx.cluster.seed(topic, seed_records(2, 1, "after-move", start=2))
    await wait_for(lambda: len(records(a)) >= 6, "records produced after the coordinator moved", WAIT_S, a)
    if "commit" not in (a.hello.get("unsupported") or {}):
        await a.call({"cmd": "commit"}, "committed", WAIT_S)  # through the new coordinator
    if ctx.mockbroker is not None:
        cid = a.client_id
        for api in ("Heartbeat", "ConsumerGroupHeartbeat", "OffsetCommit"):
            if await ctx.mockbroker.requests(api, broker=new, client_id=cid, since_seq=seq):
                break
        else:
            await ctx.mockbroker.wait_for_request(
                "ConsumerGroupHeartbeat" if ctx.client.name.endswith("/consumer") else "Heartbeat",
                broker=new, client_id=cid, since_seq=seq, timeout=WAIT_S,
            )  # fmt: skip


def _last_request_seq(requests: list[Any]) -> int:
    return requests[-1].seq if requests else 0


async def fault_leader_move(ctx: Context) -> None:
    ctx.cluster.require("move_leader")
    topic = await ctx.topic("t", 1, replication_factor=3)
    p = await ctx.spawn("producer")
    c = await ctx.spawn("consumer")
    await c.call({"cmd": "assign", "topic": topic, "partitions": [0]}, "assigned", WAIT_S)
    first: list[dict[str, Any]] = [{"key": None, "value": f"before-{i}", "partition": 0} for i in range(10)]
    await produced(p, topic, first)
    await wait_for(lambda: len(records(c)) >= 10, "the first 10 records", WAIT_S, c)
    old = await ctx.cluster.leader(topic, 0)
    await ctx.cluster.move_leader(topic, 0, await _other_broker(ctx, old))
    second: list[dict[str, Any]] = [{"key": None, "value": f"after-{i}", "partition": 0} for i in range(10)]
    await produced(p, topic, second)
    await wait_for(lambda: len(records(c)) >= 20, "all 20 records", WAIT_S, c)
    got = [r["value"] for r in records(c)]
    want = [r["value"] for r in first + second]
    # The ten sent after the move each once, in any order: the producer's first sends go to the
    # old leader and are refused (NOT_LEADER_OR_FOLLOWER), and a producer that is not idempotent
    # and keeps several requests in flight may retry them in another order (Kafka's producer
    # docs: max.in.flight.requests.per.connection > 1 with retries); kafka-python does so in
    # some runs. The ten before the move were all acknowledged before it, so their order is fixed.
    if got[:10] != want[:10] or sorted(got[10:]) != sorted(want[10:]):
        offsets = [r["offset"] for r in records(c)]
        twice = sorted({o for o in offsets if offsets.count(o) > 1})
        raise ScenarioFailed(
            f"consumed {len(got)} records for 20 produced (offsets delivered twice: {twice}; "
            f"missing: {sorted(set(want) - set(got))}): expected each once, the first ten in order"
        )


async def fault_broker_down(ctx: Context) -> None:
    ctx.cluster.require("broker_down")
    topic = await ctx.topic("t", 3, replication_factor=3)
    await ctx.cluster.seed(topic, seed_records(3, 1, "seed"))
    group = ctx.group("g")
    victim = await ctx.cluster.coordinator(group)
    a = await member(ctx, "a", topic, group)
    await wait_for(lambda: len(records(a)) >= 3, "the 3 seeded records", WAIT_S, a)
    await ctx.cluster.broker_down(victim if victim is not None else ctx.cluster.broker_ids[0])
    await ctx.cluster.seed(topic, seed_records(3, 1, "while-down", start=1))
    await wait_for(lambda: len(records(a)) >= 6, "records produced while the coordinator's broker is down", WAIT_S, a)
    if "commit" not in (a.hello.get("unsupported") or {}):
        await a.call({"cmd": "commit"}, "committed", WAIT_S)
    await ctx.cluster.broker_up(victim if victim is not None else ctx.cluster.broker_ids[0])
    await ctx.cluster.seed(topic, seed_records(3, 1, "back-up", start=2))
    await wait_for(lambda: len(records(a)) >= 9, "records produced after the broker came back", WAIT_S, a)


async def fault_retriable_errors(ctx: Context) -> None:
    ctx.cluster.require("push_errors")
    topic = await ctx.topic("t", 2)
    p = await ctx.spawn("producer")
    await ctx.cluster.push_errors("Produce", API_KEYS["Produce"], "NOT_LEADER_OR_FOLLOWER", "NOT_LEADER_OR_FOLLOWER")
    sent: list[dict[str, Any]] = [{"key": None, "value": f"retried-{i}", "partition": i % 2} for i in range(6)]
    await produced(p, topic, sent)
    group = ctx.group("g")
    await ctx.cluster.coordinator(group)
    await ctx.cluster.push_errors("FindCoordinator", API_KEYS["FindCoordinator"], "COORDINATOR_NOT_AVAILABLE", "COORDINATOR_NOT_AVAILABLE")
    a = await member(ctx, "a", topic, group)
    await wait_for(lambda: len(records(a)) >= 6, "the 6 records, each exactly once", WAIT_S, a)
    # Each record exactly once; not necessarily in send order: a producer without idempotence may
    # reorder a partition's batches when it retries with more than one request in flight.
    got = {p: sorted(v) for p, v in values_by_partition(a).items()}
    want = {q: sorted(r["value"] for r in sent if r["partition"] == q) for q in range(2)}
    if got != want:
        raise ScenarioFailed(f"consumed {got}, expected {want}")
    if ctx.mockbroker is not None:
        left = await ctx.mockbroker.pending_errors()
        if left.get("Produce"):
            raise ScenarioFailed(f"the producer never met the queued errors: {left}")


async def fault_latency(ctx: Context) -> None:
    ctx.cluster.require("latency")
    topic, group = await _group_with_records(ctx, partitions=2, per_partition=2)
    await ctx.cluster.set_latency(150)
    p = await ctx.spawn("producer")
    await produced(p, topic, [{"key": None, "value": f"slow-{i}", "partition": i % 2} for i in range(4)])
    a = await member(ctx, "a", topic, group)
    await wait_for(lambda: len(records(a)) >= 8, "the 8 records with 150 ms on every request", WAIT_S, a)


# -- the admin API --------------------------------------------------------------------------------


async def admin(d: DriverProcess, op: str, **args: Any) -> Event:
    """One AdminClient operation of the driver (docs/conformance.md, the ``admin`` command)."""
    return await d.call({"cmd": "admin", "op": op, **args}, "admin", WAIT_S)


def _expect(what: str, got: Any, want: Any) -> None:
    if got != want:
        raise ScenarioFailed(f"{what}: {got!r}, expected {want!r}")


async def admin_operations(ctx: Context) -> None:
    """Topics (create, a second create, describe, delete), a topic config (describe, incremental
    alter, delete back to the default), a partition's earliest and latest offsets, and a group made by
    the admin API alone: offsets altered, listed and one deleted, the group listed, described
    (Empty, no members) and deleted, a second delete refused."""
    d = await ctx.spawn("admin")
    if "admin_ops" not in d.hello:
        raise NotSupported("this driver has no admin commands (only the Java driver's AdminClient has them)")
    topic, group = ctx.cluster.name(f"{ctx.scenario}-t"), ctx.group("g")
    created = await admin(d, "create_topics", topics=[topic], partitions=3)
    _expect("create_topics", (created["created"], created["errors"]), ([topic], {}))
    again = await admin(d, "create_topics", topics=[topic], partitions=3)
    _expect("a second create_topics", again["errors"], {topic: "TopicExistsException"})
    described = await admin(d, "describe_topics", topics=[topic])
    _expect("describe_topics", described["partitions"], {topic: 3})

    configs = (await admin(d, "describe_configs", topic=topic, names=["cleanup.policy", "retention.ms"]))["configs"]
    _expect("cleanup.policy", configs["cleanup.policy"], {"value": "delete", "source": "DEFAULT_CONFIG"})
    altered = await admin(d, "alter_configs", topic=topic, set={"retention.ms": "3600000"})
    _expect("alter_configs", altered["errors"], {})

    def retention(want: dict[str, str]) -> Callable[[], Awaitable[bool]]:
        # Kafka's broker applies a committed config change from the metadata log a moment after
        # IncrementalAlterConfigs answers, so a DescribeConfigs right after may show the old value.
        async def check() -> bool:
            got = (await admin(d, "describe_configs", topic=topic, names=["retention.ms"]))["configs"]["retention.ms"]
            return bool(got == want)

        return check

    await wait_for_async(retention({"value": "3600000", "source": "DYNAMIC_TOPIC_CONFIG"}), "retention.ms 3600000, set", WAIT_S)
    await admin(d, "alter_configs", topic=topic, set={}, delete=["retention.ms"])
    await wait_for_async(retention({"value": "604800000", "source": "DEFAULT_CONFIG"}), "retention.ms back to its default", WAIT_S)

    await ctx.cluster.seed(topic, seed_records(3, 2, "admin")[:5])  # partitions 0, 1: 2 records; 2: 1
    earliest = await admin(d, "list_offsets", topic=topic, partitions=[0, 1, 2], spec="earliest")
    _expect("earliest offsets", earliest["offsets"], {"0": 0, "1": 0, "2": 0})
    latest = await admin(d, "list_offsets", topic=topic, partitions=[0, 1, 2], spec="latest")
    _expect("latest offsets", latest["offsets"], {"0": 2, "1": 2, "2": 1})

    await admin(d, "alter_offsets", group=group, topic=topic, offsets={"0": 2, "1": 1})
    committed = await admin(d, "group_offsets", group=group)
    _expect("the group's offsets", committed["offsets"], {f"{topic}:0": 2, f"{topic}:1": 1})
    if group not in (await admin(d, "list_groups"))["groups"]:
        raise ScenarioFailed(f"list_groups does not list {group}")
    groups = await admin(d, "describe_groups", groups=[group])
    _expect("describe_groups", (groups["groups"], groups["errors"]), ({group: {"state": "EMPTY", "members": 0}}, {}))
    await admin(d, "delete_offsets", group=group, topic=topic, partitions=[1])
    committed = await admin(d, "group_offsets", group=group)
    _expect("the group's offsets after delete_offsets", committed["offsets"], {f"{topic}:0": 2})
    deleted = await admin(d, "delete_groups", groups=[group])
    _expect("delete_groups", (deleted["deleted"], deleted["errors"]), ([group], {}))
    if group in (await admin(d, "list_groups"))["groups"]:
        raise ScenarioFailed(f"list_groups still lists {group} once deleted")
    again = await admin(d, "delete_groups", groups=[group])
    _expect("a second delete_groups", again["errors"], {group: "GroupIdNotFoundException"})

    gone = await admin(d, "delete_topics", topics=[topic])
    _expect("delete_topics", (gone["deleted"], gone["errors"]), ([topic], {}))

    async def unknown() -> bool:
        left = await admin(d, "describe_topics", topics=[topic])
        return bool(left["errors"].get(topic) == "UnknownTopicOrPartitionException")

    await wait_for_async(unknown, f"describe_topics to say {topic} is gone", WAIT_S)



@dataclass(frozen=True)
class Scenario:
    id: str
    title: str
    run: Callable[[Context], Awaitable[None]]
    brokers: int = 1
    fault: bool = False
    kind: str = "client"  # the kind of client that runs it (ClientSpec.kind)


SCENARIOS: list[Scenario] = [
    *(Scenario(f"produce-consume-{c}", f"produce and consume, {c} compression", produce_consume(c)) for c in CODECS),
    Scenario("idempotent-produce", "idempotent producer", idempotent_produce),
    Scenario("group-join", "consumer group: join", group_join),
    Scenario("group-scale-out", "consumer group: scale out", group_scale_out),
    Scenario("group-scale-in", "consumer group: scale in (leave)", group_scale_in),
    Scenario("group-crash", "consumer group: crash (session expiry)", group_crash),
    Scenario("static-restart", "static member restart (KIP-345)", static_restart),
    Scenario("cooperative-rebalance", "cooperative incremental rebalance (KIP-429/848)", cooperative_rebalance),
    Scenario("commit-resume", "commit and resume", commit_resume),
    Scenario("seek-pause-resume", "seek, pause and resume", seek_pause_resume),
    Scenario("fault-coordinator-move", "fault: coordinator moves", fault_coordinator_move, brokers=3, fault=True),
    Scenario("fault-leader-move", "fault: partition leader moves", fault_leader_move, brokers=3, fault=True),
    Scenario("fault-broker-down", "fault: the coordinator's broker goes down", fault_broker_down, brokers=3, fault=True),
    Scenario("fault-retriable-errors", "fault: retriable errors (Produce, FindCoordinator)", fault_retriable_errors, fault=True),
    Scenario("fault-latency", "fault: 150 ms on every request", fault_latency, fault=True),
    Scenario("admin", "admin API: topics, configs, groups, offsets", admin_operations),
    *(Scenario(sid, title, run, kind=STREAMS) for sid, title, run in STREAMS_SCENARIOS),
    # KIP-932 share groups (share_scenarios.py)
    Scenario("share-consume", "share group: three consumers of one partition", share.share_consume),
    Scenario("share-release-redeliver", "share group: a released record redelivered", share.share_release_redeliver),
    Scenario("share-reject-archive", "share group: a rejected record archived", share.share_reject_archive),
    Scenario("share-lock-expiry", "share group: acquisition lock expiry", share.share_lock_expiry),
    Scenario("share-admin", "share group: admin offsets calls", share.share_admin),
]
SCENARIOS_BY_ID = {s.id: s for s in SCENARIOS}
