"""The share-group scenarios (KIP-932, "queues for Kafka"): share consumers of one partition, each
record acquired by one consumer at a time, acknowledged one by one (accept, release, reject),
redelivered when released or when its acquisition lock expires, and the AdminClient's share-group
offset calls.

A client takes part when its driver's hello says ``"share": true`` (the driver serves the
``share_subscribe`` and ``share_ack`` commands of docs/conformance.md); the others are "not
supported", with the reason in ``NO_SHARE_CONSUMER``. What the scenarios set up on the broker goes
through reference paths, never the client under test: the group's ``share.auto.offset.reset``
(control on mockbroker, a GROUP config through confluent-kafka's AdminClient elsewhere), and
DescribeShareGroupOffsets through mockbroker's own codec (``share_start_offset``).
"""

from __future__ import annotations

import asyncio
import socket
import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mockbroker_conformance.model import NotSupported, ScenarioFailed
from mockbroker_conformance.process import DriverProcess, Event, wait_for, wait_for_async

if TYPE_CHECKING:  # scenarios.py registers these scenarios: no import of it at run time
    from mockbroker_conformance.scenarios import Context

WAIT_S = 20.0  # one expected outcome, as in scenarios.py

# Why a client without a share consumer cannot run these (its driver's hello has no "share").
NO_SHARE_CONSUMER = {
    "kafka-python": "kafka-python has no share consumer (KIP-932)",
    "aiokafka": "aiokafka has no share consumer (KIP-932)",
    "kcat": "kcat has no share-consumer mode, and Debian's kcat links librdkafka 2.0.2, from before librdkafka's share consumer (2.16, preview)",
    "kafkajs": "kafkajs 2.2.4 has no share consumer (KIP-932)",
    "sarama": "sarama has no share consumer (KIP-932)",
    "ibm-sarama": "IBM/sarama 1.61.1 has no share consumer (KIP-932)",
}
# Why a client with a share consumer cannot run share-admin (its driver has no share_offsets op).
_CK_ADMIN = ("confluent-kafka 2.16.1's AdminClient has no share-group calls "
             "(no DescribeShareGroupOffsets, AlterShareGroupOffsets or DeleteShareGroupOffsets)")  # fmt: skip
_KGO_ADMIN = "the franz-go driver drives kgo alone, not franz-go's admin module (kadm): it has no admin commands"
NO_SHARE_ADMIN = {"confluent-kafka": _CK_ADMIN, "confluent-kafka/consumer": _CK_ADMIN,
                  "franz-go": _KGO_ADMIN, "franz-go/consumer": _KGO_ADMIN}  # fmt: skip
# librdkafka's mock cluster (2.16) does not serve what the scenarios set up and check through: IncrementalAlterConfigs fails there ("Failed while waiting for controller": its Metadata
# names controller 0, none of its brokers), so share.auto.offset.reset cannot be set, and it closes
# the connection on DescribeShareGroupOffsets.
NOT_ON_RDKAFKA_MOCK = ("librdkafka's mock cluster takes no GROUP config (share.auto.offset.reset: its IncrementalAlterConfigs "
                       "finds no controller) and does not serve DescribeShareGroupOffsets")  # fmt: skip
# On Kafka, the acquisition lock of the lock-expiry scenario's group (the group config
# share.record.lock.duration.ms; targets.KAFKA_GROUP_SETTINGS lowers the broker's minimum to allow it).
LOCK_DURATION_MS = 1000


# -- set-up through reference paths -------------------------------------------------------------


async def share_group(ctx: Context, records: int, **group_configs: str) -> tuple[str, str]:
    """A one-partition topic holding ``records`` seeded records, and a share group reading it from
    the earliest offset (Kafka's default share.auto.offset.reset, latest, would skip them)."""
    topic = await ctx.topic("t", 1)
    await seed_batches(ctx, topic, [f"share-{i}" for i in range(records)])
    group = ctx.group("sg")
    await ctx.cluster.alter_group_configs(group, {"share.auto.offset.reset": "earliest", **group_configs})
    return topic, group


async def seed_batches(ctx: Context, topic: str, values: list[str]) -> None:
    """Append each record in a batch of its own to partition 0. Kafka acquires whole batches in the
    share consumers' default acquire mode (share.acquire.mode=batch_optimized, KIP-1206), so records
    produced in one batch would all go to the first consumer that fetches, whatever its
    max.poll.records;
    control.produce on mockbroker writes a batch per call already."""
    if ctx.mockbroker is not None:
        await ctx.cluster.seed(topic, [(0, None, v) for v in values])
        return
    await asyncio.to_thread(_produce_one_by_one, ctx.cluster.bootstrap, topic, values)


def _produce_one_by_one(bootstrap: str, topic: str, values: list[str]) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 0, "client.id": "conformance-seed"})
    for v in values:
        producer.produce(topic, value=v.encode(), partition=0)
        if producer.flush(WAIT_S):
            raise ScenarioFailed(f"seeding {topic}: a record undelivered after {WAIT_S:.0f} s")


def share_start_offset(bootstrap: str, group: str, topic: str, partition: int = 0) -> tuple[int, int]:
    """(start offset, lag) of a share partition: FindCoordinator v4, then DescribeShareGroupOffsets
    v1 (KIP-932; the lag is KIP-1226's) to the group's coordinator, with mockbroker's codec."""
    from mockbroker_protocol.messages.describe_share_group_offsets import (
        DescribeShareGroupOffsetsRequest,
        DescribeShareGroupOffsetsRequestGroup,
        DescribeShareGroupOffsetsRequestTopic,
    )
    from mockbroker_protocol.messages.find_coordinator import FindCoordinatorRequest

    host, port = bootstrap.split(",")[0].rsplit(":", 1)
    found = _call(host, int(port), 10, 4, FindCoordinatorRequest(key_type=0, coordinator_keys=[group])).coordinators[0]
    if found.error_code:
        raise ScenarioFailed(f"FindCoordinator for share group {group}: error {found.error_code}")
    request = DescribeShareGroupOffsetsRequest(groups=[DescribeShareGroupOffsetsRequestGroup(
        group_id=group, topics=[DescribeShareGroupOffsetsRequestTopic(topic_name=topic, partitions=[partition])])])  # fmt: skip
    answer = _call(found.host, found.port, 90, 1, request).groups[0]
    if answer.error_code or not answer.topics:
        raise ScenarioFailed(f"DescribeShareGroupOffsets for {group}: error {answer.error_code} {answer.error_message}")
    p = answer.topics[0].partitions[0]
    if p.error_code:
        raise ScenarioFailed(f"DescribeShareGroupOffsets for {group} {topic}-{partition}: error {p.error_code}")
    return p.start_offset, p.lag


def _call(host: str, port: int, api_key: int, version: int, request: Any) -> Any:
    from mockbroker_protocol import registry
    from mockbroker_protocol.headers import RequestHeader

    with socket.create_connection((host, port), timeout=WAIT_S) as sock:
        sock.sendall(registry.encode_request(RequestHeader(api_key, version, 1, "conformance-reference"), request))
        size = struct.unpack(">i", _read(sock, 4))[0]
        return registry.decode_response(api_key, version, _read(sock, size))[1]


def _read(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ScenarioFailed("the broker closed the connection")
        data += chunk
    return data


async def wait_acknowledged(ctx: Context, group: str, topic: str, end: int) -> tuple[int, int]:
    """DescribeShareGroupOffsets after every record up to ``end`` was acknowledged or archived: on
    mockbroker, wait until the share-partition start offset is at ``end`` with lag 0. Kafka 4.3.1
    answers from the share state its share coordinator last wrote, which may lag behind the
    acknowledgements indefinitely (the start offset moves on a later write: docs/divergences.md,
    D21; a run showed start offset 0, lag 1 after every record was accepted), so elsewhere the
    answer need only be consistent: 0 <= start offset <= ``end``, 0 <= lag <= ``end`` - start."""
    seen: list[tuple[int, int]] = []
    exact = ctx.mockbroker is not None

    async def check() -> bool:
        seen.append(await asyncio.to_thread(share_start_offset, ctx.cluster.bootstrap, group, topic))
        start, lag = seen[-1]
        return (start, lag) == (end, 0) if exact else 0 <= start <= end and 0 <= lag <= end - start

    what = f"the share-partition start offset at {end}, lag 0" if exact else f"a start offset and lag within the {end} records"
    try:
        await wait_for_async(check, f"{what} (DescribeShareGroupOffsets)", WAIT_S)
    except ScenarioFailed as exc:
        raise ScenarioFailed(f"{exc}; it last answered (start offset, lag) {seen[-1:]}") from None
    return seen[-1]



async def admin(d: DriverProcess, op: str, **args: Any) -> Event:
    """One AdminClient operation of the driver (the ``admin`` command)."""
    return await d.call({"cmd": "admin", "op": op, **args}, "admin", WAIT_S)


# -- the share consumers of the client under test ------------------------------------------------


async def share_client(ctx: Context, role: str) -> DriverProcess:
    """A driver of the client under test; NotSupported unless it has a share consumer (and the
    target serves what the scenarios need). Called before any set-up, so that those cells cost a
    driver start at most."""
    if ctx.cluster.kind == "rdkafka-mock":
        raise NotSupported(NOT_ON_RDKAFKA_MOCK)
    d = await ctx.spawn(role)
    if not d.hello.get("share"):
        raise NotSupported(NO_SHARE_CONSUMER.get(ctx.client.name, f"the {ctx.client.name} driver has no share consumer"))
    return d


async def subscribe(d: DriverProcess, topic: str, group: str, **extra: Any) -> DriverProcess:
    await d.call({"cmd": "share_subscribe", "topic": topic, "group": group, **extra}, "subscribed", WAIT_S)
    return d


async def share_member(ctx: Context, role: str, topic: str, group: str, **extra: Any) -> DriverProcess:
    return await subscribe(await share_client(ctx, role), topic, group, **extra)


def delivered(d: DriverProcess, since: int = 0) -> list[Event]:
    """The records a share consumer acquired, each delivery an event (offset, delivery_count)."""
    return d.find(lambda e: e.get("event") == "share_record", since)


def offsets(events: list[Event]) -> list[tuple[int, int]]:
    return [(e["offset"], e["delivery_count"]) for e in events]


async def ack(d: DriverProcess, acks: list[tuple[int, str]]) -> None:
    """Acknowledge offsets of partition 0 (accept, release, reject) and commit them (commitSync)."""
    done = await d.call({"cmd": "share_ack", "acks": [[0, o, kind] for o, kind in acks]}, "share_acked", WAIT_S)
    if done.get("errors"):
        raise ScenarioFailed(f"acknowledging {acks} failed: {done['errors']}")


async def wait_delivered(d: DriverProcess, count: int, what: str, since: int = 0) -> list[Event]:
    await wait_for(lambda: len(delivered(d, since)) >= count, what, WAIT_S, d)
    return delivered(d, since)


async def acknowledge_as_delivered(d: DriverProcess, kind: Callable[[int, int], str], enough: Callable[[list[tuple[int, int]]], bool],
                                   what: str, since: int = 0) -> list[tuple[int, int]]:
    """Acknowledge each delivery as it arrives, ``kind(offset, delivery count)`` saying how, until
    ``enough(deliveries)``; returns the (offset, delivery count) of every delivery. A driver
    holding unacknowledged records polls no more, so however the client splits the records
    between polls, each poll's are acknowledged before the next."""
    done = [0]
    while True:
        got = delivered(d, since)
        if new := got[done[0]:]:
            # Every delivery is acknowledged before returning, also one that arrived while the
            # previous acknowledgement was on its way: a record left held would stop the driver
            # polling, and its acknowledgement would never reach the broker.
            done[0] += len(new)
            await ack(d, [(e["offset"], kind(e["offset"], e["delivery_count"])) for e in new])
            continue
        if enough(offsets(got)):
            return offsets(got)
        await wait_for(lambda: len(delivered(d, since)) > done[0], what, WAIT_S, d)


async def accept_until(d: DriverProcess, count: int, what: str, since: int = 0) -> list[tuple[int, int]]:
    """Accept records as they arrive until ``count`` came."""
    return await acknowledge_as_delivered(d, lambda o, n: "accept", lambda got: len(got) >= count, what, since)


# -- the scenarios -------------------------------------------------------------------------------

SHARED_RECORDS = 30


async def share_consume(ctx: Context) -> None:
    """Three share consumers of one partition (at most 4 records a poll): all three hold records
    at once, none a record another holds; every record is delivered once (delivery count 1) and
    accepted; DescribeShareGroupOffsets then puts the start offset at the end with no lag."""
    first = await share_client(ctx, "a")
    topic, group = await share_group(ctx, SHARED_RECORDS)
    members = [first, *await asyncio.gather(share_client(ctx, "b"), share_client(ctx, "c"))]
    await asyncio.gather(*(subscribe(d, topic, group, max_records=4) for d in members))
    await wait_for(lambda: all(delivered(d) for d in members), "all three consumers holding records at once", WAIT_S, *members)
    held = [{o for o, _ in offsets(delivered(d))} for d in members]
    if held[0] & held[1] or held[0] & held[2] or held[1] & held[2]:
        raise ScenarioFailed(f"records held by two consumers at once: {[sorted(h) for h in held]}")
    acked = [0, 0, 0]  # how many of each consumer's deliveries were acknowledged

    async def accept_held(i: int) -> None:
        new = delivered(members[i])[acked[i]:]
        acked[i] += len(new)
        if new:
            await ack(members[i], [(e["offset"], "accept") for e in new])

    def total() -> int:
        return sum(len(delivered(d)) for d in members)

    while total() < SHARED_RECORDS:
        await asyncio.gather(*(accept_held(i) for i in range(3)))
        await wait_for(lambda: total() > sum(acked) or total() >= SHARED_RECORDS, "more records", WAIT_S, *members)
    await asyncio.gather(*(accept_held(i) for i in range(3)))
    got = sorted(o for d in members for o in offsets(delivered(d)))
    if got != [(o, 1) for o in range(SHARED_RECORDS)]:
        raise ScenarioFailed(f"(offset, delivery count) delivered: {got}; expected each of 0..{SHARED_RECORDS - 1} once, count 1")
    await wait_acknowledged(ctx, group, topic, SHARED_RECORDS)


async def share_release_redeliver(ctx: Context) -> None:
    """Release one record and accept the others: the released one comes back, delivery count 2."""
    d = await share_client(ctx, "a")
    topic, group = await share_group(ctx, 3)
    await subscribe(d, topic, group)
    # Offset 0 released on its first delivery, everything else accepted.
    got = await acknowledge_as_delivered(d, lambda o, n: "release" if (o, n) == (0, 1) else "accept",
                                         lambda got: len(got) >= 4, "the 3 records, and offset 0 again once released")  # fmt: skip
    if sorted(got) != [(0, 1), (0, 2), (1, 1), (2, 1)]:
        raise ScenarioFailed(f"deliveries (offset, delivery count) {got}: expected 0, 1, 2 with count 1, then 0 again with count 2")
    await wait_acknowledged(ctx, group, topic, 3)


async def share_reject_archive(ctx: Context) -> None:
    """Reject a record: it is archived, never delivered again, while records produced after it are."""
    d = await share_client(ctx, "a")
    topic, group = await share_group(ctx, 3)
    await subscribe(d, topic, group)
    first = await acknowledge_as_delivered(d, lambda o, n: "reject" if o == 0 else "accept", lambda got: len(got) >= 3, "the 3 records")
    if first != [(0, 1), (1, 1), (2, 1)]:
        raise ScenarioFailed(f"first deliveries (offset, delivery count) {first}, expected 0, 1, 2 with count 1")
    mark = d.mark()
    await seed_batches(ctx, topic, ["later-3", "later-4"])
    later = await accept_until(d, 2, "the 2 records produced after the rejection", mark)
    if later != [(3, 1), (4, 1)]:
        raise ScenarioFailed(f"after rejecting offset 0, delivered {later}; expected only offsets 3 and 4 (count 1)")
    await wait_acknowledged(ctx, group, topic, 5)


async def share_lock_expiry(ctx: Context) -> None:
    """A consumer acquires a record and crashes (SIGKILL: no acknowledgement, no leave): once the
    record's acquisition lock expires (control's expire_acquisition_lock on mockbroker; a 1 s
    share.record.lock.duration.ms group config on Kafka, well inside the crashed member's session)
    another consumer gets it, delivery count 2. (A holder left running would not do: the Java
    client fetches ahead in the background and may acquire the record again itself.)"""
    mockbroker = ctx.mockbroker
    configs = {} if mockbroker is not None else {"share.record.lock.duration.ms": str(LOCK_DURATION_MS)}
    holder = await share_client(ctx, "holder")
    topic, group = await share_group(ctx, 1, **configs)
    await subscribe(holder, topic, group)
    first = await wait_delivered(holder, 1, "the record, first delivery")
    if offsets(first) != [(0, 1)]:
        raise ScenarioFailed(f"first delivery {offsets(first)}, expected offset 0 with count 1")
    await ctx.crash(holder)
    if mockbroker is not None:
        expired = await mockbroker.expire_acquisition_lock(group, topic, 0, [0])
        if expired != [0]:
            raise ScenarioFailed(f"control expired the locks of {expired}, expected [0]")
    other = await share_member(ctx, "other", topic, group)
    again = await wait_delivered(other, 1, "the record again, to the other consumer, once its lock expired")
    if offsets(again) != [(0, 2)]:
        raise ScenarioFailed(f"the other consumer got {offsets(again)}, expected offset 0 with delivery count 2")
    await ack(other, [(0, "accept")])


async def share_admin(ctx: Context) -> None:
    """The AdminClient's share-group calls: alter the start offset of a group not yet made (it is
    created empty), list it (with the lag), a share consumer starts there, the group described
    (Empty once it left), its offsets deleted, the group deleted."""
    d = await share_client(ctx, "admin")
    if "share_offsets" not in (d.hello.get("admin_ops") or []):
        raise NotSupported(NO_SHARE_ADMIN.get(ctx.client.name, f"the {ctx.client.name} driver has no share-group admin calls"))
    topic, group = await share_group(ctx, 4)
    key = f"{topic}:0"
    await admin(d, "alter_share_offsets", group=group, topic=topic, offsets={"0": 2})
    listed = await admin(d, "share_offsets", group=group)
    _expect("the share group's offsets", (listed["start_offsets"], listed["lags"]), ({key: 2}, {key: 2}))
    c = await share_member(ctx, "consumer", topic, group)
    got = await accept_until(c, 2, "the records from the altered start offset")
    if got != [(2, 1), (3, 1)]:
        raise ScenarioFailed(f"the consumer got {got}, expected offsets 2 and 3 (the altered start offset 2)")
    await c.close(WAIT_S)

    async def empty() -> bool:
        described = await admin(d, "describe_share_groups", groups=[group])
        return bool(described["groups"] == {group: {"state": "EMPTY", "members": 0}})

    await wait_for_async(empty, f"describe_share_groups: {group} EMPTY with no members", WAIT_S)
    await admin(d, "delete_share_offsets", group=group, topic=topic)
    _expect("the offsets after delete_share_offsets", (await admin(d, "share_offsets", group=group))["start_offsets"], {})
    deleted = await admin(d, "delete_share_groups", groups=[group])
    _expect("delete_share_groups", (deleted["deleted"], deleted["errors"]), ([group], {}))
    again = await admin(d, "delete_share_groups", groups=[group])
    _expect("a second delete_share_groups", again["errors"], {group: "GroupIdNotFoundException"})


def _expect(what: str, got: Any, want: Any) -> None:
    if got != want:
        raise ScenarioFailed(f"{what}: {got!r}, expected {want!r}")
