"""Capture a corpus of real client request frames for the decoder fuzz tests (tests/protocol/fuzz).

A one-broker MockCluster advertises the port of a small TCP relay in front of it, so that every
request of the clients below passes through the relay, which keeps each client-to-broker frame
(its payload, without the size prefix). Clients: kafka-python (admin, producer, group consumer)
and confluent-kafka (admin, producer, group consumer, classic and KIP-848). At most ``--per-api``
distinct frames per API key are kept, in tests/protocol/fuzz/corpus/<api key>-<version>-<n>.bin.

    python bench/fuzz_capture.py
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import socket
import struct
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mockbroker import MockCluster

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "protocol" / "fuzz" / "corpus"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Relay:
    """Forwards connections to the broker, keeping the frames clients send."""

    def __init__(self, broker_port: int) -> None:
        self.broker_port = broker_port
        self.frames: list[bytes] = []

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.broker_port)

        async def upstream() -> None:
            with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
                while True:
                    size_bytes = await reader.readexactly(4)
                    (size,) = struct.unpack(">i", size_bytes)
                    payload = await reader.readexactly(size)
                    self.frames.append(payload)
                    up_writer.write(size_bytes + payload)
            up_writer.close()

        async def downstream() -> None:
            with contextlib.suppress(ConnectionError):
                while data := await up_reader.read(65536):
                    writer.write(data)
                    await writer.drain()
            writer.close()

        await asyncio.gather(upstream(), downstream())


def run_clients(bootstrap: str) -> None:
    """Real clients doing a bit of everything (in threads: their APIs block)."""
    import confluent_kafka
    import kafka
    from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic("fuzz-a", 2, 1), NewTopic("fuzz-b", 1, 1)]).values():
        future.result()
    admin.create_partitions([NewPartitions("fuzz-b", 2)])["fuzz-b"].result()
    admin.list_topics(timeout=10)
    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    for i in range(20):
        producer.produce("fuzz-a", key=b"k%d" % i, value=b"v%d" % i, headers=[("h", b"x")])
    producer.flush(10)
    tx = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "transactional.id": "fuzz-tx"})
    tx.init_transactions(10)
    tx.begin_transaction()
    tx.produce("fuzz-b", value=b"in a transaction")
    tx.commit_transaction(10)
    for protocol in ("classic", "consumer"):
        consumer = confluent_kafka.Consumer(
            {
                "bootstrap.servers": bootstrap,
                "group.id": f"fuzz-{protocol}",
                "group.protocol": protocol,
                "auto.offset.reset": "earliest",
            }
        )
        consumer.subscribe(["fuzz-a"])
        got = 0
        for _ in range(100):
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                got += 1
            if got >= 5:
                break
        consumer.commit(asynchronous=False)
        consumer.close()
    kp = kafka.KafkaProducer(bootstrap_servers=bootstrap, acks="all")
    for i in range(10):
        kp.send("fuzz-a", key=b"k", value=b"kafka-python %d" % i)
    kp.flush()
    kp.close()
    kc = kafka.KafkaConsumer(
        "fuzz-a", bootstrap_servers=bootstrap, group_id="fuzz-kp", auto_offset_reset="earliest", consumer_timeout_ms=3000
    )
    for _ in kc:
        pass
    kc.commit()
    kc.close()
    ka = kafka.KafkaAdminClient(bootstrap_servers=bootstrap)
    for call in (
        lambda: ka.describe_groups(["fuzz-kp"]),
        lambda: ka.list_group_offsets("fuzz-kp"),
        lambda: ka.list_groups(),
        lambda: ka.describe_cluster(),
        lambda: ka.describe_topics(["fuzz-a"]),
        lambda: ka.list_transactions(),
        lambda: ka.delete_topics(["fuzz-b"]),
    ):
        with contextlib.suppress(Exception):  # only the request frames matter here
            call()
    ka.close()


async def capture(per_api: int) -> dict[tuple[int, int], list[bytes]]:
    relay_port = free_port()
    cluster = MockCluster(brokers=1, advertised_port=relay_port)
    await cluster.start()
    relay = Relay(cluster.brokers[1].port)
    server = await asyncio.start_server(relay.handle, "127.0.0.1", relay_port)
    done = threading.Event()
    error: list[BaseException] = []

    def clients() -> None:
        try:
            run_clients(f"127.0.0.1:{relay_port}")
        except BaseException as exc:  # reported below
            error.append(exc)
        finally:
            done.set()

    threading.Thread(target=clients, daemon=True).start()
    while not done.is_set():
        await asyncio.sleep(0.1)
    server.close()
    await cluster.stop()
    if error:
        raise error[0]
    by_api: dict[tuple[int, int], list[bytes]] = {}
    seen: set[bytes] = set()
    for frame in relay.frames:
        key, version = struct.unpack_from(">hh", frame)
        digest = hashlib.sha256(frame[:4] + frame[8:]).digest()  # the correlation id left out
        kept = by_api.setdefault((key, version), [])
        if digest not in seen and len(kept) < per_api:
            seen.add(digest)
            kept.append(frame)
    return by_api


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-api", type=int, default=4)
    args = parser.parse_args()
    by_api = asyncio.run(capture(args.per_api))
    CORPUS.mkdir(parents=True, exist_ok=True)
    for old in CORPUS.glob("*.bin"):
        old.unlink()
    for (key, version), frames in sorted(by_api.items()):
        for n, frame in enumerate(frames):
            (CORPUS / f"{key}-{version}-{n}.bin").write_bytes(frame)
    print(f"{sum(len(f) for f in by_api.values())} frames of {len(by_api)} (api, version) pairs in {CORPUS}")


if __name__ == "__main__":
    main()
