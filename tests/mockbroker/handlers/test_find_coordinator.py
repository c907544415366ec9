"""FindCoordinator over loopback: every version, every key type, batched keys, any broker asked."""

from __future__ import annotations

import base64
import uuid

import pytest

from mockbroker import MockCluster
from mockbroker.handlers._coordinator import transaction_coordinator
from mockbroker.model import BrokerNode
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.hashing import partition_for
from mockbroker_protocol.messages.find_coordinator import (
    Coordinator,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
)
from tests.mockbroker.wire import WireClient

FIND_COORDINATOR = 10
GROUP, TRANSACTION, SHARE = 0, 1, 2
INVALID_REQUEST_MESSAGE = (
    "This most likely occurs because of a request being malformed by the client library or the "
    "message was sent to an incompatible broker. See the broker logs for more details."
)
# The semantics doc's worked values (50 partitions), and the broker leading each partition in a
# 3-broker cluster (node ids 1-3; internal partition p on broker p mod 3).
VECTORS = [("", 0, 1), ("a", 47, 3), ("my-group", 12, 1), ("test-group", 12, 1), ("group1", 40, 2)]
# Transactional ids over __transaction_state (50 partitions): id, partition, node.
TXN_VECTORS = [("my-txn", 45, 1), ("txn-1", 10, 2)]


def kafka_uuid(u: uuid.UUID) -> str:
    """Kafka's Uuid.toString: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(u.bytes).decode().rstrip("=")


TOPIC_ID = kafka_uuid(uuid.UUID(int=1))


async def connect(cluster: MockCluster, node_id: int) -> WireClient:
    node = cluster.brokers[node_id]
    return await WireClient.connect(node.host, node.port)


async def find(client: WireClient, version: int, key: str, key_type: int = GROUP) -> FindCoordinatorResponse:
    if version >= 4:
        req = FindCoordinatorRequest(key_type=key_type, coordinator_keys=[key])
    else:
        req = FindCoordinatorRequest(key=key, key_type=key_type)
    response: FindCoordinatorResponse = await client.request(FIND_COORDINATOR, version, req)
    return response


def answer(version: int, resp: FindCoordinatorResponse) -> tuple[int, int, str, int, str | None]:
    """(error, node id, host, port, message) of a single-key answer, whatever the version."""
    if version >= 4:
        (c,) = resp.coordinators
        return c.error_code, c.node_id, c.host, c.port, c.error_message
    return resp.error_code, resp.node_id, resp.host, resp.port, resp.error_message


def success(node: BrokerNode, version: int) -> tuple[int, int, str, int, str | None]:
    # v1-3 carry Errors.NONE.message() ("NONE"); v4+ leave the per-key message at its default "".
    message = "" if version >= 4 or version == 0 else "NONE"
    return ErrorCode.NONE, node.node_id, node.advertised_host, node.advertised_port, message


def test_vectors_map_to_the_expected_brokers() -> None:
    c = MockCluster(brokers=3)
    for key, partition, node_id in VECTORS:
        assert c.coordinator_partition(key) == partition
        assert c.coordinator_for(key).node_id == node_id
    for key, partition, _ in TXN_VECTORS:
        assert partition_for(key, 50) == partition


@pytest.mark.parametrize("version", range(7))
async def test_group_keys_every_version_from_every_broker(cluster: MockCluster, version: int) -> None:
    for asked in cluster.brokers:
        client = await connect(cluster, asked)
        for key, _, node_id in VECTORS:
            resp = await find(client, version, key)
            assert answer(version, resp) == success(cluster.brokers[node_id], version)
            assert cluster.coordinator_for(key).node_id == node_id
            if version >= 4:
                assert resp.coordinators[0].key == key
        await client.close()


@pytest.mark.parametrize("version", range(1, 7))
async def test_transactional_ids(cluster: MockCluster, version: int) -> None:
    client = await connect(cluster, 2)
    for key, _, node_id in TXN_VECTORS:
        resp = await find(client, version, key, TRANSACTION)
        assert answer(version, resp) == success(cluster.brokers[node_id], version)
    await client.close()


def test_internal_topic_partition_counts_come_from_the_config() -> None:
    """transaction.state.log.num.partitions and share.coordinator.state.topic.num.partitions
    default to Kafka's 50 and, when set, decide placement exactly as the formula says."""
    default = MockCluster(brokers=3)
    assert default.config.transaction_state_log_num_partitions == 50
    assert default.config.share_coordinator_state_topic_num_partitions == 50
    configured = MockCluster(brokers=3, transaction_state_log_num_partitions=7)
    for key in ("txn-a", "txn-b", "my-txn", ""):
        partition = partition_for(key, 7)
        assert transaction_coordinator(configured, key) is configured.internal_partition_leader(partition)


async def test_v4_batches_keys_each_answered_on_its_own(cluster: MockCluster) -> None:
    client = await connect(cluster, 3)
    keys = [key for key, _, _ in VECTORS]
    resp = await client.request(FIND_COORDINATOR, 4, FindCoordinatorRequest(key_type=GROUP, coordinator_keys=keys))
    assert resp.coordinators == [
        Coordinator(key, node_id, cluster.brokers[node_id].advertised_host, cluster.brokers[node_id].advertised_port, 0, "")
        for key, _, node_id in VECTORS
    ]
    empty = await client.request(FIND_COORDINATOR, 5, FindCoordinatorRequest(key_type=GROUP, coordinator_keys=[]))
    assert empty.coordinators == []
    await client.close()


async def test_v6_share_keys_mixed_good_and_bad(cluster: MockCluster) -> None:
    client = await connect(cluster, 1)
    good = f"share-group:{TOPIC_ID}:3"
    colon_group = f"a:b:{TOPIC_ID}:0"  # the group id may contain colons: split from the right
    padded = f"share-group:{TOPIC_ID}==:+3"  # Uuid.fromString takes padding; parseInt a sign
    bad = ["", "onlytwo:parts", f":{TOPIC_ID}:0", f"  :{TOPIC_ID}:0", "g:not-a-uuid:0", f"g:{TOPIC_ID}:x", f"g:{TOPIC_ID}:"]
    keys = [good, *bad, colon_group, padded]
    resp = await client.request(FIND_COORDINATOR, 6, FindCoordinatorRequest(key_type=SHARE, coordinator_keys=keys))
    by_key = {c.key: c for c in resp.coordinators}
    assert [c.key for c in resp.coordinators] == keys

    def share_node(canonical: str) -> int:
        return list(cluster.brokers)[partition_for(canonical, 50) % 3]

    for key, canonical in [(good, good), (colon_group, colon_group), (padded, good)]:
        c = by_key[key]
        assert (c.error_code, c.node_id, c.error_message) == (0, share_node(canonical), "")
    for key in bad:
        c = by_key[key]
        assert (c.error_code, c.node_id, c.host, c.port, c.error_message) == (ErrorCode.INVALID_REQUEST, -1, "", -1, "")
    await client.close()


@pytest.mark.parametrize("version", [4, 5])
async def test_share_keys_below_v6_are_invalid_per_key(cluster: MockCluster, version: int) -> None:
    client = await connect(cluster, 1)
    keys = [f"g:{TOPIC_ID}:0", "also-fine-on-v6:AAAAAAAAAAAAAAAAAAAAAA:1"]
    resp = await client.request(FIND_COORDINATOR, version, FindCoordinatorRequest(key_type=SHARE, coordinator_keys=keys))
    assert resp.coordinators == [Coordinator(k, -1, "", -1, ErrorCode.INVALID_REQUEST, "") for k in keys]
    await client.close()


@pytest.mark.parametrize("version", [1, 2, 3])
async def test_share_and_unknown_key_types_fail_the_whole_v1_to_v3_request(cluster: MockCluster, version: int) -> None:
    client = await connect(cluster, 2)
    for key_type in (SHARE, 3, -1, 127):
        resp = await find(client, version, f"g:{TOPIC_ID}:0", key_type)
        assert answer(version, resp) == (ErrorCode.INVALID_REQUEST, -1, "", -1, INVALID_REQUEST_MESSAGE)
    await client.close()


@pytest.mark.parametrize("version", [4, 5, 6])
async def test_unknown_key_type_fails_every_batched_key(cluster: MockCluster, version: int) -> None:
    # KeyType is one per request from v4, so a bad type cannot mix with good keys: Kafka's
    # CoordinatorType.forId throws and getErrorResponse answers every key with INVALID_REQUEST.
    client = await connect(cluster, 1)
    keys = ["my-group", "a"]
    resp = await client.request(FIND_COORDINATOR, version, FindCoordinatorRequest(key_type=7, coordinator_keys=keys))
    assert resp.coordinators == [Coordinator(k, -1, "", -1, ErrorCode.INVALID_REQUEST, INVALID_REQUEST_MESSAGE) for k in keys]
    await client.close()


async def test_answers_carry_the_advertised_address() -> None:
    c = MockCluster(brokers=3, advertised_host="kafka.mock.invalid", advertised_port=29092)
    await c.start()
    try:
        client = await connect(c, 2)
        for version in range(7):
            resp = await find(client, version, "a")  # partition 47: the third broker
            assert answer(version, resp)[1:4] == (3, "kafka.mock.invalid", 29094)
        await client.close()
    finally:
        await c.stop()
    assert c.internal_errors == []
