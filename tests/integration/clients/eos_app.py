#!/usr/bin/env python3
"""eos_app: an exactly-once consume-transform-produce application (confluent-kafka, kafka-python
or aiokafka), run as its own process by the transaction tests so that a test can kill it for real
(SIGKILL) mid-transaction.

It reads ``--input`` in group ``--group`` (read_committed), writes each record's value upper-cased
to ``--output`` and commits the consumed offsets inside the same transaction
(send_offsets_to_transaction), a few records per transaction. It exits once it has processed
everything up to the end of its partitions.

Usage:
  python eos_app.py --bootstrap h:p[,h:p] --input IN --output OUT --group G --transactional-id T
      [--client confluent|kafka-python|aiokafka] [--per-transaction 10] [--hang-after N]

--hang-after N: after N committed transactions, begin one more, produce its records, flush them
(they are in the log, uncommitted), print {"event": "mid_transaction"} and hang until killed.

Events, one JSON object per line on stdout:
  {"event": "committed", "transactions": n, "records": total}
  {"event": "mid_transaction", "records": k}
  {"event": "done", "transactions": n, "records": total}
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any


def emit(**event: object) -> None:
    print(json.dumps(event), flush=True)


def hang(records: int) -> None:
    emit(event="mid_transaction", records=records)
    while True:
        time.sleep(1)  # until SIGKILL


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ("--bootstrap", "--input", "--output", "--group", "--transactional-id"):
        parser.add_argument(name, required=True)
    parser.add_argument("--client", default="confluent", choices=("confluent", "kafka-python", "aiokafka"))
    parser.add_argument("--per-transaction", type=int, default=10)
    parser.add_argument("--hang-after", type=int, default=-1)
    args = parser.parse_args()
    if args.client == "kafka-python":
        return run_kafka_python(args)
    if args.client == "aiokafka":
        return asyncio.run(run_aiokafka(args))
    return run_confluent(args)


def run_confluent(args: argparse.Namespace) -> int:
    from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

    consumer = Consumer({
        "bootstrap.servers": args.bootstrap, "group.id": args.group, "isolation.level": "read_committed",
        "enable.auto.commit": False, "auto.offset.reset": "earliest", "enable.partition.eof": True,
        "session.timeout.ms": 2000, "heartbeat.interval.ms": 200,
    })  # fmt: skip
    producer = Producer({
        "bootstrap.servers": args.bootstrap, "transactional.id": args.transactional_id, "linger.ms": 0,
    })  # fmt: skip
    producer.init_transactions(60)  # fences an earlier incarnation and aborts its open transaction
    consumer.subscribe([args.input])

    transactions = records = 0
    at_end: set[int] = set()
    while True:
        batch = []
        for msg in consumer.consume(args.per_transaction, 0.5):
            error = msg.error()
            if error is not None:
                if error.code() == KafkaError._PARTITION_EOF:
                    at_end.add(msg.partition() or 0)
                    continue
                raise SystemExit(f"consume failed: {error}")
            at_end.discard(msg.partition() or 0)
            batch.append(msg)
        assignment = consumer.assignment()
        if not batch:
            if assignment and at_end >= {tp.partition for tp in assignment}:
                break
            continue
        producer.begin_transaction()
        for msg in batch:
            producer.produce(args.output, key=msg.key(), value=(msg.value() or b"").upper(), partition=msg.partition() or 0)
        if transactions == args.hang_after:
            producer.flush(60)
            hang(len(batch))
        consumed: dict[tuple[str, int], int] = {}
        for msg in batch:
            consumed[(msg.topic() or "", msg.partition() or 0)] = (msg.offset() or 0) + 1
        offsets = [TopicPartition(topic, partition, offset) for (topic, partition), offset in consumed.items()]
        producer.send_offsets_to_transaction(offsets, consumer.consumer_group_metadata(), 60)
        producer.commit_transaction(60)
        transactions += 1
        records += len(batch)
        emit(event="committed", transactions=transactions, records=records)
    emit(event="done", transactions=transactions, records=records)
    consumer.close()
    return 0


def run_kafka_python(args: argparse.Namespace) -> int:
    from kafka import KafkaConsumer, KafkaProducer, OffsetAndMetadata, TopicPartition

    consumer = KafkaConsumer(
        args.input, bootstrap_servers=args.bootstrap, group_id=args.group, isolation_level="read_committed",
        enable_auto_commit=False, auto_offset_reset="earliest", session_timeout_ms=2000, heartbeat_interval_ms=200,
    )  # fmt: skip
    producer = KafkaProducer(bootstrap_servers=args.bootstrap, transactional_id=args.transactional_id)
    producer.init_transactions()
    transactions = records = 0
    while True:
        batch = [r for rs in consumer.poll(500, max_records=args.per_transaction).values() for r in rs]
        if not batch:
            assignment = consumer.assignment()
            if assignment and all(consumer.position(tp) >= end for tp, end in consumer.end_offsets(list(assignment)).items()):
                break
            continue
        producer.begin_transaction()
        for r in batch:
            producer.send(args.output, key=r.key, value=(r.value or b"").upper(), partition=r.partition)
        if transactions == args.hang_after:
            producer.flush()
            hang(len(batch))
        offsets: dict[Any, Any] = {}
        for r in batch:
            offsets[TopicPartition(r.topic, r.partition)] = OffsetAndMetadata(r.offset + 1, "", -1)
        producer.send_offsets_to_transaction(offsets, consumer.group_metadata())
        producer.commit_transaction()
        transactions += 1
        records += len(batch)
        emit(event="committed", transactions=transactions, records=records)
    emit(event="done", transactions=transactions, records=records)
    consumer.close()
    producer.close()
    return 0


async def run_aiokafka(args: argparse.Namespace) -> int:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    consumer = AIOKafkaConsumer(
        args.input, bootstrap_servers=args.bootstrap, group_id=args.group, isolation_level="read_committed",
        enable_auto_commit=False, auto_offset_reset="earliest", session_timeout_ms=2000, heartbeat_interval_ms=200,
    )  # fmt: skip
    producer = AIOKafkaProducer(bootstrap_servers=args.bootstrap, transactional_id=args.transactional_id)
    await producer.start()  # InitProducerId: fences an earlier incarnation
    await consumer.start()
    transactions = records = 0
    while True:
        polled = await consumer.getmany(timeout_ms=500, max_records=args.per_transaction)
        batch = [r for rs in polled.values() for r in rs]
        if not batch:
            assignment = consumer.assignment()
            if assignment:
                ends = await consumer.end_offsets(list(assignment))
                if all([await consumer.position(tp) >= end for tp, end in ends.items()]):
                    break
            continue
        await producer.begin_transaction()
        for r in batch:
            await producer.send(args.output, key=r.key, value=(r.value or b"").upper(), partition=r.partition)
        if transactions == args.hang_after:
            await producer.flush()
            hang(len(batch))
        offsets = {TopicPartition(r.topic, r.partition): r.offset + 1 for r in batch}
        await producer.send_offsets_to_transaction(offsets, args.group)
        await producer.commit_transaction()
        transactions += 1
        records += len(batch)
        emit(event="committed", transactions=transactions, records=records)
    emit(event="done", transactions=transactions, records=records)
    await consumer.stop()
    await producer.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
