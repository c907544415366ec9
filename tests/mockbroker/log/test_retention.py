"""Retention by time runs on Kafka's schedule (log.retention.check.interval.ms), idle partitions too."""

from __future__ import annotations

from mockbroker import ManualClock, MockCluster
from mockbroker.config.cluster import RETENTION_CHECK_INTERVAL_MS
from tests.mockbroker.datapath import batch, leader_client, produce


async def test_an_idle_partition_expires_by_time_on_the_scheduled_check() -> None:
    clock = ManualClock()
    cluster = MockCluster(clock=clock)
    await cluster.start()
    try:
        cluster.create_topic("short", 1, configs={"retention.ms": "60000"})
        client = await leader_client(cluster, "short")
        now = clock.now_ms()
        for i in range(3):  # three batches, one minute apart in record time
            resp = await produce(client, cluster, "short", batch(b"v%d" % i, timestamp=now + i * 60_000))
            assert resp.error_code == 0
        log = cluster.topics["short"].partitions[0].log
        assert (log.log_start_offset, log.log_end_offset) == (0, 3)
        # No more appends. Before the first scheduled check nothing expires...
        clock.advance(RETENTION_CHECK_INTERVAL_MS - 1)
        assert log.log_start_offset == 0
        # ...then two checks later (the first arms this partition's interval) old batches go,
        # the active (last) batch stays, as Kafka never deletes the active segment.
        clock.advance(1 + 2 * RETENTION_CHECK_INTERVAL_MS)
        assert log.log_start_offset == 2
        assert log.log_end_offset == 3
        await client.close()
    finally:
        await cluster.stop()
    assert cluster.internal_errors == []
