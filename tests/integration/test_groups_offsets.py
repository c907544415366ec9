"""Committed offsets with real clients (kafka-python, aiokafka, confluent-kafka, each member in its
own process) over loopback against a 3-broker cluster.

- Committed offsets survive rebalances: after a member joins and after one leaves, the next
  owner of each partition reads the committed offset (OffsetFetch) and resumes from it, never
  from the beginning.
- A commit carrying a stale generation is refused with ILLEGAL_GENERATION, and the client
  surfaces it as its own illegal-generation error. Two real ways a client sends one:
  - aiokafka and confluent-kafka let the application commit while the member rejoins: the
    OffsetCommit, built with the old generation, queues on the coordinator connection behind the
    member's parked JoinGroup, and the coordinator reads it only once that JoinGroup is answered,
    that is after the generation moved on (Kafka handles a connection's requests one at a time,
    and so does mockbroker). Deterministic: another member holds the rebalance open until the
    client has built its commit.
  - kafka-python refuses to commit while it rejoins, so its stale commit comes from a static
    member that missed a rebalance: the coordinator completes the join without an absent static
    member and keeps it, with the generation it knew (kafka-group-semantics §3.7). The member
    learns of rebalances only from heartbeats, and its heartbeat interval is long (29 s): it commits
    a few seconds after its join, long before its first heartbeat.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.groups_support import (
    CLIENTS,
    GroupView,
    Member,
    Members,
    check_wire,
    committed_offsets,
    explain_group,
    group_broker,
    group_events,
    group_state,
    produce,
    settle,
    wait_for,
)
from tests.integration.support import BrokerThread

PARTITIONS = 12
ILLEGAL_GENERATION = 22


@pytest.fixture
def broker() -> Iterator[BrokerThread]:
    yield from group_broker()


def consumed_by_partition(members: list[Member], since: dict[str, int]) -> dict[int, list[int]]:
    """Offsets each partition delivered to the members since their marks, in delivery order."""
    out: dict[int, list[int]] = {}
    for m in members:
        for r in m.records(since=since.get(m.client_id, 0)):
            out.setdefault(r["partition"], []).append(r["offset"])
    return out


def wait_consumed(members: Members, consumers: list[Member], since: dict[str, int], want: dict[int, list[int]]) -> None:
    """Wait until exactly the offsets ``want`` (per partition) have been delivered since the marks,
    each once, by the partition's current owner."""

    def done() -> bool:
        got = consumed_by_partition(consumers, since)
        return all(len(got.get(p, [])) >= len(offsets) for p, offsets in want.items())

    wait_for(done, f"the members to consume {sum(len(v) for v in want.values())} records", members.explain)
    got = consumed_by_partition(consumers, since)
    assert {p: sorted(v) for p, v in got.items()} == want, "records consumed twice, or from the wrong offset"


@pytest.mark.parametrize("client", CLIENTS)
def test_committed_offsets_survive_rebalances(broker: BrokerThread, client: str) -> None:
    topic, group = f"offsets-{client}", f"offsets-{client}"
    broker.create_topic(topic, PARTITIONS)
    with Members(broker, group, topic) as members:
        m1 = members.start(client, f"{client}-1")
        m2 = members.start(client, f"{client}-2")
        active = [m1, m2]
        view = settle(broker, members, active, PARTITIONS)
        check_wire(client, broker, group, topic)
        # Produced once the group is stable, so no partition changes hands while being read.
        produce(broker.bootstrap_servers, topic, 5, PARTITIONS, "first")
        # Nothing was committed yet: every partition is read from the beginning, once.
        wait_consumed(members, active, {}, {p: list(range(5)) for p in range(PARTITIONS)})
        for m in active:
            assert m.commit()["event"] == "committed"
        assert committed_offsets(broker, group, topic) == dict.fromkeys(range(PARTITIONS), 5)

        # A third member joins. Each partition's owner after the rebalance sees the offset its
        # previous owner committed, and resumes from it.
        m3 = members.start(client, f"{client}-3")
        active = [m1, m2, m3]
        marks = {m.client_id: m.mark() for m in active}
        view = settle(broker, members, active, PARTITIONS)
        check_wire(client, broker, group, topic)
        for m in active:
            mine = view.by_client_id()[m.client_id].assignment
            assert m.fetch_committed(mine) == dict.fromkeys(mine, 5), m.client_id
        produce(broker.bootstrap_servers, topic, 3, PARTITIONS, "second")
        wait_consumed(members, active, marks, {p: [5, 6, 7] for p in range(PARTITIONS)})
        for m in active:
            mine = view.by_client_id()[m.client_id].assignment
            seen = {r["partition"] for r in m.records(since=marks[m.client_id])}
            assert seen <= mine, f"{m.client_id} consumed partitions {sorted(seen - mine)} it does not own"
        for m in active:
            assert m.commit()["event"] == "committed"
        assert committed_offsets(broker, group, topic) == dict.fromkeys(range(PARTITIONS), 8)

        # One leaves; the survivors take its partitions and resume from its commits.
        m1.close()
        active = [m2, m3]
        marks = {m.client_id: m.mark() for m in active}
        view = settle(broker, members, active, PARTITIONS)
        check_wire(client, broker, group, topic)
        produce(broker.bootstrap_servers, topic, 2, PARTITIONS, "third")
        wait_consumed(members, active, marks, {p: [8, 9] for p in range(PARTITIONS)})
        for m in active:
            mine = view.by_client_id()[m.client_id].assignment
            assert m.fetch_committed(mine) == dict.fromkeys(mine, 8), m.client_id


def assert_illegal_generation(client: str, event: dict[str, object]) -> None:
    """The commit failed, and the client said why in its own terms: kafka-python and aiokafka
    raise CommitFailedError caused by IllegalGenerationError, confluent-kafka a KafkaException
    carrying ILLEGAL_GENERATION."""
    assert event["event"] == "commit_failed", f"the stale commit was accepted: {event}"
    if client == "confluent":
        assert (event["error"], event["code"]) == ("ILLEGAL_GENERATION", ILLEGAL_GENERATION), event
    else:
        assert (event["error"], event.get("cause")) == ("CommitFailedError", "IllegalGenerationError"), event


def commit_once_settled(broker: BrokerThread, members: Members, member: Member, expected: list[Member]) -> GroupView:
    """Once the group has settled, ``member`` commits offset 1 for one of its partitions, and the
    coordinator stores it. A member that just failed a commit may rejoin, and so move the group
    on again, after the group looked settled: then settle and commit again (a bounded number of
    times), as an application retries a commit that met a rebalance."""
    failures = []
    for _ in range(5):
        view = settle(broker, members, expected, PARTITIONS)
        mine = min(view.by_client_id()[member.client_id].assignment)
        result = member.commit({mine: 1})
        if result["event"] == "committed":
            assert committed_offsets(broker, members.group, members.topic).get(mine) == 1
            return view
        failures.append(result)
    pytest.fail(f"{member.client_id} could not commit once the group settled: {failures}\n{members.explain()}")


def assert_rejected_as_stale(broker: BrokerThread, group: str, member_id: str, generation: int) -> None:
    """The coordinator's own account: it refused member_id's commit for carrying ``generation``."""
    rejected = [
        (e.details.get("error"), e.details.get("request_generation_id"))
        for e in group_events(broker, group)
        if e.type == "offset.commit_rejected" and e.member_id == member_id
    ]
    assert ("ILLEGAL_GENERATION", generation) in rejected, f"commits of {member_id} rejected: {rejected}"


@pytest.mark.parametrize("client", ["aiokafka", "confluent"])
def test_commit_queued_behind_a_rejoin_carries_a_stale_generation(broker: BrokerThread, client: str) -> None:
    topic, group = f"stale-{client}", f"stale-{client}"
    broker.create_topic(topic, PARTITIONS)
    with Members(broker, group, topic) as members:
        a = members.start(client, f"{client}-a")
        b = members.start(client, f"{client}-b")
        view = settle(broker, members, [a, b], PARTITIONS)
        check_wire(client, broker, group, topic)
        generation = view.generation_id
        a_id, b_id = view.by_client_id()[a.client_id].member_id, view.by_client_id()[b.client_id].member_id
        partition = min(view.by_client_id()[a.client_id].assignment)

        # b stops rejoining; a newcomer starts a rebalance; a rejoins and its JoinGroup parks,
        # waiting for b.
        b.send("pause")
        c = members.start(client, f"{client}-c")

        def a_parked_b_not() -> bool:
            state = group_state(broker, group, topic)
            return (
                state is not None
                and state.state == "PreparingRebalance"
                and state.generation_id == generation
                and a_id in state.awaiting_join
                and b_id not in state.awaiting_join
            )

        wait_for(a_parked_b_not, "a to rejoin while b holds the rebalance open",
                 lambda: explain_group(broker, group, topic, members))
        # a commits now: its client builds the OffsetCommit with the generation it still has...
        since = a.mark()
        a.send("commit", offsets={str(partition): 1})
        sent = a.wait_event("commit_sent", since=since)
        assert sent["generation"] == generation, f"{sent}\n{explain_group(broker, group, topic, members)}"
        # ...and the request waits behind a's parked JoinGroup until b rejoins and the join completes.
        b.send("resume")
        result = wait_for(
            lambda: next(iter(a.of("committed", "commit_failed", since=since)), None),
            "a's commit to be answered", members.explain,
        )
        assert_illegal_generation(client, result)
        assert partition not in committed_offsets(broker, group, topic), "the stale commit was stored"
        assert_rejected_as_stale(broker, group, a_id, generation)

        # The group recovers, and a commit with the current generation goes through.
        after = commit_once_settled(broker, members, a, [a, b, c])
        assert after.generation_id > generation
        check_wire(client, broker, group, topic)


def test_absent_static_member_commits_with_a_stale_generation(broker: BrokerThread) -> None:
    client = "kafka-python"
    topic, group = f"stale-{client}", f"stale-{client}"
    broker.create_topic(topic, PARTITIONS)
    # How long the coordinator waits for a before completing the join without it, and then how
    # long it waits for a's SyncGroup: a's stale commit must arrive within that second window.
    rebalance_timeout_ms = 6000
    with Members(broker, group, topic) as members:
        a = members.start(
            client, f"{client}-a",
            instance_id="stale-a",
            session_timeout_ms=30000,
            heartbeat_interval_ms=29000,
            rebalance_timeout_ms=rebalance_timeout_ms,
        )  # fmt: skip
        view = settle(broker, members, [a], PARTITIONS)
        check_wire(client, broker, group, topic)
        generation = view.generation_id
        a_id = view.by_client_id()[a.client_id].member_id
        partition = min(view.by_client_id()[a.client_id].assignment)
        # b joins: the coordinator waits for a to rejoin (a hears nothing until its first
        # heartbeat), gives up after the rebalance timeout and completes the join keeping a,
        # which is static, in the next generation.
        since = a.mark()
        b = members.start(client, f"{client}-b", rebalance_timeout_ms=rebalance_timeout_ms)

        def moved_on_with_a() -> bool:
            state = group_state(broker, group, topic)
            return (
                state is not None
                and state.generation_id > generation
                and a_id in state.by_member_id()
                and b.client_id in state.by_client_id()
            )

        wait_for(moved_on_with_a, "the join to complete without a, keeping it",
                 lambda: explain_group(broker, group, topic, members))
        assert not a.of("revoked", since=since), f"a rejoined\n{explain_group(broker, group, topic, members)}"
        result = a.commit({partition: 1})
        assert_illegal_generation(client, result)
        assert partition not in committed_offsets(broker, group, topic), "the stale commit was stored"
        assert_rejected_as_stale(broker, group, a_id, generation)

        # The group recovers: a rejoins (kafka-python does after the failed commit), both own
        # partitions again, and a commit with the current generation goes through.
        commit_once_settled(broker, members, a, [a, b])
        check_wire(client, broker, group, topic)
