"""Assignment checks on SyncGroup (mockbroker/groups/assignment_checks.py): validation, the
reference check against Java's assignors, strict mode, and broker-side assignment, on a
ManualClock with no sockets."""

from __future__ import annotations

from typing import Any

import pytest

from mockbroker.config.cluster import ClusterConfig
from mockbroker.coordinators.classic.findings import Finding
from mockbroker_assignors import registry
from mockbroker_assignors.types import (
    ClusterMetadata,
    GroupAssignment,
    GroupSubscription,
    MemberAssignment,
    RebalanceProtocol,
)
from mockbroker_assignors.types import TopicPartition as TP
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
from tests.mockbroker.coordinators.groups_support import Harness, answered


def subscription(
    *topics: str, owned: dict[str, list[int]] | None = None, generation: int = -1, version: int = 3,
    rack: str | None = None, user_data: bytes | None = None,
) -> bytes:  # fmt: skip
    data = ConsumerProtocolSubscription(
        topics=list(topics),
        user_data=user_data,
        owned_partitions=[OwnedTopicPartition(t, ps) for t, ps in (owned or {}).items()],
        generation_id=generation,
        rack_id=rack,
    )
    return encode_subscription(data, version)


def assignment(**partitions: list[int]) -> bytes:
    return encode_assignment(
        ConsumerProtocolAssignment(assigned_partitions=[TopicPartition(t, ps) for t, ps in partitions.items()]), 0
    )


def decoded(raw: bytes) -> dict[str, list[int]]:
    _, a = decode_assignment(raw)
    return {t.topic: sorted(t.partitions) for t in a.assigned_partitions}


def harness(topics: dict[str, int], **settings: Any) -> Harness:
    h = Harness(**settings)
    for name, n in topics.items():
        h.cluster.create_topic(name, n)
    return h


def form(h: Harness, protocol: str, metadata: list[bytes], group: str = "g") -> tuple[list[str], int]:
    """Members c0, c1, ... join with these subscriptions; returns (member ids in join order, generation)."""
    parked = [h.join_new(group, client_id=f"c{i}", protocols=((protocol, m),)) for i, m in enumerate(metadata)]
    h.advance(0)
    responses = [answered(p) for p in parked]
    assert all(r.error_code == ErrorCode.NONE for r in responses), responses
    return [r.member_id for r in responses], responses[0].generation_id


def sync_all(h: Harness, ids: list[str], generation: int, leader_assignment: dict[str, bytes], group: str = "g") -> dict[str, bytes]:
    """Followers sync, then the leader (ids[0]) with its assignment; returns what each member got."""
    followers = {m: h.sync(group, m, generation) for m in ids[1:]}
    leader = h.sync(group, ids[0], generation, leader_assignment)
    got = {ids[0]: answered(leader)}
    got.update({m: answered(s) for m, s in followers.items()})
    assert all(r.error_code == ErrorCode.NONE for r in got.values()), got
    return {m: r.assignment for m, r in got.items()}


def findings(h: Harness, group: str = "g") -> list[tuple[str, str | None, list[str]]]:
    return [(f.kind, f.member_id, [f"{tp.topic}-{tp.partition}" for tp in f.topic_partitions]) for f in h.group(group).findings]


# -- validation -------------------------------------------------------------------------------------------


def test_a_sound_java_range_assignment_has_no_findings() -> None:
    h = harness({"t": 3})
    ids, gen = form(h, "range", [subscription("t"), subscription("t")])
    sync_all(h, ids, gen, {ids[0]: assignment(t=[0, 1]), ids[1]: assignment(t=[2])})
    assert h.group().findings == []
    assert h.events("group.assignment_finding") == []
    assert h.cluster.strict_failures == []


def test_overlap_is_a_finding_with_an_event_and_strict_mode_fails_it() -> None:
    h = harness({"t": 2}, assignment_strict="violations")
    ids, gen = form(h, "range", [subscription("t"), subscription("t")])
    got = sync_all(h, ids, gen, {ids[0]: assignment(t=[0, 1]), ids[1]: assignment(t=[1])})
    assert decoded(got[ids[1]]) == {"t": [1]}  # stored and handed out as sent: Kafka does not interfere
    assert ("multiple_owners", None, ["t-1"]) in findings(h)
    [finding] = [f for f in h.group().findings if f.kind == "multiple_owners"]
    assert finding.generation_id == gen and finding.group_id == "g" and finding.source == "leader"
    assert "t-1 is owned by 2 members" in finding.message
    [event] = [e for e in h.events("group.assignment_finding") if e.details["kind"] == "multiple_owners"]
    assert event.details["partitions"] == ["t-1"] and event.details["strict"] is True
    assert event.generation_id == gen and event.reason == finding.message
    assert finding in h.cluster.strict_failures


def test_without_strict_mode_findings_are_recorded_but_fail_nothing() -> None:
    h = harness({"t": 2})
    ids, gen = form(h, "range", [subscription("t"), subscription("t")])
    sync_all(h, ids, gen, {ids[0]: assignment(t=[0, 1]), ids[1]: assignment(t=[1])})
    assert findings(h) and h.cluster.strict_failures == []


def test_unassigned_not_subscribed_out_of_range_and_unknown_topic() -> None:
    h = harness({"a": 2, "b": 1})
    ids, gen = form(h, "range", [subscription("a"), subscription("a", "b")])
    sync_all(h, ids, gen, {ids[0]: assignment(a=[0], b=[0]), ids[1]: assignment(a=[7], zz=[0])})
    assert sorted(findings(h)) == sorted([
        ("not_subscribed", ids[0], ["b-0"]),
        ("out_of_range", ids[1], ["a-7"]),
        ("unknown_topic", ids[1], ["zz-0"]),
        ("unassigned", None, ["a-1"]),
    ])  # fmt: skip


def test_a_member_the_leader_left_out_gets_empty_bytes_and_only_its_partitions_matter() -> None:
    h = harness({"t": 2})
    ids, gen = form(h, "range", [subscription("t"), subscription("t")])
    got = sync_all(h, ids, gen, {ids[0]: assignment(t=[0, 1])})
    assert got[ids[1]] == b""
    assert [k for k, _, _ in findings(h)] == ["reference_divergence", "reference_divergence"]  # Java splits 1/1


def test_undecodable_assignment_and_subscription() -> None:
    h = harness({"t": 2})
    ids, gen = form(h, "range", [subscription("t"), b"\x00"])
    sync_all(h, ids, gen, {ids[0]: b"\x00\x00\xff", ids[1]: assignment(t=[1])})
    kinds = {(k, m) for k, m, _ in findings(h)}
    assert kinds == {("undecodable_subscription", ids[1]), ("undecodable_assignment", ids[0])}


def test_other_protocol_types_are_not_checked() -> None:
    h = harness({"t": 2})
    parked = [h.join_new(client_id=f"c{i}", protocol_type="connect", protocols=(("v0", b"x"),)) for i in range(2)]
    h.advance(0)
    ids = [answered(p).member_id for p in parked]
    sync_all(h, ids, 1, {ids[0]: b"garbage", ids[1]: b"garbage"})
    assert h.group().findings == []


def test_checks_off() -> None:
    h = harness({"t": 2}, assignment_checks="off", assignment_strict="all")
    ids, gen = form(h, "range", [subscription("t"), subscription("t")])
    sync_all(h, ids, gen, {ids[0]: assignment(t=[0, 1]), ids[1]: assignment(t=[1])})
    assert h.group().findings == [] and h.cluster.strict_failures == []


def test_partitions_added_after_the_generation_formed_are_not_required() -> None:
    h = harness({"t": 2})
    ids, gen = form(h, "range", [subscription("t"), subscription("t")])
    h.cluster.add_partitions("t", 4)  # the leader's metadata predates these
    h.cluster.create_topic("u", 1)
    sync_all(h, ids, gen, {ids[0]: assignment(t=[0]), ids[1]: assignment(t=[1])})
    assert h.group().findings == []  # no unassigned; no reference check while the topics moved


def test_partitions_of_a_topic_deleted_after_the_generation_formed_are_not_unknown() -> None:
    h = harness({"t": 2, "u": 1})
    ids, gen = form(h, "range", [subscription("t", "u"), subscription("t", "u")])
    h.cluster.delete_topic("u")
    sync_all(h, ids, gen, {ids[0]: assignment(t=[0], u=[0]), ids[1]: assignment(t=[1])})
    assert h.group().findings == []


# -- cooperative protocols ----------------------------------------------------------------------------------


def cooperative_group(h: Harness) -> tuple[list[str], int]:
    """c0 owned t-0..t-3 in generation 1 (v3 subscriptions), c1 is new."""
    return form(h, "cooperative-sticky", [
        subscription("t", owned={"t": [0, 1, 2, 3]}, generation=1),
        subscription("t", generation=1),
    ])  # fmt: skip


def test_cooperative_first_rebalance_may_leave_revoked_partitions_unassigned() -> None:
    h = harness({"t": 4}, assignment_strict="all")
    ids, gen = cooperative_group(h)
    # Java's cooperative-sticky: c0 keeps two, gives up two, and nobody gets those yet.
    sync_all(h, ids, gen, {ids[0]: assignment(t=[0, 1]), ids[1]: b""})
    assert h.group().findings == [] and h.cluster.strict_failures == []


def test_cooperative_handing_over_an_owned_partition_at_once_is_a_violation() -> None:
    h = harness({"t": 4}, assignment_strict="violations")
    ids, gen = cooperative_group(h)
    sync_all(h, ids, gen, {ids[0]: assignment(t=[0, 1]), ids[1]: assignment(t=[2, 3])})
    assert ("revoke_before_reassign", ids[1], ["t-2", "t-3"]) in findings(h)
    assert [f.kind for f in h.cluster.strict_failures] == ["revoke_before_reassign"]  # divergence is informational


def test_claims_of_an_older_generation_do_not_block_a_new_owner() -> None:
    h = harness({"t": 2})
    ids, gen = form(h, "cooperative-sticky", [
        subscription("t", owned={"t": [0, 1]}, generation=1),  # a zombie's stale claim
        subscription("t", owned={"t": [0]}, generation=3),
    ])  # fmt: skip
    sync_all(h, ids, gen, {ids[0]: assignment(t=[1]), ids[1]: assignment(t=[0])})
    assert [k for k, _, _ in findings(h) if k != "reference_divergence"] == []


def test_an_eager_protocol_may_not_leave_claimed_partitions_unassigned() -> None:
    h = harness({"t": 2})
    ids, gen = form(h, "range", [subscription("t", owned={"t": [0, 1]}, generation=1), subscription("t")])
    sync_all(h, ids, gen, {ids[0]: assignment(t=[0])})
    assert ("unassigned", None, ["t-1"]) in findings(h)


def test_unknown_protocol_names_get_the_benefit_of_the_doubt() -> None:
    h = harness({"t": 2})
    ids, gen = form(h, "RoundRobinAssigner", [subscription("t", owned={"t": [0, 1]}, generation=1), subscription("t")])
    sync_all(h, ids, gen, {ids[0]: assignment(t=[0]), ids[1]: b""})
    assert h.group().findings == []


# -- reference check --------------------------------------------------------------------------------------


def test_reference_divergence_is_informational() -> None:
    h = harness({"t": 3}, assignment_strict="violations")
    ids, gen = form(h, "range", [subscription("t"), subscription("t")])
    sync_all(h, ids, gen, {ids[0]: assignment(t=[0]), ids[1]: assignment(t=[1, 2])})  # valid, not Java's 2/1
    assert sorted(findings(h)) == sorted([
        ("reference_divergence", ids[0], ["t-1"]),
        ("reference_divergence", ids[1], ["t-1"]),
    ])  # fmt: skip
    [first] = [f for f in h.group().findings if f.member_id == ids[0]]
    assert first.informational and "Java's range assignor gives [t-0, t-1]" in first.message
    assert h.cluster.strict_failures == []
    assert all(e.details["informational"] and not e.details["strict"] for e in h.events("group.assignment_finding"))


def test_the_reference_check_is_skipped_for_very_large_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    import mockbroker.coordinators.classic.assignment_checks as checks

    monkeypatch.setattr(checks, "REFERENCE_CHECK_MAX_SIZE", 5)  # 2 members x 3 partitions = 6
    h = harness({"t": 3})
    ids, gen = form(h, "range", [subscription("t"), subscription("t")])
    sync_all(h, ids, gen, {ids[0]: assignment(t=[0]), ids[1]: assignment(t=[1, 2])})
    assert h.group().findings == []


def test_strict_all_counts_divergences_too() -> None:
    h = harness({"t": 3}, assignment_strict="all")
    ids, gen = form(h, "roundrobin", [subscription("t"), subscription("t")])
    sync_all(h, ids, gen, {ids[0]: assignment(t=[0, 1]), ids[1]: assignment(t=[2])})  # Java deals 0,2 / 1
    assert {f.kind for f in h.cluster.strict_failures} == {"reference_divergence"}


@pytest.mark.parametrize("protocol", ["range", "roundrobin", "sticky", "cooperative-sticky"])
def test_the_reference_assignors_own_results_pass(protocol: str) -> None:
    h = harness({"t0": 3, "t1": 2, "t2": 5}, racks=("a", "b", "c"), brokers=3, default_replication_factor=2, assignment_strict="all")
    metadata = [subscription("t0", "t1", rack="a"), subscription("t1", "t2", rack="b"), subscription("t0", "t2")]
    ids, gen = form(h, protocol, metadata)
    group = h.group()
    cluster = h.cluster.assignment_checks._cluster(["t0", "t1", "t2"])
    assert any(cluster.topics["t0"].partition_racks)
    subs = h.cluster.assignment_checks._subscriptions(group).by_member
    expected = registry.get(protocol).assign(cluster, subs)
    leader = {m: assignment(**_by_topic(expected[m].partitions)) for m in ids}
    sync_all(h, ids, gen, leader)
    assert h.group().findings == []


def _by_topic(partitions: tuple[TP, ...]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for tp in partitions:
        out.setdefault(tp.topic, []).append(tp.partition)
    return out


# -- broker-side assignment ---------------------------------------------------------------------------------


def test_broker_side_assignment_replaces_the_leaders() -> None:
    h = harness({"t": 4}, broker_assignors={"orders-*": "roundrobin"})
    ids, gen = form(h, "range", [subscription("t", version=1), subscription("t", version=0)], group="orders-1")
    got = sync_all(h, ids, gen, {ids[0]: assignment(t=[0, 1, 2, 3])}, group="orders-1")
    assert {m: decoded(b) for m, b in got.items()} == {ids[0]: {"t": [0, 2]}, ids[1]: {"t": [1, 3]}}
    # encoded at each member's own subscription version
    assert [decode_assignment(got[m])[0] for m in ids] == [1, 0]
    [event] = h.events("group.broker_assignment")
    assert event.details["assignor"] == "roundrobin" and event.details["withheld"] == []
    assert h.group("orders-1").findings == []  # the broker's own result is validated too
    stored = {e.member_id: e.details["assignment"] for e in h.events("member.assigned")}
    assert stored == {ids[0]: {"t": [0, 2]}, ids[1]: {"t": [1, 3]}}


def test_groups_that_match_no_pattern_keep_the_leaders_assignment() -> None:
    h = harness({"t": 2}, broker_assignors={"orders-*": "roundrobin", "exact": "range"})
    ids, gen = form(h, "range", [subscription("t"), subscription("t")], group="payments")
    got = sync_all(h, ids, gen, {ids[0]: assignment(t=[0]), ids[1]: assignment(t=[1])}, group="payments")
    assert decoded(got[ids[0]]) == {"t": [0]} and h.events("group.broker_assignment") == []


def test_an_exact_group_id_wins_over_a_glob_then_the_first_glob() -> None:
    checks = harness({}, broker_assignors={"o*": "roundrobin", "or*": "sticky", "orders": "range"}).cluster.assignment_checks
    assert checks.broker_assignor_for("orders").name == "range"  # type: ignore[union-attr]
    assert checks.broker_assignor_for("other").name == "roundrobin"  # type: ignore[union-attr]
    assert checks.broker_assignor_for("ore").name == "roundrobin"  # type: ignore[union-attr]
    assert checks.broker_assignor_for("x") is None


def test_cooperative_broker_assignment_revokes_first_and_reassigns_in_the_next_generation() -> None:
    h = harness({"t": 4}, broker_assignors={"*": "range"}, assignment_strict="violations")
    ids, gen = cooperative_group(h)
    got = sync_all(h, ids, gen, {})
    # range's target: c0 t-0,t-1; c1 t-2,t-3. c0 still owns t-2,t-3: they are only revoked now.
    assert {m: decoded(b) for m, b in got.items()} == {ids[0]: {"t": [0, 1]}, ids[1]: {}}
    assert h.events("group.broker_assignment")[-1].details["withheld"] == ["t-2", "t-3"]
    # c0 revokes and rejoins owning t-0, t-1; c1 rejoins owning nothing: the next generation.
    p0 = h.join("g", ids[0], protocols=(("cooperative-sticky", subscription("t", owned={"t": [0, 1]}, generation=gen)),))
    p1 = h.join("g", ids[1], protocols=(("cooperative-sticky", subscription("t", generation=gen)),))
    h.advance(0)
    gen2 = answered(p0).generation_id
    assert answered(p1).generation_id == gen2 == gen + 1
    got = sync_all(h, ids, gen2, {})
    assert {m: decoded(b) for m, b in got.items()} == {ids[0]: {"t": [0, 1]}, ids[1]: {"t": [2, 3]}}
    assert h.events("group.broker_assignment")[-1].details["withheld"] == []
    assert h.cluster.strict_failures == []


class _HalfAssignor:
    """A broken plugin: gives the first member everything, and the second member t-0 again."""

    name = "half"
    supported_protocols = (RebalanceProtocol.EAGER,)

    def assign(self, cluster: ClusterMetadata, subscriptions: GroupSubscription) -> GroupAssignment:
        members = list(subscriptions)
        everything = tuple(TP(t, p) for t in sorted(cluster.topics) for p in range(cluster.partitions_for(t)))
        result = {m: MemberAssignment(()) for m in members}
        result[members[0]] = MemberAssignment(everything)
        result[members[-1]] = MemberAssignment((TP("t", 0),))
        return result


class _FailingAssignor:
    name = "failing"
    supported_protocols = (RebalanceProtocol.EAGER,)

    def assign(self, cluster: ClusterMetadata, subscriptions: GroupSubscription) -> GroupAssignment:
        raise ZeroDivisionError("plugin bug")


def test_a_plugin_by_reference_is_validated_like_a_leader() -> None:
    h = harness({"t": 2}, broker_assignors={"g": f"{__name__}:_HalfAssignor"}, assignment_strict="violations")
    ids, gen = form(h, "range", [subscription("t"), subscription("t")])
    sync_all(h, ids, gen, {})
    assert ("multiple_owners", None, ["t-0"]) in findings(h)
    assert all(f.source == "broker" for f in h.group().findings)
    assert h.cluster.strict_failures


def test_a_failing_plugin_is_an_internal_error_and_the_leaders_assignment_stands() -> None:
    h = harness({"t": 2}, broker_assignors={"g": f"{__name__}:_FailingAssignor"})
    ids, gen = form(h, "range", [subscription("t"), subscription("t")])
    got = sync_all(h, ids, gen, {ids[0]: assignment(t=[0, 1])})
    assert decoded(got[ids[0]]) == {"t": [0, 1]}
    [error] = h.cluster.internal_errors
    assert "failing failed" in str(error) and "plugin bug" in str(error)
    h.cluster.internal_errors.clear()


# -- configuration ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"assignment_checks": "some"}, "assignment_checks must be one of off, validate, full"),
        ({"assignment_strict": "yes"}, "assignment_strict must be one of off, violations, all"),
        ({"broker_assignors": {"g*": "nope"}}, "broker_assignors['g*'] = 'nope': no client-side assignor named 'nope'"),
        ({"broker_assignors": {"g": "no.such.module:X"}}, "cannot import module"),
        ({"broker_assignors": {"": "range"}}, "must not be empty"),
    ],
)
def test_bad_settings_are_refused(settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=None) as info:
        ClusterConfig(**settings)
    assert message in str(info.value)


def test_finding_reads_well() -> None:
    f = Finding("unassigned", "g", 3, None, (TP("t", 1),), "t-1 is not assigned (subscribed by a)")
    assert str(f) == "group g generation 3 (leader, unassigned): t-1 is not assigned (subscribed by a)"
    assert not f.informational


# -- flags, environment, TOML -------------------------------------------------------------------------------


def test_settings_from_flags_environment_and_file(tmp_path: Any) -> None:
    from mockbroker.cli import parse_serve

    config = tmp_path / "broker.toml"
    config.write_text(
        '[cluster]\nassignment_strict = "all"\n'
        '[cluster.broker_assignors]\n"orders-*" = "cooperative-sticky"\npayments.eu = "range"\n'
    )
    from_file = parse_serve(["--config", str(config)], {}).cluster
    assert from_file.assignment_strict == "all" and from_file.assignment_checks == "full"
    assert from_file.broker_assignors == {"orders-*": "cooperative-sticky", "payments.eu": "range"}

    env = {"MOCKBROKER_BROKER_ASSIGNORS": "a*=range, b=sticky", "MOCKBROKER_ASSIGNMENT_CHECKS": "validate"}
    from_env = parse_serve(["--config", str(config)], env)
    assert from_env.cluster.broker_assignors == {"a*": "range", "b": "sticky"}  # a whole mapping wins
    assert from_env.cluster.assignment_checks == "validate"
    assert from_env.sources["broker_assignors"] == "MOCKBROKER_BROKER_ASSIGNORS"

    argv = ["--broker-assignor", "x=roundrobin", "--broker-assignor", f"y={__name__}:_HalfAssignor",
            "--assignment-strict", "violations", "--assignment-checks", "off"]  # fmt: skip
    from_flags = parse_serve(argv, env).cluster
    assert from_flags.broker_assignors == {"x": "roundrobin", "y": f"{__name__}:_HalfAssignor"}
    assert (from_flags.assignment_strict, from_flags.assignment_checks) == ("violations", "off")


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        (["--assignment-strict", "maybe"], {}, "argument --assignment-strict: must be one of off, violations, all"),
        (["--broker-assignor", "g"], {}, "expected GLOB=ASSIGNOR"),
        (["--broker-assignor", "g=nope"], {}, "no client-side assignor named 'nope'"),
        ([], {"MOCKBROKER_BROKER_ASSIGNORS": "g=uniform"}, "MOCKBROKER_BROKER_ASSIGNORS: broker_assignors['g']"),
        ([], {"MOCKBROKER_ASSIGNMENT_CHECKS": "all"}, "MOCKBROKER_ASSIGNMENT_CHECKS: must be one of off, validate, full"),
    ],
)
def test_bad_serve_settings_name_their_source(argv: list[str], env: dict[str, str], message: str) -> None:
    from mockbroker.cli import parse_serve
    from mockbroker.config.settings import SettingsError

    with pytest.raises(SettingsError) as info:
        parse_serve(argv, env)
    assert message in str(info.value)


def test_a_topic_left_out_whole_is_informational_not_a_violation() -> None:
    # kafka-python's first leader often has no metadata for the topic yet and assigns nothing of it
    # (as Java's AbstractPartitionAssignor does for a topic without metadata); it rejoins later.
    h = harness({"a": 2, "b": 3}, assignment_strict="violations")
    ids, gen = form(h, "range", [subscription("a", "b"), subscription("a", "b")])
    sync_all(h, ids, gen, {ids[0]: assignment(a=[0]), ids[1]: assignment(a=[1])})
    assert findings(h) == [("topic_not_assigned", None, ["b-0", "b-1", "b-2"])]
    [finding] = h.group().findings
    assert finding.informational and "no member was given any partition of b" in finding.message
    assert h.cluster.strict_failures == []


def test_a_topic_assigned_in_part_is_still_a_violation() -> None:
    h = harness({"b": 3}, assignment_strict="violations")
    ids, gen = form(h, "range", [subscription("b"), subscription("b")])
    sync_all(h, ids, gen, {ids[0]: assignment(b=[0]), ids[1]: assignment(b=[1])})
    assert findings(h) == [("unassigned", None, ["b-2"])]
    assert len(h.cluster.strict_failures) == 1
