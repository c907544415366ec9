"""SASL OAUTHBEARER (KIP-255) and re-authentication (KIP-368) with real clients over loopback:
confluent-kafka (librdkafka's unsecured JWT and an oauth_cb token), kafka-python (a token provider)
and the Java client (its default unsecured login handler) produce and consume in a group; a token
the broker refuses fails with the client's authentication error; the Java client re-authenticates
by itself on the same connections across several session lifetimes (docs/security.md)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from mockbroker.security.oauthbearer import unsecured_token
from mockbroker.testing import KafkaCluster
from tests.integration.support import wait_until
from tests.integration.test_security import _confluent_roundtrip, _events, _kafka_python_roundtrip
from tests.integration.test_security_drivers import _driver, _failure, _roundtrip

DEADLINE_S = 40.0
REAUTH_MS = 2000
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"


@pytest.fixture(scope="module")
def oauth() -> Iterator[KafkaCluster]:
    with KafkaCluster(
        listeners="SASL_PLAINTEXT://127.0.0.1:0",
        sasl_enabled_mechanisms="OAUTHBEARER",
        oauthbearer_sasl_jaas_config=f'{OAUTH_MODULE} required unsecuredValidatorAllowableClockSkewMs="5000";',
        request_log=False,
    ) as kafka:
        yield kafka


def _token(**claims: Any) -> str:
    now = int(time.time())
    base: dict[str, Any] = {"sub": "alice", "iat": now, "exp": now + 3600}
    base.update(claims)
    return unsecured_token({k: v for k, v in base.items() if v is not None})


def _succeeded(kafka: KafkaCluster, principal: str) -> bool:
    return any(e["details"]["principal"] == principal for e in _events(kafka, "authentication.succeeded"))  # type: ignore[index]


# -- confluent-kafka ----------------------------------------------------------------------------------


def test_confluent_unsecured_jwt(oauth: KafkaCluster) -> None:
    got = _confluent_roundtrip(oauth, {
        "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
        "enable.sasl.oauthbearer.unsecure.jwt": "true", "sasl.oauthbearer.config": "principal=carol scope=kafka",
    })
    assert got == [b"m0", b"m1", b"m2"]
    assert _succeeded(oauth, "User:carol")


def test_confluent_expired_token_fails_with_authentication_error(oauth: KafkaCluster) -> None:
    from confluent_kafka import KafkaError, Producer

    errors: list[Any] = []
    expired = _token(iat=int(time.time()) - 7200, exp=int(time.time()) - 3600)
    producer = Producer({
        "bootstrap.servers": oauth.bootstrap_servers, "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "OAUTHBEARER", "oauth_cb": lambda _config: (expired, time.time() + 3600),
        "error_cb": errors.append,
    })
    deadline = time.monotonic() + DEADLINE_S
    while not errors and time.monotonic() < deadline:
        producer.poll(0.2)
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION, errors
    assert '{"status":"invalid_token"}' in errors[0].str(), errors[0]


# -- kafka-python ---------------------------------------------------------------------------------------


def _provider(token: str) -> Any:
    from kafka.net.sasl.oauth import AbstractTokenProvider

    class Provider(AbstractTokenProvider):
        def token(self) -> str:
            return token

    return Provider()


def test_kafka_python_token_provider(oauth: KafkaCluster) -> None:
    got = _kafka_python_roundtrip(
        oauth, security_protocol="SASL_PLAINTEXT", sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=_provider(_token(sub="dave")),
    )
    assert got == [b"m0", b"m1", b"m2"]
    assert _succeeded(oauth, "User:dave")


def test_kafka_python_token_without_sub_fails(oauth: KafkaCluster, caplog: pytest.LogCaptureFixture) -> None:
    """kafka-python treats a failed login at bootstrap as a lost connection and retries until
    bootstrap_timeout_ms: the application sees a timeout, the log the authentication error."""
    from kafka import KafkaProducer
    from kafka.errors import KafkaError

    with pytest.raises(KafkaError):
        KafkaProducer(
            bootstrap_servers=oauth.bootstrap_servers, security_protocol="SASL_PLAINTEXT", sasl_mechanism="OAUTHBEARER",
            sasl_oauth_token_provider=_provider(_token(sub=None, user="dave")), bootstrap_timeout_ms=3000,
        )
    assert 'SaslAuthenticationFailedError: {"status":"invalid_token"}' in caplog.text


# -- the Java client --------------------------------------------------------------------------------------


def _java(jaas_options: str) -> dict[str, str]:
    return {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.jaas.config": f"{OAUTH_MODULE} required {jaas_options};",
    }


def test_java_unsecured_login(oauth: KafkaCluster) -> None:
    config = _java('unsecuredLoginStringClaim_sub="erin"')
    assert asyncio.run(_roundtrip("java", oauth, config)) == ["m0", "m1", "m2"]
    assert _succeeded(oauth, "User:erin")


def test_java_token_without_sub_is_its_authentication_error(oauth: KafkaCluster) -> None:
    config = _java('unsecuredLoginPrincipalClaimName="user" unsecuredLoginStringClaim_user="erin"')
    event = asyncio.run(_failure("java", oauth, config))
    assert "SaslAuthenticationException" in str(event["error"]), event
    assert '{"status":"invalid_token"}' in str(event["message"]), event


@pytest.fixture(scope="module")
def reauth() -> Iterator[KafkaCluster]:
    with KafkaCluster(
        listeners="SASL_PLAINTEXT://127.0.0.1:0", sasl_enabled_mechanisms="OAUTHBEARER", connections_max_reauth_ms=REAUTH_MS,
        request_log=False,
    ) as kafka:
        yield kafka


def test_java_reauthenticates_across_session_lifetimes(reauth: KafkaCluster) -> None:
    asyncio.run(_consume_across_lifetimes(reauth, _java('unsecuredLoginStringClaim_sub="alice"')))
    assert not _events(reauth, "authentication.session_expired")


async def _consume_across_lifetimes(kafka: KafkaCluster, config: dict[str, str]) -> None:
    """Produce, consume in a group while three session lifetimes pass, produce and consume again:
    the consumer's connections re-authenticate by themselves (KIP-368), none is closed."""
    topic = f"t-{uuid.uuid4().hex[:8]}"
    kafka.create_topic(topic, 1)
    mark_seq = max((e["seq"] for e in _events(kafka, "authentication.succeeded")), default=0)  # type: ignore[type-var]
    driver = await _driver("java", kafka.bootstrap_servers, config).start(DEADLINE_S)
    try:
        await driver.call({"cmd": "produce", "topic": topic, "records": [{"key": None, "value": "m0", "partition": 0}]}, "produced", DEADLINE_S)
        mark = await driver.send({"cmd": "subscribe", "topic": topic, "group": f"g-{topic}"})
        await driver.wait(lambda e: e.get("event") == "record" and e.get("value") == "m0", "m0", DEADLINE_S, since=mark)

        def reauthenticated_thrice() -> bool:
            clients: dict[str, int] = {}
            for e in _events(kafka, "authentication.succeeded"):
                details: dict[str, Any] = e["details"]  # type: ignore[assignment]
                if e["seq"] > mark_seq and details["reauthentication"]:  # type: ignore[operator]
                    clients[details["client"]] = clients.get(details["client"], 0) + 1
            return any(n >= 3 for n in clients.values())

        await asyncio.to_thread(wait_until, reauthenticated_thrice, "three re-authentications on one connection", DEADLINE_S)
        await driver.call({"cmd": "produce", "topic": topic, "records": [{"key": None, "value": "m1", "partition": 0}]}, "produced", DEADLINE_S)
        await driver.wait(lambda e: e.get("event") == "record" and e.get("value") == "m1", "m1", DEADLINE_S, since=mark)
    finally:
        await driver.close(DEADLINE_S)
