"""Differential: several listeners, and a listener that advertised.listeners leaves out (issue #21).

A real Kafka 4.3.1 and a mockbroker, each listening on PLAINTEXT and on HIDDEN with only PLAINTEXT
advertised: Kafka registers the broker without HIDDEN, so a client that came in on HIDDEN is given
no broker (Metadata: no brokers, each partition LISTENER_NOT_FOUND from v6 and LEADER_NOT_AVAILABLE
before, every replica offline; FindCoordinator: COORDINATOR_NOT_AVAILABLE; DescribeCluster: no
brokers and controller -1). The topics are made on PLAINTEXT, with the same names on both.

One more real Kafka for the session (started by this module, stopped after it).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mockbroker.testing import start_cluster
from mockbroker_conformance.kafka import launcher
from mockbroker_protocol.messages.describe_cluster import DescribeClusterRequest
from mockbroker_protocol.messages.find_coordinator import FindCoordinatorRequest
from tests.conftest import real_kafka
from tests.differential.harness import Step, Target, differential, unique
from tests.differential.steps import METADATA, create, metadata, topic

FIND_COORDINATOR, DESCRIBE_CLUSTER = 10, 60
PROTOCOLS = "PLAINTEXT:PLAINTEXT,HIDDEN:PLAINTEXT"

Pair = tuple[Target, Target]


@pytest.fixture(scope="module")
def listener_targets() -> Iterator[tuple[Pair, Pair]]:
    """((kafka, mock) on PLAINTEXT, (kafka, mock) on HIDDEN)."""
    hidden = launcher.free_port()
    with real_kafka(properties={
        "listeners": f"PLAINTEXT://127.0.0.1:{{port}},HIDDEN://127.0.0.1:{hidden},CONTROLLER://127.0.0.1:{{controller}}",
        "advertised.listeners": "PLAINTEXT://127.0.0.1:{port}",
        "listener.security.protocol.map": f"{PROTOCOLS},CONTROLLER:PLAINTEXT",
    }) as kafka:
        cluster = start_cluster(
            kafka_defaults=True, auto_create_topics=True, num_partitions=1, offsets_topic_num_partitions=1,
            transaction_state_log_num_partitions=1, request_log=False,
            listeners="PLAINTEXT://127.0.0.1:0,HIDDEN://127.0.0.1:0", listener_security_protocol_map=PROTOCOLS,
            advertised_listeners="PLAINTEXT://127.0.0.1:0",
        )
        try:
            node = next(iter(cluster.cluster.brokers.values()))
            main = Target("kafka", (kafka.host, kafka.port)), Target("mockbroker", (node.host, node.port))
            on_hidden = Target("kafka", ("127.0.0.1", hidden)), Target("mockbroker", (node.host, node.endpoints["HIDDEN"].port))
            yield main, on_hidden
        finally:
            cluster.close()


@pytest.mark.parametrize("version", [0, 1, 5, 6, 12, 13])
def test_metadata_on_a_listener_no_broker_advertises(listener_targets: tuple[Pair, Pair], version: int) -> None:
    main, on_hidden = listener_targets
    names = (unique("lt"), unique("lt2"), unique("lg"))
    differential(*main, [*create(topic, 2)], names=names)
    differential(*on_hidden, [Step(METADATA, version, metadata([topic]))], names=names)


@pytest.mark.parametrize(("version", "request_"), [
    (2, FindCoordinatorRequest(key="g-hidden")),
    (4, FindCoordinatorRequest(coordinator_keys=["g-hidden"])),
])
def test_find_coordinator_on_a_listener_no_broker_advertises(
    listener_targets: tuple[Pair, Pair], version: int, request_: FindCoordinatorRequest
) -> None:
    differential(*listener_targets[1], [Step(FIND_COORDINATOR, version, request_)])


def test_describe_cluster_on_each_listener(listener_targets: tuple[Pair, Pair]) -> None:
    main, on_hidden = listener_targets
    differential(*main, [Step(DESCRIBE_CLUSTER, 1, DescribeClusterRequest())])
    differential(*on_hidden, [Step(DESCRIBE_CLUSTER, 1, DescribeClusterRequest())])
