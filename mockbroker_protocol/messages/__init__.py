"""Generated message codecs, one module per API (see mockbroker_protocol/_codegen.py).

Do not edit by hand: run `make regen`.
"""

from __future__ import annotations

# api key -> module name under mockbroker_protocol.messages
API_MODULES: dict[int, str] = {
    0: "produce",
    1: "fetch",
    2: "list_offsets",
    3: "metadata",
    8: "offset_commit",
    9: "offset_fetch",
    10: "find_coordinator",
    11: "join_group",
    12: "heartbeat",
    13: "leave_group",
    14: "sync_group",
    15: "describe_groups",
    16: "list_groups",
    17: "sasl_handshake",
    18: "api_versions",
    19: "create_topics",
    20: "delete_topics",
    21: "delete_records",
    22: "init_producer_id",
    23: "offset_for_leader_epoch",
    24: "add_partitions_to_txn",
    25: "add_offsets_to_txn",
    26: "end_txn",
    28: "txn_offset_commit",
    32: "describe_configs",
    33: "alter_configs",
    36: "sasl_authenticate",
    37: "create_partitions",
    42: "delete_groups",
    44: "incremental_alter_configs",
    47: "offset_delete",
    60: "describe_cluster",
    68: "consumer_group_heartbeat",
    69: "consumer_group_describe",
}

# api key -> (API name, the request's valid versions, its flexible versions or None): what
# mockbroker_protocol.registry needs to route a request, frame a response and answer ApiVersions without
# importing the API's module (it is imported on first use; start-up stays fast).
API_VERSIONS: dict[int, tuple[str, tuple[int, int], tuple[int, int] | None]] = {
    0: ("Produce", (0, 13), (9, 32767)),
    1: ("Fetch", (0, 18), (12, 32767)),
    2: ("ListOffsets", (0, 11), (6, 32767)),
    3: ("Metadata", (0, 13), (9, 32767)),
    8: ("OffsetCommit", (1, 10), (8, 32767)),
    9: ("OffsetFetch", (1, 10), (6, 32767)),
    10: ("FindCoordinator", (0, 6), (3, 32767)),
    11: ("JoinGroup", (0, 9), (6, 32767)),
    12: ("Heartbeat", (0, 4), (4, 32767)),
    13: ("LeaveGroup", (0, 5), (4, 32767)),
    14: ("SyncGroup", (0, 5), (4, 32767)),
    15: ("DescribeGroups", (0, 6), (5, 32767)),
    16: ("ListGroups", (0, 5), (3, 32767)),
    17: ("SaslHandshake", (0, 1), None),
    18: ("ApiVersions", (0, 4), (3, 32767)),
    19: ("CreateTopics", (0, 7), (5, 32767)),
    20: ("DeleteTopics", (0, 6), (4, 32767)),
    21: ("DeleteRecords", (0, 2), (2, 32767)),
    22: ("InitProducerId", (0, 6), (2, 32767)),
    23: ("OffsetForLeaderEpoch", (2, 4), (4, 32767)),
    24: ("AddPartitionsToTxn", (0, 5), (3, 32767)),
    25: ("AddOffsetsToTxn", (0, 4), (3, 32767)),
    26: ("EndTxn", (0, 5), (3, 32767)),
    28: ("TxnOffsetCommit", (0, 5), (3, 32767)),
    32: ("DescribeConfigs", (0, 4), (4, 32767)),
    33: ("AlterConfigs", (0, 2), (2, 32767)),
    36: ("SaslAuthenticate", (0, 2), (2, 32767)),
    37: ("CreatePartitions", (0, 3), (2, 32767)),
    42: ("DeleteGroups", (0, 2), (2, 32767)),
    44: ("IncrementalAlterConfigs", (0, 1), (1, 32767)),
    47: ("OffsetDelete", (0, 0), None),
    60: ("DescribeCluster", (0, 2), (0, 32767)),
    68: ("ConsumerGroupHeartbeat", (0, 1), (0, 32767)),
    69: ("ConsumerGroupDescribe", (0, 1), (0, 32767)),
}
