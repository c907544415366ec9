"""Generated message codecs, one module per API (see protocol/_codegen.py).

Do not edit by hand: run `make regen`.
"""

from __future__ import annotations

# api key -> module name under protocol.messages
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
