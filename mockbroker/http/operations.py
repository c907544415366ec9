"""The operations table of the HTTP control API: every endpoint with its method, path,
parameters, body and answer schemas, in the order the OpenAPI document lists them. Routing
(mockbroker/http/app.py), request checking and the document (mockbroker/http/openapi.py) all read
this one table, so they cannot disagree. One function per resource builds its operations."""

from __future__ import annotations

from mockbroker.http.calls import Op, Param, path_param, query, required_query
from mockbroker.http.components import (
    API_NAME,
    BROKER_ID,
    COMPRESSIONS,
    ENCODINGS,
    ERROR_NAME,
    GROUP_ID,
    GROUP_STATES,
    GROUP_TYPE,
    REQUEST_OUTCOMES,
    TOPIC,
    TRANSACTION_STATES,
    TRANSACTIONAL_ID,
)
from mockbroker.http.endpoints import Endpoints
from mockbroker.http.schema import (
    MAX_I32,
    MAX_I64,
    MAX_TIMESTAMP_MS,
    ref,
    s_arr,
    s_bool,
    s_int,
    s_map,
    s_null,
    s_obj,
    s_str,
)

# A manual clock fires every timer due on the way, periodic ones too (the retention check visits
# every partition every 5 minutes), so one call is kept to a day; advance again for more.
MAX_ADVANCE_MS = 86_400_000
MAX_PARTITIONS = 1000  # per topic created over HTTP (CreateTopics over the wire has no such cap)

GROUP_PATH = path_param("group_id", GROUP_ID, "the group id")
TOPIC_PATH = path_param("topic", TOPIC, "the topic name")
PARTITION_PATH = path_param("partition", s_int(0, MAX_I32), "the partition index")
BROKER_PATH = path_param("broker_id", BROKER_ID, "the broker's node id")
TRANSACTION_PATH = path_param("transactional_id", TRANSACTIONAL_ID, "the transactional id")
TIMEOUT = query("timeout", s_int(0, 300, default=30), "seconds")


def operations(e: Endpoints) -> list[Op]:
    """Every operation, routed to ``e``'s handlers."""
    return [
        *_health_ops(e), *_cluster_ops(e), *_topic_ops(e), *_record_ops(e), *_group_ops(e), *_group_wait_ops(e),
        *_transaction_ops(e), *_fault_ops(e), *_clock_ops(e), *_event_ops(e), *_request_ops(e), *_security_ops(e),
    ]  # fmt: skip


def _health_ops(e: Endpoints) -> list[Op]:
    """Health: liveness, readiness, metrics and this document."""
    return [
        Op("GET", "/healthz", e.healthz, "The admin API answers (liveness)", "health",
           s_obj({"status": s_str(enum=["ok"])}, ("status",))),
        Op("GET", "/readyz", e.readyz, "The broker serves: 200 when ready, 503 while starting or stopping", "health",
           s_obj({"ready": s_bool(), "bootstrap_servers": s_str(), "brokers_up": s_int(0, MAX_I32)},
                 ("ready", "bootstrap_servers", "brokers_up")), errors=(503,)),
        Op("GET", "/metrics", e.metrics, "Prometheus metrics (text exposition format 0.0.4)", "health",
           s_str(), content_type="text/plain"),
        Op("GET", "/openapi.json", e.openapi, "This document", "health", s_map(True)),
    ]  # fmt: skip


def _cluster_ops(e: Endpoints) -> list[Op]:
    """The cluster and its brokers (taking one down or up is a fault)."""
    return [
        Op("GET", "/cluster", e.cluster, "Cluster id, controller, brokers and the clock", "cluster", ref("Cluster")),
        Op("GET", "/brokers", e.brokers, "Every broker, up or down", "cluster",
           s_obj({"brokers": s_arr(ref("Broker"))}, ("brokers",))),
        Op("GET", "/brokers/{broker_id}", e.broker, "One broker", "cluster", ref("Broker"),
           (BROKER_PATH,), errors=(404,)),
        Op("POST", "/brokers/{broker_id}/down", e.broker_down,
           "Take a broker down: listener closed, connections dropped, leadership and coordinators fail over",
           "faults", ref("LeadersMoved"), (BROKER_PATH,), errors=(404, 409)),
        Op("POST", "/brokers/{broker_id}/up", e.broker_up, "Start a broker taken down again", "faults",
           ref("LeadersMoved"), (BROKER_PATH,), errors=(404, 409)),
    ]  # fmt: skip


PROTOCOLS = ["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
USER_PATH = path_param("user", s_str(minLength=1, maxLength=1024), "the SASL user name")


def _security_ops(e: Endpoints) -> list[Op]:
    """The listener's security and SASL users (docs/security.md); passwords go in, never out."""
    return [
        Op("GET", "/security", e.security, "The listeners' security protocols, SASL mechanisms and TLS CA", "security",
           s_obj({"listener": s_str(), "security_protocol": s_str(enum=PROTOCOLS),
                  "sasl_mechanisms": s_arr(s_str()), "ssl_ca_path": s_null(s_str()), "ssl_ca_pem": s_null(s_str()),
                  "ssl_client_auth": s_str(),
                  "connections_max_reauth_ms": s_int(-(1 << 63), (1 << 63) - 1),
                  # OAUTHBEARER's validator (null without the mechanism): "unsecured" and its
                  # options, or a callable's name (mockbroker.security.oauthbearer.describe_validator)
                  "oauthbearer": s_null(s_obj(
                      {"validator": s_str(), "principal_claim_name": s_str(), "scope_claim_name": s_str(),
                       "required_scope": s_arr(s_str()), "allowable_clock_skew_ms": s_int(0, (1 << 63) - 1)},
                      ("validator",))),
                  "listeners": s_arr(s_obj(
                      {"name": s_str(), "security_protocol": s_str(enum=PROTOCOLS), "sasl_mechanisms": s_arr(s_str()),
                       "ssl_client_auth": s_str(), "bootstrap_servers": s_str(), "ssl_ca_path": s_null(s_str()),
                       "connections_max_reauth_ms": s_int(-(1 << 63), (1 << 63) - 1),
                       "connections_max_reauth_ms_by_mechanism": s_map(s_int(-(1 << 63), (1 << 63) - 1)),
                       "max_connections": s_int(0, (1 << 31) - 1)},
                      ("name", "security_protocol", "sasl_mechanisms", "ssl_client_auth", "bootstrap_servers",
                       "ssl_ca_path", "connections_max_reauth_ms", "connections_max_reauth_ms_by_mechanism",
                       "max_connections")))},
                 ("listener", "security_protocol", "sasl_mechanisms", "ssl_ca_path", "ssl_ca_pem", "ssl_client_auth",
                  "connections_max_reauth_ms", "oauthbearer", "listeners"))),
        Op("GET", "/users", e.users, "SASL users and their mechanisms (never a password)", "security",
           s_obj({"users": s_map(s_arr(s_str()))}, ("users",))),
        Op("PUT", "/users/{user}", e.put_user, "Make or replace a SASL user (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)",
           "security", None, (USER_PATH,), body=s_obj({"password": s_str(minLength=1, maxLength=4096)}, ("password",)), body_required=True,
           status=204),
        Op("DELETE", "/users/{user}", e.delete_user, "Forget a SASL user", "security", None, (USER_PATH,),
           status=204, errors=(404,)),
        Op("GET", "/acls", e.acls, "Every ACL binding (409 without an authorizer)", "security",
           s_obj({"acls": s_arr(_ACL)}, ("acls",)), errors=(409,)),
        Op("POST", "/acls", e.add_acl, "Add an ACL binding, with CreateAcls' checks", "security", _ACL,
           body=s_obj({**_ACL_FIELDS, "permission_type": s_str(default="ALLOW"), "pattern_type": s_str(default="LITERAL"),
                       "host": s_str(default="*")}, ("resource_type", "resource_name", "principal", "operation")),
           body_required=True, errors=(409,)),
        Op("POST", "/acls/delete", e.remove_acls, "Remove the ACL bindings a DeleteAcls filter matches (absent: any)",
           "security", s_obj({"removed": s_arr(_ACL)}, ("removed",)),
           body=s_obj({k: s_null(s_str()) if k in ("resource_name", "principal", "host") else s_str() for k in (*_ACL_FIELDS, "pattern_type", "host", "permission_type")}),
           body_required=True, errors=(409,)),
    ]  # fmt: skip


_ACL_FIELDS = {"resource_type": s_str(), "resource_name": s_str(), "principal": s_str(), "operation": s_str()}
_ACL = s_obj(
    {**_ACL_FIELDS, "pattern_type": s_str(), "host": s_str(), "permission_type": s_str()},
    ("resource_type", "resource_name", "pattern_type", "principal", "host", "operation", "permission_type"),
)


def _topic_ops(e: Endpoints) -> list[Op]:
    """Topics."""
    return [
        Op("GET", "/topics", e.topics, "Every topic", "topics",
           s_obj({"topics": s_arr(ref("Topic"))}, ("topics",)),
           (query("internal", s_bool(default=False), "include __consumer_offsets and other internal topics"),)),
        Op("POST", "/topics", e.create_topic, "Create a topic", "topics", ref("Topic"),
           body=s_obj({
               "name": TOPIC, "partitions": s_int(1, MAX_PARTITIONS, default=1),
               "replication_factor": s_int(1, 32767, default=1),
               "configs": s_map(s_str(maxLength=4096), maxProperties=100, description="topic configs by Kafka name"),
           }, ("name",)), body_required=True, status=201, errors=(409, 422)),
        Op("GET", "/topics/{topic}", e.topic, "One topic", "topics", ref("Topic"), (TOPIC_PATH,), errors=(404,)),
        Op("DELETE", "/topics/{topic}", e.delete_topic, "Delete a topic", "topics", None, (TOPIC_PATH,),
           status=204, errors=(404,)),
    ]  # fmt: skip


def _record_ops(e: Endpoints) -> list[Op]:
    """Records of a topic's partitions, and moving a partition's leader."""
    return [
        Op("POST", "/topics/{topic}/records", e.produce,
           "Append records as a producer would (one batch per partition); keyed records go where Kafka's "
           "default partitioner puts them", "records",
           s_obj({"offsets": s_arr(s_obj({"partition": s_int(0, MAX_I32), "offset": s_int(0, MAX_I64)},
                                         ("partition", "offset")))}, ("offsets",)),
           (TOPIC_PATH,),
           body=s_obj({
               "records": s_arr(s_obj({
                   "key": s_null(s_str(maxLength=1 << 20)), "value": s_null(s_str(maxLength=1 << 20)),
                   "headers": s_arr(ref("Header"), maxItems=100),
                   "partition": s_int(0, MAX_I32), "timestamp": s_int(0, MAX_TIMESTAMP_MS),
               }), minItems=1, maxItems=10_000),
               "encoding": s_str(enum=list(ENCODINGS), default="utf-8",
                                 description="how key, value and header values are written"),
               "partition": s_int(0, MAX_I32), "compression": s_str(enum=list(COMPRESSIONS), default="none"),
           }, ("records",)), body_required=True, errors=(404, 409, 422)),
        Op("GET", "/topics/{topic}/partitions/{partition}/records", e.read,
           "Read a partition's records from an offset on, decoded", "records",
           s_obj({"records": s_arr(ref("Record")), "next_offset": s_int(0, MAX_I64),
                  "log_end_offset": s_int(0, MAX_I64)}, ("records", "next_offset", "log_end_offset")),
           (TOPIC_PATH, PARTITION_PATH,
            query("offset", s_int(0, MAX_I64, default=0), "first offset to read"),
            query("limit", s_int(1, 10_000, default=100), "at most this many records"),
            query("encoding", s_str(enum=list(ENCODINGS), default="utf-8"),
                   "utf-8: keys and values as text (422 when one is not valid UTF-8); base64: as base64")),
           errors=(404, 422)),
        Op("POST", "/topics/{topic}/partitions/{partition}/leader", e.move_leader,
           "Move a partition's leader (default: to the next in-sync replica), bumping its leader epoch", "faults",
           s_obj({"leader_id": s_int(0, MAX_I32), "leader_epoch": s_int(0, MAX_I32)}, ("leader_id", "leader_epoch")),
           (TOPIC_PATH, PARTITION_PATH), body=s_obj({"broker_id": s_null(BROKER_ID)}), errors=(404, 409)),
    ]  # fmt: skip


def _group_ops(e: Endpoints) -> list[Op]:
    """Groups of both kinds: list, describe, offsets, expire, rebalance, move the coordinator."""
    return [
        Op("GET", "/groups", e.groups, "Every group, classic and KIP-848 consumer groups alike, in brief",
           "groups", s_obj({"groups": s_arr(ref("GroupSummary"))}, ("groups",)),
           (query("type", GROUP_TYPE, "only groups of this type"),
            query("state", s_str(enum=list(GROUP_STATES)), "only groups in this state"))),
        Op("GET", "/groups/{group_id}", e.group,
           "The coordinator's view of a group: a classic group (generation, leader, assignments decoded) or a "
           "consumer group (epochs, assignor, each member's current and target partitions); `type` says which",
           "groups", ref("Group"), (GROUP_PATH,), errors=(404,)),
        Op("GET", "/groups/{group_id}/offsets", e.offsets, "A group's committed offsets", "groups",
           s_obj({"group_id": s_str(), "offsets": s_map(s_map(s_int(-1, MAX_I64)))}, ("group_id", "offsets"),
                 description="offsets: {topic: {partition: committed offset}}"),
           (GROUP_PATH, query("topic", TOPIC, "only this topic")), errors=(404,)),
        Op("POST", "/groups/{group_id}/expire", e.expire, "Expire one member's session now, through the "
           "coordinator's own expiry path: a classic group rebalances without it, a consumer, streams or share group "
           "fences it and bumps its group epoch (a share member's acquired records are released); name it by member_id, instance_id or client_id (none: the only member)",
           "groups", s_obj({"member_id": s_str()}, ("member_id",)), (GROUP_PATH,),
           body=s_obj({"member_id": s_str(minLength=1, maxLength=1024), "instance_id": s_str(minLength=1, maxLength=1024),
                       "client_id": s_str(maxLength=1024)}), errors=(404, 409)),
        Op("POST", "/groups/{group_id}/expire-lock", e.expire_lock,
           "Expire now the acquisition locks of a share group's records on one partition (`offsets`; none: every "
           "Acquired record), as if group.share.record.lock.duration.ms had passed: each is Available again, or "
           "Archived at group.share.delivery.count.limit; 409 before the group first fetched the partition",
           "groups", s_obj({"offsets": s_arr(s_int(0, MAX_I64), description="the offsets released")}, ("offsets",)),
           (GROUP_PATH,),
           body=s_obj({"topic": TOPIC, "partition": s_int(0, MAX_I32), "offsets": s_arr(s_int(0, MAX_I64), maxItems=10000)},
                      ("topic", "partition")), body_required=True, errors=(404, 409)),
        Op("POST", "/groups/{group_id}/rebalance", e.rebalance,
           "Make a group rebalance: a classic group (Stable or CompletingRebalance) goes to PreparingRebalance; a "
           "consumer group (not Empty) gets a group epoch bump and a new target assignment", "groups",
           s_obj({"state": s_str(enum=list(GROUP_STATES))}, ("state",)), (GROUP_PATH,),
           body=s_obj({"reason": s_str(minLength=1, maxLength=1024)}), errors=(404, 409)),
        Op("POST", "/groups/{group_id}/coordinator", e.move_coordinator,
           "Move a group's coordinator to another broker (clients get NOT_COORDINATOR and look it up again)",
           "faults", s_obj({"previous": s_int(0, MAX_I32), "coordinator": s_int(0, MAX_I32)}, ("previous", "coordinator")),
           (GROUP_PATH,), body=s_obj({"broker_id": BROKER_ID}, ("broker_id",)), body_required=True,
           errors=(404, 409)),
    ]  # fmt: skip


def _transaction_ops(e: Endpoints) -> list[Op]:
    """Transactions: list, describe, abort, move or load the transaction coordinator."""
    coordinator = s_int(0, MAX_I32)
    return [
        Op("GET", "/transactions", e.transactions,
           "Every transactional id with its state, producer id and epoch, timeout and partitions", "transactions",
           s_obj({"transactions": s_arr(ref("Transaction"))}, ("transactions",)),
           (query("state", s_str(enum=list(TRANSACTION_STATES)), "only transactions in this state"),)),
        Op("GET", "/transactions/{transactional_id}", e.transaction, "The coordinator's view of a transactional id",
           "transactions", ref("Transaction"), (TRANSACTION_PATH,), errors=(404,)),
        Op("POST", "/transactions/{transactional_id}/abort", e.abort_transaction,
           "Abort the ongoing transaction: its producer is fenced (epoch + 1) and ABORT markers are written; "
           "409 when none is ongoing", "transactions", ref("Transaction"), (TRANSACTION_PATH,),
           body=s_obj({"reason": s_str(minLength=1, maxLength=1024)}), errors=(404, 409)),
        Op("POST", "/transactions/{transactional_id}/coordinator", e.move_transaction_coordinator,
           "Move a transactional id's coordinator to another broker (producers get NOT_COORDINATOR and look it up "
           "again)", "faults", s_obj({"previous": coordinator, "coordinator": coordinator}, ("previous", "coordinator")),
           (TRANSACTION_PATH,), body=s_obj({"broker_id": BROKER_ID}, ("broker_id",)), body_required=True,
           errors=(404, 409)),
        Op("POST", "/transactions/{transactional_id}/loading", e.load_transaction_coordinator,
           "Make the id's transaction coordinator answer COORDINATOR_LOAD_IN_PROGRESS for duration_ms on the "
           "cluster clock (0 ends it), as Kafka's does while it loads __transaction_state", "faults",
           s_obj({"until_ms": s_int(0, MAX_TIMESTAMP_MS), "coordinator": coordinator}, ("until_ms", "coordinator")),
           (TRANSACTION_PATH,), body=s_obj({"duration_ms": s_int(0, MAX_ADVANCE_MS)}, ("duration_ms",)),
           body_required=True),
    ]  # fmt: skip


def _group_wait_ops(e: Endpoints) -> list[Op]:
    """Waiting for a group (a state, a commit)."""
    return [
        Op("GET", "/groups/{group_id}/wait", e.wait_group,
           "Wait until the group is in a state (of its type, with a member count, a generation, every member "
           "reconciled); 408 when the timeout passes, 409 for reconciled=true on a classic group",
           "groups", ref("Group"),
           (GROUP_PATH,
            query("state", s_str(enum=[*GROUP_STATES, "any"], default="Stable"), "a state of either kind, or any"),
            query("members", s_int(0, MAX_I32), "exactly this many members"),
            query("generation_at_least", s_int(0, MAX_I32), "a classic group's generation, a consumer group's group epoch"),
            query("type", GROUP_TYPE, "only a group of this type"),
            query("reconciled", s_bool(default=False),
                   "a consumer group only: every member STABLE at the assignment epoch, owning exactly its target"),
            TIMEOUT),
           errors=(408, 409, 422)),
        Op("GET", "/groups/{group_id}/offsets/wait", e.wait_commit,
           "Wait until the group has committed an offset for the topic (the partition; at least the offset)",
           "groups", s_obj({"group_id": s_str(), "topic": s_str(), "offsets": s_map(s_int(-1, MAX_I64))},
                           ("group_id", "topic", "offsets")),
           (GROUP_PATH, required_query("topic", TOPIC, "the topic"),
            query("partition", s_int(0, MAX_I32)), query("offset", s_int(0, MAX_I64), "at least this offset"),
            TIMEOUT),
           errors=(408,)),
    ]  # fmt: skip


def _fault_ops(e: Endpoints) -> list[Op]:
    """Faults: pushed errors, interceptors, connections, API versions."""
    api_filter = s_obj({"api": s_null(API_NAME), "broker": s_null(BROKER_ID)})
    count = s_int(1, 10_000, default=1)
    return [
        Op("GET", "/faults", e.faults, "Faults in force", "faults", ref("Faults")),
        Op("DELETE", "/faults", e.clear_faults,
           "Remove every pushed error and interceptor and restore the API versions (brokers stay down, "
           "coordinators stay moved)", "faults", ref("Faults")),
        Op("DELETE", "/faults/interceptors/{interceptor_id}", e.remove_interceptor, "Remove one interceptor",
           "faults", None, (path_param("interceptor_id", s_int(1, MAX_I64), "the id GET /faults lists"),),
           status=204, errors=(404,)),
        Op("POST", "/faults/errors", e.push_errors,
           "The next requests of an API fail with these error codes, one each, in order (cluster, broker or "
           "partition level: mockbroker/control/faults.py)", "faults", ref("Faults"),
           body=s_obj({
               "api": API_NAME, "errors": s_arr(ERROR_NAME, minItems=1, maxItems=1000,
                                                description="Kafka error names (NOT_COORDINATOR), used in order"),
               "broker": s_null(BROKER_ID), "topic": s_null(TOPIC), "partition": s_null(s_int(0, MAX_I32)),
           }, ("api", "errors")), body_required=True, status=201, errors=(404, 422)),
        Op("POST", "/faults/latency", e.latency,
           "Hold every request of an API (all: null) on a broker (all: null) this many ms before answering",
           "faults", ref("Interceptor"),
           body=s_obj({"ms": {"type": "number", "minimum": 0, "maximum": 600_000},
                       "api": s_null(API_NAME), "broker": s_null(BROKER_ID)}, ("ms",)),
           body_required=True, status=201, errors=(404,)),
        Op("POST", "/faults/disconnect", e.disconnect,
           "Close the connection of each of the next `count` matching requests, unanswered", "faults",
           s_obj({"interceptors": s_arr(ref("Interceptor"))}, ("interceptors",)),
           body=s_obj({**api_filter["properties"], "count": count}), status=201, errors=(404,)),
        Op("POST", "/faults/drop", e.drop,
           "Never answer the next `count` matching requests (the client's request times out)", "faults",
           s_obj({"interceptors": s_arr(ref("Interceptor"))}, ("interceptors",)),
           body=s_obj({**api_filter["properties"], "count": count}), status=201, errors=(404,)),
        Op("POST", "/faults/close-connections", e.close_connections,
           "Close every client connection now (of one broker, or all); listeners stay open", "faults",
           s_obj({"closed": s_int(0, MAX_I32)}, ("closed",)), body=s_obj({"broker": s_null(BROKER_ID)}), errors=(404,)),
        Op("POST", "/faults/api-versions", e.cap_api_version,
           "Serve and advertise an API only up to a version (null: back to the configured range)", "faults",
           ref("Faults"), body=s_obj({"api": API_NAME, "max_version": s_null(s_int(-1, 32767))}, ("api", "max_version")),
           body_required=True),
    ]  # fmt: skip


def _clock_ops(e: Endpoints) -> list[Op]:
    """The clock."""
    return [
        Op("GET", "/clock", e.clock, "The cluster's clock", "clock", ref("Clock")),
        Op("POST", "/clock/advance", e.advance,
           "Move a manual clock (serve --manual-clock) forward, firing every timer that falls due; 409 on real time",
           "clock", ref("Clock"), body=s_obj({"ms": s_int(0, MAX_ADVANCE_MS, description="at most a day per call")}, ("ms",)),
           body_required=True,
           errors=(409,)),
    ]  # fmt: skip


def _event_ops(e: Endpoints) -> list[Op]:
    """The event log."""
    return [
        Op("GET", "/events", e.events, "The event log (docs/events.md), filtered", "events",
           s_obj({"events": s_arr(ref("Event")), "last_seq": s_int(0, MAX_I64)}, ("events", "last_seq")),
           (*_event_filters(), query("limit", s_int(1, 100_000, default=10_000), "at most this many (the oldest first)"))),
        Op("GET", "/events/wait", e.wait_event, "Wait for the first event of a type after since_seq", "events",
           ref("Event"),
           (required_query("type", s_str(minLength=1, maxLength=200), 'an event type, or a prefix ending in "."'),
            query("group_id", GROUP_ID), query("since_seq", s_int(0, MAX_I64, default=0)),
            TIMEOUT),
           errors=(408,)),
        Op("GET", "/events/stream", e.event_stream,
           "The event log as Server-Sent Events: the past events after since_seq (or Last-Event-ID), then each "
           "new one as it happens; `id` is the event's seq, `data` its JSON", "events", s_str(),
           _event_filters(), content_type="text/event-stream"),
    ]  # fmt: skip


def _request_ops(e: Endpoints) -> list[Op]:
    """The request log."""
    return [
        Op("GET", "/requests", e.requests, "The request log (off until PUT /requests/log turns it on)", "events",
           s_obj({"enabled": s_bool(), "requests": s_arr(ref("Request"))}, ("enabled", "requests")),
           (query("api", API_NAME), query("broker", BROKER_ID), query("client_id", s_str(maxLength=1024)),
            query("error", ERROR_NAME, "a Kafka error name found in the response"),
            query("outcome", s_str(enum=list(REQUEST_OUTCOMES))),
            query("since_seq", s_int(0, MAX_I64, default=0)),
            query("limit", s_int(1, 100_000, default=10_000)))),
        Op("GET", "/requests/wait", e.wait_request,
           "Wait for an answered request of an API in the request log (with an error code in its answer)",
           "events", ref("Request"),
           (required_query("api", API_NAME), query("error", ERROR_NAME), query("broker", BROKER_ID),
            query("client_id", s_str(maxLength=1024)), query("since_seq", s_int(0, MAX_I64, default=0)),
            TIMEOUT),
           errors=(408,)),
        Op("PUT", "/requests/log", e.request_log, "Turn the request log on or off", "events", s_obj({"ok": s_bool()}, ("ok",)),
           body=s_obj({"enabled": s_bool()}, ("enabled",)), body_required=True),
    ]  # fmt: skip


def _event_filters() -> tuple[Param, ...]:
    return (
        query("type", s_str(minLength=1, maxLength=200), 'an event type, or a prefix ending in "." ("member.")'),
        query("group_id", GROUP_ID, "only this group's events"),
        query("since_seq", s_int(0, MAX_I64, default=0), "only events after this seq"),
    )
