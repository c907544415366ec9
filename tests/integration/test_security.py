"""Security with real clients over loopback: SASL (PLAIN, SCRAM-SHA-256/512) over SASL_SSL and
SASL_PLAINTEXT, and SSL with a client certificate (mockbroker/security/, docs/security.md).

Each client (kafka-python, confluent-kafka, aiokafka, kafkajs, kcat) produces and consumes in a
group (subscribed, not assigned) over SASL_SSL with PLAIN and SCRAM-SHA-512 and over SSL with a
client certificate, and a wrong password fails with the client's authentication error. One cluster
per configuration serves the whole module."""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Iterator

import pytest

from mockbroker.testing import KafkaCluster

USERS = {"alice": "alice-secret"}
DEADLINE_S = 30.0


@pytest.fixture(scope="module")
def sasl_ssl() -> Iterator[KafkaCluster]:
    with KafkaCluster(brokers=2, listeners="SASL_SSL://127.0.0.1:0", sasl_users=USERS, request_log=False) as kafka:
        yield kafka


@pytest.fixture(scope="module")
def sasl_plaintext() -> Iterator[KafkaCluster]:
    with KafkaCluster(listeners="SASL_PLAINTEXT://127.0.0.1:0", sasl_users=USERS, request_log=False) as kafka:
        yield kafka


@pytest.fixture(scope="module")
def ssl_client_auth() -> Iterator[KafkaCluster]:
    with KafkaCluster(listeners="SSL://127.0.0.1:0", ssl_client_auth="required", request_log=False) as kafka:
        yield kafka


def _events(kafka: KafkaCluster, kind: str) -> list[dict[str, object]]:
    return kafka.call(lambda: [e.to_json() for e in kafka.cluster.events if e.type == kind])


def _client_certificate(kafka: KafkaCluster) -> tuple[str, str, str]:
    """(CA, client certificate, client key): the PEM files the cluster generated at start."""
    ca = str(kafka.ssl_ca_path)
    directory = os.path.dirname(ca)
    return ca, os.path.join(directory, "client.pem"), os.path.join(directory, "client.key")


SCRAM_FAILED = "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"


# -- kafka-python -------------------------------------------------------------------------------------


def _kafka_python_roundtrip(kafka: KafkaCluster, **security: object) -> list[bytes]:
    from kafka import KafkaConsumer, KafkaProducer

    topic = f"t-{uuid.uuid4().hex[:8]}"
    producer = KafkaProducer(bootstrap_servers=kafka.bootstrap_servers, **security)
    try:
        for i in range(3):
            producer.send(topic, f"m{i}".encode()).get(timeout=DEADLINE_S)
    finally:
        producer.close()
    consumer = KafkaConsumer(
        topic, bootstrap_servers=kafka.bootstrap_servers, group_id=f"g-{topic}", auto_offset_reset="earliest",
        consumer_timeout_ms=int(DEADLINE_S * 1000), **security,
    )
    got: list[bytes] = []
    try:
        for message in consumer:
            got.append(message.value)
            if len(got) == 3:
                consumer.commit()
                break
    finally:
        consumer.close()
    return got


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_kafka_python_sasl_ssl(sasl_ssl: KafkaCluster, mechanism: str) -> None:
    got = _kafka_python_roundtrip(
        sasl_ssl, security_protocol="SASL_SSL", ssl_cafile=sasl_ssl.ssl_ca_path, sasl_mechanism=mechanism,
        sasl_plain_username="alice", sasl_plain_password="alice-secret",
    )
    assert got == [b"m0", b"m1", b"m2"]
    assert any(e["details"]["mechanism"] == mechanism for e in _events(sasl_ssl, "authentication.succeeded"))  # type: ignore[index]


def test_kafka_python_sasl_plaintext_scram_sha_256(sasl_plaintext: KafkaCluster) -> None:
    got = _kafka_python_roundtrip(
        sasl_plaintext, security_protocol="SASL_PLAINTEXT", sasl_mechanism="SCRAM-SHA-256",
        sasl_plain_username="alice", sasl_plain_password="alice-secret",
    )
    assert got == [b"m0", b"m1", b"m2"]


def test_kafka_python_ssl_client_certificate(ssl_client_auth: KafkaCluster) -> None:
    ca = ssl_client_auth.ssl_ca_path
    assert ca is not None
    directory = os.path.dirname(ca)
    got = _kafka_python_roundtrip(
        ssl_client_auth, security_protocol="SSL", ssl_cafile=ca,
        ssl_certfile=os.path.join(directory, "client.pem"), ssl_keyfile=os.path.join(directory, "client.key"),
    )
    assert got == [b"m0", b"m1", b"m2"]


def test_kafka_python_wrong_password_is_an_authentication_error(sasl_ssl: KafkaCluster, caplog: pytest.LogCaptureFixture) -> None:
    """kafka-python 3.0 retries a bootstrap whose login failed until bootstrap_timeout_ms (its API
    raises KafkaTimeoutError, against Kafka too): the authentication error is each connection's,
    SaslAuthenticationFailedError with Kafka's message, in its log."""
    from kafka import KafkaProducer
    from kafka.errors import KafkaTimeoutError

    caplog.set_level(logging.WARNING, logger="kafka")
    with pytest.raises(KafkaTimeoutError):
        KafkaProducer(
            bootstrap_servers=sasl_ssl.bootstrap_servers, security_protocol="SASL_SSL", ssl_cafile=sasl_ssl.ssl_ca_path,
            sasl_mechanism="SCRAM-SHA-512", sasl_plain_username="alice", sasl_plain_password="wrong", bootstrap_timeout_ms=3000,
        )  # fmt: skip
    failures = [r.getMessage() for r in caplog.records if "Bootstrap connection" in r.getMessage()]
    assert failures, [r.getMessage() for r in caplog.records]
    # one attempt is enough: a client that reads the close before the answer (a loaded machine
    # against Kafka too) reports a bare disconnection for that attempt
    assert any(f"SaslAuthenticationFailedError: {SCRAM_FAILED}" in failure for failure in failures), failures


# -- confluent-kafka ------------------------------------------------------------------------------------


def _confluent_roundtrip(kafka: KafkaCluster, settings: dict[str, str]) -> list[bytes]:
    from confluent_kafka import Consumer, Producer

    topic = f"t-{uuid.uuid4().hex[:8]}"
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers, **settings})
    for i in range(3):
        producer.produce(topic, f"m{i}".encode())
    assert producer.flush(DEADLINE_S) == 0
    consumer = Consumer({
        "bootstrap.servers": kafka.bootstrap_servers, "group.id": f"g-{topic}", "auto.offset.reset": "earliest", **settings,
    })
    got: list[bytes] = []
    try:
        consumer.subscribe([topic])
        import time

        deadline = time.monotonic() + DEADLINE_S
        while len(got) < 3 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                got.append(message.value())
        consumer.commit(asynchronous=False)
    finally:
        consumer.close()
    return got


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_confluent_sasl_ssl(sasl_ssl: KafkaCluster, mechanism: str) -> None:
    got = _confluent_roundtrip(sasl_ssl, {
        "security.protocol": "SASL_SSL", "ssl.ca.location": str(sasl_ssl.ssl_ca_path), "sasl.mechanism": mechanism,
        "sasl.username": "alice", "sasl.password": "alice-secret",
    })
    assert got == [b"m0", b"m1", b"m2"]


def test_confluent_wrong_password_fails_fast(sasl_ssl: KafkaCluster) -> None:
    import time

    from confluent_kafka import KafkaError, Producer

    errors: list[KafkaError] = []
    producer = Producer({
        "bootstrap.servers": sasl_ssl.bootstrap_servers, "security.protocol": "SASL_SSL",
        "ssl.ca.location": str(sasl_ssl.ssl_ca_path), "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "alice", "sasl.password": "wrong", "error_cb": errors.append, "log_level": 0,
    })
    deadline = time.monotonic() + DEADLINE_S
    while not errors and time.monotonic() < deadline:
        producer.poll(0.1)
    assert errors, "no error reported by librdkafka"
    assert errors[0].code() == KafkaError._AUTHENTICATION, errors[0]
    assert "invalid credentials with SASL mechanism SCRAM-SHA-512" in errors[0].str()
    failures = _events(sasl_ssl, "authentication.failed")
    assert failures and failures[-1]["details"]["mechanism"] == "SCRAM-SHA-512"  # type: ignore[index]
    assert "wrong" not in repr(failures)  # the event log never echoes a password


def test_confluent_ssl_client_certificate(ssl_client_auth: KafkaCluster) -> None:
    ca = str(ssl_client_auth.ssl_ca_path)
    directory = os.path.dirname(ca)
    got = _confluent_roundtrip(ssl_client_auth, {
        "security.protocol": "SSL", "ssl.ca.location": ca,
        "ssl.certificate.location": os.path.join(directory, "client.pem"), "ssl.key.location": os.path.join(directory, "client.key"),
    })
    assert got == [b"m0", b"m1", b"m2"]


# -- aiokafka -------------------------------------------------------------------------------------------


async def _aiokafka_roundtrip(kafka: KafkaCluster, **security: object) -> list[bytes]:
    import asyncio

    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

    topic = f"t-{uuid.uuid4().hex[:8]}"
    producer = AIOKafkaProducer(bootstrap_servers=kafka.bootstrap_servers, **security)
    await producer.start()
    try:
        for i in range(3):
            await producer.send_and_wait(topic, f"m{i}".encode())
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=kafka.bootstrap_servers, group_id=f"g-{topic}", auto_offset_reset="earliest", **security
    )
    await consumer.start()
    got: list[bytes] = []
    try:
        async with asyncio.timeout(DEADLINE_S):
            async for message in consumer:
                got.append(message.value)
                if len(got) == 3:
                    await consumer.commit()
                    break
    finally:
        await consumer.stop()
    return got


def _aiokafka_sasl(kafka: KafkaCluster, mechanism: str, password: str) -> dict[str, object]:
    from aiokafka.helpers import create_ssl_context

    return {
        "security_protocol": "SASL_SSL", "ssl_context": create_ssl_context(cafile=kafka.ssl_ca_path), "sasl_mechanism": mechanism,
        "sasl_plain_username": "alice", "sasl_plain_password": password,
    }  # fmt: skip


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
async def test_aiokafka_sasl_ssl(sasl_ssl: KafkaCluster, mechanism: str) -> None:
    got = await _aiokafka_roundtrip(sasl_ssl, **_aiokafka_sasl(sasl_ssl, mechanism, "alice-secret"))
    assert got == [b"m0", b"m1", b"m2"]


async def test_aiokafka_ssl_client_certificate(ssl_client_auth: KafkaCluster) -> None:
    from aiokafka.helpers import create_ssl_context

    ca, cert, key = _client_certificate(ssl_client_auth)
    context = create_ssl_context(cafile=ca, certfile=cert, keyfile=key)
    got = await _aiokafka_roundtrip(ssl_client_auth, security_protocol="SSL", ssl_context=context)
    assert got == [b"m0", b"m1", b"m2"]


async def test_aiokafka_wrong_password_is_an_authentication_error(sasl_ssl: KafkaCluster, caplog: pytest.LogCaptureFixture) -> None:
    """aiokafka's start() fails at once (KafkaConnectionError: no bootstrap server left), having
    logged each server's SaslAuthenticationFailed with Kafka's message."""
    from aiokafka import AIOKafkaProducer
    from aiokafka.errors import KafkaConnectionError

    caplog.set_level(logging.ERROR, logger="aiokafka")
    producer = AIOKafkaProducer(bootstrap_servers=sasl_ssl.bootstrap_servers, **_aiokafka_sasl(sasl_ssl, "SCRAM-SHA-512", "wrong"))
    try:
        with pytest.raises(KafkaConnectionError, match="Unable to bootstrap"):
            await producer.start()
    finally:
        await producer.stop()
    failures = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Unable connect to")]
    assert any(f"SaslAuthenticationFailed: {SCRAM_FAILED}" in failure for failure in failures), failures


# -- kafkajs --------------------------------------------------------------------------------------------


def _kafkajs(kafka: KafkaCluster, *security: str) -> tuple[int, list[dict[str, object]]]:
    import json
    import subprocess

    from tests.integration.clients.driver import kafkajs_script

    node, produce_script = kafkajs_script()
    script = produce_script.with_name("kafkajs-sasl.js")
    proc = subprocess.run(
        [node, str(script), "--brokers", kafka.bootstrap_servers, "--ca", str(kafka.ssl_ca_path), *security,
         "--topic", f"t-{uuid.uuid4().hex[:8]}", "--timeout-ms", str(int(DEADLINE_S * 1000))],
        capture_output=True, text=True, timeout=DEADLINE_S + 30, check=False,
    )  # fmt: skip
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def _kafkajs_sasl(mechanism: str, password: str) -> list[str]:
    return ["--mechanism", mechanism, "--username", "alice", "--password", password]


@pytest.mark.parametrize("mechanism", ["plain", "scram-sha-512"])
def test_kafkajs_sasl_ssl(sasl_ssl: KafkaCluster, mechanism: str) -> None:
    code, lines = _kafkajs(sasl_ssl, *_kafkajs_sasl(mechanism, "alice-secret"))
    assert code == 0, lines
    assert [line["value"] for line in lines if line["event"] == "consumed"] == ["m0", "m1", "m2"]


def test_kafkajs_ssl_client_certificate(ssl_client_auth: KafkaCluster) -> None:
    _, cert, key = _client_certificate(ssl_client_auth)
    code, lines = _kafkajs(ssl_client_auth, "--cert", cert, "--key", key)
    assert code == 0, lines
    assert [line["value"] for line in lines if line["event"] == "consumed"] == ["m0", "m1", "m2"]


def test_kafkajs_wrong_password_is_an_authentication_error(sasl_ssl: KafkaCluster) -> None:
    code, lines = _kafkajs(sasl_ssl, *_kafkajs_sasl("scram-sha-512", "wrong"))
    assert code == 1, lines
    (error,) = [line for line in lines if line["event"] == "error"]
    assert error["name"] == "KafkaJSSASLAuthenticationError", error


# -- kcat -----------------------------------------------------------------------------------------------


def _kcat(security: list[str], *args: str, stdin: str | None = None) -> tuple[int, str, str]:
    import subprocess

    from tests.integration.support import require_tool

    kcat = require_tool("kcat")
    proc = subprocess.run([kcat, *security, *args], input=stdin, capture_output=True, text=True, timeout=DEADLINE_S, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def _kcat_roundtrip(security: list[str]) -> list[str]:
    """Produce three lines, then consume them in a group (kcat -G: librdkafka's KafkaConsumer)."""
    topic = f"t-{uuid.uuid4().hex[:8]}"
    code, _, stderr = _kcat(security, "-P", "-t", topic, stdin="m0\nm1\nm2\n")
    assert code == 0, stderr
    code, stdout, stderr = _kcat(
        security, "-X", "auto.offset.reset=earliest", "-G", f"g-{topic}", "-c", "3", "-f", "%s\\n", topic
    )
    assert code == 0, stderr
    assert "rebalanced" in stderr, stderr  # a group member, assigned by the group's coordinator
    return stdout.split()


def _kcat_sasl(kafka: KafkaCluster, mechanism: str, password: str) -> list[str]:
    return [
        "-b", kafka.bootstrap_servers, "-X", "security.protocol=SASL_SSL", "-X", f"ssl.ca.location={kafka.ssl_ca_path}",
        "-X", f"sasl.mechanisms={mechanism}", "-X", "sasl.username=alice", "-X", f"sasl.password={password}",
    ]  # fmt: skip


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-512"])
def test_kcat_sasl_ssl(sasl_ssl: KafkaCluster, mechanism: str) -> None:
    assert _kcat_roundtrip(_kcat_sasl(sasl_ssl, mechanism, "alice-secret")) == ["m0", "m1", "m2"]


def test_kcat_ssl_client_certificate(ssl_client_auth: KafkaCluster) -> None:
    ca, cert, key = _client_certificate(ssl_client_auth)
    security = [
        "-b", ssl_client_auth.bootstrap_servers, "-X", "security.protocol=SSL", "-X", f"ssl.ca.location={ca}",
        "-X", f"ssl.certificate.location={cert}", "-X", f"ssl.key.location={key}",
    ]  # fmt: skip
    assert _kcat_roundtrip(security) == ["m0", "m1", "m2"]


def test_kcat_wrong_password_is_an_authentication_error(sasl_ssl: KafkaCluster) -> None:
    """librdkafka's error callback gets _AUTHENTICATION; kcat reports it and gives up (exit 1)
    once every broker connection is down, without waiting for a timeout."""
    code, _, stderr = _kcat(_kcat_sasl(sasl_ssl, "SCRAM-SHA-512", "wrong"), "-P", "-t", "t-never", stdin="m0\n")
    assert code == 1, stderr
    assert "% ERROR: Local: Authentication failure: " in stderr, stderr
    assert f"SASL authentication error: {SCRAM_FAILED}" in stderr, stderr
