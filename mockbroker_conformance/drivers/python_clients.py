#!/usr/bin/env python3
# mypy: disable-error-code="import-untyped, misc"
"""Conformance driver for the Python clients: kafka-python, aiokafka and confluent-kafka (classic
and KIP-848 ``group.protocol=consumer``), speaking the line-oriented JSON protocol of
docs/conformance.md (commands on stdin, events on stdout). confluent-kafka's ``ShareConsumer``
serves the share commands (``share_subscribe``, ``share_ack``: KIP-932); the other clients have no
share consumer.

Usage: python python_clients.py --client kafka-python|aiokafka|confluent|confluent-consumer
                                --bootstrap HOST:PORT[,...] --client-id ID

Run by path (not ``-m``): it imports only the standard library and the client under test, so a
process starts in the time the client's import takes. The client's own log goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import queue
import sys
import threading
import time
from typing import Any, ClassVar

PROTOCOL_VERSION = 1
_emit_lock = threading.Lock()


def emit(event: str, **fields: Any) -> None:
    line = json.dumps({"event": event, **fields}, default=str)
    with _emit_lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def text(b: bytes | None) -> str | None:
    return None if b is None else b.decode(errors="replace")


def raw(s: str | None) -> bytes | None:
    return None if s is None else s.encode()


def error_fields(exc: BaseException) -> dict[str, Any]:
    """The error's name (Kafka's when the client says which), code and message, whatever the client."""
    fields: dict[str, Any] = {"error": type(exc).__name__, "message": str(exc)}
    code = getattr(exc, "errno", None)
    if exc.args and hasattr(exc.args[0], "code") and callable(exc.args[0].code):  # confluent KafkaError
        code = exc.args[0].code()
        fields["error"] = exc.args[0].name()
    cause = exc.__cause__ or (exc.args[0] if exc.args and isinstance(exc.args[0], BaseException) else None)
    if cause is not None:
        fields["cause"] = type(cause).__name__
    fields["code"] = code
    return fields


class Unsupported(Exception):
    """A command this client cannot do; the reason goes into the matrix."""


class Client:
    """One client instance: at most one producer and one consumer at a time."""

    name = ""
    version = ""
    # feature -> reason: what the runner must not ask of this client (docs/conformance.md).
    unsupported: ClassVar[dict[str, str]] = {}

    def __init__(self, bootstrap: str, client_id: str) -> None:
        self.bootstrap = bootstrap
        self.client_id = client_id
        self.topic = ""
        self.assignment: set[int] = set()
        self.consumed: dict[int, int] = {}  # partition -> next offset

    # each returns the fields of its answer event, or raises
    def produce(self, cmd: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def subscribe(self, cmd: dict[str, Any]) -> None:
        raise NotImplementedError

    def assign(self, cmd: dict[str, Any]) -> None:
        raise NotImplementedError

    def commit(self, offsets: dict[int, int]) -> None:
        raise NotImplementedError

    def seek(self, partition: int, offset: int) -> None:
        raise NotImplementedError

    def pause(self, partitions: list[int]) -> None:
        raise NotImplementedError

    def resume(self, partitions: list[int]) -> None:
        raise NotImplementedError

    def share_subscribe(self, cmd: dict[str, Any]) -> None:
        raise Unsupported(f"{self.name} has no share consumer (KIP-932)")

    def share_ack(self, cmd: dict[str, Any]) -> dict[str, Any]:
        raise Unsupported(f"{self.name} has no share consumer (KIP-932)")

    def poll(self) -> None:
        """Consume for a short while (sync clients); emit what arrived."""

    def close(self) -> None:
        raise NotImplementedError

    # shared by the adapters' callbacks
    def on_assigned(self, partitions: set[int], incremental: bool, **extra: Any) -> None:
        if not incremental:
            self.assignment.clear()
        self.assignment |= partitions
        emit("assigned", added=sorted(partitions), partitions=sorted(self.assignment), **extra)

    def on_revoked(self, partitions: set[int], event: str = "revoked", **extra: Any) -> None:
        self.assignment -= partitions
        emit(event, removed=sorted(partitions), partitions=sorted(self.assignment), **extra)

    def on_record(self, partition: int, offset: int, key: bytes | None, value: bytes | None) -> None:
        self.consumed[partition] = offset + 1
        emit("record", partition=partition, offset=offset, key=text(key), value=text(value))

    def offsets_to_commit(self, cmd: dict[str, Any]) -> dict[int, int]:
        if cmd.get("offsets"):
            return {int(p): int(o) for p, o in cmd["offsets"].items()}
        return {p: o for p, o in self.consumed.items() if p in self.assignment}


# -- kafka-python ----------------------------------------------------------------------------------


class KafkaPython(Client):
    name = "kafka-python"

    def __init__(self, bootstrap: str, client_id: str) -> None:
        super().__init__(bootstrap, client_id)
        import kafka

        self.kafka = kafka
        self.version = kafka.__version__
        self.consumer: Any = None
        self.producers: dict[Any, Any] = {}

    def produce(self, cmd: dict[str, Any]) -> dict[str, Any]:
        key = (cmd.get("compression", "none"), bool(cmd.get("idempotent")))
        if key not in self.producers:
            self.producers[key] = self.kafka.KafkaProducer(
                bootstrap_servers=self.bootstrap.split(","), client_id=self.client_id, acks="all",
                compression_type=None if key[0] == "none" else key[0], enable_idempotence=key[1], retry_backoff_ms=50,
            )  # fmt: skip
        producer = self.producers[key]
        futures = [
            producer.send(cmd["topic"], key=raw(r.get("key")), value=raw(r.get("value")), partition=r.get("partition"))
            for r in cmd["records"]
        ]
        producer.flush(timeout=cmd.get("timeout_ms", 30000) / 1000)
        acks = [f.get(timeout=1) for f in futures]
        return {"offsets": [[m.partition, m.offset] for m in acks]}

    def _consumer(self, group: str | None, cmd: dict[str, Any]) -> Any:
        from kafka.coordinator.assignors.cooperative_sticky import CooperativeStickyAssignor
        from kafka.coordinator.assignors.range import RangePartitionAssignor
        from kafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

        assignors = {"range": RangePartitionAssignor, "roundrobin": RoundRobinPartitionAssignor,
                     "cooperative-sticky": CooperativeStickyAssignor}  # fmt: skip
        self.cooperative = cmd.get("assignor") == "cooperative-sticky"
        return self.kafka.KafkaConsumer(
            bootstrap_servers=self.bootstrap.split(","), client_id=self.client_id, group_id=group,
            group_instance_id=cmd.get("instance_id"), session_timeout_ms=cmd.get("session_timeout_ms", 10000),
            heartbeat_interval_ms=cmd.get("heartbeat_interval_ms", 300), enable_auto_commit=False,
            auto_offset_reset="earliest", retry_backoff_ms=50, max_poll_interval_ms=cmd.get("rebalance_timeout_ms", 30000),
            partition_assignment_strategy=[assignors[cmd.get("assignor", "range")]],
        )  # fmt: skip

    def subscribe(self, cmd: dict[str, Any]) -> None:
        from kafka.consumer.subscription_state import ConsumerRebalanceListener

        self.topic = cmd["topic"]
        self.consumer = self._consumer(cmd["group"], cmd)
        client = self

        def generation() -> dict[str, Any]:
            meta = client.consumer.group_metadata()
            return {"member_id": meta.member_id, "generation": meta.generation_id}

        class Listener(ConsumerRebalanceListener):
            def on_partitions_revoked(self, revoked: Any) -> None:
                client.on_revoked({tp.partition for tp in revoked}, **generation())

            def on_partitions_assigned(self, assigned: Any) -> None:
                client.on_assigned({tp.partition for tp in assigned}, client.cooperative, **generation())

            def on_partitions_lost(self, lost: Any) -> None:
                client.on_revoked({tp.partition for tp in lost}, "lost", **generation())

        self.consumer.subscribe([self.topic], listener=Listener())
        # Fetch the topic's metadata before the first poll joins, so that the leader assigns from
        # it rather than from an empty snapshot and rejoins at once (group_member.py has the story).
        self.consumer.partitions_for_topic(self.topic)

    def assign(self, cmd: dict[str, Any]) -> None:
        self.topic = cmd["topic"]
        self.consumer = self._consumer(None, cmd)
        self.consumer.assign([self.kafka.TopicPartition(self.topic, p) for p in cmd["partitions"]])
        self.assignment = set(cmd["partitions"])

    def poll(self) -> None:
        if self.consumer is None:
            time.sleep(0.05)
            return
        for records in self.consumer.poll(timeout_ms=200).values():
            for r in records:
                self.on_record(r.partition, r.offset, r.key, r.value)

    def _tp(self, p: int) -> Any:
        return self.kafka.TopicPartition(self.topic, p)

    def commit(self, offsets: dict[int, int]) -> None:
        self.consumer.commit({self._tp(p): self.kafka.OffsetAndMetadata(o, "", -1) for p, o in offsets.items()})

    def seek(self, partition: int, offset: int) -> None:
        self.consumer.seek(self._tp(partition), offset)

    def pause(self, partitions: list[int]) -> None:
        self.consumer.pause(*[self._tp(p) for p in partitions])

    def resume(self, partitions: list[int]) -> None:
        self.consumer.resume(*[self._tp(p) for p in partitions])

    def close(self) -> None:
        if self.consumer is not None:
            self.consumer.close(autocommit=False)
        for producer in self.producers.values():
            producer.close(timeout=5)


# -- confluent-kafka (librdkafka) ------------------------------------------------------------------


class Confluent(Client):
    name = "confluent-kafka"

    def __init__(self, bootstrap: str, client_id: str, group_protocol: str = "classic") -> None:
        super().__init__(bootstrap, client_id)
        import confluent_kafka

        self.ck = confluent_kafka
        self.version = f"{confluent_kafka.__version__} (librdkafka {confluent_kafka.libversion()[0]})"
        self.group_protocol = group_protocol
        self.consumer: Any = None
        self.producers: dict[Any, Any] = {}
        self.cooperative = group_protocol == "consumer"
        self.share: Any = None  # a ShareConsumer (KIP-932), after share_subscribe
        self.held: set[tuple[int, int]] = set()  # (partition, offset) delivered and not yet acknowledged

    def _error_cb(self, err: Any) -> None:
        emit("client_error", error=err.name(), code=err.code(), message=err.str())

    def produce(self, cmd: dict[str, Any]) -> dict[str, Any]:
        key = (cmd.get("compression", "none"), bool(cmd.get("idempotent")))
        if key not in self.producers:
            self.producers[key] = self.ck.Producer({
                "bootstrap.servers": self.bootstrap, "client.id": self.client_id, "acks": "all",
                "compression.type": key[0], "enable.idempotence": key[1],
                "linger.ms": 5, "retry.backoff.ms": 50, "error_cb": self._error_cb,
            })  # fmt: skip
        producer = self.producers[key]
        acks: list[Any] = [None] * len(cmd["records"])
        failures: list[Any] = []

        def delivered(i: int) -> Any:
            def report(err: Any, msg: Any) -> None:
                if err is not None:
                    failures.append(err)
                else:
                    acks[i] = [msg.partition(), msg.offset()]
            return report

        for i, r in enumerate(cmd["records"]):
            extra = {} if r.get("partition") is None else {"partition": r["partition"]}
            producer.produce(cmd["topic"], value=raw(r.get("value")), key=raw(r.get("key")), on_delivery=delivered(i), **extra)
        left = producer.flush(cmd.get("timeout_ms", 30000) / 1000)
        if failures:
            raise self.ck.KafkaException(failures[0])
        if left:
            raise TimeoutError(f"{left} records still undelivered")
        return {"offsets": acks}

    def _consumer(self, group: str, cmd: dict[str, Any]) -> Any:
        conf: dict[str, Any] = {
            "bootstrap.servers": self.bootstrap, "client.id": self.client_id, "group.id": group,
            "enable.auto.commit": False, "auto.offset.reset": "earliest", "error_cb": self._error_cb,
            "retry.backoff.ms": 50, "topic.metadata.refresh.interval.ms": 2000,
        }  # fmt: skip
        if self.group_protocol == "consumer":
            conf["group.protocol"] = "consumer"  # the broker times and assigns (KIP-848)
        else:
            conf.update({
                "session.timeout.ms": cmd.get("session_timeout_ms", 10000),
                "heartbeat.interval.ms": cmd.get("heartbeat_interval_ms", 300),
                "partition.assignment.strategy": cmd.get("assignor", "range"),
                "max.poll.interval.ms": max(cmd.get("rebalance_timeout_ms", 30000), cmd.get("session_timeout_ms", 10000)),
            })  # fmt: skip
            self.cooperative = cmd.get("assignor") == "cooperative-sticky"
        if cmd.get("instance_id"):
            conf["group.instance.id"] = cmd["instance_id"]
        return self.ck.Consumer(conf)

    def subscribe(self, cmd: dict[str, Any]) -> None:
        self.topic = cmd["topic"]
        self.consumer = self._consumer(cmd["group"], cmd)

        def member() -> dict[str, Any]:
            return {"member_id": self.consumer.memberid()}

        self.consumer.subscribe(
            [self.topic],
            on_assign=lambda c, tps: self.on_assigned({tp.partition for tp in tps}, self.cooperative, **member()),
            on_revoke=lambda c, tps: self.on_revoked({tp.partition for tp in tps}, **member()),
            on_lost=lambda c, tps: self.on_revoked({tp.partition for tp in tps}, "lost", **member()),
        )

    def assign(self, cmd: dict[str, Any]) -> None:
        self.topic = cmd["topic"]
        # librdkafka wants a group.id for any consumer; with assign() it never joins the group.
        self.consumer = self._consumer(f"{self.client_id}-assign", {**cmd, "instance_id": None})
        self.consumer.assign([self.ck.TopicPartition(self.topic, p, self.ck.OFFSET_BEGINNING) for p in cmd["partitions"]])
        self.assignment = set(cmd["partitions"])

    def share_subscribe(self, cmd: dict[str, Any]) -> None:
        """A ShareConsumer in explicit acknowledgement mode: each record stays acquired (held)
        until a share_ack says how to acknowledge it; in that mode the client refuses to poll
        again before every record of the last poll is acknowledged, so the driver polls only
        when it holds nothing."""
        self.topic = cmd["topic"]
        self.share = self.ck.ShareConsumer({
            "bootstrap.servers": self.bootstrap, "client.id": self.client_id, "group.id": cmd["group"],
            "share.acknowledgement.mode": "explicit", "max.poll.records": cmd.get("max_records", 500),
            "error_cb": self._error_cb,
        })  # fmt: skip
        self.share.subscribe([self.topic])

    def share_ack(self, cmd: dict[str, Any]) -> dict[str, Any]:
        types = {"accept": self.ck.AcknowledgeType.ACCEPT, "release": self.ck.AcknowledgeType.RELEASE,
                 "reject": self.ck.AcknowledgeType.REJECT}  # fmt: skip
        for partition, offset, kind in cmd["acks"]:
            self.share.acknowledge_offset(self.topic, int(partition), int(offset), types[kind])
            self.held.discard((int(partition), int(offset)))
        results = self.share.commit_sync(20)
        errors = {f"{tp.partition}": str(err) for tp, err in (results or {}).items() if err is not None}
        return {"errors": errors}

    def _share_poll(self) -> None:
        if self.held:
            time.sleep(0.05)
            return
        for msg in self.share.poll(0.1) or []:
            err = msg.error()
            if err is not None:
                emit("client_error", error=err.name(), code=err.code(), message=err.str())
                continue
            self.held.add((msg.partition(), msg.offset()))
            emit("share_record", partition=msg.partition(), offset=msg.offset(), delivery_count=msg.delivery_count(),
                 key=text(msg.key()), value=text(msg.value()))  # fmt: skip

    def poll(self) -> None:
        if self.share is not None:
            self._share_poll()
            return
        if self.consumer is None:
            time.sleep(0.05)
            return
        msg = self.consumer.poll(0.1)
        if msg is None:
            return
        err = msg.error()
        if err is not None:
            if err.code() != self.ck.KafkaError._PARTITION_EOF:
                emit("client_error", error=err.name(), code=err.code(), message=err.str())
            return
        self.on_record(msg.partition(), msg.offset(), msg.key(), msg.value())

    def commit(self, offsets: dict[int, int]) -> None:
        results = self.consumer.commit(
            offsets=[self.ck.TopicPartition(self.topic, p, o) for p, o in offsets.items()], asynchronous=False
        )
        failed = [tp for tp in results or [] if tp.error is not None]
        if failed:
            raise self.ck.KafkaException(failed[0].error)

    def seek(self, partition: int, offset: int) -> None:
        self.consumer.seek(self.ck.TopicPartition(self.topic, partition, offset))

    def pause(self, partitions: list[int]) -> None:
        self.consumer.pause([self.ck.TopicPartition(self.topic, p) for p in partitions])

    def resume(self, partitions: list[int]) -> None:
        self.consumer.resume([self.ck.TopicPartition(self.topic, p) for p in partitions])

    def close(self) -> None:
        if self.consumer is not None:
            self.consumer.close()
        if self.share is not None:
            self.share.close()
        for producer in self.producers.values():
            producer.flush(5)


class ConfluentConsumerProtocol(Confluent):
    name = "confluent-kafka (group.protocol=consumer)"
    unsupported: ClassVar[dict[str, str]] = {
        "client-assignor": "with group.protocol=consumer the broker assigns (KIP-848); the client names no assignor",
    }

    def __init__(self, bootstrap: str, client_id: str) -> None:
        super().__init__(bootstrap, client_id, "consumer")


# -- aiokafka --------------------------------------------------------------------------------------


class AioKafka(Client):
    """aiokafka runs on an event loop of its own thread; each command hops onto it and waits."""

    name = "aiokafka"
    unsupported: ClassVar[dict[str, str]] = {
        "cooperative": "aiokafka implements only eager rebalancing (no cooperative-sticky assignor, no KIP-429)",
    }

    def __init__(self, bootstrap: str, client_id: str) -> None:
        super().__init__(bootstrap, client_id)
        import aiokafka

        self.aiokafka = aiokafka
        self.version = aiokafka.__version__
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, daemon=True).start()
        self.consumer: Any = None
        self.consuming: Any = None
        self.producers: dict[Any, Any] = {}

    def run(self, coro: Any, timeout: float = 60) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def produce(self, cmd: dict[str, Any]) -> dict[str, Any]:
        async def go() -> list[list[int]]:
            key = (cmd.get("compression", "none"), bool(cmd.get("idempotent")))
            if key not in self.producers:
                producer = self.aiokafka.AIOKafkaProducer(
                    bootstrap_servers=self.bootstrap, client_id=self.client_id, acks="all",
                    compression_type=None if key[0] == "none" else key[0], enable_idempotence=key[1], retry_backoff_ms=50,
                )  # fmt: skip
                await producer.start()
                self.producers[key] = producer
            producer = self.producers[key]
            futures = [
                await producer.send(cmd["topic"], key=raw(r.get("key")), value=raw(r.get("value")), partition=r.get("partition"))
                for r in cmd["records"]
            ]
            acks = [await f for f in futures]
            return [[m.partition, m.offset] for m in acks]

        return {"offsets": self.run(go(), cmd.get("timeout_ms", 30000) / 1000)}

    def _consumer(self, group: str | None, cmd: dict[str, Any]) -> Any:
        return self.aiokafka.AIOKafkaConsumer(
            bootstrap_servers=self.bootstrap, client_id=self.client_id, group_id=group,
            group_instance_id=cmd.get("instance_id"), session_timeout_ms=cmd.get("session_timeout_ms", 10000),
            heartbeat_interval_ms=cmd.get("heartbeat_interval_ms", 300), enable_auto_commit=False,
            auto_offset_reset="earliest", retry_backoff_ms=50, rebalance_timeout_ms=cmd.get("rebalance_timeout_ms", 30000),
        )  # fmt: skip

    def subscribe(self, cmd: dict[str, Any]) -> None:
        from aiokafka.abc import ConsumerRebalanceListener

        client = self

        def generation() -> dict[str, Any]:
            coordinator = client.consumer._coordinator  # no public accessor for these
            return {"member_id": getattr(coordinator, "member_id", None), "generation": getattr(coordinator, "generation", None)}

        class Listener(ConsumerRebalanceListener):
            async def on_partitions_revoked(self, revoked: Any) -> None:
                client.on_revoked({tp.partition for tp in revoked}, **generation())

            async def on_partitions_assigned(self, assigned: Any) -> None:
                client.on_assigned({tp.partition for tp in assigned}, False, **generation())

        async def go() -> None:
            self.topic = cmd["topic"]
            self.consumer = self._consumer(cmd["group"], cmd)
            self.consumer.subscribe([self.topic], listener=Listener())
            # start() waits for the first assignment when subscribed; do not hold the command loop.
            self.consuming = asyncio.ensure_future(self._consume(self.consumer.start()))

        self.run(go())

    def assign(self, cmd: dict[str, Any]) -> None:
        async def go() -> None:
            self.topic = cmd["topic"]
            self.consumer = self._consumer(None, cmd)
            self.consumer.assign([self.aiokafka.TopicPartition(self.topic, p) for p in cmd["partitions"]])
            self.assignment = set(cmd["partitions"])
            self.consuming = asyncio.ensure_future(self._consume(self.consumer.start()))

        self.run(go())

    async def _consume(self, starting: Any) -> None:
        try:
            await starting
        except Exception as exc:
            emit("client_error", **error_fields(exc))
        last = None
        while True:
            try:
                batches = await self.consumer.getmany(timeout_ms=200)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if error_fields(exc) != last:
                    last = error_fields(exc)
                    emit("client_error", **last)
                await asyncio.sleep(0.1)
                continue
            for records in batches.values():
                for r in records:
                    self.on_record(r.partition, r.offset, r.key, r.value)

    def _tp(self, p: int) -> Any:
        return self.aiokafka.TopicPartition(self.topic, p)

    def commit(self, offsets: dict[int, int]) -> None:
        self.run(self.consumer.commit({self._tp(p): o for p, o in offsets.items()}))

    def seek(self, partition: int, offset: int) -> None:
        async def go() -> None:
            self.consumer.seek(self._tp(partition), offset)

        self.run(go())

    def pause(self, partitions: list[int]) -> None:
        async def go() -> None:
            self.consumer.pause(*[self._tp(p) for p in partitions])

        self.run(go())

    def resume(self, partitions: list[int]) -> None:
        async def go() -> None:
            self.consumer.resume(*[self._tp(p) for p in partitions])

        self.run(go())

    def poll(self) -> None:
        time.sleep(0.05)  # consuming runs on the client's loop

    def close(self) -> None:
        async def go() -> None:
            if self.consuming is not None:
                self.consuming.cancel()
            if self.consumer is not None:
                await self.consumer.stop()
            for producer in self.producers.values():
                await producer.stop()

        self.run(go())


CLIENTS: dict[str, Any] = {
    "kafka-python": KafkaPython,
    "aiokafka": AioKafka,
    "confluent": Confluent,
    "confluent-consumer": ConfluentConsumerProtocol,
}


def serve(client: Client) -> int:
    """The command loop: commands from stdin (a reader thread), the client polled in between."""
    commands: queue.Queue[dict[str, Any] | None] = queue.Queue()

    def read() -> None:
        for line in sys.stdin:
            if line.strip():
                try:
                    commands.put(json.loads(line))
                except ValueError as exc:
                    emit("protocol_error", message=f"not JSON: {exc}", line=line.strip())
        commands.put(None)  # end of input: close

    threading.Thread(target=read, daemon=True).start()
    hello: dict[str, Any] = {"share": True} if isinstance(client, Confluent) else {}
    emit("hello", protocol=PROTOCOL_VERSION, client=client.name, version=client.version, unsupported=client.unsupported, **hello)
    last_error = None
    while True:
        try:
            cmd = commands.get_nowait()
        except queue.Empty:
            try:
                client.poll()
            except Exception as exc:  # a failing poll: report once per distinct error, back off
                if error_fields(exc) != last_error:
                    last_error = error_fields(exc)
                    emit("client_error", **last_error)
                time.sleep(0.1)
            continue
        if cmd is None:
            cmd = {"cmd": "close"}
        name = cmd.get("cmd")
        try:
            if name == "close":
                client.close()
                emit("closed")
                return 0
            if name == "produce":
                emit("produced", **client.produce(cmd))
            elif name == "subscribe":
                client.subscribe(cmd)
                emit("subscribed")
            elif name == "assign":
                client.assign(cmd)
                emit("assigned", added=sorted(client.assignment), partitions=sorted(client.assignment))
            elif name == "share_subscribe":
                client.share_subscribe(cmd)
                emit("subscribed")
            elif name == "share_ack":
                emit("share_acked", **client.share_ack(cmd))
            elif name == "commit":
                offsets = client.offsets_to_commit(cmd)
                client.commit(offsets)
                emit("committed", offsets={str(p): o for p, o in sorted(offsets.items())})
            elif name in ("seek", "pause", "resume"):
                if name == "seek":
                    client.seek(int(cmd["partition"]), int(cmd["offset"]))
                else:
                    getattr(client, name)([int(p) for p in cmd["partitions"]])
                emit("done", cmd=name)
            else:
                emit("unsupported", cmd=name, reason=f"unknown command {name!r}")
        except Unsupported as exc:
            emit("unsupported", cmd=name, reason=str(exc))
        except Exception as exc:
            emit(f"{name}_failed", **error_fields(exc))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--client", required=True, choices=sorted(CLIENTS))
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--client-id", required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    return serve(CLIENTS[args.client](args.bootstrap, args.client_id))


if __name__ == "__main__":
    sys.exit(main())
