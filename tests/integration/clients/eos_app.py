#!/usr/bin/env python3
"""eos_app: an exactly-once consume-transform-produce application (confluent-kafka), run as its
own process by the transaction tests so that a test can kill it for real (SIGKILL) mid-transaction.

It reads ``--input`` in group ``--group`` (read_committed), writes each record's value upper-cased
to ``--output`` and commits the consumed offsets inside the same transaction
(send_offsets_to_transaction), a few records per transaction. It exits once it has processed
everything up to the end of its partitions.

Usage:
  python eos_app.py --bootstrap h:p[,h:p] --input IN --output OUT --group G --transactional-id T
      [--per-transaction 10] [--hang-after N]

--hang-after N: after N committed transactions, begin one more, produce its records, flush them
(they are in the log, uncommitted), print {"event": "mid_transaction"} and hang until killed.

Events, one JSON object per line on stdout:
  {"event": "committed", "transactions": n, "records": total}
  {"event": "mid_transaction", "records": k}
  {"event": "done", "transactions": n, "records": total}
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition


def emit(**event: object) -> None:
    print(json.dumps(event), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    for name in ("--bootstrap", "--input", "--output", "--group", "--transactional-id"):
        parser.add_argument(name, required=True)
    parser.add_argument("--per-transaction", type=int, default=10)
    parser.add_argument("--hang-after", type=int, default=-1)
    args = parser.parse_args()

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
            emit(event="mid_transaction", records=len(batch))
            while True:
                time.sleep(1)  # until SIGKILL
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


if __name__ == "__main__":
    sys.exit(main())
