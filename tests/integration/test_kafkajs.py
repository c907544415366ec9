"""kafkajs 2.2.4 (node; pinned in tests/integration/clients/node/package-lock.json) produces to a
3-broker cluster: keys (null ones too), values, headers and CreateTime timestamps, in several
send() calls so each partition gets several multi-record batches. The broker must store exactly
those batches, acknowledge each message at the right offset and report the right watermarks.

Only producing, for now: kafkajs has no consumer without a consumer group (its Consumer always
joins one; there is no assign()), and mockbroker does not coordinate groups yet. So instead of
consuming, the test decodes the stored batches (cluster.topics[t].partitions[i].log.batches) and
checks them against what was sent, and the driver reads the watermarks with admin.fetchTopicOffsets
(ListOffsets). When group coordination exists, add a consume-with-group mode to the driver
(tests/integration/clients/node/kafkajs-produce.js) and a test that consumes back.

kafkajs sends ApiVersions v2 first, then Metadata v6, Produce v7 and ListOffsets v3.
"""

from __future__ import annotations

import pytest

from mockbroker import MockCluster
from tests.integration.clients.driver import (
    assert_acks_in_order,
    events,
    kafkajs_script,
    run_client,
    to_json,
)
from tests.integration.support import (
    DEADLINE_S,
    assert_leaders_span_brokers,
    assert_stored_codec,
    assert_stored_exactly,
    make_messages,
    stored_batches,
)

PARTITIONS = 3
COUNT = 300
SENDS = 3  # producer.send() calls, one after the other; each sends one batch per partition
# kafkajs implements only gzip itself (snappy, lz4 and zstd need codec plugins from npm).
KAFKAJS_CODECS = ("none", "gzip")


@pytest.mark.parametrize("codec", KAFKAJS_CODECS)
async def test_produce_and_check_the_stored_batches(cluster: MockCluster, codec: str) -> None:
    node, script = kafkajs_script()
    topic = f"kafkajs-{codec}"
    created = cluster.create_topic(topic, PARTITIONS)
    assert_leaders_span_brokers({p.index: p.leader_id for p in created.partitions}, cluster.brokers)
    sent = make_messages(f"kafkajs {codec}", COUNT, PARTITIONS)

    lines = await run_client(
        [
            node, str(script),
            "--brokers", cluster.bootstrap_servers,
            "--topic", topic,
            "--sends", str(SENDS),
            "--compression", codec,
            "--timeout-ms", str(int(DEADLINE_S * 1000)),
        ],
        [to_json(m) for m in sent],
    )  # fmt: skip

    # Produce responses: each message at the next offset of its partition, in send order.
    next_offset = assert_acks_in_order(sent, events(lines, "produced"))
    assert next_offset == dict.fromkeys(range(PARTITIONS), COUNT // PARTITIONS)
    # ListOffsets, as kafkajs's admin reads it: log start 0, high watermark = messages produced.
    watermarks = {line["partition"]: (line["low"], line["high"]) for line in events(lines, "offsets")}
    assert watermarks == {p: (0, n) for p, n in next_offset.items()}
    # The stored log: one batch per partition per send(), decoding to exactly what was sent.
    batches = stored_batches(cluster, topic)
    assert {p: len(b) for p, b in batches.items()} == dict.fromkeys(range(PARTITIONS), SENDS)
    assert_stored_codec(batches, codec)
    assert_stored_exactly(batches, sent)
    assert cluster.internal_errors == []
