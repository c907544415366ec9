"""kcat (librdkafka, as a command-line tool) produces with every codec to a 3-broker cluster and
consumes back exactly what it produced: keys, values, headers (-H), timestamps, order per partition.

kcat cannot set a record's timestamp, so librdkafka stamps CreateTime itself; the timestamps
consumed must be those it stored. The consumer is kcat's simple consumer (-C without -G): no group.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.integration.support import (
    CODECS,
    DEADLINE_S,
    PARTITIONS,
    BrokerThread,
    Message,
    assert_consumed_exactly,
    assert_leaders_span_brokers,
    assert_stored_codec,
    assert_stored_exactly,
    by_partition,
    decode_stored,
    make_messages,
    require_tool,
)

COUNT = 600
# kcat's -f tokens, tab-separated: partition, offset, timestamp, key, value, headers ("n=v,n=v").
FORMAT = r"%p\t%o\t%T\t%k\t%s\t%h\n"


def kcat(*args: str, stdin: bytes | None = None) -> bytes:
    proc = subprocess.run(
        [require_tool("kcat"), *args], input=stdin, capture_output=True, timeout=DEADLINE_S, check=False
    )
    assert proc.returncode == 0, (
        f"kcat {' '.join(args)} exited {proc.returncode}:\n{proc.stderr.decode(errors='replace')}"
    )
    return proc.stdout


def parse_headers(text: str) -> tuple[tuple[str, bytes | None], ...]:
    if not text:
        return ()
    return tuple((name, value.encode()) for name, _, value in (h.partition("=") for h in text.split(",")))


@pytest.mark.parametrize("codec", CODECS)
def test_produce_and_consume_back(broker_thread: BrokerThread, codec: str) -> None:
    require_tool("kcat")
    topic = f"kcat-{codec}"
    assert_leaders_span_brokers(broker_thread.create_topic(topic, PARTITIONS), broker_thread.broker_ids)
    # kcat's -H headers apply to every message of a run: one run per partition, headers naming it.
    sent = [
        Message(
            m.partition,
            m.key,
            m.value,
            (("codec", codec.encode()), ("partition", str(m.partition).encode())),
            None,
        )
        for m in make_messages(codec, COUNT, null_keys=False, headers=False, timestamps=False)
    ]
    common = ["-b", broker_thread.bootstrap_servers, "-m", "30", "-X", "client.id=it-kcat"]
    for p in range(PARTITIONS):
        lines = b"".join(
            m.key + b"\t" + m.value + b"\n" for m in sent if m.partition == p and m.key and m.value
        )
        kcat(
            *common,
            "-P",
            "-t", topic,
            "-p", str(p),
            "-K", r"\t",
            "-X", f"compression.codec={codec}",
            "-X", "linger.ms=20",
            "-H", f"codec={codec}",
            "-H", f"partition={p}",
            stdin=lines,
        )  # fmt: skip

    batches = broker_thread.stored_batches(topic)
    assert_stored_codec(batches, codec)
    # Timestamps are librdkafka's: take them from the stored log, then everything else must match.
    stored = decode_stored(batches)
    want = by_partition(sent)
    assert {p: len(ms) for p, ms in stored.items()} == {p: len(ms) for p, ms in want.items()}
    stamped = [
        Message(p, m.key, m.value, m.headers, stored[p][i].timestamp)
        for p, ms in want.items()
        for i, m in enumerate(ms)
    ]
    assert all(m.timestamp is not None and m.timestamp > 0 for m in stamped)
    assert_stored_exactly(batches, stamped)

    out = kcat(*common, "-C", "-t", topic, "-o", "beginning", "-e", "-f", FORMAT).decode()
    consumed = []
    for line in out.splitlines():
        partition, offset, timestamp, key, value, headers = line.split("\t")
        consumed.append(
            Message(
                int(partition),
                key.encode(),
                value.encode(),
                parse_headers(headers),
                int(timestamp),
                int(offset),
            )
        )
    assert_consumed_exactly(stamped, consumed)
