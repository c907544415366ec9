"""Two listeners per broker with real clients at once (docs/security.md, "Several listeners"): a
two-broker cluster listening on PLAINTEXT and on SASL_SSL; kafka-python comes in on PLAINTEXT and
confluent-kafka on SASL_SSL (SCRAM-SHA-512), both in one consumer group on one topic. Each is
given its own listener's addresses in Metadata (and the group coordinator's in FindCoordinator),
so each stays on its listener: were the addresses crossed, librdkafka would speak TLS to a
PLAINTEXT socket and the group would never form."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from mockbroker.testing import KafkaCluster
from tests.integration.support import wait_until

USERS = {"alice": "alice-secret"}
DEADLINE_S = 60.0
TOPIC = "shared"
GROUP = "two-listeners"


@pytest.fixture(scope="module")
def kafka() -> Iterator[KafkaCluster]:
    with KafkaCluster(
        brokers=2, listeners="PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0", sasl_users=USERS,
        topics={TOPIC: 2}, request_log=False,
    ) as kafka:
        yield kafka


def _confluent_settings(kafka: KafkaCluster) -> dict[str, Any]:
    return {
        "bootstrap.servers": kafka.bootstrap_servers_by_listener["SASL_SSL"], "security.protocol": "SASL_SSL",
        "ssl.ca.location": str(kafka.ssl_ca_path), "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "alice", "sasl.password": "alice-secret",
    }


def _addresses(bootstrap: str) -> set[tuple[str, int]]:
    return {(host, int(port)) for host, _, port in (a.rpartition(":") for a in bootstrap.split(","))}


def test_each_client_sees_its_own_listener(kafka: KafkaCluster) -> None:
    from confluent_kafka.admin import AdminClient
    from kafka import KafkaAdminClient

    plaintext = _addresses(kafka.bootstrap_servers_by_listener["PLAINTEXT"])
    sasl_ssl = _addresses(kafka.bootstrap_servers_by_listener["SASL_SSL"])
    assert len(plaintext | sasl_ssl) == 4 and kafka.bootstrap_servers == kafka.bootstrap_servers_by_listener["PLAINTEXT"]
    admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap_servers_by_listener["PLAINTEXT"])
    try:
        seen = {(b["host"], b["port"]) for b in admin.describe_cluster()["brokers"]}
    finally:
        admin.close()
    assert seen == plaintext
    metadata = AdminClient(_confluent_settings(kafka)).list_topics(timeout=DEADLINE_S)
    assert {(b.host, b.port) for b in metadata.brokers.values()} == sasl_ssl


class _ConfluentMember(threading.Thread):
    """A confluent-kafka consumer of the group on SASL_SSL, polling until told to stop."""

    def __init__(self, kafka: KafkaCluster) -> None:
        super().__init__(daemon=True)
        self.settings = {**_confluent_settings(kafka), "group.id": GROUP, "client.id": "on-sasl-ssl",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False}
        self.got: list[bytes] = []
        self.stop = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        from confluent_kafka import Consumer

        try:
            consumer = Consumer(self.settings)
            consumer.subscribe([TOPIC])
            while not self.stop.is_set():
                message = consumer.poll(0.2)
                if message is not None and message.error() is None:
                    self.got.append(message.value())
                    consumer.commit(message, asynchronous=False)
            consumer.close()
        except BaseException as exc:  # reported by the test
            self.error = exc


def test_one_group_across_two_listeners(kafka: KafkaCluster) -> None:
    from confluent_kafka import Producer
    from kafka import KafkaConsumer, KafkaProducer

    member = _ConfluentMember(kafka)
    member.start()
    consumer = KafkaConsumer(
        TOPIC, bootstrap_servers=kafka.bootstrap_servers_by_listener["PLAINTEXT"], group_id=GROUP,
        client_id="on-plaintext", auto_offset_reset="earliest", enable_auto_commit=False,
    )
    got: list[bytes] = []
    try:
        def stable_with_both() -> bool:
            consumer.poll(timeout_ms=100)  # kafka-python joins and heartbeats inside poll
            group = kafka.describe_group(GROUP)
            return (
                group is not None and group.state == "Stable" and len(group.members) == 2
                and all(m.assignment and sum(map(len, m.assignment.values())) == 1 for m in group.members)
            )

        wait_until(stable_with_both, "both clients in the group, one partition each", timeout=DEADLINE_S)
        assert member.error is None
        producer = KafkaProducer(bootstrap_servers=kafka.bootstrap_servers_by_listener["PLAINTEXT"])
        for partition in (0, 1):
            producer.send(TOPIC, f"plain-{partition}".encode(), partition=partition).get(timeout=DEADLINE_S)
        producer.close()
        confluent = Producer(_confluent_settings(kafka))
        for partition in (0, 1):
            confluent.produce(TOPIC, f"tls-{partition}".encode(), partition=partition)
        assert confluent.flush(DEADLINE_S) == 0

        def all_four() -> bool:
            for records in consumer.poll(timeout_ms=100).values():
                got.extend(r.value for r in records)
            return len(got) + len(member.got) >= 4

        wait_until(all_four, "the four records consumed by the two members", timeout=DEADLINE_S)
        consumer.commit()
    finally:
        member.stop.set()
        member.join(DEADLINE_S)
        consumer.close()
    assert member.error is None
    # one partition each: each member has the record of each producer for its partition
    assert sorted(got + member.got) == [b"plain-0", b"plain-1", b"tls-0", b"tls-1"]
    assert len(got) == 2 and len(member.got) == 2
    assert {v.split(b"-")[1] for v in got} != {v.split(b"-")[1] for v in member.got}
