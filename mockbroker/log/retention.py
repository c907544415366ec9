"""Kafka's scheduled retention check (log.retention.check.interval.ms), armed when a cluster starts.

Kept apart from mockbroker.log.replica_manager so that starting a cluster does not import the
produce path (topic configs, record batch parsing): the check imports it only when there is a
partition to look at.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from mockbroker.config.cluster import ClusterConfig
    from mockbroker.model import Partition, Topic
    from mockbroker.timers import Timers


class RetentionScope(Protocol):
    """What the check reads of a cluster (mockbroker.state.ClusterState)."""

    @property
    def config(self) -> ClusterConfig: ...

    @property
    def timers(self) -> Timers: ...

    def iter_partitions(self) -> Iterator[tuple[Topic, Partition]]: ...

# log.retention.check.interval.ms: Kafka deletes by time on a 5-minute schedule, not on append.
RETENTION_CHECK_INTERVAL_MS = 300_000
RETENTION_TIMER_KEY = ("log.retention.check",)


def schedule_retention_check(cluster: RetentionScope, now_ms: int) -> None:
    """Every interval, every partition, so an idle partition's old records expire too, not only
    those of partitions that keep receiving appends. Driven by the cluster's timers, hence by a
    ManualClock in tests."""

    def run(fired_ms: int) -> None:
        partitions = list(cluster.iter_partitions())
        if partitions:
            from mockbroker.log.replica_manager import enforce_retention

            for topic, partition in partitions:
                enforce_retention(cluster, topic, partition.log, fired_ms)
        schedule_retention_check(cluster, fired_ms)

    cluster.timers.schedule(RETENTION_TIMER_KEY, now_ms + RETENTION_CHECK_INTERVAL_MS, run)
