"""Mixed groups (kafka-group-semantics §10.8), pure coordinator on a ManualClock: classic members
inside a consumer group (JoinGroup, SyncGroup, Heartbeat, LeaveGroup and their errors, timers,
offsets), group.consumer.migration.policy, online upgrade and online downgrade."""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker.config.cluster import ClusterConfig
from mockbroker.config.groups import GroupConfig
from mockbroker.coordinators.parked import Parked
from mockbroker_protocol.consumer_protocol import (
    ConsumerProtocolAssignment,
    ConsumerProtocolSubscription,
    OwnedTopicPartition,
    TopicPartition,
    decode_assignment,
    encode_assignment,
    encode_subscription,
)
from mockbroker_protocol.errors import ErrorCode
from mockbroker_protocol.messages.join_group import JoinGroupResponse
from mockbroker_protocol.messages.sync_group import SyncGroupResponse
from tests.mockbroker.coordinators.consumer_groups_support import ConsumerHarness, Parts

SESSION = 10_000  # the classic members' session timeout (Harness.join's default)
REBALANCE = 60_000  # their rebalance timeout


def metadata(owned: Parts | None = None, topics: tuple[str, ...] = ("t",), version: int = 1) -> bytes:
    sub = ConsumerProtocolSubscription(
        topics=list(topics), owned_partitions=[OwnedTopicPartition(t, ps) for t, ps in (owned or {}).items()]
    )
    return encode_subscription(sub, version)


class MixedHarness(ConsumerHarness):
    def cjoin(self, member_id: str = "", *, owned: Parts | None = None, protocols: tuple[str, ...] = ("range",),
              instance: str | None = None, version: int = 9, group_id: str = "g", **kwargs: Any) -> JoinGroupResponse:  # fmt: skip
        """A classic JoinGroup; a new dynamic member goes through MEMBER_ID_REQUIRED first."""
        meta = metadata(owned)
        response = self.join(group_id, member_id, protocols=tuple((p, meta) for p in protocols), instance=instance,
                             version=version, **kwargs)  # fmt: skip
        assert isinstance(response, JoinGroupResponse), response
        if response.error_code == ErrorCode.MEMBER_ID_REQUIRED and not member_id:
            return self.cjoin(response.member_id, owned=owned, protocols=protocols, instance=instance, version=version,
                              group_id=group_id, **kwargs)  # fmt: skip
        return response

    def csync(self, member_id: str, generation: int, **kwargs: Any) -> SyncGroupResponse:
        response = self.sync("g", member_id, generation, **kwargs)
        assert isinstance(response, SyncGroupResponse), response
        return response

    def synced(self, response: SyncGroupResponse) -> Parts:
        assert response.error_code == ErrorCode.NONE, response
        _, assignment = decode_assignment(response.assignment)
        return {tp.topic: sorted(tp.partitions) for tp in assignment.assigned_partitions}

    def classic_round(self, member_id: str, owned: Parts) -> Parts:
        """Rejoin with what it owns, then sync; returns what it owns afterwards."""
        joined = self.cjoin(member_id, owned=owned)
        assert joined.error_code == ErrorCode.NONE, joined
        synced = self.csync(member_id, joined.generation_id)
        if synced.error_code == ErrorCode.REBALANCE_IN_PROGRESS:
            return owned
        return self.synced(synced)


def owners(*assignments: Parts) -> dict[tuple[str, int], int]:
    seen: dict[tuple[str, int], int] = {}
    for parts in assignments:
        for t, ps in parts.items():
            for p in ps:
                seen[(t, p)] = seen.get((t, p), 0) + 1
    return seen


# -- group.consumer.migration.policy ---------------------------------------------------------------------------


def test_migration_policy_setting() -> None:
    assert GroupConfig().consumer_group_migration_policy == "bidirectional"  # Kafka 4.x's default
    for name, upgrade, downgrade in [("bidirectional", True, True), ("UPGRADE", True, False),
                                     ("downgrade", False, True), ("disabled", False, False)]:  # fmt: skip
        config = GroupConfig.from_cluster_config(ClusterConfig.from_kafka({"group.consumer.migration.policy": name}))
        assert config.consumer_group_migration_policy == name.lower()
        assert (config.is_upgrade_enabled, config.is_downgrade_enabled) == (upgrade, downgrade)
    with pytest.raises(ValueError, match=r"group\.consumer\.migration\.policy must be one of"):
        ClusterConfig.from_kafka({"group.consumer.migration.policy": "both"})


# -- classic members inside a consumer group --------------------------------------------------------------------


def test_classic_join_to_a_consumer_group_is_served_by_the_consumer_engine() -> None:
    h = MixedHarness()
    h.cg_join("a")
    first = h.join("g", version=9)
    assert isinstance(first, JoinGroupResponse) and first.error_code == ErrorCode.MEMBER_ID_REQUIRED  # KIP-394
    assert first.member_id and "g" in h.consumer.groups and first.member_id not in h.cgroup().members
    joined = h.cjoin(first.member_id, protocols=("cooperative-sticky", "range"))
    group = h.cgroup()
    assert joined.error_code == ErrorCode.NONE
    assert (joined.leader, joined.members, joined.protocol_type) == ("", [], "consumer")
    assert joined.protocol_name == "cooperative-sticky"  # the member's first protocol
    assert joined.generation_id == group.members[joined.member_id].member_epoch == group.group_epoch == 3
    member = h.member(joined.member_id)
    assert (member["protocol"], member["session_timeout_ms"], member["subscribed_topic_names"]) == ("classic", SESSION, ["t"])
    described = {m.member_id: m.member_type for m in h.consumer.consumer_group_describe("g").members}
    assert described == {"a": 1, joined.member_id: 0}


def test_v3_join_needs_no_member_id_round_trip_and_a_static_member_joins_at_once() -> None:
    h = MixedHarness()
    h.cg_join("a")
    assert h.cjoin(version=3).error_code == ErrorCode.NONE
    static = h.join("g", instance="i1", version=9)
    assert isinstance(static, JoinGroupResponse) and static.error_code == ErrorCode.NONE
    assert h.cgroup().static_members["i1"] == static.member_id


def test_classic_and_consumer_members_converge_to_exactly_once_ownership() -> None:
    h = MixedHarness()
    h.cg_join("a")
    c = h.cjoin().member_id
    owned_a: Parts = {}
    owned_c: Parts = {}
    for _ in range(6):
        response = h.cg_heartbeat("a", h.member("a")["member_epoch"], owned_a)
        given = h.owned(response)
        if given is not None:
            owned_a = {t: ps for t, ps in given.items() if ps}
        if h.heartbeat("g", c, h.member(c)["member_epoch"]) == ErrorCode.REBALANCE_IN_PROGRESS:
            owned_c = h.classic_round(c, owned_c)
    assert h.snap()["state"] == "Stable"
    assert owners(owned_a, owned_c) == {("t", p): 1 for p in range(6)}
    assert owned_c == h.member(c)["assigned"] and owned_a == h.member("a")["assigned"]


def test_sync_group_returns_the_server_computed_assignment() -> None:
    h = MixedHarness({"t": 6, "u": 2})
    h.cg_join("a", topics=["u"])  # the consumer member keeps off t
    joined = h.cjoin()
    synced = h.csync(joined.member_id, joined.generation_id)
    assert (synced.protocol_type, synced.protocol_name) == ("consumer", "range")
    assert h.synced(synced) == h.member(joined.member_id)["assigned"] == {"t": [0, 1, 2, 3, 4, 5]}
    _, encoded = decode_assignment(synced.assignment)
    assert synced.assignment[:2] == b"\x00\x01"  # the version of the member's subscription (v1)
    assert encoded.user_data is None


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"protocol_type": "connect"}, ErrorCode.INCONSISTENT_GROUP_PROTOCOL),
        ({"protocols": ()}, ErrorCode.INCONSISTENT_GROUP_PROTOCOL),
    ],
)
def test_join_protocol_checks(kwargs: dict[str, Any], error: ErrorCode) -> None:
    h = MixedHarness()
    h.cg_join("a")
    protocols = kwargs.pop("protocols", None)
    response = h.join("g", "m", **({"protocols": protocols} if protocols is not None else {}), **kwargs)
    assert isinstance(response, JoinGroupResponse) and response.error_code == error
    assert response.member_id == "m" and "m" not in h.cgroup().members


def test_protocols_must_be_supported_by_every_classic_member() -> None:
    h = MixedHarness()
    h.cg_join("a")
    h.cjoin(protocols=("range", "roundrobin"))
    assert h.cjoin("x", protocols=("sticky",)).error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert h.cjoin("y", protocols=("sticky", "roundrobin")).error_code == ErrorCode.NONE


def test_disabled_policy_refuses_classic_joins_and_rejoins() -> None:
    h = MixedHarness(group_consumer_migration_policy="disabled")
    h.cg_join("a")
    response = h.cjoin("m")
    assert response.error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL and "migration is disabled" not in str(response)
    assert "m" not in h.cgroup().members


def test_a_full_consumer_group_refuses_a_classic_member() -> None:
    h = MixedHarness(group_consumer_max_size=1)
    h.cg_join("a")
    assert h.cjoin("m").error_code == ErrorCode.GROUP_MAX_SIZE_REACHED


def test_undecodable_subscription_is_an_unknown_server_error_and_changes_nothing() -> None:
    h = MixedHarness()
    h.cg_join("a")
    epoch = h.cgroup().group_epoch
    response = h.join("g", "m", protocols=(("range", b"\x00"),))
    assert isinstance(response, JoinGroupResponse) and response.error_code == ErrorCode.UNKNOWN_SERVER_ERROR
    assert "m" not in h.cgroup().members and h.cgroup().group_epoch == epoch


def test_sync_group_errors() -> None:
    h = MixedHarness()
    h.cg_join("a")
    joined = h.cjoin(instance="i1")
    m, gen = joined.member_id, joined.generation_id
    assert h.csync("nobody", gen).error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.csync("a", h.member("a")["member_epoch"]).error_code == ErrorCode.UNKNOWN_MEMBER_ID  # not classic
    assert h.csync(m, gen + 1, instance="i1").error_code == ErrorCode.ILLEGAL_GENERATION
    assert h.csync("other", gen, instance="i1").error_code == ErrorCode.FENCED_INSTANCE_ID
    assert h.csync(m, gen, instance="i2").error_code == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.csync(m, gen, instance="i1", protocol_name="roundrobin").error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    assert h.csync(m, gen, instance="i1", protocol_type="connect").error_code == ErrorCode.INCONSISTENT_GROUP_PROTOCOL
    h.cg_join("b")  # bumps the group epoch: the classic member must rejoin first
    assert h.csync(m, gen, instance="i1").error_code == ErrorCode.REBALANCE_IN_PROGRESS
    assert h.csync(m, gen, instance="i1", version=4).error_code == ErrorCode.REBALANCE_IN_PROGRESS  # no protocol fields


def test_heartbeat_asks_for_a_rejoin_when_the_member_must_progress() -> None:
    h = MixedHarness({"t": 6, "u": 2})
    h.cg_join("a", topics=["u"])
    joined = h.cjoin()
    c = joined.member_id
    owned_c = h.synced(h.csync(c, joined.generation_id))
    assert owned_c == {"t": [0, 1, 2, 3, 4, 5]}
    assert h.heartbeat("g", c, joined.generation_id) == ErrorCode.NONE
    assert h.heartbeat("g", c, joined.generation_id + 1) == ErrorCode.ILLEGAL_GENERATION
    assert h.heartbeat("g", "nobody", joined.generation_id) == ErrorCode.UNKNOWN_MEMBER_ID
    assert h.heartbeat("g", "a", h.member("a")["member_epoch"]) == ErrorCode.UNKNOWN_MEMBER_ID  # not classic
    h.cg_join("b")  # a new group epoch: b wants half of t
    assert h.heartbeat("g", c, joined.generation_id) == ErrorCode.REBALANCE_IN_PROGRESS
    # Rejoining while still owning partitions it must give up: UNREVOKED_PARTITIONS, old epoch.
    rejoined = h.cjoin(c, owned=owned_c)
    assert rejoined.generation_id == joined.generation_id and h.member(c)["state"] == "UNREVOKED_PARTITIONS"
    assert h.heartbeat("g", c, rejoined.generation_id) == ErrorCode.REBALANCE_IN_PROGRESS
    kept = h.synced(h.csync(c, rejoined.generation_id))  # revoking: SyncGroup still answers, with what it keeps
    assert len(kept["t"]) == 3
    moved_on = h.cjoin(c, owned=kept)
    assert moved_on.generation_id == h.cgroup().group_epoch and h.member(c)["state"] == "STABLE"
    assert h.heartbeat("g", c, moved_on.generation_id) == ErrorCode.NONE


def test_unreleased_partitions_wait_then_a_rejoin_picks_them_up() -> None:
    h = MixedHarness()
    h.cg_join("a")
    h.converge("a")  # "a" owns all 6
    joined = h.cjoin()
    c = joined.member_id
    assert h.member(c)["state"] == "UNRELEASED_PARTITIONS" and h.synced(h.csync(c, joined.generation_id)) == {}
    assert h.heartbeat("g", c, joined.generation_id) == ErrorCode.NONE  # still held by "a": nothing to do
    epoch = h.member("a")["member_epoch"]
    h.cg_heartbeat("a", epoch, h.member("a")["assigned"])  # "a" is told to revoke
    h.cg_heartbeat("a", epoch, h.member("a")["assigned"])  # and confirms
    assert h.heartbeat("g", c, joined.generation_id) == ErrorCode.REBALANCE_IN_PROGRESS  # the partitions are free now
    assert h.classic_round(c, {}) == h.member(c)["assigned"] != {}


def test_classic_session_timeout_is_the_members_own() -> None:
    h = MixedHarness()
    h.cg_join("a")
    c = h.cjoin(session=3_000).member_id
    h.heartbeat("g", "a", 0)
    h.advance(2_999)
    assert c in h.cgroup().members
    h.cg_heartbeat("a", h.member("a")["member_epoch"])
    h.advance(1)
    assert c not in h.cgroup().members
    fenced = h.events("consumer_group.member_fenced", "g")[-1]
    assert fenced.member_id == c and fenced.details["cause"] == "session_timeout" and fenced.details["protocol"] == "classic"


def test_sync_and_join_timeouts_fence_a_classic_member() -> None:
    # The consumer member's session outlives the classic members' rebalance timeouts.
    h = MixedHarness(group_consumer_session_timeout_ms=60_000)
    h.cg_join("a")
    c = h.cjoin(session=10 * REBALANCE, rebalance=REBALANCE // 2).member_id
    h.advance(REBALANCE // 2)  # no SyncGroup within the rebalance timeout
    assert c not in h.cgroup().members
    assert h.events("consumer_group.member_fenced", "g")[-1].details["cause"] == "sync_timeout"

    h.cg_heartbeat("a", h.member("a")["member_epoch"])
    joined = h.cjoin(session=10 * REBALANCE, rebalance=REBALANCE // 2)
    d = joined.member_id
    h.csync(d, joined.generation_id)
    h.cg_join("b")
    assert h.heartbeat("g", d, joined.generation_id) == ErrorCode.REBALANCE_IN_PROGRESS  # arms the join timer
    h.advance(REBALANCE // 4)
    assert h.heartbeat("g", d, joined.generation_id) == ErrorCode.REBALANCE_IN_PROGRESS  # does not re-arm it
    h.advance(REBALANCE // 4)
    assert d not in h.cgroup().members
    assert h.events("consumer_group.member_fenced", "g")[-1].details["cause"] == "join_timeout"


def test_leave_group_removes_classic_and_named_members() -> None:
    h = MixedHarness(group_consumer_migration_policy="upgrade")
    h.cg_join("a")
    c = h.cjoin().member_id
    s = h.cjoin(instance="i1").member_id
    epoch = h.cgroup().group_epoch
    error, answers = h.leave("g", c, "nobody", ("", "i1"), ("wrong", "i1"), ("x", "i9"))
    assert error == ErrorCode.NONE
    assert [a.error_code for a in answers] == [
        ErrorCode.NONE, ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.NONE, ErrorCode.FENCED_INSTANCE_ID, ErrorCode.UNKNOWN_MEMBER_ID,
    ]  # fmt: skip
    assert [a.member_id for a in answers][2] == ""  # admin removal by instance id echoes the empty id
    assert set(h.cgroup().members) == {"a"} and h.cgroup().group_epoch == epoch + 1  # one bump for both
    assert s not in h.cgroup().members


def test_offsets_from_a_classic_member_are_checked_against_its_generation() -> None:
    h = MixedHarness()
    h.cg_join("a")
    joined = h.cjoin()
    c, gen = joined.member_id, joined.generation_id
    ok = h.commit("g", {("t", 0): 5}, generation=gen, member_id=c, version=7)  # below v9 is fine for classic members
    assert ok[0].partitions[0].error_code == ErrorCode.NONE
    bad = h.commit("g", {("t", 0): 6}, generation=gen + 1, member_id=c, version=9)
    assert bad[0].partitions[0].error_code == ErrorCode.ILLEGAL_GENERATION
    assert h.consumer.validate_offset_fetch("g", c, gen + 1) == ErrorCode.ILLEGAL_GENERATION
    assert h.consumer.validate_offset_fetch("g", c, gen) is None


# -- online upgrade ------------------------------------------------------------------------------------------


def _classic_group_by_hand(h: MixedHarness) -> list[str]:
    parked = [h.join_new("g", client_id=f"c{i}", protocols=(("range", metadata()),)) for i in range(2)]
    h.advance(0)
    responses = [p.result() for p in parked]
    ids = [r.member_id for r in responses]
    gen = responses[0].generation_id
    leader = responses[0].leader
    assignments = {m: encode_assignment(ConsumerProtocolAssignment([TopicPartition("t", [p for p in range(6) if p % 2 == i])]), 1)
                   for i, m in enumerate(ids)}  # fmt: skip
    syncs = [h.sync("g", m, gen, assignments if m == leader else None) for m in ids]
    for s in syncs:
        done = s.result() if isinstance(s, Parked) else s
        assert done.error_code == ErrorCode.NONE, done
    assert h.state() == "Stable"
    return ids


def test_online_upgrade_carries_the_classic_members_over() -> None:
    h = MixedHarness()
    ids = _classic_group_by_hand(h)
    generation = h.group().generation_id
    response = h.cg_join("a")
    assert response.error_code == ErrorCode.NONE
    assert "g" not in h.groups.groups and "g" in h.consumer.groups
    snap = h.snap()
    members = {m["member_id"]: m for m in snap["members"]}
    for i, m in enumerate(ids):
        assert members[m]["protocol"] == "classic" and members[m]["member_epoch"] == generation
        assert members[m]["assigned"] == {"t": [p for p in range(6) if p % 2 == i]}  # its last assignment
    assert snap["group_epoch"] == generation + 1 == response.member_epoch  # the joining member's bump
    upgraded = h.events("consumer_group.upgraded", "g")[-1]
    assert upgraded.details["classic_generation_id"] == generation and upgraded.details["members"] == ids
    assert h.events("group.deleted", "g")[-1].reason == "converted to a consumer group (online upgrade)"
    # The classic members are told to rejoin; once they do, ownership is exactly-once.
    assert h.heartbeat("g", ids[0], generation) == ErrorCode.REBALANCE_IN_PROGRESS
    owned = {m: members[m]["assigned"] for m in ids}
    owned_a: Parts = {}
    for _ in range(6):
        for m in ids:
            if h.heartbeat("g", m, h.member(m)["member_epoch"]) == ErrorCode.REBALANCE_IN_PROGRESS:
                owned[m] = h.classic_round(m, owned[m])
        given = h.owned(h.cg_heartbeat("a", h.member("a")["member_epoch"], owned_a))
        if given is not None:
            owned_a = {t: ps for t, ps in given.items() if ps}
    assert h.snap()["state"] == "Stable"
    assert owners(owned_a, *owned.values()) == {("t", p): 1 for p in range(6)}


def test_upgrade_answers_parked_joins_with_rebalance_in_progress() -> None:
    h = MixedHarness()
    ids = _classic_group_by_hand(h)
    parked = h.join("g", ids[0], protocols=(("range", metadata()),))  # starts a rebalance; parks
    assert isinstance(parked, Parked)
    assert h.cg_join("a").error_code == ErrorCode.NONE
    assert parked.result().error_code == ErrorCode.REBALANCE_IN_PROGRESS


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"group_consumer_migration_policy": "disabled"}, "online upgrade is disabled"),
        ({"group_consumer_migration_policy": "downgrade"}, "online upgrade is disabled"),
        ({"group_consumer_max_size": 1}, "exceeds the consumer group maximum size"),
    ],
)
def test_upgrade_refused(settings: dict[str, Any], message: str) -> None:
    h = MixedHarness(**settings)
    _classic_group_by_hand(h)
    response = h.cg_join("a")
    assert response.error_code == ErrorCode.GROUP_ID_NOT_FOUND and message in (response.error_message or "")
    assert "g" in h.groups.groups and "g" not in h.consumer.groups


def test_upgrade_refused_for_another_protocol_type_or_assignor_user_data() -> None:
    h = MixedHarness()
    parked = h.join_new("g", protocol_type="connect", protocols=(("v1", b"x"),))
    h.advance(0)
    assert parked.result().error_code == ErrorCode.NONE
    response = h.cg_join("a")
    assert response.error_code == ErrorCode.GROUP_ID_NOT_FOUND and "consumer embedded protocol" in (response.error_message or "")

    h2 = MixedHarness()
    joined = h2.join_new("g", protocols=(("custom", metadata()),))
    h2.advance(0)
    gen, m = joined.result().generation_id, joined.result().member_id
    with_user_data = encode_assignment(ConsumerProtocolAssignment([TopicPartition("t", [0])], user_data=b"state"), 1)
    h2.sync("g", m, gen, {m: with_user_data})
    response = h2.cg_join("a")
    assert response.error_code == ErrorCode.GROUP_ID_NOT_FOUND and "custom assignor" in (response.error_message or "")
    assert h2.state() == "Stable"


def test_upgrade_would_overflow_the_group() -> None:
    h = MixedHarness(group_consumer_max_size=2)
    _classic_group_by_hand(h)
    response = h.cg_join("a")
    assert response.error_code == ErrorCode.GROUP_MAX_SIZE_REACHED
    assert "g" in h.groups.groups and "g" not in h.consumer.groups  # nothing converted


# -- online downgrade -----------------------------------------------------------------------------------------


def _upgraded(h: MixedHarness) -> list[str]:
    ids = _classic_group_by_hand(h)
    assert h.cg_join("a").error_code == ErrorCode.NONE
    return ids


def test_last_consumer_member_leaving_downgrades_the_group() -> None:
    h = MixedHarness()
    ids = _upgraded(h)
    epoch = h.cgroup().group_epoch
    h.cg_leave("a")
    assert "g" not in h.consumer.groups and h.state() == "PreparingRebalance"
    group = h.group()
    assert group.generation_id == epoch and group.protocol_name == "range" and set(group.members) == set(ids)
    downgraded = h.events("group.downgraded", "g")[-1]
    assert downgraded.details["leaving_members"] == ["a"] and downgraded.details["group_epoch"] == epoch
    assert h.events("consumer_group.member_left", "g")[-1].member_id == "a"
    # Every member holds its target assignment and must rejoin.
    for m in ids:
        assert h.heartbeat("g", m, epoch) == ErrorCode.REBALANCE_IN_PROGRESS
    answers = [h.join("g", m, protocols=(("range", metadata()),)) for m in ids]
    done = [a.result() if isinstance(a, Parked) else a for a in answers]
    assert [a.error_code for a in done] == [ErrorCode.NONE, ErrorCode.NONE]
    assert h.state() == "CompletingRebalance" and h.group().generation_id == epoch + 1


def test_session_expiry_of_the_last_consumer_member_downgrades_too() -> None:
    h = MixedHarness()
    ids = _upgraded(h)
    for _ in range(4):  # the classic members keep their sessions alive
        h.advance(4_000)
        if "g" in h.consumer.groups:
            for m in ids:
                h.heartbeat("g", m, h.member(m)["member_epoch"])
    assert "g" in h.groups.groups and "g" not in h.consumer.groups
    assert h.events("consumer_group.member_fenced", "g")[-1].details["cause"] == "session_timeout"


def test_no_downgrade_without_the_policy() -> None:
    h = MixedHarness(group_consumer_migration_policy="upgrade")
    ids = _upgraded(h)
    h.cg_leave("a")
    assert "g" in h.consumer.groups and set(h.cgroup().members) == set(ids)
    assert h.snap()["state"] in ("Assigning", "Reconciling", "Stable")


def test_no_downgrade_above_group_max_size() -> None:
    h = MixedHarness(group_max_size=1)
    h.cg_join("a")
    h.cjoin()
    h.cjoin()
    h.cg_leave("a")
    assert "g" in h.consumer.groups and len(h.cgroup().members) == 2


def test_a_leaving_classic_member_does_not_downgrade() -> None:
    h = MixedHarness()
    ids = _upgraded(h)
    h.leave("g", ids[0])
    assert "g" in h.consumer.groups and set(h.cgroup().members) == {"a", ids[1]}


def test_migration_policy_through_the_settings_machinery() -> None:
    from mockbroker.cli import parse_serve
    from mockbroker.config.settings import SettingsError

    assert parse_serve(["--set", "group.consumer.migration.policy=upgrade"], {}).cluster.group_consumer_migration_policy == "upgrade"
    with pytest.raises(SettingsError, match="must be one of disabled, upgrade, downgrade, bidirectional"):
        parse_serve(["--set", "group.consumer.migration.policy=sideways"], {})
