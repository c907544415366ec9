"""Kafka error codes (the ErrorCode enum) and the codec's own exceptions (the DecodeError family).

Kafka error codes are values carried in responses: ``ErrorCode`` has every code Kafka defines, with
Java's names and Java's retriability. The exceptions here are raised only by the
codec, for bytes it cannot make sense of. Every failure to decode raises a DecodeError subclass,
never a bare IndexError or struct.error, so the broker can map "the client sent garbage" to
"close that connection" in one place.
"""

from __future__ import annotations

from enum import IntEnum


class DecodeError(ValueError):
    """Bytes that are not a valid encoding of what was expected: the peer's fault, not ours."""


class TruncatedError(DecodeError):
    """The buffer ended before the value it was decoding."""


class InvalidValueError(DecodeError):
    """A value that no valid encoder writes: a negative length, an over-long varint, bad UTF-8."""


class FrameTooLarge(DecodeError):
    """A frame's 4-byte size prefix exceeds the configured maximum (socket.request.max.bytes)."""

    def __init__(self, size: int, max_size: int) -> None:
        super().__init__(f"frame of {size} bytes exceeds the maximum of {max_size} bytes")
        self.size = size
        self.max_size = max_size


class UnknownApiError(DecodeError):
    """A request header names an API key this codec has no schema for."""

    def __init__(self, api_key: int, api_version: int, correlation_id: int) -> None:
        super().__init__(f"unknown api key {api_key} (version {api_version})")
        self.api_key = api_key
        self.api_version = api_version
        self.correlation_id = correlation_id


class UnsupportedVersionError(DecodeError):
    """A known API at a version outside the range this codec decodes.

    Carries what the broker needs to answer: ApiVersions at an unknown version gets the KIP-511
    v0-layout UNSUPPORTED_VERSION reply, any other API has its connection closed.
    """

    def __init__(self, api_key: int, api_version: int, correlation_id: int, client_id: str | None) -> None:
        super().__init__(f"api key {api_key} has no version {api_version}")
        self.api_key = api_key
        self.api_version = api_version
        self.correlation_id = correlation_id
        self.client_id = client_id


class EncodeError(ValueError):
    """A message that cannot be encoded at the requested version: a value of the wrong type, out
    of range for its wire type, or None where that version has no null. Always a bug in the
    caller, which built the message; the codec names the message, version and cause."""


class CorruptRecordError(DecodeError):
    """A record batch whose CRC, length or layout is wrong (Kafka answers CORRUPT_MESSAGE)."""


# -- Kafka error codes --------------------------------------------------------------------------


class ErrorCode(IntEnum):
    """Every error code Kafka defines, named as in Java's ``org.apache.kafka.common.protocol.Errors``.

    Source: ``clients/src/main/java/org/apache/kafka/common/protocol/Errors.java`` on apache/kafka
    trunk (codes -1..136). Kafka never renumbers a code, only renames one (6 was NOT_LEADER_FOR_PARTITION,
    -1 was UNKNOWN), so the numbers are the contract and the names follow trunk.
    Handlers put these in responses; they are values, never raised.
    """

    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    OFFSET_OUT_OF_RANGE = 1
    CORRUPT_MESSAGE = 2
    UNKNOWN_TOPIC_OR_PARTITION = 3
    INVALID_FETCH_SIZE = 4
    LEADER_NOT_AVAILABLE = 5
    NOT_LEADER_OR_FOLLOWER = 6  # formerly NOT_LEADER_FOR_PARTITION (renamed for KIP-392)
    REQUEST_TIMED_OUT = 7
    BROKER_NOT_AVAILABLE = 8
    REPLICA_NOT_AVAILABLE = 9
    MESSAGE_TOO_LARGE = 10
    STALE_CONTROLLER_EPOCH = 11
    OFFSET_METADATA_TOO_LARGE = 12
    NETWORK_EXCEPTION = 13
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    INVALID_TOPIC_EXCEPTION = 17
    RECORD_LIST_TOO_LARGE = 18
    NOT_ENOUGH_REPLICAS = 19
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
    INVALID_REQUIRED_ACKS = 21
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    INVALID_SESSION_TIMEOUT = 26
    REBALANCE_IN_PROGRESS = 27
    INVALID_COMMIT_OFFSET_SIZE = 28
    TOPIC_AUTHORIZATION_FAILED = 29
    GROUP_AUTHORIZATION_FAILED = 30
    CLUSTER_AUTHORIZATION_FAILED = 31
    INVALID_TIMESTAMP = 32
    UNSUPPORTED_SASL_MECHANISM = 33
    ILLEGAL_SASL_STATE = 34
    UNSUPPORTED_VERSION = 35
    TOPIC_ALREADY_EXISTS = 36
    INVALID_PARTITIONS = 37
    INVALID_REPLICATION_FACTOR = 38
    INVALID_REPLICA_ASSIGNMENT = 39
    INVALID_CONFIG = 40
    NOT_CONTROLLER = 41
    INVALID_REQUEST = 42
    UNSUPPORTED_FOR_MESSAGE_FORMAT = 43
    POLICY_VIOLATION = 44
    OUT_OF_ORDER_SEQUENCE_NUMBER = 45
    DUPLICATE_SEQUENCE_NUMBER = 46
    INVALID_PRODUCER_EPOCH = 47
    INVALID_TXN_STATE = 48
    INVALID_PRODUCER_ID_MAPPING = 49
    INVALID_TRANSACTION_TIMEOUT = 50
    CONCURRENT_TRANSACTIONS = 51
    TRANSACTION_COORDINATOR_FENCED = 52
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
    SECURITY_DISABLED = 54
    OPERATION_NOT_ATTEMPTED = 55
    KAFKA_STORAGE_ERROR = 56
    LOG_DIR_NOT_FOUND = 57
    SASL_AUTHENTICATION_FAILED = 58
    UNKNOWN_PRODUCER_ID = 59
    REASSIGNMENT_IN_PROGRESS = 60
    DELEGATION_TOKEN_AUTH_DISABLED = 61
    DELEGATION_TOKEN_NOT_FOUND = 62
    DELEGATION_TOKEN_OWNER_MISMATCH = 63
    DELEGATION_TOKEN_REQUEST_NOT_ALLOWED = 64
    DELEGATION_TOKEN_AUTHORIZATION_FAILED = 65
    DELEGATION_TOKEN_EXPIRED = 66
    INVALID_PRINCIPAL_TYPE = 67
    NON_EMPTY_GROUP = 68
    GROUP_ID_NOT_FOUND = 69
    FETCH_SESSION_ID_NOT_FOUND = 70
    INVALID_FETCH_SESSION_EPOCH = 71
    LISTENER_NOT_FOUND = 72
    TOPIC_DELETION_DISABLED = 73
    FENCED_LEADER_EPOCH = 74
    UNKNOWN_LEADER_EPOCH = 75
    UNSUPPORTED_COMPRESSION_TYPE = 76
    STALE_BROKER_EPOCH = 77
    OFFSET_NOT_AVAILABLE = 78
    MEMBER_ID_REQUIRED = 79  # KIP-394: JoinGroup v4+ with an empty member id
    PREFERRED_LEADER_NOT_AVAILABLE = 80
    GROUP_MAX_SIZE_REACHED = 81  # KIP-389
    FENCED_INSTANCE_ID = 82  # KIP-345 static membership
    ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
    ELECTION_NOT_NEEDED = 84
    NO_REASSIGNMENT_IN_PROGRESS = 85
    GROUP_SUBSCRIBED_TO_TOPIC = 86  # OffsetDelete (KIP-496)
    INVALID_RECORD = 87
    UNSTABLE_OFFSET_COMMIT = 88  # KIP-447: OffsetFetch with RequireStable
    THROTTLING_QUOTA_EXCEEDED = 89
    PRODUCER_FENCED = 90
    RESOURCE_NOT_FOUND = 91
    DUPLICATE_RESOURCE = 92
    UNACCEPTABLE_CREDENTIAL = 93
    INCONSISTENT_VOTER_SET = 94
    INVALID_UPDATE_VERSION = 95
    FEATURE_UPDATE_FAILED = 96
    PRINCIPAL_DESERIALIZATION_FAILURE = 97
    SNAPSHOT_NOT_FOUND = 98
    POSITION_OUT_OF_RANGE = 99
    UNKNOWN_TOPIC_ID = 100
    DUPLICATE_BROKER_REGISTRATION = 101
    BROKER_ID_NOT_REGISTERED = 102
    INCONSISTENT_TOPIC_ID = 103
    INCONSISTENT_CLUSTER_ID = 104
    TRANSACTIONAL_ID_NOT_FOUND = 105
    FETCH_SESSION_TOPIC_ID_ERROR = 106
    INELIGIBLE_REPLICA = 107
    NEW_LEADER_ELECTED = 108
    OFFSET_MOVED_TO_TIERED_STORAGE = 109
    FENCED_MEMBER_EPOCH = 110  # KIP-848 consumer groups, 110-113
    UNRELEASED_INSTANCE_ID = 111
    UNSUPPORTED_ASSIGNOR = 112
    STALE_MEMBER_EPOCH = 113
    MISMATCHED_ENDPOINT_TYPE = 114
    UNSUPPORTED_ENDPOINT_TYPE = 115
    UNKNOWN_CONTROLLER_ID = 116
    UNKNOWN_SUBSCRIPTION_ID = 117
    TELEMETRY_TOO_LARGE = 118
    INVALID_REGISTRATION = 119
    TRANSACTION_ABORTABLE = 120
    INVALID_RECORD_STATE = 121
    SHARE_SESSION_NOT_FOUND = 122
    INVALID_SHARE_SESSION_EPOCH = 123
    FENCED_STATE_EPOCH = 124
    INVALID_VOTER_KEY = 125
    DUPLICATE_VOTER = 126
    VOTER_NOT_FOUND = 127
    INVALID_REGULAR_EXPRESSION = 128  # KIP-848 regex subscriptions
    REBOOTSTRAP_REQUIRED = 129  # KIP-1102; ApiVersions v5 (KIP-1242)
    STREAMS_INVALID_TOPOLOGY = 130  # KIP-1071 streams groups, 130-132
    STREAMS_INVALID_TOPOLOGY_EPOCH = 131
    STREAMS_TOPOLOGY_FENCED = 132
    SHARE_SESSION_LIMIT_REACHED = 133
    GROUP_DELETION_FAILED = 134  # DeleteGroups v3+
    STREAMS_TOPOLOGY_DESCRIPTION_UPDATE_FAILED = 135
    CONTROLLER_ID_NOT_REGISTERED = 136

    @property
    def retriable(self) -> bool:
        """True when Java's exception for this code extends RetriableException: the Java client
        retries the request (after a metadata refresh for the InvalidMetadataException subset)."""
        return self in _RETRIABLE


# The codes whose Java exception class extends org.apache.kafka.common.errors.RetriableException,
# directly or through InvalidMetadataException, on trunk. Java is the reference where kafka-python
# differs (e.g. CORRUPT_MESSAGE and CONCURRENT_TRANSACTIONS are retriable in Java). Every code not
# listed, and NONE, is not retriable; Java maps a code it does not know to UNKNOWN_SERVER_ERROR,
# which is not retriable either.
_RETRIABLE: frozenset[ErrorCode] = frozenset(
    {
        ErrorCode.CORRUPT_MESSAGE,
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,  # InvalidMetadataException
        ErrorCode.LEADER_NOT_AVAILABLE,  # InvalidMetadataException
        ErrorCode.NOT_LEADER_OR_FOLLOWER,  # InvalidMetadataException
        ErrorCode.REQUEST_TIMED_OUT,
        ErrorCode.REPLICA_NOT_AVAILABLE,  # InvalidMetadataException
        ErrorCode.NETWORK_EXCEPTION,  # InvalidMetadataException
        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
        ErrorCode.NOT_COORDINATOR,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        ErrorCode.NOT_CONTROLLER,
        ErrorCode.CONCURRENT_TRANSACTIONS,
        ErrorCode.KAFKA_STORAGE_ERROR,  # InvalidMetadataException
        ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
        ErrorCode.INVALID_FETCH_SESSION_EPOCH,
        ErrorCode.LISTENER_NOT_FOUND,  # InvalidMetadataException
        ErrorCode.FENCED_LEADER_EPOCH,  # InvalidMetadataException
        ErrorCode.UNKNOWN_LEADER_EPOCH,
        ErrorCode.OFFSET_NOT_AVAILABLE,
        ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,  # InvalidMetadataException
        ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,  # InvalidMetadataException
        ErrorCode.ELECTION_NOT_NEEDED,  # InvalidMetadataException
        ErrorCode.UNSTABLE_OFFSET_COMMIT,
        ErrorCode.THROTTLING_QUOTA_EXCEEDED,
        ErrorCode.UNKNOWN_TOPIC_ID,  # InvalidMetadataException
        ErrorCode.INCONSISTENT_TOPIC_ID,  # InvalidMetadataException
        ErrorCode.FETCH_SESSION_TOPIC_ID_ERROR,
        ErrorCode.SHARE_SESSION_NOT_FOUND,
        ErrorCode.INVALID_SHARE_SESSION_EPOCH,
        ErrorCode.SHARE_SESSION_LIMIT_REACHED,
    }
)
