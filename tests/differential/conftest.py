"""The differential suite's two targets for the whole session: the real Kafka (``kafka_broker``,
tests/conftest.py) and one mockbroker configured as that Kafka is (Kafka's defaults, the same
internal-topic sizes, no initial rebalance delay, auto creation on)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mockbroker.testing import start_cluster
from mockbroker_conformance.kafka import launcher
from tests.differential.harness import Target


@pytest.fixture(scope="session")
def kafka_target(kafka_broker: launcher.KafkaBroker) -> Target:
    return Target("kafka", (kafka_broker.host, kafka_broker.port))


@pytest.fixture(scope="session")
def mock_target() -> Iterator[Target]:
    cluster = start_cluster(
        kafka_defaults=True,
        auto_create_topics=True,
        num_partitions=1,
        group_initial_rebalance_delay_ms=0,
        group_streams_initial_rebalance_delay_ms=0,
        offsets_topic_num_partitions=1,
        transaction_state_log_num_partitions=1,
        share_coordinator_state_topic_num_partitions=1,
        request_log=False,
    )
    try:
        host, port = cluster.bootstrap_servers.split(",")[0].rsplit(":", 1)
        yield Target("mockbroker", (host, int(port)))
    finally:
        cluster.close()


@pytest.fixture(scope="session")
def targets(kafka_target: Target, mock_target: Target) -> tuple[Target, Target]:
    return kafka_target, mock_target
