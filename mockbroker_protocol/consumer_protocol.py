"""The embedded consumer protocol: Subscription and Assignment blobs carried in JoinGroup/SyncGroup.

Every blob is an int16 version followed by the struct in the classic (non-flexible) encoding
(kafka-group-semantics §11). Fields are only ever appended, so a reader that meets a version
above its highest parses with its highest layout and ignores the trailing bytes, as the Java
client's ConsumerProtocol does; that keeps a newer client's metadata readable by the broker.
An empty Assignment (zero bytes) means "nothing assigned": the broker hands it out when the
leader gave a member no assignment.
"""

from __future__ import annotations

from mockbroker_protocol.errors import InvalidValueError, TruncatedError
from mockbroker_protocol.messages.consumer_protocol_assignment import (
    ConsumerProtocolAssignment,
    TopicPartition,
)
from mockbroker_protocol.messages.consumer_protocol_subscription import (
    ConsumerProtocolSubscription,
)
from mockbroker_protocol.messages.consumer_protocol_subscription import (
    TopicPartition as OwnedTopicPartition,
)
from mockbroker_protocol.primitives import INT16

SUBSCRIPTION_VERSIONS = ConsumerProtocolSubscription.SPEC.valid_versions
ASSIGNMENT_VERSIONS = ConsumerProtocolAssignment.SPEC.valid_versions

__all__ = [
    "ASSIGNMENT_VERSIONS",
    "SUBSCRIPTION_VERSIONS",
    "ConsumerProtocolAssignment",
    "ConsumerProtocolSubscription",
    "OwnedTopicPartition",
    "TopicPartition",
    "decode_assignment",
    "decode_subscription",
    "encode_assignment",
    "encode_subscription",
]


def _version(data: bytes, what: str) -> int:
    if len(data) < 2:
        raise TruncatedError(f"{what}: {len(data)} bytes, no room for the version")
    (version,) = INT16.unpack_from(data, 0)
    if version < 0:
        raise InvalidValueError(f"{what}: negative version {version}")
    return int(version)


def decode_subscription(data: bytes) -> tuple[int, ConsumerProtocolSubscription]:
    """Return (the version the blob declares, the subscription read at min(version, ours))."""
    version = _version(data, "ConsumerProtocolSubscription")
    read_as = min(version, SUBSCRIPTION_VERSIONS[1])
    return version, ConsumerProtocolSubscription.decode(data, read_as, 2)


def encode_subscription(subscription: ConsumerProtocolSubscription, version: int = SUBSCRIPTION_VERSIONS[1]) -> bytes:
    return INT16.pack(version) + subscription.encode(version)


def decode_assignment(data: bytes) -> tuple[int, ConsumerProtocolAssignment]:
    """Like decode_subscription; zero bytes decode as version -1 with nothing assigned."""
    if not data:
        return -1, ConsumerProtocolAssignment()
    version = _version(data, "ConsumerProtocolAssignment")
    read_as = min(version, ASSIGNMENT_VERSIONS[1])
    return version, ConsumerProtocolAssignment.decode(data, read_as, 2)


def encode_assignment(assignment: ConsumerProtocolAssignment, version: int = ASSIGNMENT_VERSIONS[1]) -> bytes:
    return INT16.pack(version) + assignment.encode(version)
