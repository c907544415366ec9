"""The event log as an internal topic, ``__mockbroker_events`` (docs/events.md "As a topic").

Each event recorded on the cluster's EventLog becomes one record: its value the event's JSON
(the same object as a line of the file sink), its key the group id (a transaction event's
transactional id; no key for a control event about no group), its timestamp the event's
``time_ms`` on the cluster clock (CreateTime). A keyed event goes to the partition Kafka's default
partitioner would choose (murmur2 of the key), so one group's events stay in order in one
partition; an unkeyed one goes to partition 0. With one partition (the default) the topic keeps
the cluster-wide order of ``seq``.

The broker writes the topic itself, as Kafka's coordinators write ``__consumer_offsets``: the
records are appended to the partition logs directly (clients get INVALID_TOPIC_EXCEPTION on
Produce, replica_manager.append_records), and the topic is marked internal, so Metadata lists it
with ``is_internal`` and clients leave it out unless asked for internal topics (Java's
``KafkaAdminClient.listTopics`` filters on the flag: ``ListTopicsOptions.listInternal``; the
consumer's ``exclude.internal.topics`` keeps pattern subscriptions off it). Retention is the
topic's ``retention.ms`` and ``retention.bytes``, enforced as for any topic.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from mockbroker.log.replica_manager import enforce_retention
from mockbroker_protocol.hashing import murmur2, to_positive
from mockbroker_protocol.records import SimpleRecord, build_batch
from mockbroker_protocol.records.batch import parse_batch_header

if TYPE_CHECKING:
    from mockbroker.config.cluster import Configured
    from mockbroker.events import Event
    from mockbroker.model import Topic

# As the file sink writes it (EventLog): compact separators, so a record's value is a file line.
_encode = json.JSONEncoder(separators=(",", ":")).encode


def event_key(event: Event) -> str | None:
    """The record key: the group, else the transactional id, else none."""
    if event.group_id is not None:
        return event.group_id
    txn = event.details.get("transactional_id")
    return txn if isinstance(txn, str) else None


class EventsTopicWriter:
    """Appends each event to the topic (an EventLog listener)."""

    def __init__(self, cluster: Configured, topic: Topic) -> None:
        self._cluster = cluster
        self._topic = topic

    def __call__(self, event: Event) -> None:
        key = event_key(event)
        key_bytes = None if key is None else key.encode()
        partitions = self._topic.partitions
        index = 0 if key_bytes is None else to_positive(murmur2(key_bytes)) % len(partitions)
        log = partitions[index].log
        batch = build_batch([SimpleRecord(key_bytes, _encode(event.to_json()).encode(), (), event.time_ms)])
        buffer = bytearray(batch)
        log.append(buffer, parse_batch_header(buffer))
        enforce_retention(self._cluster, self._topic, log, event.time_ms)
