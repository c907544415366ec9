"""The admin APIs over loopback: CreateTopics, DeleteTopics, CreatePartitions, DeleteRecords,
DescribeConfigs, AlterConfigs, IncrementalAlterConfigs, DescribeCluster; then kafka-python's
KafkaAdminClient against the same handlers."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from mockbroker import MockCluster
from mockbroker.config.topics import AlterConfigOp, ConfigSource, ConfigType
from mockbroker.handlers.metadata import CLUSTER_OPERATIONS, NOT_REQUESTED
from mockbroker.model import Topic
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.alter_configs import (
    AlterableConfig,
    AlterConfigsRequest,
    AlterConfigsResource,
)
from mockbroker_protocol.messages.api_versions import ApiVersionsRequest
from mockbroker_protocol.messages.create_partitions import (
    CreatePartitionsAssignment,
    CreatePartitionsRequest,
    CreatePartitionsTopic,
)
from mockbroker_protocol.messages.create_topics import (
    CreatableReplicaAssignment,
    CreatableTopic,
    CreatableTopicConfig,
    CreateTopicsRequest,
)
from mockbroker_protocol.messages.delete_records import (
    DeleteRecordsPartition,
    DeleteRecordsRequest,
    DeleteRecordsTopic,
)
from mockbroker_protocol.messages.delete_topics import DeleteTopicsRequest, DeleteTopicState
from mockbroker_protocol.messages.describe_cluster import DescribeClusterRequest
from mockbroker_protocol.messages.describe_configs import DescribeConfigsRequest, DescribeConfigsResource
from mockbroker_protocol.messages.incremental_alter_configs import AlterableConfig as IncrementalConfig
from mockbroker_protocol.messages.incremental_alter_configs import AlterConfigsResource as IncrementalResource
from mockbroker_protocol.messages.incremental_alter_configs import IncrementalAlterConfigsRequest
from mockbroker_protocol.primitives import ZERO_UUID
from mockbroker_protocol.records import SimpleRecord, build_batch, parse_batch_header
from tests.mockbroker.wire import WireClient

TOPIC, BROKER, GROUP = 2, 4, 32


async def connect(cluster: MockCluster, node_id: int = 1) -> WireClient:
    node = cluster.brokers[node_id]
    return await WireClient.connect(node.host, node.port)


@pytest.fixture
async def client(cluster: MockCluster) -> AsyncIterator[WireClient]:
    c = await connect(cluster)
    yield c
    await c.close()


def new_topic(name: str, partitions: int = -1, rf: int = -1, **configs: str) -> CreatableTopic:
    return CreatableTopic(
        name, partitions, rf, [], [CreatableTopicConfig(k.replace("_", "."), v) for k, v in configs.items()]
    )


def produce(topic: Topic, partition: int, count: int) -> None:
    batch = bytearray(build_batch([SimpleRecord(value=b"v%d" % i) for i in range(count)], base_timestamp=1000))
    topic.partitions[partition].log.append(batch, parse_batch_header(batch))


async def create(client: WireClient, *topics: CreatableTopic, version: int = 7, validate_only: bool = False) -> Any:
    return await client.request(19, version, CreateTopicsRequest(list(topics), 30000, validate_only))


def errors(results: list[Any]) -> list[tuple[str, int, str | None]]:
    return [(r.name, r.error_code, r.error_message) for r in results]


# -- ApiVersions ----------------------------------------------------------------------------------


async def test_admin_apis_are_advertised(client: WireClient) -> None:
    resp = await client.request(18, 3, ApiVersionsRequest("admin-test", "1"))
    served = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}
    for key, top in {19: 7, 20: 6, 21: 2, 32: 4, 33: 2, 37: 3, 44: 1, 60: 2}.items():
        assert served[key][1] == top, key


# -- CreateTopics -----------------------------------------------------------------------------------


async def test_create_topics_with_broker_defaults_reports_the_topic(cluster: MockCluster, client: WireClient) -> None:
    resp = await create(client, new_topic("defaults"), new_topic("three", 3, 2, retention_ms="1000"))
    assert resp.throttle_time_ms == 0
    plain, three = resp.topics
    assert (plain.error_code, plain.error_message, plain.num_partitions, plain.replication_factor) == (0, None, 1, 1)
    assert plain.topic_id == cluster.topics["defaults"].topic_id
    assert (three.num_partitions, three.replication_factor) == (3, 2)
    configs = {c.name: c for c in three.configs}
    assert (configs["retention.ms"].value, configs["retention.ms"].config_source) == ("1000", ConfigSource.DYNAMIC_TOPIC_CONFIG)
    assert (configs["max.message.bytes"].value, configs["max.message.bytes"].config_source) == ("1048588", 5)
    assert [len(p.replica_ids) for p in cluster.topics["three"].partitions] == [2, 2, 2]
    assert cluster.topics["three"].configs == {"retention.ms": "1000"}


async def test_create_topics_is_accepted_by_any_broker(cluster: MockCluster) -> None:
    other = await connect(cluster, 3)
    assert cluster.controller_id != 3
    resp = await create(other, new_topic("via-3", 2, 1))
    assert resp.topics[0].error_code == 0 and "via-3" in cluster.topics
    await other.close()


async def test_create_topics_validate_only_creates_nothing(cluster: MockCluster, client: WireClient) -> None:
    resp = await create(client, new_topic("dry", 4, 3), validate_only=True)
    assert (resp.topics[0].error_code, resp.topics[0].num_partitions, resp.topics[0].replication_factor) == (0, 4, 3)
    assert "dry" not in cluster.topics


async def test_create_topics_already_exists(cluster: MockCluster, client: WireClient) -> None:
    cluster.create_topic("taken", 1)
    resp = await create(client, new_topic("taken"))
    assert errors(resp.topics) == [("taken", ErrorCode.TOPIC_ALREADY_EXISTS, "Topic 'taken' already exists.")]
    assert (resp.topics[0].num_partitions, resp.topics[0].replication_factor, resp.topics[0].configs) == (-1, -1, [])


async def test_create_topics_invalid_names(cluster: MockCluster, client: WireClient) -> None:
    cluster.create_topic("a.b", 1)
    resp = await create(client, new_topic("bad/name"), new_topic("a_b"), new_topic(""))
    assert [(r.error_code, r.error_message) for r in resp.topics] == [
        (
            ErrorCode.INVALID_TOPIC_EXCEPTION,
            "Topic name is invalid: 'bad/name' contains one or more characters other than ASCII alphanumerics, "
            "'.', '_' and '-'",
        ),
        (ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic 'a_b' collides with existing topic: a.b"),
        (ErrorCode.INVALID_TOPIC_EXCEPTION, "Topic name is invalid: the empty string is not allowed"),
    ]


async def test_create_topics_name_length_limit(client: WireClient) -> None:
    """Topic.validate: at most 249 characters (the log directory name gets a partition suffix)."""
    longest, too_long = "a" * 249, "b" * 250
    resp = await create(client, new_topic(longest, 1), new_topic(too_long, 1))
    assert [(r.name, r.error_code) for r in resp.topics] == [
        (longest, ErrorCode.NONE),
        (too_long, ErrorCode.INVALID_TOPIC_EXCEPTION),
    ]
    assert resp.topics[1].error_message == (
        f"Topic name is invalid: the length of '{too_long}' is longer than the max allowed length 249"
    )


async def test_create_topics_invalid_partitions(client: WireClient) -> None:
    resp = await create(client, new_topic("zero", 0, 1), new_topic("minus", -3, 1))
    for result in resp.topics:
        assert (result.error_code, result.error_message) == (
            ErrorCode.INVALID_PARTITIONS,
            "Number of partitions was set to an invalid non-positive value.",
        )


async def test_create_topics_invalid_replication_factor(client: WireClient) -> None:
    resp = await create(client, new_topic("zero", 1, 0), new_topic("four", 1, 4))
    assert errors(resp.topics) == [
        ("zero", ErrorCode.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0, or -1 to use the default value."),
        (
            "four",
            ErrorCode.INVALID_REPLICATION_FACTOR,
            "Unable to replicate the partition 4 time(s): The target replication factor of 4 cannot be reached "
            "because only 3 broker(s) are registered or some brokers have all their log directories cordoned.",
        ),
    ]


async def test_create_topics_duplicate_names_are_invalid_request(cluster: MockCluster, client: WireClient) -> None:
    resp = await create(client, new_topic("twice"), new_topic("fine"), new_topic("twice"), new_topic("__cluster_metadata"))
    assert errors(resp.topics) == [
        ("fine", 0, None),
        ("twice", ErrorCode.INVALID_REQUEST, "Duplicate topic name."),
        ("__cluster_metadata", ErrorCode.INVALID_REQUEST, "Creation of internal topic __cluster_metadata is prohibited."),
    ]
    assert "twice" not in cluster.topics and "fine" in cluster.topics


async def test_create_topics_invalid_config(client: WireClient) -> None:
    resp = await create(
        client,
        new_topic("unknown", **{"no_such_thing": "1"}),
        new_topic("removed", message_format_version="3.0"),
        new_topic("bad", segment_bytes="1000"),
    )
    assert errors(resp.topics) == [
        ("unknown", ErrorCode.INVALID_CONFIG, "Unknown topic config name: no.such.thing"),
        ("removed", ErrorCode.INVALID_CONFIG, "Unknown topic config name: message.format.version"),
        ("bad", ErrorCode.INVALID_CONFIG, "Invalid value 1000 for configuration segment.bytes: Value must be at least 1048576"),
    ]
    resp = await create(client, CreatableTopic("null", 1, 1, [], [CreatableTopicConfig("retention.ms", None)]))
    assert errors(resp.topics) == [("null", ErrorCode.INVALID_CONFIG, "Null value not supported for topic configs: retention.ms")]


async def test_create_topics_manual_assignment_places_replicas(cluster: MockCluster, client: WireClient) -> None:
    assignments = [CreatableReplicaAssignment(1, [3, 1]), CreatableReplicaAssignment(0, [2, 3])]
    resp = await create(client, CreatableTopic("placed", -1, -1, assignments, []))
    assert (resp.topics[0].error_code, resp.topics[0].num_partitions, resp.topics[0].replication_factor) == (0, 2, 2)
    partitions = cluster.topics["placed"].partitions
    assert [(p.leader_id, p.replica_ids) for p in partitions] == [(2, [2, 3]), (3, [3, 1])]


async def test_create_topics_invalid_replica_assignment(client: WireClient) -> None:
    def assigned(name: str, *replicas: tuple[int, list[int]], rf: int = -1) -> CreatableTopic:
        return CreatableTopic(name, -1, rf, [CreatableReplicaAssignment(i, b) for i, b in replicas], [])

    resp = await create(
        client,
        assigned("rf-set", (0, [1]), rf=1),
        assigned("unknown-broker", (0, [1, 9])),
        assigned("twice", (0, [2, 2])),
        assigned("uneven", (0, [1, 2]), (1, [3])),
        assigned("same-partition", (0, [1]), (0, [2])),
        assigned("gap", (0, [1]), (2, [2])),
        assigned("empty", (0, [])),
    )
    assert errors(resp.topics) == [
        ("rf-set", ErrorCode.INVALID_REQUEST,
         "A manual partition assignment was specified, but replication factor was not set to -1."),
        ("unknown-broker", ErrorCode.INVALID_REPLICA_ASSIGNMENT,
         "The manual partition assignment includes broker 9, but no such broker is registered."),
        ("twice", ErrorCode.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes the broker 2 more than once."),
        ("uneven", ErrorCode.INVALID_REPLICA_ASSIGNMENT,
         "The manual partition assignment includes a partition with 1 replica(s), but this is not consistent with "
         "previous partitions, which have 2 replica(s)."),
        ("same-partition", ErrorCode.INVALID_REPLICA_ASSIGNMENT, "Found multiple manual partition assignments for partition 0"),
        ("gap", ErrorCode.INVALID_REPLICA_ASSIGNMENT, "partitions should be a consecutive 0-based integer sequence"),
        ("empty", ErrorCode.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes an empty replica list."),
    ]


async def test_create_topics_old_versions(cluster: MockCluster, client: WireClient) -> None:
    resp = await create(client, new_topic("v0", 2, 1), version=0)
    assert resp.topics[0].error_code == 0 and len(cluster.topics["v0"].partitions) == 2
    resp = await create(client, new_topic("v0", 2, 1), version=1)
    assert errors(resp.topics) == [("v0", ErrorCode.TOPIC_ALREADY_EXISTS, "Topic 'v0' already exists.")]
    resp = await create(client, new_topic("v4", 1, 1), version=4, validate_only=True)
    assert resp.topics[0].error_code == 0 and "v4" not in cluster.topics


# -- DeleteTopics -----------------------------------------------------------------------------------


async def test_delete_topics_by_name(cluster: MockCluster, client: WireClient) -> None:
    gone = cluster.create_topic("gone", 1)
    for version in (0, 1, 5):
        cluster.create_topic(f"v{version}", 1)
        resp = await client.request(20, version, DeleteTopicsRequest(topic_names=[f"v{version}", "nope"], timeout_ms=1000))
        assert [(r.name, r.error_code) for r in resp.responses] == [
            (f"v{version}", 0),
            ("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
        ]
        assert f"v{version}" not in cluster.topics
    resp = await client.request(20, 6, DeleteTopicsRequest(topics=[DeleteTopicState("gone", ZERO_UUID)]))
    assert [(r.name, r.topic_id, r.error_code, r.error_message) for r in resp.responses] == [("gone", gone.topic_id, 0, None)]
    assert cluster.topic_by_id(gone.topic_id) is None


async def test_delete_topics_by_id(cluster: MockCluster, client: WireClient) -> None:
    topic = cluster.create_topic("by-id", 1)
    stranger = uuid.uuid4()
    resp = await client.request(20, 6, DeleteTopicsRequest(topics=[DeleteTopicState(None, topic.topic_id), DeleteTopicState(None, stranger)]))
    assert [(r.name, r.topic_id, r.error_code) for r in resp.responses] == [
        ("by-id", topic.topic_id, 0),
        (None, stranger, ErrorCode.UNKNOWN_TOPIC_ID),
    ]
    assert "by-id" not in cluster.topics


async def test_delete_topics_invalid_requests(cluster: MockCluster, client: WireClient) -> None:
    both = cluster.create_topic("both", 1)
    clash = cluster.create_topic("clash", 1)
    kept = cluster.create_topic("kept", 1)
    states = [
        DeleteTopicState(None, ZERO_UUID),
        DeleteTopicState("both", both.topic_id),
        DeleteTopicState("kept", ZERO_UUID),
        DeleteTopicState("kept", ZERO_UUID),
        DeleteTopicState("clash", ZERO_UUID),
        DeleteTopicState(None, clash.topic_id),
    ]
    resp = await client.request(20, 6, DeleteTopicsRequest(topics=states))
    assert [(r.name, r.error_code, r.error_message) for r in resp.responses] == [
        (None, ErrorCode.INVALID_REQUEST, "Neither topic name nor id were specified."),
        ("both", ErrorCode.INVALID_REQUEST, "You may not specify both topic name and topic id."),
        ("kept", ErrorCode.INVALID_REQUEST, "Duplicate topic name."),
        ("clash", ErrorCode.INVALID_REQUEST, "The provided topic name maps to an ID that was already supplied."),
        ("clash", ErrorCode.INVALID_REQUEST, "The provided topic name maps to an ID that was already supplied."),
    ]
    assert {"both", "clash", "kept"} <= set(cluster.topics) and kept.topic_id in cluster.topic_ids


# -- CreatePartitions ---------------------------------------------------------------------------


async def create_partitions(client: WireClient, *topics: CreatePartitionsTopic, validate_only: bool = False, version: int = 3) -> Any:
    return await client.request(37, version, CreatePartitionsRequest(list(topics), 1000, validate_only))


async def test_create_partitions_grows_the_topic(cluster: MockCluster, client: WireClient) -> None:
    cluster.create_topic("grow", 2, 2)
    for version in (0, 3):
        resp = await create_partitions(client, CreatePartitionsTopic("grow", 3 + version, None), version=version)
        assert errors(resp.results) == [("grow", 0, None)]
    assert [p.index for p in cluster.topics["grow"].partitions] == [0, 1, 2, 3, 4, 5]
    assert all(len(p.replica_ids) == 2 for p in cluster.topics["grow"].partitions)


async def test_create_partitions_validate_only(cluster: MockCluster, client: WireClient) -> None:
    cluster.create_topic("same", 2)
    resp = await create_partitions(client, CreatePartitionsTopic("same", 4, None), validate_only=True)
    assert errors(resp.results) == [("same", 0, None)] and len(cluster.topics["same"].partitions) == 2


async def test_create_partitions_invalid_partitions(cluster: MockCluster, client: WireClient) -> None:
    cluster.create_topic("three", 3)
    resp = await create_partitions(client, CreatePartitionsTopic("three", 3, None))
    assert errors(resp.results) == [("three", ErrorCode.INVALID_PARTITIONS, "Topic already has 3 partition(s).")]
    resp = await create_partitions(client, CreatePartitionsTopic("three", 2, None))
    assert errors(resp.results) == [
        ("three", ErrorCode.INVALID_PARTITIONS, "The topic three currently has 3 partition(s); 2 would not be an increase.")
    ]


async def test_create_partitions_unknown_and_duplicate_topics(cluster: MockCluster, client: WireClient) -> None:
    cluster.create_topic("dup", 1)
    resp = await create_partitions(
        client, CreatePartitionsTopic("nope", 2, None), CreatePartitionsTopic("dup", 2, None), CreatePartitionsTopic("dup", 3, None)
    )
    assert errors(resp.results) == [
        ("dup", ErrorCode.INVALID_REQUEST, "Duplicate topic name."),
        ("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, None),
    ]
    assert len(cluster.topics["dup"].partitions) == 1


async def test_create_partitions_manual_assignment(cluster: MockCluster, client: WireClient) -> None:
    cluster.create_topic("placed", 1, 2)
    resp = await create_partitions(
        client, CreatePartitionsTopic("placed", 3, [CreatePartitionsAssignment([3, 2]), CreatePartitionsAssignment([1, 3])])
    )
    assert errors(resp.results) == [("placed", 0, None)]
    assert [(p.leader_id, p.replica_ids) for p in cluster.topics["placed"].partitions[1:]] == [(3, [3, 2]), (1, [1, 3])]
    resp = await create_partitions(
        client,
        CreatePartitionsTopic("placed", 5, [CreatePartitionsAssignment([1, 2])]),
    )
    assert errors(resp.results) == [
        ("placed", ErrorCode.INVALID_REPLICA_ASSIGNMENT,
         "Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified.")
    ]
    resp = await create_partitions(client, CreatePartitionsTopic("placed", 4, [CreatePartitionsAssignment([1])]))
    assert resp.results[0].error_code == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    assert len(cluster.topics["placed"].partitions) == 3


# -- DeleteRecords ----------------------------------------------------------------------------------


async def delete_records(client: WireClient, topic: str, *offsets: tuple[int, int], version: int = 2) -> list[tuple[int, int, int]]:
    resp = await client.request(21, version, DeleteRecordsRequest([DeleteRecordsTopic(topic, [DeleteRecordsPartition(p, o) for p, o in offsets])], 1000))
    (result,) = resp.topics
    assert result.name == topic
    return [(p.partition_index, p.low_watermark, p.error_code) for p in result.partitions]


async def test_delete_records_moves_the_low_watermark(cluster: MockCluster) -> None:
    topic = cluster.create_topic("records", 1)
    produce(topic, 0, 5)
    produce(topic, 0, 5)
    leader = await connect(cluster, topic.partitions[0].leader_id)
    assert await delete_records(leader, "records", (0, 3), version=0) == [(0, 3, 0)]
    assert topic.partitions[0].log.log_start_offset == 3
    assert await delete_records(leader, "records", (0, 1)) == [(0, 3, 0)]  # never backwards
    assert await delete_records(leader, "records", (0, -1)) == [(0, 10, 0)]  # -1: the high watermark
    await leader.close()


async def test_delete_records_offset_out_of_range(cluster: MockCluster) -> None:
    topic = cluster.create_topic("short", 1)
    produce(topic, 0, 2)
    leader = await connect(cluster, topic.partitions[0].leader_id)
    assert await delete_records(leader, "short", (0, 3)) == [(0, -1, ErrorCode.OFFSET_OUT_OF_RANGE)]
    assert await delete_records(leader, "short", (0, -5)) == [(0, -1, ErrorCode.OFFSET_OUT_OF_RANGE)]
    await leader.close()


async def test_delete_records_not_leader_and_unknown(cluster: MockCluster) -> None:
    topic = cluster.create_topic("led", 1)
    follower_id = next(n for n in cluster.brokers if n != topic.partitions[0].leader_id)
    follower = await connect(cluster, follower_id)
    assert await delete_records(follower, "led", (0, 0), (7, 0)) == [
        (0, -1, ErrorCode.NOT_LEADER_OR_FOLLOWER),
        (7, -1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    ]
    assert await delete_records(follower, "absent", (0, 0)) == [(0, -1, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)]
    await follower.close()


async def test_delete_records_policy_and_internal_topics(cluster: MockCluster) -> None:
    compacted = cluster.create_topic("compacted", 1, configs={"cleanup.policy": "compact"})
    internal = cluster.create_topic("__consumer_offsets", 1, internal=True)
    for topic, code in ((compacted, ErrorCode.POLICY_VIOLATION), (internal, ErrorCode.INVALID_TOPIC_EXCEPTION)):
        leader = await connect(cluster, topic.partitions[0].leader_id)
        assert await delete_records(leader, topic.name, (0, 0)) == [(0, -1, code)]
        await leader.close()


# -- DescribeConfigs --------------------------------------------------------------------------------


async def describe(
    client: WireClient, *resources: tuple[int, str, list[str] | None], version: int = 4, synonyms: bool = False, docs: bool = False
) -> list[Any]:
    req = DescribeConfigsRequest([DescribeConfigsResource(t, n, k) for t, n, k in resources], synonyms, docs)
    return list((await client.request(32, version, req)).results)


async def test_describe_topic_configs_sources_and_types(cluster: MockCluster, client: WireClient) -> None:
    cluster.create_topic("described", 1, configs={"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.25"})
    (result,) = await describe(client, (TOPIC, "described", None))
    assert (result.error_code, result.resource_type, result.resource_name) == (0, TOPIC, "described")
    configs = {c.name: c for c in result.configs}
    assert "retention.ms" in configs and "message.format.version" not in configs
    policy = configs["cleanup.policy"]
    assert (policy.value, policy.config_source, policy.config_type, policy.read_only, policy.is_sensitive) == (
        "compact", ConfigSource.DYNAMIC_TOPIC_CONFIG, ConfigType.LIST, False, False
    )
    assert (configs["min.cleanable.dirty.ratio"].value, configs["min.cleanable.dirty.ratio"].config_type) == ("0.25", ConfigType.DOUBLE)
    retention = configs["retention.ms"]
    assert (retention.value, retention.config_source, retention.config_type) == ("604800000", ConfigSource.DEFAULT_CONFIG, ConfigType.LONG)
    assert configs["max.message.bytes"].value == "1048588" and configs["preallocate"].config_type == ConfigType.BOOLEAN
    assert retention.synonyms == [] and retention.documentation is None


async def test_describe_configs_keys_synonyms_and_documentation(cluster: MockCluster, client: WireClient) -> None:
    cluster.create_topic("keys", 1, configs={"retention.ms": "5"})
    (result,) = await describe(client, (TOPIC, "keys", ["retention.ms", "no.such"]), synonyms=True, docs=True)
    (entry,) = result.configs
    # log.retention.ms has no default of its own in KafkaConfig (log.retention.hours does): no
    # DEFAULT_CONFIG synonym, as a real 4.3 broker answers.
    assert [(s.name, s.value, s.source) for s in entry.synonyms] == [
        ("retention.ms", "5", ConfigSource.DYNAMIC_TOPIC_CONFIG),
    ]
    assert entry.documentation
    (result,) = await describe(client, (TOPIC, "keys", ["retention.ms"]), version=2, synonyms=True, docs=True)
    # config_type and documentation are v3+: at v2 they are not on the wire (the decoder's defaults).
    assert len(result.configs[0].synonyms) == 1
    assert (result.configs[0].config_type, result.configs[0].documentation) == (0, "")


async def test_describe_configs_broker_settings_show_as_static() -> None:
    cluster = MockCluster(brokers=2, num_partitions=3, log_retention_ms=1000)
    async with cluster:
        c = await connect(cluster, 2)
        (own, default, other, junk) = await describe(
            c, (BROKER, "2", None), (BROKER, "", None), (BROKER, "1", None), (BROKER, "x", None), synonyms=True
        )
        configs = {e.name: e for e in own.configs}
        assert (configs["num.partitions"].value, configs["num.partitions"].config_source, configs["num.partitions"].read_only) == (
            "3", ConfigSource.STATIC_BROKER_CONFIG, True
        )
        assert [(s.value, s.source) for s in configs["num.partitions"].synonyms] == [("3", 4), ("1", 5)]
        assert (configs["log.retention.ms"].value, configs["log.retention.ms"].read_only) == ("1000", False)
        assert configs["auto.create.topics.enable"].config_source == ConfigSource.DEFAULT_CONFIG
        assert configs["node.id"].value == "2"
        assert (default.error_code, default.configs) == (0, [])
        assert (other.error_code, other.error_message) == (
            ErrorCode.INVALID_REQUEST, "Unexpected broker id, expected 2 or empty string, but received 1"
        )
        assert (junk.error_code, junk.error_message) == (ErrorCode.INVALID_REQUEST, "Broker id must be an integer, but it is: x")
        await c.close()
    assert cluster.internal_errors == []


async def test_describe_configs_cluster_settings_are_topic_defaults() -> None:
    cluster = MockCluster(brokers=1, log_retention_ms=1000)
    async with cluster:
        cluster.create_topic("inherits", 1)
        c = await connect(cluster)
        (result,) = await describe(c, (TOPIC, "inherits", ["retention.ms"]))
        assert (result.configs[0].value, result.configs[0].config_source) == ("1000", ConfigSource.STATIC_BROKER_CONFIG)
        await c.close()
    assert cluster.internal_errors == []


async def test_describe_configs_unknown_topic_and_invalid_name(client: WireClient) -> None:
    unknown, invalid, group = await describe(client, (TOPIC, "nope", None), (TOPIC, "bad name", None), (GROUP, "", None))
    assert (unknown.error_code, unknown.configs) == (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, [])
    assert invalid.error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert (group.error_code, group.error_message) == (ErrorCode.INVALID_REQUEST, "Group name must not be empty")


async def test_describe_configs_v0_reports_is_default(cluster: MockCluster, client: WireClient) -> None:
    cluster.create_topic("old", 1, configs={"retention.ms": "5"})
    (result,) = await describe(client, (TOPIC, "old", ["retention.ms", "retention.bytes"]), version=0)
    assert {c.name: (c.value, c.is_default) for c in result.configs} == {"retention.bytes": ("-1", True), "retention.ms": ("5", False)}


# -- AlterConfigs -----------------------------------------------------------------------------------


async def alter(client: WireClient, *resources: tuple[int, str, dict[str, str | None]], validate_only: bool = False, version: int = 2) -> list[tuple[str, int, str | None]]:
    req = AlterConfigsRequest(
        [AlterConfigsResource(t, n, [AlterableConfig(k, v) for k, v in configs.items()]) for t, n, configs in resources], validate_only
    )
    resp = await client.request(33, version, req)
    return [(r.resource_name, r.error_code, r.error_message) for r in resp.responses]


async def test_alter_configs_replaces_every_override(cluster: MockCluster, client: WireClient) -> None:
    topic = cluster.create_topic("replaced", 1, configs={"retention.ms": "5", "cleanup.policy": "compact"})
    for version in (0, 2):
        assert await alter(client, (TOPIC, "replaced", {"retention.bytes": f"{version}00"}), version=version) == [("replaced", 0, None)]
    assert topic.configs == {"retention.bytes": "200"}


async def test_alter_configs_validate_only(cluster: MockCluster, client: WireClient) -> None:
    topic = cluster.create_topic("kept", 1, configs={"retention.ms": "5"})
    assert await alter(client, (TOPIC, "kept", {"retention.ms": "6"}), validate_only=True) == [("kept", 0, None)]
    assert topic.configs == {"retention.ms": "5"}


async def test_alter_configs_invalid_config_and_unknown_topic(cluster: MockCluster, client: WireClient) -> None:
    cluster.create_topic("t", 1)
    assert await alter(
        client,
        (TOPIC, "t", {"retention.ms": "soon"}),
        (TOPIC, "nope", {"retention.ms": "1"}),
        (TOPIC, "", {"retention.ms": "1"}),
    ) == [
        ("t", ErrorCode.INVALID_CONFIG, "Invalid value soon for configuration retention.ms: Not a number of type LONG"),
        ("nope", ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'nope' does not exist."),
        ("", ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed."),
    ]


async def test_alter_configs_invalid_request(cluster: MockCluster, client: WireClient) -> None:
    cluster.create_topic("t", 1)
    assert await alter(
        client,
        (TOPIC, "t", {"retention.ms": "1"}),
        (TOPIC, "t", {"retention.ms": "2"}),
        (TOPIC, "u", {"retention.ms": None}),
        (99, "x", {}),
        (BROKER, "1", {"message.max.bytes": "5"}),
    ) == [
        ("t", ErrorCode.INVALID_REQUEST, "Each resource must appear at most once."),
        ("t", ErrorCode.INVALID_REQUEST, "Each resource must appear at most once."),
        ("u", ErrorCode.INVALID_REQUEST, "Null value not supported for : retention.ms"),
        ("x", ErrorCode.INVALID_REQUEST, "Unknown resource type 99"),
        ("1", ErrorCode.INVALID_REQUEST,
         "mockbroker does not model dynamic broker configs: set broker settings in ClusterConfig before start"),
    ]
    assert cluster.topics["t"].configs == {}


# -- IncrementalAlterConfigs -----------------------------------------------------------------------


async def incremental(client: WireClient, name: str, *ops: tuple[str, int, str | None], validate_only: bool = False, version: int = 1, kind: int = TOPIC) -> tuple[int, str | None]:
    req = IncrementalAlterConfigsRequest([IncrementalResource(kind, name, [IncrementalConfig(n, op, v) for n, op, v in ops])], validate_only)
    (result,) = (await client.request(44, version, req)).responses
    assert result.resource_name == name
    return result.error_code, result.error_message


async def test_incremental_set_and_delete(cluster: MockCluster, client: WireClient) -> None:
    topic = cluster.create_topic("inc", 1, configs={"retention.ms": "5", "retention.bytes": "7"})
    SET, DELETE = AlterConfigOp.SET, AlterConfigOp.DELETE
    assert await incremental(client, "inc", ("max.message.bytes", SET, "100"), ("retention.ms", DELETE, None), version=0) == (0, None)
    assert topic.configs == {"retention.bytes": "7", "max.message.bytes": "100"}
    assert await incremental(client, "inc", ("never.set", DELETE, None)) == (0, None)  # deleting nothing is fine
    assert await incremental(client, "inc", ("retention.bytes", SET, "8"), validate_only=True) == (0, None)
    assert topic.configs["retention.bytes"] == "7"


async def test_incremental_append_and_subtract_lists(cluster: MockCluster, client: WireClient) -> None:
    topic = cluster.create_topic("lists", 1)
    assert await incremental(client, "lists", ("cleanup.policy", AlterConfigOp.APPEND, "compact")) == (0, None)
    assert topic.configs == {"cleanup.policy": "delete,compact"}
    assert await incremental(client, "lists", ("cleanup.policy", AlterConfigOp.SUBTRACT, "delete")) == (0, None)
    assert topic.configs == {"cleanup.policy": "compact"}
    assert await incremental(client, "lists", ("retention.ms", AlterConfigOp.APPEND, "1")) == (
        ErrorCode.INVALID_CONFIG, "Can't APPEND to key retention.ms because its type is not LIST."
    )
    assert await incremental(client, "lists", ("cleanup.policy", AlterConfigOp.APPEND, "shred")) == (
        ErrorCode.INVALID_CONFIG, "Invalid value shred for configuration cleanup.policy: String must be one of: compact, delete"
    )
    assert topic.configs == {"cleanup.policy": "compact"}


async def test_incremental_invalid_requests(cluster: MockCluster, client: WireClient) -> None:
    cluster.create_topic("t", 1)
    assert await incremental(client, "t", ("retention.ms", AlterConfigOp.SET, None)) == (
        ErrorCode.INVALID_REQUEST, "Null value not supported for : retention.ms"
    )
    assert await incremental(client, "t", ("retention.ms", 1, None), ("retention.ms", 0, "1")) == (
        ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys"
    )
    assert await incremental(client, "t", ("retention.ms", 7, "1")) == (ErrorCode.INVALID_REQUEST, "Unknown operations type 7")
    assert await incremental(client, "nope", ("retention.ms", 0, "1")) == (
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'nope' does not exist."
    )
    assert await incremental(client, "t", ("no.such", 0, "1")) == (ErrorCode.INVALID_CONFIG, "Unknown topic config name: no.such")
    assert await incremental(client, "2", ("message.max.bytes", 0, "1"), kind=BROKER) == (
        ErrorCode.INVALID_REQUEST, "Unexpected broker id, expected 1, but received 2"
    )


# -- DescribeCluster --------------------------------------------------------------------------------


async def test_describe_cluster_lists_brokers(cluster: MockCluster, client: WireClient) -> None:
    for version in (0, 1, 2):
        resp = await client.request(60, version, DescribeClusterRequest(include_cluster_authorized_operations=version == 2))
        assert (resp.error_code, resp.error_message, resp.endpoint_type) == (0, None, 1)
        assert (resp.cluster_id, resp.controller_id) == (cluster.config.cluster_id, cluster.controller_id)
        assert [(b.broker_id, b.host, b.port, b.is_fenced) for b in resp.brokers] == [
            (n.node_id, n.advertised_host, n.advertised_port, False) for n in cluster.brokers.values()
        ]
        assert resp.cluster_authorized_operations == (CLUSTER_OPERATIONS if version == 2 else NOT_REQUESTED)


async def test_describe_cluster_endpoint_types(client: WireClient) -> None:
    resp = await client.request(60, 1, DescribeClusterRequest(endpoint_type=2))
    assert (resp.error_code, resp.error_message) == (
        ErrorCode.MISMATCHED_ENDPOINT_TYPE,
        "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER",
    )
    assert resp.brokers == []
    resp = await client.request(60, 2, DescribeClusterRequest(endpoint_type=9))
    assert (resp.error_code, resp.error_message) == (ErrorCode.UNSUPPORTED_ENDPOINT_TYPE, "Unsupported endpoint type 9")


# -- kafka-python's KafkaAdminClient ----------------------------------------------------------------


def _kafka_python_admin_session(bootstrap: str) -> dict[str, Any]:
    from kafka import KafkaAdminClient
    from kafka.admin import ConfigResource
    from kafka.structs import TopicPartition

    seen: dict[str, Any] = {}
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    try:
        created = admin.create_topics({"smoke": {"num_partitions": 2, "replication_factor": 2, "configs": {"retention.ms": "60000"}}})
        seen["created"] = [(t["name"], t["error_code"], t["num_partitions"]) for t in created["topics"]]
        seen["described"] = admin.describe_configs([ConfigResource("TOPIC", "smoke")])["topic"]["smoke"]
        seen["broker"] = admin.describe_configs([ConfigResource("BROKER", "2")], config_filter="all")["broker"]["2"]
        seen["altered"] = admin.alter_configs([ConfigResource("TOPIC", "smoke", {"cleanup.policy": "compact,delete"})])
        seen["legacy"] = admin.alter_configs([ConfigResource("TOPIC", "smoke", {"retention.bytes": "1000"})], incremental=False)
        seen["after"] = admin.describe_configs([ConfigResource("TOPIC", "smoke")])["topic"]["smoke"]
        seen["partitions"] = [r.error_code for r in admin.create_partitions({"smoke": 3}).results]
        seen["deleted_records"] = admin.delete_records({TopicPartition("smoke", 0): 0})
        seen["cluster"] = admin.describe_cluster()
        seen["deleted"] = [(t["name"], t["error_code"]) for t in admin.delete_topics(["smoke"])["topics"]]
    finally:
        admin.close()
    return seen


async def test_kafka_python_admin_client(cluster: MockCluster) -> None:
    seen = await asyncio.to_thread(_kafka_python_admin_session, cluster.bootstrap_servers)
    assert seen["created"] == [("smoke", 0, 2)]
    assert {name: c["value"] for name, c in seen["described"].items()} == {"retention.ms": "60000"}
    assert seen["broker"]["node.id"]["value"] == "2" and seen["broker"]["num.partitions"]["read_only"]
    assert seen["altered"] == {"topic": {"smoke": "OK"}} and seen["legacy"] == {"topic": {"smoke": "OK"}}
    assert {name: c["value"] for name, c in seen["after"].items()} == {
        "retention.ms": "60000", "cleanup.policy": "compact,delete", "retention.bytes": "1000"
    }
    assert seen["partitions"] == [0]
    ((tp, result),) = seen["deleted_records"].items()
    assert (tp.topic, tp.partition, result["low_watermark"], result["error_code"]) == ("smoke", 0, 0, 0)
    assert seen["cluster"]["cluster_id"] == cluster.config.cluster_id
    assert sorted(b["broker_id"] for b in seen["cluster"]["brokers"]) == sorted(cluster.brokers)
    assert seen["deleted"] == [("smoke", 0)]
    assert "smoke" not in cluster.topics
