"""The control API on KIP-848 consumer groups, with real clients through the pytest fixture:
confluent-kafka (librdkafka) consumers with group.protocol=consumer, each in its own process
(clients/group_member.py), against ``kafka_cluster``.

- ``wait_for_group`` on a 3-member consumer group until every member is reconciled to its target,
  and each client's own callbacks report what the broker assigned it; committed offsets.
- ``expire_session`` of one member: the client's next heartbeat is answered UNKNOWN_MEMBER_ID, it
  loses its partitions (its on_lost callback), rejoins with epoch 0 and gets partitions again.
- ``force_rebalance``: a new group epoch and target; every client moves to the new epoch (its
  next heartbeats carry it) without giving anything up, as the target did not change.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pytest

from mockbroker.control import ConsumerGroupSnapshot
from mockbroker.intercept import RequestRecord
from mockbroker.testing import KafkaCluster
from tests.integration.groups_support import Member, Members
from tests.integration.support import DEADLINE_S, wait_for

GROUP, TOPIC, PARTITIONS = "kip848-control", "orders", 6
HEARTBEAT = "ConsumerGroupHeartbeat"

pytestmark = pytest.mark.kafka_cluster(
    topics={TOPIC: PARTITIONS},
    # Members learn of a new target at their next heartbeat: a short interval keeps tests quick.
    group_consumer_heartbeat_interval_ms=200,
)


@pytest.fixture
def members(kafka_cluster: KafkaCluster) -> Iterator[Members]:
    with Members(kafka_cluster, GROUP, TOPIC) as started:  # type: ignore[arg-type]
        yield started


def start(members: Members, client_id: str) -> Member:
    return members.start("confluent", client_id, group_protocol="consumer")


def reconciled(kafka: KafkaCluster, members: Members, expected: Iterable[Member], **conditions: Any) -> ConsumerGroupSnapshot:
    """The group Stable with ``expected``, every member at its target (the broker's view), and
    then each client's own callbacks reporting what the broker assigned it."""
    expected = list(expected)
    snap = kafka.wait_for_group(GROUP, "Stable", members=len(expected), reconciled=True, timeout=DEADLINE_S, **conditions)
    assert isinstance(snap, ConsumerGroupSnapshot)
    assert {m.client_id for m in snap.members} == {m.client_id for m in expected}
    for member in expected:
        given = frozenset(snap.member(client_id=member.client_id).partitions(TOPIC))
        wait_for(
            lambda member=member, given=given: member.assignment == given,  # type: ignore[misc]
            f"{member.client_id}'s callbacks to report {sorted(given)}",
            members.explain,
        )
    owned = [p for m in snap.members for p in m.partitions(TOPIC)]
    assert sorted(owned) == list(range(PARTITIONS)), snap
    return snap


def request_mark(kafka: KafkaCluster) -> int:
    seen = kafka.requests()
    return seen[-1].seq if seen else 0


def heartbeats(kafka: KafkaCluster, client_id: str, since: int) -> list[RequestRecord]:
    return [r for r in kafka.requests(HEARTBEAT, client_id=client_id, since_seq=since) if r.outcome == "answered"]


def test_wait_for_a_three_member_consumer_group_and_its_commits(kafka_cluster: KafkaCluster, members: Members) -> None:
    started = [start(members, f"c{i}") for i in range(3)]
    snap = reconciled(kafka_cluster, members, started)
    assert (snap.type, snap.assignor, snap.group_epoch) == ("consumer", "uniform", snap.assignment_epoch)
    assert sorted(len(m.assigned[TOPIC]) for m in snap.members) == [2, 2, 2]
    assert all(m.member_epoch == snap.group_epoch and m.state == "STABLE" for m in snap.members)
    assert [(g.group_id, g.type, g.state) for g in kafka_cluster.groups().values()] == [(GROUP, "consumer", "Stable")]

    # Offsets committed by the members (OffsetCommit with their member epochs) are readable.
    kafka_cluster.produce(TOPIC, [{"value": f"v{p}", "partition": p} for p in range(PARTITIONS)])
    wait_for(lambda: sum(len(m.records()) for m in started) >= PARTITIONS, "every record consumed", members.explain)
    for member in started:
        assert member.commit()["event"] == "committed", member.explain()
    assert kafka_cluster.wait_for_commit(GROUP, TOPIC, offset=1, timeout=DEADLINE_S) == dict.fromkeys(range(PARTITIONS), 1)
    assert kafka_cluster.committed_offsets(GROUP) == {TOPIC: dict.fromkeys(range(PARTITIONS), 1)}


def test_expire_session_fences_the_member_and_it_rejoins_with_epoch_0(kafka_cluster: KafkaCluster, members: Members) -> None:
    started = [start(members, f"c{i}") for i in range(3)]
    before = reconciled(kafka_cluster, members, started)
    victim = started[0]
    lost_partitions = frozenset(before.member(client_id=victim.client_id).partitions(TOPIC))
    since_event, since_request, mark = kafka_cluster.last_event_seq(), request_mark(kafka_cluster), victim.mark()

    member_id = kafka_cluster.expire_session(GROUP, client_id=victim.client_id)
    assert member_id == before.member(client_id=victim.client_id).member_id
    (fenced,) = kafka_cluster.events("consumer_group.member_fenced", GROUP, since_seq=since_event)
    assert (fenced.member_id, fenced.details["cause"]) == (member_id, "session_timeout")

    # The client sees it at its next heartbeat, loses what it had, and rejoins with epoch 0.
    refused = kafka_cluster.wait_for_request(
        HEARTBEAT, since_seq=since_request, client_id=victim.client_id, error="UNKNOWN_MEMBER_ID", timeout=DEADLINE_S
    )
    lost = victim.wait_event("lost", since=mark)
    assert frozenset(lost["removed"]) == lost_partitions and lost["assignment"] == []
    rejoin = wait_for(
        lambda: next((r for r in heartbeats(kafka_cluster, victim.client_id, refused.seq) if r.request.member_epoch == 0), None),
        f"{victim.client_id} to rejoin with member epoch 0",
        members.explain,
    )
    assert not rejoin.error_codes
    after = reconciled(kafka_cluster, members, started, generation_at_least=before.group_epoch + 2)
    assert victim.of("assigned", since=mark), victim.explain()
    assert after.member(client_id=victim.client_id).member_epoch == after.group_epoch


def test_force_rebalance_moves_every_member_to_a_new_epoch(kafka_cluster: KafkaCluster, members: Members) -> None:
    started = [start(members, f"c{i}") for i in range(3)]
    before = reconciled(kafka_cluster, members, started)
    marks = {m.client_id: m.mark() for m in started}
    since_request = request_mark(kafka_cluster)

    assert kafka_cluster.force_rebalance(GROUP) == "Reconciling"
    forced = kafka_cluster.describe_group(GROUP)
    assert isinstance(forced, ConsumerGroupSnapshot)
    epoch = before.group_epoch + 1
    assert (forced.group_epoch, forced.assignment_epoch) == (epoch, epoch)
    assert forced.target_assignment(TOPIC) == before.assignment(TOPIC)  # uniform is sticky: same target

    after = reconciled(kafka_cluster, members, started, generation_at_least=epoch)
    assert after.assignment(TOPIC) == before.assignment(TOPIC)
    for member in started:
        # The client took the new epoch: its next heartbeats carry it.
        wait_for(
            lambda member=member: any(r.request.member_epoch == epoch for r in heartbeats(kafka_cluster, member.client_id, since_request)),  # type: ignore[misc]
            f"{member.client_id} to heartbeat at member epoch {epoch}",
            members.explain,
        )
        # and gave up nothing: its callbacks did not fire.
        assert member.of("assigned", "revoked", "lost", since=marks[member.client_id]) == []
