"""Kafka API keys (the ApiKey enum) for the APIs mockbroker serves, named as in Java's ApiKeys.

The numbers are the request header's request_api_key (KIP-482 header v1/v2, int16); the names are
those of ``org.apache.kafka.common.protocol.ApiKeys`` so a reader of the Kafka source can search
for ours. Only the APIs mockbroker has message modules for are listed: a request for any other key
is an UnknownApiError at decode time, which closes the connection as Kafka does for keys it does
not know.
"""

from __future__ import annotations

from enum import IntEnum


class ApiKey(IntEnum):
    PRODUCE = 0
    FETCH = 1
    LIST_OFFSETS = 2
    METADATA = 3
    # 4-7 (LeaderAndIsr, StopReplica, UpdateMetadata, ControlledShutdown) are inter-broker APIs.
    OFFSET_COMMIT = 8
    OFFSET_FETCH = 9
    FIND_COORDINATOR = 10
    JOIN_GROUP = 11
    HEARTBEAT = 12
    LEAVE_GROUP = 13
    SYNC_GROUP = 14
    DESCRIBE_GROUPS = 15
    LIST_GROUPS = 16
    SASL_HANDSHAKE = 17
    API_VERSIONS = 18  # its response always uses response header v0 (KIP-511), see headers.py
    CREATE_TOPICS = 19
    DELETE_TOPICS = 20
    DELETE_RECORDS = 21
    INIT_PRODUCER_ID = 22
    OFFSET_FOR_LEADER_EPOCH = 23
    ADD_PARTITIONS_TO_TXN = 24
    ADD_OFFSETS_TO_TXN = 25
    END_TXN = 26
    TXN_OFFSET_COMMIT = 28
    DESCRIBE_ACLS = 29
    CREATE_ACLS = 30
    DELETE_ACLS = 31
    DESCRIBE_CONFIGS = 32
    ALTER_CONFIGS = 33
    SASL_AUTHENTICATE = 36  # KIP-152
    CREATE_PARTITIONS = 37
    DELETE_GROUPS = 42
    INCREMENTAL_ALTER_CONFIGS = 44  # KIP-339
    OFFSET_DELETE = 47  # KIP-496
    DESCRIBE_USER_SCRAM_CREDENTIALS = 50  # KIP-554
    ALTER_USER_SCRAM_CREDENTIALS = 51  # KIP-554
    DESCRIBE_CLUSTER = 60  # KIP-700
    DESCRIBE_PRODUCERS = 61  # KIP-664
    DESCRIBE_TRANSACTIONS = 65  # KIP-664
    LIST_TRANSACTIONS = 66  # KIP-664
    CONSUMER_GROUP_HEARTBEAT = 68  # KIP-848
    CONSUMER_GROUP_DESCRIBE = 69  # KIP-848
    STREAMS_GROUP_HEARTBEAT = 88  # KIP-1071
    STREAMS_GROUP_DESCRIBE = 89  # KIP-1071

    SHARE_GROUP_HEARTBEAT = 76  # KIP-932
    SHARE_GROUP_DESCRIBE = 77  # KIP-932
    SHARE_FETCH = 78  # KIP-932
    SHARE_ACKNOWLEDGE = 79  # KIP-932
    DESCRIBE_SHARE_GROUP_OFFSETS = 90  # KIP-932
    ALTER_SHARE_GROUP_OFFSETS = 91  # KIP-932
    DELETE_SHARE_GROUP_OFFSETS = 92  # KIP-932
