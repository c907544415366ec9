"""Where coordinators live: shared by FindCoordinator and the group APIs (not a handler module;
the leading underscore keeps it out of the handler table).

Kafka places every coordinator on the leader of one partition of an internal topic, chosen by
``Utils.abs(key.hashCode()) % partitions``:
- group id: ``__consumer_offsets``, offsets.topic.num.partitions (GroupCoordinatorService.partitionFor);
- transactional id: ``__transaction_state``, transaction.state.log.num.partitions
  (TransactionStateManager.partitionFor);
- share-partition key ``groupId:topicId:partition``: ``__share_group_state``,
  share.coordinator.state.topic.num.partitions (ShareCoordinatorService.partitionFor, KIP-932).
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import TYPE_CHECKING

from mockbroker_protocol.hashing import partition_for

if TYPE_CHECKING:
    from mockbroker.dispatch.context import RequestContext
    from mockbroker.model import BrokerNode
    from mockbroker.state import ClusterState

# Integer.parseInt: an optional sign, then ASCII digits (no spaces, no underscores).
_JAVA_INT = re.compile(r"^[+-]?[0-9]+$")
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1


def group_coordinator(cluster: ClusterState, group_id: str) -> BrokerNode:
    return cluster.coordinator_for(group_id)


def transaction_coordinator(cluster: ClusterState, transactional_id: str) -> BrokerNode:
    return cluster.transaction_coordinator_for(transactional_id)


def share_coordinator(cluster: ClusterState, coordinator_key: str) -> BrokerNode:
    """``coordinator_key`` as share_coordinator_key returns it (already normalised)."""
    partition = partition_for(coordinator_key, cluster.config.share_coordinator_state_topic_num_partitions)
    return cluster.internal_partition_leader(partition)


def share_coordinator_key(key: str) -> str | None:
    """SharePartitionKey.getInstance(key).asCoordinatorKey(), or None where Kafka's validate()
    throws (FindCoordinator then answers INVALID_REQUEST for that key).

    The key is ``groupId:topicId:partition`` split from the right, so a group id may itself
    contain colons; the group id must not be blank, the topic id must be a Kafka Uuid (22-char
    URL-safe base64) and the partition a Java int. The hash is taken over the re-formatted key.
    """
    parts = key.rsplit(":", 2)
    if len(parts) != 3:
        return None
    group_id, topic_id, partition = parts
    if not group_id.strip():
        return None
    uuid_bytes = _kafka_uuid_bytes(topic_id)
    if uuid_bytes is None or not _JAVA_INT.match(partition):
        return None
    index = int(partition)
    if not _INT32_MIN <= index <= _INT32_MAX:
        return None
    # Uuid.toString: URL-safe base64 without padding.
    canonical = base64.urlsafe_b64encode(uuid_bytes).decode().rstrip("=")
    return f"{group_id}:{canonical}:{index}"


def _kafka_uuid_bytes(text: str) -> bytes | None:
    """Uuid.fromString: URL-safe base64 (padding optional) decoding to exactly 16 bytes."""
    if len(text) > 24:
        return None
    try:
        raw = base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw if len(raw) == 16 else None


def is_group_coordinator(ctx: RequestContext, group_id: str) -> bool:
    """True when the broker ``ctx`` serves leads the group's __consumer_offsets partition; the
    group APIs answer NOT_COORDINATOR everywhere else (NotCoordinatorException from the runtime)."""
    # group_coordinator, inlined: every group request asks this.
    return ctx.cluster.coordinator_for(group_id).node_id == ctx.broker.node_id
