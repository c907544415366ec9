"""Per-listener settings with real clients (docs/security.md, "Settings"): two SSL listeners each
presenting a certificate of its own CA (``listener.name.<name>.ssl.keystore.location``,
``...ssl.truststore.location``, one key encrypted: ``...ssl.key.password``), each client trusting
only its listener's CA; and
``connections.max.reauth.ms`` per listener and per listener and mechanism (KIP-368), as
confluent-kafka reads it in SaslAuthenticate's ``session_lifetime_ms`` (librdkafka's security
debug log: "Received session lifetime N ms from broker")."""

from __future__ import annotations

import logging
import re
import socket
import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mockbroker.security import tls
from mockbroker.testing import KafkaCluster
from tests.integration.support import wait_until

DEADLINE_S = 60.0
USERS = {"alice": "alice-secret"}


def _keystore(directory: Path, password: str | None = None) -> tuple[str, str]:
    """A CA of its own and a broker certificate it signed: (keystore PEM: chain and key, the key
    encrypted with ``password`` if one is given; CA PEM)."""
    from cryptography.hazmat.primitives import serialization

    material = tls.generate(["127.0.0.1", "localhost"], str(directory))
    key = Path(material.keyfile).read_bytes()
    if password is not None:
        private = serialization.load_pem_private_key(key, None)
        key = private.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.BestAvailableEncryption(password.encode())
        )
    keystore = directory / "keystore.pem"
    keystore.write_bytes(Path(material.certfile).read_bytes() + key)
    assert material.cafile is not None
    return str(keystore), material.cafile


@pytest.fixture(scope="module")
def two_cas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[KafkaCluster, dict[str, str]]]:
    cas: dict[str, str] = {}
    overrides: dict[str, str] = {}
    for name in ("INTERNAL", "EXTERNAL"):
        password = "internal-key-secret" if name == "INTERNAL" else None  # INTERNAL's key is encrypted
        keystore, cas[name] = _keystore(tmp_path_factory.mktemp(name.lower()), password)
        overrides[f"listener.name.{name.lower()}.ssl.keystore.location"] = keystore
        overrides[f"listener.name.{name.lower()}.ssl.truststore.location"] = cas[name]
        if password is not None:
            overrides[f"listener.name.{name.lower()}.ssl.key.password"] = password
    with KafkaCluster(
        listeners="INTERNAL://127.0.0.1:0,EXTERNAL://127.0.0.1:0", listener_security_protocol_map="INTERNAL:SSL,EXTERNAL:SSL",
        listener_overrides=overrides, request_log=False,
    ) as kafka:
        yield kafka, cas


def test_each_ssl_listener_presents_its_own_certificate(two_cas: tuple[KafkaCluster, dict[str, str]]) -> None:
    from confluent_kafka import Producer

    kafka, cas = two_cas
    assert kafka.ssl_ca_paths_by_listener == cas and kafka.ssl_ca_path == cas["INTERNAL"]
    for name in ("INTERNAL", "EXTERNAL"):
        producer = Producer({
            "bootstrap.servers": kafka.bootstrap_servers_by_listener[name], "security.protocol": "SSL",
            "ssl.ca.location": cas[name], "client.id": name,
        })
        producer.produce("orders", name.encode())
        assert producer.flush(DEADLINE_S) == 0, f"{name}: not delivered"
    # Each listener's certificate chains to its own CA only: a client trusting the other's refuses it.
    for name, other in (("INTERNAL", "EXTERNAL"), ("EXTERNAL", "INTERNAL")):
        host, _, port = kafka.bootstrap_servers_by_listener[name].rpartition(":")
        context = ssl.create_default_context(cafile=cas[other])
        with socket.create_connection((host, int(port)), timeout=DEADLINE_S) as raw, pytest.raises(ssl.SSLCertVerificationError):
            context.wrap_socket(raw, server_hostname=host)
        context = ssl.create_default_context(cafile=cas[name])
        with socket.create_connection((host, int(port)), timeout=DEADLINE_S) as raw, context.wrap_socket(raw, server_hostname=host):
            pass


@pytest.fixture(scope="module")
def reauth() -> Iterator[KafkaCluster]:
    with KafkaCluster(
        listeners="SHORT://127.0.0.1:0,LONG://127.0.0.1:0", listener_security_protocol_map="SHORT:SASL_PLAINTEXT,LONG:SASL_PLAINTEXT",
        sasl_users=USERS, connections_max_reauth_ms=3_600_000,
        listener_overrides={
            "listener.name.short.connections.max.reauth.ms": "120000",
            "listener.name.short.scram-sha-512.connections.max.reauth.ms": "60000",
        },
        request_log=False,
    ) as kafka:
        yield kafka


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def _session_lifetimes_ms(kafka: KafkaCluster, listener: str, mechanism: str) -> set[int]:
    """What confluent-kafka read in SaslAuthenticate's session_lifetime_ms (each connection's),
    from its debug log."""
    from confluent_kafka import Producer

    logger = logging.getLogger(f"test_listener_overrides.{listener}.{mechanism}")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    lines = _Lines()
    logger.addHandler(lines)
    settings: dict[str, Any] = {
        "bootstrap.servers": kafka.bootstrap_servers_by_listener[listener], "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": mechanism, "sasl.username": "alice", "sasl.password": "alice-secret",
        "debug": "security", "logger": logger,
    }
    producer = Producer(settings)
    try:
        pattern = re.compile(r"Received session lifetime (\d+) ms from broker")

        def seen() -> bool:
            producer.poll(0.1)  # serves the log queue
            return any(pattern.search(line) for line in lines.lines)

        wait_until(seen, f"{listener} {mechanism}: a SaslAuthenticate with a session lifetime", DEADLINE_S)
        return {int(m.group(1)) for line in lines.lines if (m := pattern.search(line))}
    finally:
        producer.flush(0)
        logger.removeHandler(lines)


@pytest.mark.parametrize(
    ("listener", "mechanism", "expected"),
    [
        ("SHORT", "SCRAM-SHA-512", 60_000),  # listener.name.short.scram-sha-512.connections.max.reauth.ms
        ("SHORT", "PLAIN", 120_000),  # listener.name.short.connections.max.reauth.ms
        ("LONG", "SCRAM-SHA-512", 3_600_000),  # connections.max.reauth.ms
    ],
)
def test_session_lifetime_by_listener_and_mechanism(reauth: KafkaCluster, listener: str, mechanism: str, expected: int) -> None:
    assert _session_lifetimes_ms(reauth, listener, mechanism) == {expected}
