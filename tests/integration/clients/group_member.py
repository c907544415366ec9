#!/usr/bin/env python3
"""group_member: one consumer-group member of kafka-python, aiokafka or confluent-kafka, driven
over stdin/stdout by the consumer-group tests (tests/integration/test_groups_*.py).

Each member is its own process so that a test can kill one for real (SIGKILL: no LeaveGroup, the
socket just drops) and restart a static member under the same group.instance.id.

Usage:
  python group_member.py --client kafka-python|aiokafka|confluent --bootstrap h:p[,h:p]
      --group G --topic T --client-id C [--instance-id I] [--assignor range|roundrobin|sticky|
      cooperative-sticky] [--session-timeout-ms 6000] [--heartbeat-interval-ms 200]
      [--rebalance-timeout-ms 10000] [--group-protocol classic|consumer] [--remote-assignor NAME]

--group-protocol consumer (confluent only) joins a KIP-848 consumer group: the broker assigns
(--remote-assignor names its server-side assignor) and the client's session timeout, heartbeat
interval and assignor settings do not apply. Rebalance callbacks are then incremental, and their
events carry "ts", the system-wide monotonic clock, so that callbacks of different processes can
be put in one order.

Events, one JSON object per line on stdout:
  {"event": "ready"}                                   the consumer is created and subscribed
  {"event": "assigned", "added": [p...], "assignment": [p...], "member_id": m, "generation": g}
  {"event": "revoked", "removed": [p...], "assignment": [p...], ...}   (assignment: what is left)
  {"event": "lost", "removed": [p...], "assignment": [], ...}
  {"event": "record", "partition": p, "offset": o, "value": v}
  {"event": "committed", "offsets": {"p": o}}          a commit command succeeded
  {"event": "commit_sent", "generation": g, ...}       the client built its OffsetCommit (aiokafka:
                                                       its debug log; confluent: librdkafka's cgrp log)
  {"event": "commit_failed", "error": name, "cause": name, "code": n}
  {"event": "committed_offsets", "offsets": {"p": o}}  answer to "fetch_committed" (-1: none)
  {"event": "error", "error": name, "code": n, "message": text}   an error the poll loop surfaced
  {"event": "closed"}                                  the consumer was closed; the process exits 0
Commands, one JSON object per line on stdin:
  {"cmd": "commit"}                          commit what was consumed (next offset per partition)
  {"cmd": "commit", "offsets": {"p": o}}     commit exactly these offsets
  {"cmd": "fetch_committed", "partitions": [p...]}
  {"cmd": "pause"} / {"cmd": "resume"}       stop / restart the poll loop. kafka-python and
        confluent-kafka only rejoin a group from poll(), so a paused member does not rejoin a
        rebalance; aiokafka rejoins from a background task, so its pause also holds the next
        on_partitions_revoked callback (the rejoin waits for it) until "resume".
  {"cmd": "close"}                           close the consumer (LeaveGroup unless static) and exit
Only the standard library and the client under test are imported: the process starts fast.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import queue
import re
import sys
import threading
import time
from typing import Any

_emit_lock = threading.Lock()


def emit(event: str, **fields: Any) -> None:
    line = json.dumps({"event": event, **fields}, default=str)
    with _emit_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def read_commands(put: Any) -> None:
    """Forward stdin's JSON lines to ``put``; end of input is a close (the test went away)."""
    for raw in sys.stdin:
        raw = raw.strip()
        if raw:
            put(json.loads(raw))
    put({"cmd": "close"})


def error_fields(exc: BaseException) -> dict[str, Any]:
    """Name, Kafka error code and cause of a client exception, whatever the client."""
    fields: dict[str, Any] = {"error": type(exc).__name__, "message": str(exc)}
    code = getattr(exc, "errno", None)
    # confluent-kafka: KafkaException(KafkaError); kafka-python/aiokafka: errors carry .errno.
    if exc.args and hasattr(exc.args[0], "code") and callable(exc.args[0].code):
        kafka_error = exc.args[0]
        code = kafka_error.code()
        fields["error"] = kafka_error.name()
    cause = exc.__cause__
    if cause is None and exc.args and isinstance(exc.args[0], BaseException):
        cause = exc.args[0]  # kafka-python: CommitFailedError(IllegalGenerationError(...))
    if cause is not None:
        fields["cause"] = type(cause).__name__
        if code is None or code == -1:
            code = getattr(cause, "errno", code)
    fields["code"] = code
    return fields


def offsets_json(offsets: dict[int, int]) -> dict[str, int]:
    return {str(p): o for p, o in sorted(offsets.items())}


# -- kafka-python --------------------------------------------------------------------------------


def run_kafka_python(args: argparse.Namespace) -> None:
    from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition
    from kafka.consumer.subscription_state import ConsumerRebalanceListener
    from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
    from kafka.coordinator.assignors.range import RangePartitionAssignor
    from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

    assignors = {
        "range": RangePartitionAssignor,
        "roundrobin": RoundRobinPartitionAssignor,
        "sticky": StickyPartitionAssignor,
        "cooperative-sticky": CooperativeStickyAssignor,
    }
    consumer = KafkaConsumer(
        bootstrap_servers=args.bootstrap.split(","),
        client_id=args.client_id,
        group_id=args.group,
        group_instance_id=args.instance_id,
        session_timeout_ms=args.session_timeout_ms,
        heartbeat_interval_ms=args.heartbeat_interval_ms,
        max_poll_interval_ms=args.rebalance_timeout_ms,  # sent as JoinGroup's RebalanceTimeoutMs
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        partition_assignment_strategy=[assignors[args.assignor]],
    )
    assignment: set[int] = set()

    def membership() -> dict[str, Any]:
        meta = consumer.group_metadata()
        return {"member_id": meta.member_id, "generation": meta.generation_id}

    class Listener(ConsumerRebalanceListener):
        # Runs on kafka-python's IO loop; it must return promptly.
        def on_partitions_revoked(self, revoked: Any) -> None:
            removed = {tp.partition for tp in revoked}
            assignment.difference_update(removed)
            emit("revoked", removed=sorted(removed), assignment=sorted(assignment), **membership())

        def on_partitions_assigned(self, assigned: Any) -> None:
            added = {tp.partition for tp in assigned}
            if args.assignor == "cooperative-sticky":
                assignment.update(added)
            else:
                assignment.clear()
                assignment.update(added)
            emit("assigned", added=sorted(added), assignment=sorted(assignment), **membership())

        def on_partitions_lost(self, lost: Any) -> None:
            removed = {tp.partition for tp in lost}
            assignment.difference_update(removed)
            emit("lost", removed=sorted(removed), assignment=sorted(assignment), **membership())

    # Subscribe, then fetch the topic's metadata before the first poll() joins: the coordinator
    # takes its metadata snapshot from that fetch. Otherwise kafka-python's leader assigns
    # against a snapshot still empty (or computes the assignment from older metadata) and then
    # rejoins as soon as the subscription's metadata arrives. That rejoin is a real rebalance
    # the tests do not expect, and kafka-python 3.0.12 can lose it: when poll()'s timeout expires
    # while the leader's SyncGroup is in flight, the next poll() finds need_rejoin() false (the
    # snapshots match by then), never collects the finished join, and the member stays
    # "rebalancing" with no assignment and no heartbeats until it is expelled (seen once in ~30
    # runs with poll(100 ms)); hence also the longer poll() below.
    consumer.subscribe([args.topic], listener=Listener())
    consumer.partitions_for_topic(args.topic)
    commands: queue.Queue[dict[str, Any]] = queue.Queue()
    threading.Thread(target=read_commands, args=(commands.put,), daemon=True).start()
    emit("ready")
    consumed: dict[int, int] = {}  # partition -> next offset
    paused = False
    last_error = None
    while True:
        try:
            cmd = commands.get_nowait() if not paused else commands.get(timeout=0.1)
        except queue.Empty:
            cmd = None
        if cmd is not None:
            name = cmd["cmd"]
            if name == "close":
                consumer.close(autocommit=False)
                emit("closed")
                return
            if name == "pause":
                paused = True
            elif name == "resume":
                paused = False
            elif name == "commit":
                offsets = {int(p): o for p, o in cmd.get("offsets", {}).items()} or {
                    p: o for p, o in consumed.items() if p in assignment
                }
                try:
                    consumer.commit(
                        {TopicPartition(args.topic, p): OffsetAndMetadata(o, "", -1) for p, o in offsets.items()}
                    )
                except Exception as exc:
                    emit("commit_failed", **error_fields(exc))
                else:
                    emit("committed", offsets=offsets_json(offsets))
            elif name == "fetch_committed":
                result = {}
                for p in cmd["partitions"]:
                    committed = consumer.committed(TopicPartition(args.topic, p))
                    result[p] = -1 if committed is None else committed
                emit("committed_offsets", offsets=offsets_json(result))
            continue
        if paused:
            continue
        try:
            # Long enough that a join and sync normally finish within one poll (see above).
            batches = consumer.poll(timeout_ms=500)
        except Exception as exc:
            fields = error_fields(exc)
            if fields != last_error:
                emit("error", **fields)
                last_error = fields
            time.sleep(0.1)  # a failing poll returns at once; do not spin
            continue
        for records in batches.values():
            for r in records:
                consumed[r.partition] = r.offset + 1
                emit("record", partition=r.partition, offset=r.offset, value=r.value.decode())


# -- aiokafka ------------------------------------------------------------------------------------


async def run_aiokafka(args: argparse.Namespace) -> None:
    from aiokafka import AIOKafkaConsumer, TopicPartition
    from aiokafka.abc import ConsumerRebalanceListener
    from aiokafka.coordinator.assignors.range import RangePartitionAssignor
    from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor
    from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor

    assignors = {
        "range": RangePartitionAssignor,
        "roundrobin": RoundRobinPartitionAssignor,
        "sticky": StickyPartitionAssignor,
    }
    consumer = AIOKafkaConsumer(
        bootstrap_servers=args.bootstrap,
        client_id=args.client_id,
        group_id=args.group,
        group_instance_id=args.instance_id,
        session_timeout_ms=args.session_timeout_ms,
        heartbeat_interval_ms=args.heartbeat_interval_ms,
        rebalance_timeout_ms=args.rebalance_timeout_ms,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        partition_assignment_strategy=(assignors[args.assignor],),
    )
    loop = asyncio.get_running_loop()
    resumed = asyncio.Event()
    resumed.set()
    assignment: set[int] = set()

    def membership() -> dict[str, Any]:
        # aiokafka has no public accessor for its member id and generation.
        coordinator = consumer._coordinator
        if coordinator is None:
            return {"member_id": None, "generation": None}
        return {"member_id": coordinator.member_id, "generation": coordinator.generation}

    class Listener(ConsumerRebalanceListener):  # type: ignore[misc]
        async def on_partitions_revoked(self, revoked: Any) -> None:
            removed = {tp.partition for tp in revoked}
            assignment.difference_update(removed)
            emit("revoked", removed=sorted(removed), assignment=sorted(assignment), **membership())
            await resumed.wait()  # "pause": hold the rejoin here

        async def on_partitions_assigned(self, assigned: Any) -> None:
            added = {tp.partition for tp in assigned}
            assignment.clear()
            assignment.update(added)
            emit("assigned", added=sorted(added), assignment=sorted(assignment), **membership())

    class CommitSent(logging.Handler):
        """aiokafka logs this line right after building the OffsetCommitRequest from its current
        generation and member id, and right before sending it."""

        def emit(self, record: logging.LogRecord) -> None:
            if record.getMessage().startswith("Sending offset-commit request"):
                emit("commit_sent", **membership())

    coordinator_log = logging.getLogger("aiokafka.consumer.group_coordinator")
    coordinator_log.setLevel(logging.DEBUG)
    coordinator_log.addHandler(CommitSent())

    commands: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    threading.Thread(
        target=read_commands, args=(lambda c: loop.call_soon_threadsafe(commands.put_nowait, c),), daemon=True
    ).start()
    consumer.subscribe([args.topic], listener=Listener())
    # start() returns only once the first assignment arrived (aiokafka waits for it when the
    # consumer subscribed before starting): say "ready" as soon as it is under way.
    starting = asyncio.ensure_future(consumer.start())
    emit("ready")
    try:
        await starting
    except Exception as exc:  # e.g. the JoinGroup was refused: aiokafka raises it from start()
        emit("error", **error_fields(exc))
    consumed: dict[int, int] = {}
    tasks: set[asyncio.Task[None]] = set()

    async def commit(offsets: dict[int, int]) -> None:
        try:
            await consumer.commit({TopicPartition(args.topic, p): o for p, o in offsets.items()})
        except Exception as exc:
            emit("commit_failed", **error_fields(exc))
        else:
            emit("committed", offsets=offsets_json(offsets))

    async def fetch_committed(partitions: list[int]) -> None:
        result = {}
        for p in partitions:
            committed = await consumer.committed(TopicPartition(args.topic, p))
            result[p] = -1 if committed is None else committed
        emit("committed_offsets", offsets=offsets_json(result))

    def spawn(coro: Any) -> None:
        # Commits run as tasks: one may wait behind a parked JoinGroup while the loop goes on.
        task = asyncio.ensure_future(coro)
        tasks.add(task)
        task.add_done_callback(tasks.discard)

    async def consume() -> None:
        last_error = None
        while True:
            await resumed.wait()
            try:
                batches = await consumer.getmany(timeout_ms=100)
            except Exception as exc:
                fields = error_fields(exc)
                if fields != last_error:
                    emit("error", **fields)
                    last_error = fields
                await asyncio.sleep(0.1)  # a failing getmany returns at once; do not spin
                continue
            for records in batches.values():
                for r in records:
                    consumed[r.partition] = r.offset + 1
                    emit("record", partition=r.partition, offset=r.offset, value=r.value.decode())

    # getmany() blocks while the member rejoins (aiokafka holds records back until the new
    # assignment), so commands are served by this loop, apart from consuming.
    consuming = asyncio.ensure_future(consume())
    while True:
        cmd = await commands.get()
        name = cmd["cmd"]
        if name == "close":
            consuming.cancel()
            resumed.set()
            if tasks:
                await asyncio.wait(tasks)
            await consumer.stop()
            emit("closed")
            return
        if name == "pause":
            resumed.clear()
        elif name == "resume":
            resumed.set()
        elif name == "commit":
            offsets = {int(p): o for p, o in cmd.get("offsets", {}).items()} or {
                p: o for p, o in consumed.items() if p in assignment
            }
            spawn(commit(offsets))
        elif name == "fetch_committed":
            spawn(fetch_committed(cmd["partitions"]))


# -- confluent-kafka -----------------------------------------------------------------------------

# librdkafka's cgrp debug line for every OffsetCommit it builds.
_LIBRDKAFKA_COMMITTING = re.compile(r"Committing offsets for \d+ partition\(s\) with generation-id (-?\d+) in join-state (\S+)")


def run_confluent(args: argparse.Namespace) -> None:
    from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition

    class LibrdkafkaLog(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            match = _LIBRDKAFKA_COMMITTING.search(record.getMessage())
            if match:
                emit("commit_sent", generation=int(match.group(1)), join_state=match.group(2))

    rdkafka_log = logging.getLogger("librdkafka")
    rdkafka_log.setLevel(logging.DEBUG)
    rdkafka_log.propagate = False
    rdkafka_log.addHandler(LibrdkafkaLog())

    conf: dict[str, Any] = {
        "bootstrap.servers": args.bootstrap,
        "client.id": args.client_id,
        "group.id": args.group,
        # sent as JoinGroup's (or ConsumerGroupHeartbeat's) RebalanceTimeoutMs; librdkafka wants
        # it >= session.timeout.ms
        "max.poll.interval.ms": max(args.rebalance_timeout_ms, args.session_timeout_ms),
        "enable.auto.commit": False,
        "auto.offset.reset": "earliest",
        "debug": "cgrp",
        "logger": rdkafka_log,
        "error_cb": lambda err: emit("error", error=err.name(), code=err.code(), message=err.str()),
    }
    kip848 = args.group_protocol == "consumer"
    if kip848:
        # KIP-848: the broker decides timeouts and assignment (librdkafka refuses the classic knobs).
        conf["group.protocol"] = "consumer"
        if args.remote_assignor is not None:
            conf["group.remote.assignor"] = args.remote_assignor
    else:
        conf.update({
            "session.timeout.ms": args.session_timeout_ms,
            "heartbeat.interval.ms": args.heartbeat_interval_ms,
            "partition.assignment.strategy": args.assignor,
        })  # fmt: skip
    if args.instance_id is not None:
        conf["group.instance.id"] = args.instance_id
    consumer = Consumer(conf)
    cooperative = kip848 or args.assignor == "cooperative-sticky"
    assignment: set[int] = set()

    def membership() -> dict[str, Any]:
        fields: dict[str, Any] = {"member_id": consumer.memberid(), "generation": None}
        if kip848:
            fields["ts"] = time.monotonic()
        return fields

    def on_assign(c: Any, partitions: list[Any]) -> None:
        added = {tp.partition for tp in partitions}
        if not cooperative:
            assignment.clear()
        assignment.update(added)
        emit("assigned", added=sorted(added), assignment=sorted(assignment), **membership())

    def on_revoke(c: Any, partitions: list[Any]) -> None:
        removed = {tp.partition for tp in partitions}
        assignment.difference_update(removed)
        emit("revoked", removed=sorted(removed), assignment=sorted(assignment), **membership())

    def on_lost(c: Any, partitions: list[Any]) -> None:
        removed = {tp.partition for tp in partitions}
        assignment.difference_update(removed)
        emit("lost", removed=sorted(removed), assignment=sorted(assignment), **membership())

    # The binding (incrementally) assigns and unassigns by itself after each callback.
    consumer.subscribe([args.topic], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)
    commands: queue.Queue[dict[str, Any]] = queue.Queue()
    threading.Thread(target=read_commands, args=(commands.put,), daemon=True).start()
    emit("ready")
    consumed: dict[int, int] = {}
    paused = False
    while True:
        try:
            cmd = commands.get_nowait() if not paused else commands.get(timeout=0.1)
        except queue.Empty:
            cmd = None
        if cmd is not None:
            name = cmd["cmd"]
            if name == "close":
                consumer.close()
                emit("closed")
                return
            if name == "pause":
                paused = True
            elif name == "resume":
                paused = False
            elif name == "commit":
                offsets = {int(p): o for p, o in cmd.get("offsets", {}).items()} or {
                    p: o for p, o in consumed.items() if p in assignment
                }
                try:
                    results = consumer.commit(
                        offsets=[TopicPartition(args.topic, p, o) for p, o in offsets.items()], asynchronous=False
                    )
                    failed = [tp for tp in results or [] if tp.error is not None]
                    if failed:
                        raise KafkaException(failed[0].error)
                except KafkaException as exc:
                    emit("commit_failed", **error_fields(exc))
                else:
                    emit("committed", offsets=offsets_json(offsets))
            elif name == "fetch_committed":
                committed = consumer.committed([TopicPartition(args.topic, p) for p in cmd["partitions"]], timeout=30)
                emit(
                    "committed_offsets",
                    offsets=offsets_json({tp.partition: (tp.offset if tp.offset >= 0 else -1) for tp in committed}),
                )
            continue
        if paused:
            continue
        msg = consumer.poll(0.1)
        if msg is None:
            continue
        err = msg.error()
        if err is not None:
            if err.code() != KafkaError._PARTITION_EOF:
                emit("error", error=err.name(), code=err.code(), message=err.str())
            continue
        partition, offset, value = msg.partition(), msg.offset(), msg.value()
        assert partition is not None and offset is not None and isinstance(value, bytes)
        consumed[partition] = offset + 1
        emit("record", partition=partition, offset=offset, value=value.decode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", required=True, choices=("kafka-python", "aiokafka", "confluent"))
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--group", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--client-id", required=True)
    parser.add_argument("--instance-id")
    parser.add_argument("--assignor", default="range")
    parser.add_argument("--session-timeout-ms", type=int, default=6000)
    parser.add_argument("--heartbeat-interval-ms", type=int, default=200)
    parser.add_argument("--rebalance-timeout-ms", type=int, default=10000)
    parser.add_argument("--group-protocol", choices=("classic", "consumer"), default="classic")
    parser.add_argument("--remote-assignor")
    args = parser.parse_args()
    # The client's own log goes to stderr (the tests show its tail when something goes wrong).
    logging.basicConfig(
        level=logging.DEBUG if os.environ.get("GROUP_MEMBER_DEBUG") else logging.WARNING,
        stream=sys.stderr,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    if args.client == "kafka-python":
        run_kafka_python(args)
    elif args.client == "aiokafka":
        asyncio.run(run_aiokafka(args))
    else:
        run_confluent(args)


if __name__ == "__main__":
    main()
