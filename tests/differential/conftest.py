"""The differential suite's two targets for the whole session: the real Kafka (``kafka_broker``,
tests/conftest.py) and one mockbroker configured as that Kafka is (Kafka's defaults, the same
internal-topic sizes, no initial rebalance delay, auto creation on)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from mockbroker_conformance.kafka import launcher
from tests.conftest import real_kafka
from tests.differential.harness import Target, mockbroker_target


@pytest.fixture(scope="session")
def kafka_target(kafka_broker: launcher.KafkaBroker) -> Target:
    return Target("kafka", (kafka_broker.host, kafka_broker.port))


@pytest.fixture(scope="session")
def mock_target() -> Iterator[Target]:
    with mockbroker_target(
        auto_create_topics=True,
        num_partitions=1,
        group_initial_rebalance_delay_ms=0,
        group_streams_initial_rebalance_delay_ms=0,
        offsets_topic_num_partitions=1,
        transaction_state_log_num_partitions=1,
        share_coordinator_state_topic_num_partitions=1,
    ) as target:
        yield target


@pytest.fixture(scope="session")
def targets(kafka_target: Target, mock_target: Target) -> tuple[Target, Target]:
    return kafka_target, mock_target


# -- the secured configuration: SASL PLAIN and SCRAM, StandardAuthorizer (issue #21) ---------------

SASL_USERS = {"admin": "admin-secret", "alice": "alice-secret"}
SASL_MECHANISMS = "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"
SCRAM_ITERATIONS = 4096  # mockbroker's users' (and the fewest Kafka accepts)
AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


def secured_kafka_properties(sasl_port: int) -> dict[str, str]:
    """Kafka with a SASL_PLAINTEXT listener (PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512; the users
    above) beside its PLAINTEXT one and StandardAuthorizer on. The PLAINTEXT and controller
    listeners are User:ANONYMOUS, a super user (the controller's own requests and the launcher's
    readiness check); tests use the SASL one. PLAIN's users are JAAS options; SCRAM's are in the
    metadata log (secured_kafka_format_args)."""
    jaas = "org.apache.kafka.common.security.plain.PlainLoginModule required " + " ".join(
        f'user_{user}="{password}"' for user, password in SASL_USERS.items()
    ) + ";"
    scram_jaas = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
    return {
        "listeners": f"PLAINTEXT://127.0.0.1:{{port}},SASL_PLAINTEXT://127.0.0.1:{sasl_port},CONTROLLER://127.0.0.1:{{controller}}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{{port}},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
        "sasl.enabled.mechanisms": SASL_MECHANISMS,
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": jaas,
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": scram_jaas,
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": scram_jaas,
        "authorizer.class.name": AUTHORIZER,
        "super.users": "User:admin;User:ANONYMOUS",
    }


def secured_kafka_format_args() -> tuple[str, ...]:
    """StorageTool format's --add-scram for each user and SCRAM mechanism (KIP-900)."""
    args: list[str] = []
    for user, password in SASL_USERS.items():
        for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            args += ["--add-scram", f"{mechanism}=[name={user},password={password},iterations={SCRAM_ITERATIONS}]"]
    return tuple(args)


@pytest.fixture(scope="session")
def secured_targets() -> Iterator[tuple[Target, Target]]:
    """The secured Kafka (a second real Kafka for the session, started on first use) and a
    mockbroker configured the same way; both addresses are their SASL_PLAINTEXT listeners."""
    sasl_port = launcher.free_port()
    with real_kafka(properties=secured_kafka_properties(sasl_port), format_args=secured_kafka_format_args()), mockbroker_target(
        auto_create_topics=True,
        num_partitions=1,
        group_initial_rebalance_delay_ms=0,
        group_streams_initial_rebalance_delay_ms=0,
        offsets_topic_num_partitions=1,
        transaction_state_log_num_partitions=1,
        listeners="SASL_PLAINTEXT://127.0.0.1:0",
        sasl_enabled_mechanisms=SASL_MECHANISMS,
        sasl_users=SASL_USERS,
        authorizer_class_name=AUTHORIZER,
        super_users="User:admin",
    ) as mock:
        yield Target("kafka", ("127.0.0.1", sasl_port)), mock
