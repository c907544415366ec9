"""DescribeUserScramCredentials and AlterUserScramCredentials (KIP-554) with confluent-kafka's
AdminClient over SASL_PLAINTEXT: a user created over the wire then logs in with SCRAM, and Kafka's
errors come back per user (ScramControlManager, ScramImage.describe; docs/security.md)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported without __all__
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

from mockbroker.testing import KafkaCluster

DEADLINE_S = 30.0


@pytest.fixture(scope="module")
def kafka() -> Iterator[KafkaCluster]:
    with KafkaCluster(listeners="SASL_PLAINTEXT://127.0.0.1:0", sasl_users={"admin": "admin-secret"}, request_log=False) as k:
        yield k


def _login(kafka: KafkaCluster, user: str, password: str, mechanism: str = "SCRAM-SHA-512") -> dict[str, Any]:
    return {
        "bootstrap.servers": kafka.bootstrap_servers, "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": mechanism, "sasl.username": user, "sasl.password": password,
    }  # fmt: skip


def _admin(kafka: KafkaCluster) -> Any:
    return AdminClient(_login(kafka, "admin", "admin-secret"))


def _alter(kafka: KafkaCluster, alterations: list[Any]) -> dict[str, KafkaError | None]:
    out: dict[str, KafkaError | None] = {}
    admin = _admin(kafka)  # kept alive until the futures are done: its destruction fails them
    for user, future in admin.alter_user_scram_credentials(alterations).items():
        try:
            future.result(timeout=DEADLINE_S)
            out[user] = None
        except KafkaException as exc:
            out[user] = exc.args[0]
    return out


def _produce_as(kafka: KafkaCluster, user: str, password: str) -> KafkaError | None:
    """One record produced as ``user``: None, or the first error librdkafka reports."""
    errors: list[KafkaError] = []
    producer = Producer({**_login(kafka, user, password), "error_cb": errors.append, "log_level": 0})
    producer.produce(f"t-{uuid.uuid4().hex[:8]}", b"v")
    deadline = time.monotonic() + DEADLINE_S
    while not errors and producer.flush(0.1) > 0 and time.monotonic() < deadline:
        pass
    return errors[0] if errors else None


def test_a_user_created_over_the_wire_logs_in(kafka: KafkaCluster) -> None:
    user = f"carol-{uuid.uuid4().hex[:6]}"
    info = ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192)
    assert _alter(kafka, [UserScramCredentialUpsertion(user, info, b"carol-secret")]) == {user: None}
    admin = _admin(kafka)
    described = admin.describe_user_scram_credentials([user])[user].result(timeout=DEADLINE_S)
    assert [(i.mechanism, i.iterations) for i in described.scram_credential_infos] == [(ScramMechanism.SCRAM_SHA_512, 8192)]
    assert _produce_as(kafka, user, "carol-secret") is None
    error = _produce_as(kafka, user, "wrong")
    assert error is not None and error.code() == KafkaError._AUTHENTICATION, error
    # the salted password became Kafka's stored key and server key; the salt is the client's
    stored = kafka.call(lambda: kafka.cluster.credentials.scram[(user, "SCRAM-SHA-512")])
    assert stored.iterations == 8192 and b"carol-secret" not in repr(stored).encode()
    # deleted: the login fails again, and describing the user is RESOURCE_NOT_FOUND
    assert _alter(kafka, [UserScramCredentialDeletion(user, ScramMechanism.SCRAM_SHA_512)]) == {user: None}
    error = _produce_as(kafka, user, "carol-secret")
    assert error is not None and error.code() == KafkaError._AUTHENTICATION, error
    with pytest.raises(KafkaException) as missing:
        admin.describe_user_scram_credentials([user])[user].result(timeout=DEADLINE_S)
    assert missing.value.args[0].code() == KafkaError.RESOURCE_NOT_FOUND
    assert f"Attempt to describe a user credential that does not exist: {user}" in missing.value.args[0].str()


def test_kafkas_errors_per_user(kafka: KafkaCluster) -> None:
    few, many, gone = (f"{p}-{uuid.uuid4().hex[:6]}" for p in ("few", "many", "gone"))
    results = _alter(kafka, [
        UserScramCredentialUpsertion(few, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4095), b"pw"),
        UserScramCredentialUpsertion(many, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 16385), b"pw"),
        UserScramCredentialDeletion(gone, ScramMechanism.SCRAM_SHA_256),
    ])  # fmt: skip
    assert {u: (e.code(), e.str()) for u, e in results.items() if e is not None} == {
        few: (KafkaError.UNACCEPTABLE_CREDENTIAL, "Too few iterations"),
        many: (KafkaError.UNACCEPTABLE_CREDENTIAL, "Too many iterations"),
        gone: (KafkaError.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"),
    }
    twice = f"twice-{uuid.uuid4().hex[:6]}"
    results = _alter(kafka, [
        UserScramCredentialUpsertion(twice, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), b"pw"),
        UserScramCredentialUpsertion(twice, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), b"pw"),
    ])  # fmt: skip
    error = results[twice]
    assert error is not None and error.code() == KafkaError.DUPLICATE_RESOURCE, error
    assert "A user credential cannot be altered twice in the same request" in error.str()
