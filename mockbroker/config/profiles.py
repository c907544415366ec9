"""Version profiles: "behave like Kafka X" as caps on the highest version served per API.

A profile lowers what ApiVersions advertises and what the broker accepts, so a client negotiates
as it would against that broker. Minimums stay mockbroker's (Kafka 4's, plus the old versions
served for sarama), because the broker cannot serve what Kafka 4 removed, such as message sets of
magic 0 and 1; clients pick the highest common version, so the caps are what they notice.

Sources: the "3.9" column of the API version table in the group-semantics reference (the JSON
message specs on Kafka's 3.9 branch); "4.0" is the current specs, i.e. no caps.
"""

from __future__ import annotations

# api key -> highest version a Kafka 3.9 broker accepts (-1: an API it does not serve)
KAFKA_3_9: dict[int, int] = {
    0: 11,  # Produce
    1: 17,  # Fetch
    2: 9,  # ListOffsets
    3: 12,  # Metadata
    8: 9,  # OffsetCommit
    9: 9,  # OffsetFetch
    10: 6,  # FindCoordinator
    11: 9,  # JoinGroup
    12: 4,  # Heartbeat
    13: 5,  # LeaveGroup
    14: 5,  # SyncGroup
    15: 5,  # DescribeGroups
    16: 5,  # ListGroups
    17: 1,  # SaslHandshake
    18: 4,  # ApiVersions
    19: 7,  # CreateTopics
    20: 6,  # DeleteTopics
    22: 5,  # InitProducerId
    23: 4,  # OffsetForLeaderEpoch
    24: 5,  # AddPartitionsToTxn
    25: 4,  # AddOffsetsToTxn
    26: 4,  # EndTxn (v5, transaction version 2, came with 4.0)
    28: 4,  # TxnOffsetCommit (v5 came with 4.0)
    32: 4,  # DescribeConfigs
    36: 2,  # SaslAuthenticate
    37: 3,  # CreatePartitions
    42: 2,  # DeleteGroups
    47: 0,  # OffsetDelete
    60: 1,  # DescribeCluster
    61: 0,  # DescribeProducers
    65: 0,  # DescribeTransactions
    66: 1,  # ListTransactions (v2, the id pattern, came with 4.1)
    68: 0,  # ConsumerGroupHeartbeat
    69: 0,  # ConsumerGroupDescribe
    88: -1,  # StreamsGroupHeartbeat: not served by 3.9 (KIP-1071 came with 4.x)
    89: -1,  # StreamsGroupDescribe
}

PROFILES: dict[str, dict[int, int]] = {
    "3.9": KAFKA_3_9,
    "4.0": {},
}


def caps_for(profile: str) -> dict[int, int]:
    """The version caps of a named profile; ValueError naming the known ones otherwise."""
    try:
        return dict(PROFILES[profile])
    except KeyError:
        known = ", ".join(sorted(PROFILES))
        raise ValueError(f"unknown Kafka version profile {profile!r}; known profiles: {known}") from None
