"""The named schemas of the HTTP control API (the OpenAPI document's ``components``) and the field
schemas its operations share: brokers, topics, groups of both kinds, records, events, requests,
interceptors and faults, as the endpoints answer them."""

from __future__ import annotations

from typing import Any

from mockbroker.coordinators.classic.group import GROUP_TYPE_CLASSIC, ClassicGroupState
from mockbroker.coordinators.consumer.group import GROUP_TYPE_CONSUMER, ConsumerGroupState, MemberState
from mockbroker.coordinators.share.group import GROUP_TYPE_SHARE, ShareGroupState
from mockbroker.coordinators.share.partition import RecordState
from mockbroker.coordinators.streams.group import GROUP_TYPE_STREAMS, StreamsGroupState
from mockbroker.coordinators.streams.group import MemberState as StreamsMemberState
from mockbroker.coordinators.transactions.metadata import TransactionState
from mockbroker.http.schema import (
    MAX_I32,
    MAX_I64,
    MAX_TIMESTAMP_MS,
    Schema,
    ref,
    s_arr,
    s_bool,
    s_int,
    s_map,
    s_null,
    s_obj,
    s_str,
)
from mockbroker.http.schema import check as check_schema
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.registry import APIS

# Kafka's state names of each kind of group (the two share Empty, Stable and Dead); `type` tells
# the kinds apart in every group the API answers with.
GROUP_TYPES = (GROUP_TYPE_CLASSIC, GROUP_TYPE_CONSUMER, GROUP_TYPE_STREAMS, GROUP_TYPE_SHARE)
STATES_BY_TYPE: dict[str, tuple[str, ...]] = {
    GROUP_TYPE_CLASSIC: tuple(s.value for s in ClassicGroupState),
    GROUP_TYPE_CONSUMER: tuple(s.value for s in ConsumerGroupState),
    GROUP_TYPE_STREAMS: tuple(s.value for s in StreamsGroupState),
    GROUP_TYPE_SHARE: tuple(s.value for s in ShareGroupState),
}
# RecordState's names as the share snapshots spell them (Available, Acquired, ...).
RECORD_STATES = tuple(s.name.capitalize() for s in RecordState)
# Kafka's TransactionState names (mockbroker/coordinators/transactions/metadata.py).
TRANSACTION_STATES = tuple(state.value for state in TransactionState)
TRANSACTIONAL_ID = s_str(minLength=1, maxLength=1024)
GROUP_STATES = tuple(dict.fromkeys(s for states in STATES_BY_TYPE.values() for s in states))
COMPRESSIONS = ("none", "gzip", "snappy", "lz4", "zstd")
ENCODINGS = ("utf-8", "base64")
TOPIC_NAME = r"^[a-zA-Z0-9._-]+$"
REQUEST_OUTCOMES = ("pending", "answered", "intercepted", "dropped", "closed", "failed")

API_NAME = s_str(enum=sorted(spec.name for spec in APIS.values()), description="a Kafka API, by name")
ERROR_NAME = s_str(enum=[code.name for code in ErrorCode], description="a Kafka error code, by name")
BROKER_ID = s_int(0, MAX_I32)
TOPIC = s_str(minLength=1, maxLength=249, pattern=TOPIC_NAME)
GROUP_ID = s_str(minLength=1, maxLength=1024)
GROUP_TYPE = s_str(
    enum=list(GROUP_TYPES), description="classic (JoinGroup/SyncGroup), consumer (KIP-848), streams (KIP-1071) or share (KIP-932)"
)
PARTITIONS_BY_TOPIC = s_map(s_arr(s_int(0, MAX_I32)), description="{topic: [partition, ...]}")
TASKS = s_map(s_map(s_arr(s_int(0, MAX_I32))), description="{\"active\"|\"standby\"|\"warmup\": {subtopology id: [partition, ...]}}")

# A group's configs (KIP-848 GroupConfig), in every group schema.
GROUP_CONFIGS = s_map(
    s_str(),
    description="the group's configs (KIP-848 GroupConfig) set on its GROUP config resource with "
    "IncrementalAlterConfigs/AlterConfigs; keys not listed take the broker's group.* settings",
)

SHARE_COMPONENTS: dict[str, Schema] = {
    "ShareMember": s_obj(
        {
            "member_id": s_str(), "rack_id": s_null(s_str()), "client_id": s_str(), "client_host": s_str(),
            "member_epoch": s_int(-1, MAX_I32), "previous_member_epoch": s_int(-1, MAX_I32),
            "subscribed_topic_names": s_arr(s_str()),
            "assigned": {**PARTITIONS_BY_TOPIC, "description": "what it is assigned now (a partition may go to several members)"},
            "target": {**PARTITIONS_BY_TOPIC, "description": "what the target assignment gives it"},
        },
        (
            "member_id", "rack_id", "client_id", "client_host", "member_epoch", "previous_member_epoch",
            "subscribed_topic_names", "assigned", "target",
        ),
        description="A KIP-932 share group's member as its coordinator sees it (partitions by topic name)",
    ),
    "InFlightRecord": s_obj(
        {
            "offset": s_int(0, MAX_I64), "state": s_str(enum=list(RECORD_STATES)), "delivery_count": s_int(0, MAX_I32),
            "member_id": s_null(s_str(description="the member holding it while Acquired")),
            "lock_deadline_ms": s_null(s_int(0, MAX_TIMESTAMP_MS, description="when its acquisition lock expires (cluster clock)")),
        },
        ("offset", "state", "delivery_count", "member_id", "lock_deadline_ms"),
        description="A record past the share-partition start offset",
    ),
    "SharePartitionState": s_obj(
        {
            "topic": s_str(), "partition": s_int(0, MAX_I32),
            "start_offset": s_int(0, MAX_I64, description="the share-partition start offset (SPSO)"),
            "next_fetch_offset": s_int(0, MAX_I64, description="the first offset never acquired"),
            "in_flight": s_arr(ref("InFlightRecord")),
        },
        ("topic", "partition", "start_offset", "next_fetch_offset", "in_flight"),
        description="A share group's delivery state of one partition it has fetched",
    ),
    "ShareGroup": s_obj(
        {
            "type": s_str(enum=[GROUP_TYPE_SHARE]), "group_id": s_str(),
            "state": s_str(enum=list(STATES_BY_TYPE[GROUP_TYPE_SHARE])),
            "group_epoch": s_int(0, MAX_I32), "assignment_epoch": s_int(0, MAX_I32), "assignor": s_str(),
            "subscribed_topics": s_map(s_int(0, MAX_I32), description="{topic: partition count}"),
            "protocol_type": s_str(), "members": s_arr(ref("ShareMember")),
            "partitions": s_arr(ref("SharePartitionState")), "coordinator": s_int(0, MAX_I32),
            "configs": GROUP_CONFIGS,
        },
        (
            "type", "group_id", "state", "group_epoch", "assignment_epoch", "assignor", "subscribed_topics",
            "protocol_type", "members", "partitions", "coordinator", "configs",
        ),
        description="A KIP-932 share group (ShareGroupHeartbeat, ShareFetch, ShareAcknowledge): its members and "
        "assignment, and each share partition's start offset and in-flight records",
    ),
}

COMPONENTS: dict[str, Schema] = {
    "Error": s_obj(
        {"error": s_str(), "field": s_str(), "kafka_error": s_str()}, ("error",),
        description="What went wrong; `field` names the bad input, `kafka_error` the Kafka error code",
    ),
    "Endpoint": s_obj(
        {
            "listener": s_str(), "security_protocol": s_str(enum=["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]),
            "host": s_str(), "port": s_int(0, 65535), "advertised_host": s_null(s_str()), "advertised_port": s_int(0, 65535),
        },
        ("listener", "security_protocol", "host", "port", "advertised_host", "advertised_port"),
        description="One listener of a broker; advertised_host null: advertised.listeners leaves it out",
    ),
    "Broker": s_obj(
        {
            "node_id": s_int(0, MAX_I32), "host": s_str(), "port": s_int(0, 65535),
            "advertised_host": s_str(), "advertised_port": s_int(0, 65535), "rack": s_null(s_str()), "up": s_bool(),
            "listeners": s_arr(ref("Endpoint")),
        },
        ("node_id", "host", "port", "advertised_host", "advertised_port", "rack", "up", "listeners"),
    ),
    "Cluster": s_obj(
        {
            "cluster_id": s_str(), "controller_id": s_int(0, MAX_I32), "brokers": s_arr(ref("Broker")),
            "manual_clock": s_bool(), "now_ms": s_int(0, MAX_TIMESTAMP_MS), "bootstrap_servers": s_str(),
        },
        ("cluster_id", "controller_id", "brokers", "manual_clock", "now_ms", "bootstrap_servers"),
    ),
    "Partition": s_obj(
        {
            "index": s_int(0, MAX_I32), "leader_id": s_int(-1, MAX_I32), "leader_epoch": s_int(-1, MAX_I32),
            "replica_ids": s_arr(s_int(0, MAX_I32)), "isr_ids": s_arr(s_int(0, MAX_I32)),
            "log_start_offset": s_int(0, MAX_I64), "log_end_offset": s_int(0, MAX_I64),
        },
        ("index", "leader_id", "leader_epoch", "replica_ids", "isr_ids", "log_start_offset", "log_end_offset"),
    ),
    "Topic": s_obj(
        {
            "name": s_str(), "topic_id": s_str(), "is_internal": s_bool(), "replication_factor": s_int(1, 32767),
            "configs": s_map(s_str()), "partitions": s_arr(ref("Partition")),
        },
        ("name", "topic_id", "is_internal", "replication_factor", "configs", "partitions"),
    ),
    "Member": s_obj(
        {
            "member_id": s_str(), "group_instance_id": s_null(s_str()), "client_id": s_str(), "client_host": s_str(),
            "session_timeout_ms": s_int(-MAX_I32 - 1, MAX_I32), "rebalance_timeout_ms": s_int(-MAX_I32 - 1, MAX_I32),
            "protocols": s_arr(s_str()),
            "subscription": s_null(s_arr(s_str())),
            "owned_partitions": s_null(PARTITIONS_BY_TOPIC),
            "assignment": s_null(PARTITIONS_BY_TOPIC),
            "awaiting_join": s_bool(), "awaiting_sync": s_bool(),
        },
        (
            "member_id", "group_instance_id", "client_id", "client_host", "session_timeout_ms", "rebalance_timeout_ms",
            "protocols", "subscription", "owned_partitions", "assignment", "awaiting_join", "awaiting_sync",
        ),
        description="A classic group's member; subscription, owned_partitions and assignment are decoded from the "
        "consumer protocol (null for other protocol types or undecodable bytes)",
    ),
    "ClassicGroup": s_obj(
        {
            "type": s_str(enum=[GROUP_TYPE_CLASSIC]), "group_id": s_str(),
            "state": s_str(enum=list(STATES_BY_TYPE[GROUP_TYPE_CLASSIC])), "generation_id": s_int(-1, MAX_I32),
            "protocol_type": s_null(s_str()), "protocol_name": s_null(s_str()), "leader_id": s_null(s_str()),
            "members": s_arr(ref("Member")), "coordinator": s_int(0, MAX_I32),
            "configs": GROUP_CONFIGS,
        },
        (
            "type", "group_id", "state", "generation_id", "protocol_type", "protocol_name", "leader_id", "members",
            "coordinator", "configs",
        ),
        description="A classic group (JoinGroup/SyncGroup): a generation, a leader that assigns, members' assignments decoded",
    ),
    "ConsumerMember": s_obj(
        {
            "member_id": s_str(), "instance_id": s_null(s_str()), "rack_id": s_null(s_str()), "client_id": s_str(),
            "client_host": s_str(),
            "member_epoch": s_int(-2, MAX_I32, description="-2: a static member's temporary leave"),
            "previous_member_epoch": s_int(-2, MAX_I32),
            "state": s_str(enum=[s.value for s in MemberState], description="where it is in its reconciliation"),
            "subscribed_topic_names": s_arr(s_str()), "subscribed_topic_regex": s_null(s_str()),
            "server_assignor": s_null(s_str(description="the server assignor it asked for")),
            "rebalance_timeout_ms": s_int(-MAX_I32 - 1, MAX_I32),
            "assigned": {**PARTITIONS_BY_TOPIC, "description": "what it owns now"},
            "pending_revocation": {**PARTITIONS_BY_TOPIC, "description": "what it must give up before it moves on"},
            "target": {**PARTITIONS_BY_TOPIC, "description": "what the target assignment gives it"},
        },
        (
            "member_id", "instance_id", "rack_id", "client_id", "client_host", "member_epoch", "previous_member_epoch",
            "state", "subscribed_topic_names", "subscribed_topic_regex", "server_assignor", "rebalance_timeout_ms",
            "assigned", "pending_revocation", "target",
        ),
        description="A KIP-848 consumer group's member as its coordinator sees it (partitions by topic name)",
    ),
    "ConsumerGroup": s_obj(
        {
            "type": s_str(enum=[GROUP_TYPE_CONSUMER]), "group_id": s_str(),
            "state": s_str(enum=list(STATES_BY_TYPE[GROUP_TYPE_CONSUMER])),
            "group_epoch": s_int(0, MAX_I32),
            "assignment_epoch": s_int(0, MAX_I32, description="the group epoch the target assignment was computed for"),
            "assignor": s_str(description="the server assignor of the target assignment"),
            "subscribed_topics": s_map(s_int(0, MAX_I32), description="{topic: partition count} of the subscribed topics that exist"),
            "resolved_regexes": s_map(
                s_arr(s_str()),
                description="{regex: topics} as the group last resolved its members' SubscribedTopicRegex (under an "
                "authorizer, only the topics the refreshing member's principal may DESCRIBE)",
            ),
            "protocol_type": s_str(), "members": s_arr(ref("ConsumerMember")),
            "reconciled": s_bool(description="every member STABLE at the assignment epoch, owning exactly its target"),
            "coordinator": s_int(0, MAX_I32),
            "configs": GROUP_CONFIGS,
        },
        (
            "type", "group_id", "state", "group_epoch", "assignment_epoch", "assignor", "subscribed_topics",
            "resolved_regexes", "protocol_type", "members", "reconciled", "coordinator", "configs",
        ),
        description="A KIP-848 consumer group (ConsumerGroupHeartbeat, group.protocol=consumer): epochs instead of a "
        "generation, the broker's assignor instead of a leader, each member's current and target partitions",
    ),
    "StreamsMember": s_obj(
        {
            "member_id": s_str(), "process_id": s_str(description="the Kafka Streams instance"), "client_id": s_str(),
            "client_host": s_str(), "member_epoch": s_int(-1, MAX_I32), "previous_member_epoch": s_int(-1, MAX_I32),
            "state": s_str(enum=[s.value for s in StreamsMemberState], description="where it is in its reconciliation"),
            "topology_epoch": s_int(-1, MAX_I32), "user_endpoint": s_null(s_str(description="host:port for interactive queries")),
            "assigned": {**TASKS, "description": "what it owns now"},
            "pending_revocation": {**TASKS, "description": "what it must give up before it moves on"},
            "target": {**TASKS, "description": "what the target assignment gives it"},
        },
        (
            "member_id", "process_id", "client_id", "client_host", "member_epoch", "previous_member_epoch", "state",
            "topology_epoch", "user_endpoint", "assigned", "pending_revocation", "target",
        ),
        description="A KIP-1071 streams group's member (a Kafka Streams client) as its coordinator sees it",
    ),
    "StreamsGroup": s_obj(
        {
            "type": s_str(enum=[GROUP_TYPE_STREAMS]), "group_id": s_str(),
            "state": s_str(enum=list(STATES_BY_TYPE[GROUP_TYPE_STREAMS])),
            "group_epoch": s_int(0, MAX_I32), "assignment_epoch": s_int(0, MAX_I32),
            "topology_epoch": s_null(s_int(0, MAX_I32)), "validated_topology_epoch": s_int(-1, MAX_I32),
            "subtopologies": s_map(s_int(0, MAX_I32), description="{subtopology id: number of tasks} once the topology is valid"),
            "topology_status": s_null(s_map(s_str(), description="status and detail, as the heartbeat's Status says")),
            "shutdown_requested_by": s_null(s_str()), "protocol_type": s_str(), "members": s_arr(ref("StreamsMember")),
            "reconciled": s_bool(description="every member STABLE at the assignment epoch, owning exactly its target"),
            "coordinator": s_int(0, MAX_I32),
            "configs": GROUP_CONFIGS,
        },
        (
            "type", "group_id", "state", "group_epoch", "assignment_epoch", "topology_epoch", "validated_topology_epoch",
            "subtopologies", "topology_status", "shutdown_requested_by", "protocol_type", "members", "reconciled",
            "coordinator", "configs",
        ),
        description="A KIP-1071 streams group (StreamsGroupHeartbeat, group.protocol=streams): its topology's state on "
        "the topics and each member's active, standby and warm-up tasks",
    ),
    **SHARE_COMPONENTS,
    "Group": {
        "oneOf": [ref("ClassicGroup"), ref("ConsumerGroup"), ref("StreamsGroup"), ref("ShareGroup")],
        "discriminator": {
            "propertyName": "type",
            "mapping": {
                GROUP_TYPE_CLASSIC: ref("ClassicGroup")["$ref"], GROUP_TYPE_CONSUMER: ref("ConsumerGroup")["$ref"],
                GROUP_TYPE_STREAMS: ref("StreamsGroup")["$ref"], GROUP_TYPE_SHARE: ref("ShareGroup")["$ref"],
            },
        },
        "description": "A group of any kind; `type` says which",
    },
    "GroupSummary": s_obj(
        {
            "group_id": s_str(), "type": s_str(enum=list(GROUP_TYPES)), "state": s_str(enum=list(GROUP_STATES)),
            "generation_id": s_int(-1, MAX_I32, description="a classic group's generation; a consumer group's group epoch"),
            "protocol_type": s_null(s_str()), "members": s_int(0, MAX_I32),
        },
        ("group_id", "type", "state", "generation_id", "protocol_type", "members"),
    ),
    "Header": s_obj({"key": s_str(maxLength=1024), "value": s_null(s_str(maxLength=1 << 20))}, ("key",)),
    "Record": s_obj(
        {
            "topic": s_str(), "partition": s_int(0, MAX_I32), "offset": s_int(0, MAX_I64),
            "timestamp": s_int(-1, MAX_I64), "key": s_null(s_str()), "value": s_null(s_str()),
            "headers": s_arr(ref("Header")), "leader_epoch": s_int(-1, MAX_I32), "compression": s_str(enum=list(COMPRESSIONS)),
        },
        ("topic", "partition", "offset", "timestamp", "key", "value", "headers", "leader_epoch", "compression"),
        description="key, value and header values in the encoding asked for (utf-8 text or base64)",
    ),
    "Event": s_obj(
        {
            "v": s_int(1, 1000), "seq": s_int(1, MAX_I64), "time_ms": s_int(0, MAX_TIMESTAMP_MS), "type": s_str(),
            "broker_id": s_int(0, MAX_I32), "group_id": s_str(), "generation_id": s_int(-1, MAX_I32),
            "member_id": s_str(), "reason": s_str(), "details": s_map(True),
        },
        ("v", "seq", "time_ms", "type"),
        description="One event of the event log (schema: docs/events.md)",
    ),
    "Request": s_obj(
        {
            "seq": s_int(1, MAX_I64), "time_ms": s_int(0, MAX_TIMESTAMP_MS), "broker_id": s_int(0, MAX_I32),
            "api_key": s_int(0, 32767), "api": s_str(), "api_version": s_int(0, 32767), "client_id": s_str(),
            "correlation_id": s_int(-MAX_I32 - 1, MAX_I32), "client": s_str(),
            "outcome": s_str(enum=list(REQUEST_OUTCOMES)),
            "errors": s_arr(s_str()),
        },
        ("seq", "time_ms", "broker_id", "api_key", "api", "api_version", "client_id", "correlation_id", "client", "outcome", "errors"),
    ),
    "Interceptor": s_obj(
        {
            "id": s_int(1, MAX_I64), "name": s_str(), "api": s_null(s_str()), "broker": s_null(s_int(0, MAX_I32)),
            "keep": s_bool(), "calls": s_int(0, MAX_I64),
        },
        ("id", "name", "api", "broker", "keep", "calls"),
        description="An interceptor on the request path (latency, disconnect, drop, or one registered in Python)",
    ),
    "Faults": s_obj(
        {
            "pending_errors": s_map(s_arr(s_str())), "interceptors": s_arr(ref("Interceptor")),
            "brokers_down": s_arr(s_int(0, MAX_I32)), "coordinator_moves": s_map(s_int(0, MAX_I32)),
            "api_version_caps": s_map(s_null(s_int(-1, 32767))),
            "transaction_coordinator_moves": s_map(s_int(0, MAX_I32)),
            "transaction_coordinators_loading": s_map(s_int(0, MAX_TIMESTAMP_MS)),
        },
        ("pending_errors", "interceptors", "brokers_down", "coordinator_moves", "api_version_caps",
         "transaction_coordinator_moves", "transaction_coordinators_loading"),
    ),
    "Transaction": s_obj(
        {
            "transactional_id": s_str(), "state": s_str(enum=list(TRANSACTION_STATES)),
            "producer_id": s_int(-1, MAX_I64), "producer_epoch": s_int(-1, 32767),
            "transaction_timeout_ms": s_int(0, MAX_I32), "start_time_ms": s_int(-1, MAX_TIMESTAMP_MS),
            "last_update_time_ms": s_int(-1, MAX_TIMESTAMP_MS),
            "partitions": s_arr(s_obj({"topic": s_str(), "partition": s_int(0, MAX_I32)}, ("topic", "partition"))),
            "coordinator": s_int(0, MAX_I32),
        },
        ("transactional_id", "state", "producer_id", "producer_epoch", "transaction_timeout_ms", "start_time_ms",
         "last_update_time_ms", "partitions", "coordinator"),
        description="A transactional id as its coordinator sees it (Kafka's TransactionMetadata)",
    ),
    "LeadersMoved": s_obj({"leaders_moved": s_map(s_int(-1, MAX_I32))}, ("leaders_moved",)),
    "Clock": s_obj({"manual": s_bool(), "now_ms": s_int(0, MAX_TIMESTAMP_MS)}, ("manual", "now_ms")),
}



def check(schema: Schema, value: Any, where: str) -> Any:
    """``value`` checked against ``schema``, whose ``$ref`` name these components
    (mockbroker.http.schema.check); raises BadInput naming the offending part."""
    return check_schema(schema, value, where, COMPONENTS)
