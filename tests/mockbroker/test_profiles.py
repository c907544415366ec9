"""Version profiles: a cluster capped like Kafka 3.9 advertises and serves 3.9's highest versions."""

from __future__ import annotations

import pytest

from mockbroker import MockCluster
from mockbroker.config.profiles import KAFKA_3_9, caps_for
from mockbroker.dispatch.table import HANDLERS
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from mockbroker_protocol.messages.metadata import MetadataRequest
from tests.mockbroker.wire import WireClient


async def test_kafka_3_9_profile_caps_advertised_and_served_versions() -> None:
    cluster = MockCluster(kafka_version="3.9")
    await cluster.start()
    try:
        node = next(iter(cluster.brokers.values()))
        client = await WireClient.connect(node.host, node.port)
        resp = await client.request(18, 3, ApiVersionsRequest("profile-test", "1"))
        advertised = {k.api_key: k.max_version for k in resp.api_keys}
        for key, handler in HANDLERS.items():
            cap = min(handler.versions[1], KAFKA_3_9.get(key, handler.versions[1]))
            if cap < 0:  # an API 3.9 does not serve is not advertised (the streams-group APIs)
                assert key not in advertised
            else:
                assert advertised[key] == cap
        assert advertised[3] == 12 and advertised[0] == 11 and advertised[1] == 17
        ok = await client.request(3, 12, MetadataRequest(topics=None))
        assert ok.cluster_id == cluster.config.cluster_id
        # Metadata v13 (header: key 3, version 13, correlation 7, client id "") exists in Kafka 4
        # but not in 3.9: the connection is closed, as Kafka closes it for an unknown version
        await client.send_raw(b"\x00\x00\x00\x0c\x00\x03\x00\x0d\x00\x00\x00\x07\x00\x00\x00\x00")
        assert await client.closed_by_peer()
    finally:
        await cluster.stop()
    assert cluster.internal_errors == []


def test_unknown_profile_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"known profiles: 3\.9, 4\.0"):
        caps_for("2.8")


def test_kafka_version_from_flag_env_and_precedence() -> None:
    from mockbroker.config.settings import Flags, SettingsError, resolve

    assert resolve(Flags(), {}).cluster.kafka_version == "4.0"
    from_env = resolve(Flags(), {"MOCKBROKER_KAFKA_VERSION": "3.9"})
    assert from_env.cluster.kafka_version == "3.9"
    assert from_env.cluster.effective_version_caps[3] == 12
    assert resolve(Flags(kafka_version="4.0"), {"MOCKBROKER_KAFKA_VERSION": "3.9"}).cluster.kafka_version == "4.0"
    with pytest.raises(SettingsError, match=r"argument --kafka-version: must be one of 3\.9, 4\.0"):
        resolve(Flags(kafka_version="2.8"), {})


def test_explicit_caps_override_the_profile() -> None:
    cluster = MockCluster(kafka_version="3.9", api_version_caps={3: 9})
    assert cluster.config.effective_version_caps[3] == 9
    assert cluster.config.effective_version_caps[0] == 11
    with pytest.raises(ValueError, match="unknown Kafka version profile"):
        MockCluster(kafka_version="1.0")
