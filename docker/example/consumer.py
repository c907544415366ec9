"""An example service under test: consumes TOPIC in consumer group GROUP_ID (kafka-python),
commits after every batch, and prints one JSON line per record, commit and problem on stdout.

Settings from the environment (docker/compose.yaml): BOOTSTRAP_SERVERS, TOPIC, GROUP_ID,
CLIENT_ID. It keeps going through what the test runner does to it (errors on its requests, its
session expired): kafka-python retries, rejoins the group and resumes from the committed
offsets. SIGTERM stops it (LeaveGroup, exit 0).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

from kafka import KafkaConsumer
from kafka.errors import KafkaError

stopping = False


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


def stop(signum: int, frame: object) -> None:
    global stopping
    stopping = True


def main() -> int:
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    consumer = KafkaConsumer(
        os.environ["TOPIC"],
        bootstrap_servers=os.environ["BOOTSTRAP_SERVERS"].split(","),
        group_id=os.environ["GROUP_ID"],
        client_id=os.environ.get("CLIENT_ID", "example-consumer"),
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        session_timeout_ms=10_000,
        heartbeat_interval_ms=300,
        retry_backoff_ms=50,
    )
    emit(event="started")
    try:
        while not stopping:
            batch = consumer.poll(timeout_ms=200)
            for records in batch.values():
                for r in records:
                    value = None if r.value is None else r.value.decode("utf-8", errors="replace")
                    emit(event="consumed", partition=r.partition, offset=r.offset, value=value)
            if batch:
                try:
                    consumer.commit()
                    emit(event="committed", offsets={tp.partition: rs[-1].offset + 1 for tp, rs in batch.items()})
                except KafkaError as exc:  # e.g. CommitFailedError after its session expired: it rejoins
                    emit(event="commit_failed", error=type(exc).__name__)
    finally:
        consumer.close()
        emit(event="stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
