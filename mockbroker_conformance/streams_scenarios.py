"""The Kafka Streams scenarios: a real Kafka Streams application (the word count of
``drivers/streams``, one driver process per instance) against the target, with either group
protocol (the ``kafka-streams`` rows: classic, the client-side StreamsPartitionAssignor;
``kafka-streams/streams``: KIP-1071, the broker assigns the tasks).

Each scenario checks the application's output, read through a reference path (confluent-kafka,
read_committed), against the true word counts of what it was fed, and the instances' tasks as
each reports them (``tasks`` events: KafkaStreams#metadataForLocalThreads); on mockbroker also the
group as the coordinator holds it. Only the ``kafka-streams`` rows run them; those rows run no
other scenario (``streams`` is their kind, see ``mismatch``).
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import itertools
import re
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from mockbroker_conformance.clients import ClientSpec
from mockbroker_conformance.model import ScenarioFailed
from mockbroker_conformance.process import DriverProcess, Event, wait_for
from mockbroker_conformance.targets import TargetCluster

WAIT_S = 30.0  # one expected outcome: an instance's start includes a JVM's
PARTITIONS = 4  # of the input topic, so 4 tasks per subtopology
# Subtopology 0 reads the input and writes the repartition topic; 1 counts (the state store).
ALL_TASKS = frozenset(f"{s}_{p}" for s in (0, 1) for p in range(PARTITIONS))
STATEFUL = frozenset(t for t in ALL_TASKS if t.startswith("1_"))
WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel")
# For the streams protocol (KIP-1071) the client's session timeout, heartbeat interval and
# num.standby.replicas are ignored: they are group configs, the first two set on the targets
# (group.streams.*: targets.py and runner.make_target), the standbys on the group by the scenario
# that wants them (streams.num.standby.replicas). The classic protocol's are the client's.
CLASSIC_TIMING = {"consumer.session.timeout.ms": "6000", "consumer.heartbeat.interval.ms": "500"}
KIND = "streams"
NOT_STREAMS_CLIENT = "a Kafka Streams scenario: only the Kafka Streams application (the kafka-streams columns) runs it"
NOT_A_CLIENT_SCENARIO = ("a Kafka Streams application is not a client driven command by command: "
                         "it runs the streams-* scenarios only")  # fmt: skip


def mismatch(client_kind: str, scenario_kind: str) -> str | None:
    """Why a client of one kind cannot run a scenario of another (None when they match)."""
    if client_kind == scenario_kind:
        return None
    return NOT_STREAMS_CLIENT if scenario_kind == KIND else NOT_A_CLIENT_SCENARIO


class StreamsContext(Protocol):
    """What these scenarios use of the runner's ``scenarios.Context``."""

    client: ClientSpec
    cluster: TargetCluster
    scenario: str
    drivers: list[DriverProcess]

    @property
    def mockbroker(self) -> Any: ...

    async def topic(self, base: str, partitions: int, replication_factor: int = 1) -> str: ...

    def group(self, base: str) -> str: ...

    async def crash(self, d: DriverProcess) -> None: ...


# -- the application's instances -------------------------------------------------------------------

_state_root: list[Path] = []


def _state_dir(name: str) -> str:
    """A fresh state.dir per instance, under one temporary folder removed at exit."""
    if not _state_root:
        root = Path(tempfile.mkdtemp(prefix="mockbroker-streams-"))
        atexit.register(shutil.rmtree, root, True)
        _state_root.append(root)
    path = _state_root[0] / name
    path.mkdir()
    return str(path)


@dataclass(frozen=True)
class App:
    """One application: its id (the group id) and its input and output topics."""

    id: str
    input: str
    output: str


_instances = itertools.count(1)


async def instance(ctx: StreamsContext, role: str, app: App, **config: str) -> DriverProcess:
    """Start one instance of ``app`` (a JVM: it says hello, then starts the application)."""
    client_id = f"{ctx.client.short}-{ctx.scenario}-{role}-{next(_instances)}"
    if not ctx.client.name.endswith("/streams"):
        config = {**CLASSIC_TIMING, **config}
    argv = [*ctx.client.argv(ctx.cluster.bootstrap, client_id), "--application-id", app.id, "--input", app.input,
            "--output", app.output, "--state-dir", _state_dir(client_id)]  # fmt: skip
    for key, value in config.items():
        argv += ["--config", f"{key}={value}"]
    d = DriverProcess(f"{ctx.client.name} {role}", argv, ctx.client.env(), client_id)
    ctx.drivers.append(d)
    await d.start(WAIT_S)
    return d


def _last(d: DriverProcess, event: str) -> Event | None:
    found = d.find(lambda e: e.get("event") == event)
    return found[-1] if found else None


def active(d: DriverProcess) -> frozenset[str]:
    last = _last(d, "tasks")
    return frozenset(last["active"]) if last else frozenset()


def standby(d: DriverProcess) -> frozenset[str]:
    last = _last(d, "tasks")
    return frozenset(last["standby"]) if last else frozenset()


def running(d: DriverProcess) -> bool:
    last = _last(d, "state")
    return last is not None and last["state"] == "RUNNING"


async def settled(what: str, want: Callable[[], bool], *drivers: DriverProcess) -> None:
    """Wait until every instance is RUNNING and ``want`` holds (tasks as the instances report them)."""

    def check() -> bool:
        return all(running(d) for d in drivers) and want()

    try:
        await wait_for(check, what, WAIT_S, *drivers)
    except ScenarioFailed as exc:
        seen = "; ".join(f"{d.name}: {_last(d, 'state')}, active {sorted(active(d))}, standby {sorted(standby(d))}" for d in drivers)
        raise ScenarioFailed(f"{exc} (seen: {seen})") from None


def split(*drivers: DriverProcess) -> Callable[[], bool]:
    """Every task active on exactly one of ``drivers``, each some."""

    def check() -> bool:
        owned = [active(d) for d in drivers]
        return all(owned) and sum(map(len, owned)) == len(ALL_TASKS) and frozenset().union(*owned) == ALL_TASKS

    return check


# -- input and output ------------------------------------------------------------------------------


def lines(batch: int, n: int = 24) -> list[str]:
    return [" ".join(WORDS[(batch * 5 + i * j) % len(WORDS)] for j in range(1, 4)) for i in range(n)]


def word_counts(text: list[str]) -> dict[str, int]:
    """What the word count computes: lower case, split on non-word characters (Java's \\W+)."""
    counts: collections.Counter[str] = collections.Counter()
    for line in text:
        counts.update(w for w in re.split(r"[^a-zA-Z0-9_]+", line.lower()) if w)
    return dict(counts)


class Output:
    """The latest count per word in the output topic, read through the reference path
    (confluent-kafka, no group, read_committed: an aborted exactly-once transaction is not read)."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition

        self.latest: dict[str, int] = {}
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False,
                                  "isolation.level": "read_committed", "client.id": "conformance-output", "log_level": 0})  # fmt: skip
        self.consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])

    def poll(self) -> dict[str, int]:
        for message in self.consumer.consume(num_messages=500, timeout=0.2):
            key = message.key()
            if message.error() is None and key is not None:
                self.latest[key.decode()] = int.from_bytes(message.value() or b"", "big", signed=True)
        return self.latest

    def close(self) -> None:
        self.consumer.close()


async def feed(ctx: StreamsContext, app: App, batch: int, sent: list[str]) -> None:
    """Append a batch of lines to the input (the reference path), keyed so they spread over its partitions."""
    text = lines(batch)
    await ctx.cluster.seed(app.input, [(i % PARTITIONS, f"line-{i}", line) for i, line in enumerate(text)])
    sent += text


async def counted(out: Output, sent: list[str], what: str, *drivers: DriverProcess) -> None:
    """Wait until the output's latest counts are exactly the true counts of every line fed."""
    want = word_counts(sent)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while await asyncio.to_thread(out.poll) != want:
        for d in drivers:
            if d.exited:
                raise ScenarioFailed(f"{d.name} exited while waiting for {what}{d._tail()}")
        if loop.time() > deadline:
            raise ScenarioFailed(f"timed out after {WAIT_S:.0f}s waiting for {what}: counts {out.latest}, expected {want}")


async def application(ctx: StreamsContext, input_exists: bool = True) -> App:
    name = ctx.group("wordcount")
    app = App(name, f"{name}-input", f"{name}-output")
    await ctx.cluster.create_topic(app.output, 1)
    if input_exists:
        await ctx.cluster.create_topic(app.input, PARTITIONS)
    return app


async def with_output(ctx: StreamsContext, app: App, body: Callable[[Output], Awaitable[None]]) -> None:
    out = Output(ctx.cluster.bootstrap, app.output)
    try:
        await body(out)
    finally:
        await asyncio.to_thread(out.close)


async def group_on_mockbroker(ctx: StreamsContext, app: App, members: int) -> Any:
    """On mockbroker: the group is Stable with ``members`` members, of the protocol's type."""
    if ctx.mockbroker is None:
        return None
    kind = "streams" if ctx.client.name.endswith("/streams") else "classic"
    return await ctx.mockbroker.wait_for_group(app.id, members=members, group_type=kind, timeout=WAIT_S)


# -- the scenarios ---------------------------------------------------------------------------------


async def streams_wordcount(ctx: StreamsContext) -> None:
    """One instance owns every task; the counts of two batches are exact."""
    app = await application(ctx)
    a = await instance(ctx, "a", app)
    await settled("the instance RUNNING with all 8 tasks", lambda: active(a) == ALL_TASKS, a)
    sent: list[str] = []

    async def body(out: Output) -> None:
        for batch in (0, 1):
            await feed(ctx, app, batch, sent)
            await counted(out, sent, f"the counts of {batch + 1} batch(es)", a)

    await with_output(ctx, app, body)
    await group_on_mockbroker(ctx, app, 1)


async def streams_scale_out(ctx: StreamsContext) -> None:
    """A second instance joins: the tasks split between the two, none twice; counts stay exact."""
    app = await application(ctx)
    a = await instance(ctx, "a", app)
    await settled("the first instance RUNNING with all 8 tasks", lambda: active(a) == ALL_TASKS, a)
    sent: list[str] = []

    async def body(out: Output) -> None:
        await feed(ctx, app, 0, sent)
        await counted(out, sent, "the counts of the first batch", a)
        b = await instance(ctx, "b", app)
        await settled("the 8 tasks split between the two instances", split(a, b), a, b)
        await feed(ctx, app, 1, sent)
        await counted(out, sent, "the counts of both batches with two instances", a, b)

    await with_output(ctx, app, body)
    await group_on_mockbroker(ctx, app, 2)


async def streams_crash(ctx: StreamsContext) -> None:
    """Two instances (exactly_once_v2); one is SIGKILLed: once its session expires the survivor
    owns every task, and the counts are exact (no record counted twice, none lost)."""
    app = await application(ctx)
    eos = {"processing.guarantee": "exactly_once_v2"}
    a, b = await asyncio.gather(instance(ctx, "a", app, **eos), instance(ctx, "b", app, **eos))
    await settled("the 8 tasks split between the two instances", split(a, b), a, b)
    sent: list[str] = []

    async def body(out: Output) -> None:
        await feed(ctx, app, 0, sent)
        await counted(out, sent, "the counts of the first batch", a, b)
        await ctx.crash(b)
        await settled("the survivor owning all 8 tasks once the killed instance's session expired",
                      lambda: active(a) == ALL_TASKS, a)  # fmt: skip
        await feed(ctx, app, 1, sent)
        await counted(out, sent, "the counts after the crash", a)

    await with_output(ctx, app, body)
    await group_on_mockbroker(ctx, app, 1)


async def streams_standby(ctx: StreamsContext) -> None:
    """num.standby.replicas=1 (the client's config for classic; for KIP-1071 the group config
    streams.num.standby.replicas, set on the application's group with an admin client before it
    starts): each instance holds the other's stateful tasks as standbys; one is SIGKILLed and the
    survivor's standbys become its active tasks, with the state they kept (counts exact)."""
    app = await application(ctx)
    if ctx.client.name.endswith("/streams"):
        await ctx.cluster.alter_group_configs(app.id, {"streams.num.standby.replicas": "1"})
    config = {"processing.guarantee": "exactly_once_v2", "num.standby.replicas": "1"}
    a, b = await asyncio.gather(instance(ctx, "a", app, **config), instance(ctx, "b", app, **config))

    def standbys_placed() -> bool:
        return split(a, b)() and standby(a) == active(b) & STATEFUL and standby(b) == active(a) & STATEFUL

    await settled("the tasks split, each stateful task with its standby on the other instance", standbys_placed, a, b)
    sent: list[str] = []

    async def body(out: Output) -> None:
        await feed(ctx, app, 0, sent)
        await counted(out, sent, "the counts of the first batch", a, b)
        kept = standby(a)
        await ctx.crash(b)
        await settled(f"the survivor's standby tasks {sorted(kept)} active, with every other task",
                      lambda: active(a) == ALL_TASKS and not standby(a), a)  # fmt: skip
        await feed(ctx, app, 1, sent)
        await counted(out, sent, "the counts after the standby took over", a)

    await with_output(ctx, app, body)


async def streams_missing_topic(ctx: StreamsContext) -> None:
    """Started before its input topic exists: the application is told so (MissingSourceTopicException:
    with KIP-1071 after max.poll.interval.ms of the broker's MISSING_SOURCE_TOPICS status, whose
    detail it carries; with classic from its own assignor), its thread is replaced, and once the
    topic is created it gets its tasks and counts exactly."""
    app = await application(ctx, input_exists=False)
    a = await instance(ctx, "a", app, **{"max.poll.interval.ms": "5000"})
    error = await a.wait(lambda e: e.get("event") == "client_error", "the missing source topic reported", WAIT_S)
    if error.get("error") != "MissingSourceTopicException":
        raise ScenarioFailed(f"expected a MissingSourceTopicException, got {error}")
    if ctx.client.name.endswith("/streams") and f"Source topics {app.input} are missing." not in str(error.get("message")):
        raise ScenarioFailed(f"the exception does not carry the broker's status detail: {error.get('message')!r}")
    if ctx.cluster.auditor is not None and not ctx.client.name.endswith("/streams"):
        # The thread that died is gone without a LeaveGroup: with the classic protocol Kafka Streams
        # never sends one (StreamsConfig's consumer default internal.leave.group.on.close=false, so
        # that a restarting instance does not rebalance); the broker expires it after its session.
        ctx.cluster.auditor.excuse(f"{a.client_id}-StreamThread-1")
    if ctx.mockbroker is not None and ctx.client.name.endswith("/streams"):
        snap = await ctx.mockbroker.describe_group(app.id)
        want = {"status": "MISSING_SOURCE_TOPICS", "detail": f"Source topics {app.input} are missing."}
        if snap is None or snap.topology_status != want:
            raise ScenarioFailed(f"the coordinator's topology status is {getattr(snap, 'topology_status', None)}, not {want}")
    await ctx.cluster.create_topic(app.input, PARTITIONS)
    await settled("the instance RUNNING with all 8 tasks once the topic exists", lambda: active(a) == ALL_TASKS, a)
    sent: list[str] = []

    async def body(out: Output) -> None:
        await feed(ctx, app, 0, sent)
        await counted(out, sent, "the counts once the topic exists", a)

    await with_output(ctx, app, body)


# (id, title, scenario): scenarios.py registers them with kind "streams".
STREAMS_SCENARIOS: list[tuple[str, str, Callable[[StreamsContext], Awaitable[None]]]] = [
    ("streams-wordcount", "Kafka Streams: word count, one instance", streams_wordcount),
    ("streams-scale-out", "Kafka Streams: a second instance joins", streams_scale_out),
    ("streams-crash", "Kafka Streams: an instance crashes (exactly_once_v2)", streams_crash),
    ("streams-standby", "Kafka Streams: the standby takes over (num.standby.replicas=1)", streams_standby),
    ("streams-missing-topic", "Kafka Streams: missing source topic, then created", streams_missing_topic),
]
