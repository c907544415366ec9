"""sarama 1.22 (Go; Debian's golang-github-shopify-sarama-dev, built in GOPATH mode) produces to a
3-broker cluster and consumes back exactly what it produced: keys (null ones too), values, headers,
CreateTime timestamps, order per partition, each message once.

sarama never sends ApiVersions: every request version follows Config.Version. At V1_0_0_0 and
V2_0_0_0 it opens with Metadata v5, produces with Produce v3 (a v2 record batch), resolves
OffsetOldest/OffsetNewest with ListOffsets v1 and fetches with Fetch v4 (OLD_VERSIONS.md). So the
broker must serve a client whose first request on every connection is not ApiVersions.

The consumer is sarama's plain Consumer, partition by partition from the oldest offset, with no
consumer group; the driver is tests/integration/clients/sarama/main.go.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mockbroker import MockCluster
from tests.integration.clients.driver import (
    assert_acks_in_order,
    build_sarama_client,
    events,
    from_json,
    run_client,
    to_json,
)
from tests.integration.support import (
    DEADLINE_S,
    assert_consumed_exactly,
    assert_leaders_span_brokers,
    assert_stored_codec,
    assert_stored_exactly,
    make_messages,
    stored_batches,
)

PARTITIONS = 3
COUNT = 300
# sarama's Config.Version values under test (1.0: Metadata v5 / Produce v3 / Fetch v4; 2.0 sends
# the same versions of these APIs, and is what most sarama users set).
VERSIONS = ("1.0.0", "2.0.0")
# No zstd: Kafka accepts zstd batches only in Produce v7+ (KIP-110) and sarama 1.22 sends at most v3.
SARAMA_CODECS = ("none", "gzip", "snappy", "lz4")


@pytest.fixture(scope="session")
def sarama_client() -> Path:
    return build_sarama_client()


@pytest.mark.parametrize("codec", SARAMA_CODECS)
@pytest.mark.parametrize("version", VERSIONS)
async def test_produce_and_consume_back(
    cluster: MockCluster, sarama_client: Path, version: str, codec: str
) -> None:
    topic = f"sarama-{version.replace('.', '_')}-{codec}"
    created = cluster.create_topic(topic, PARTITIONS)
    assert_leaders_span_brokers({p.index: p.leader_id for p in created.partitions}, cluster.brokers)
    sent = make_messages(f"sarama {codec}", COUNT, PARTITIONS)

    lines = await run_client(
        [
            str(sarama_client),
            "-brokers", cluster.bootstrap_servers,
            "-topic", topic,
            "-version", version,
            "-compression", codec,
            "-timeout", f"{DEADLINE_S:.0f}s",
            "roundtrip",
        ],
        [to_json(m) for m in sent],
    )  # fmt: skip

    # SyncProducer acks: each message at the next offset of its partition, in send order.
    next_offset = assert_acks_in_order(sent, events(lines, "produced"))
    assert next_offset == dict.fromkeys(range(PARTITIONS), COUNT // PARTITIONS)
    # What the plain Consumer fetched: every message once, offsets 0..n-1 per partition.
    assert_consumed_exactly(sent, [from_json(line) for line in events(lines, "consumed")])
    # What the broker holds: sarama's own batches, compressed with the codec asked for.
    batches = stored_batches(cluster, topic)
    assert_stored_codec(batches, codec)
    assert_stored_exactly(batches, sent)
    assert cluster.internal_errors == []
