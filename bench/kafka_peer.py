"""The real Apache Kafka as a stand-alone process, a peer of the broker benchmarks (bench/run.py).

Starts one KRaft node through mockbroker_conformance/kafka/launcher.py (the jars ``make kafka``
fetches; ``MOCKBROKER_KAFKA_HOME`` may point at another checkout's), creates the ``--topic``
NAME:PARTITIONS topics with CreateTopics (our codec as the client) and waits until Metadata shows a
leader for every partition. Then it prints ``KAFKA READY bootstrap=HOST:PORT pid=PID`` (the shape of
mockbroker's READY line; ``pid`` is the Java process, whose CPU and memory the benchmarks read) and
serves until stdin closes or a signal arrives, then stops Kafka and removes its log directory.

The JVM runs as the test suite starts it (-Xmx512m, SerialGC, C1 only: tuned for a quick start,
not for throughput); the data scenario's figures for Kafka carry that.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mockbroker_conformance.kafka import launcher
from mockbroker_protocol import registry
from mockbroker_protocol.headers import RequestHeader
from mockbroker_protocol.messages.create_topics import CreatableTopic, CreateTopicsRequest
from mockbroker_protocol.messages.metadata import MetadataRequest, MetadataRequestTopic
from mockbroker_protocol.primitives import INT32

# Kafka's own default of group.initial.rebalance.delay.ms (GroupCoordinatorConfig), which the
# launcher sets to 0 for the test suite; the benchmarks' "defaults" rows use each broker's own.
KAFKA_DEFAULT_INITIAL_REBALANCE_DELAY_MS = 3000


def _call(sock: socket.socket, api_key: int, version: int, request: Any) -> Any:
    sock.sendall(registry.encode_request(RequestHeader(api_key, version, 1, "mockbroker-bench"), request))
    size = INT32.unpack(_recv(sock, 4))[0]
    return registry.decode_response(api_key, version, _recv(sock, size))[1]


def _recv(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            raise ConnectionError("Kafka closed the connection")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def create_topics(address: tuple[str, int], specs: list[str], deadline_s: float = 60.0) -> None:
    """CreateTopics for NAME:PARTITIONS specs, then wait until every partition has a leader."""
    if not specs:
        return
    wanted = {name: int(parts or 1) for name, _, parts in (s.partition(":") for s in specs)}
    with socket.create_connection(address, timeout=30) as sock:
        topics = [CreatableTopic(name=n, num_partitions=p, replication_factor=1) for n, p in wanted.items()]
        answer = _call(sock, 19, 7, CreateTopicsRequest(topics=topics, timeout_ms=30000))
        failed = [(t.name, t.error_code, t.error_message) for t in answer.topics if t.error_code not in (0, 36)]
        if failed:
            raise RuntimeError(f"CreateTopics failed: {failed}")
        deadline = time.monotonic() + deadline_s
        request = MetadataRequest(topics=[MetadataRequestTopic(name=n) for n in wanted], allow_auto_topic_creation=False)
        while True:
            meta = _call(sock, 3, 12, request)
            led = {t.name: sum(p.leader_id >= 0 for p in t.partitions) for t in meta.topics if t.error_code == 0}
            if all(led.get(n) == p for n, p in wanted.items()):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"topics without leaders after {deadline_s} s: {led}")
            time.sleep(0.05)  # polling an external process until its metadata converges


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topic", action="append", default=[], metavar="NAME:PARTITIONS")
    parser.add_argument("--initial-rebalance-delay-ms", type=int, default=KAFKA_DEFAULT_INITIAL_REBALANCE_DELAY_MS,
                        help="group.initial.rebalance.delay.ms (Kafka's default: 3000)")  # fmt: skip
    args = parser.parse_args(argv)
    properties = {"group.initial.rebalance.delay.ms": str(args.initial_rebalance_delay_ms)}
    kafka = launcher.start(properties=properties)
    try:
        create_topics((kafka.host, kafka.port), args.topic)
        sys.stdout.write(f"KAFKA READY bootstrap={kafka.bootstrap_servers} pid={kafka.process.pid}\n")
        sys.stdout.flush()
        signal.signal(signal.SIGTERM, _interrupt)
        try:
            while os.read(0, 4096):
                pass
        except KeyboardInterrupt:
            pass
    finally:
        # Stopping Kafka takes seconds; a second SIGTERM must not cut it short (Kafka runs in its
        # own session and would outlive us).
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        kafka.stop()
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
