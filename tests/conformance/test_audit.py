"""The client audit against deliberately misbehaving clients (mockbroker_conformance/drivers/
misbehaving.py): each broken rule gives its finding, naming the request; the well-behaved control
case gives none."""

from __future__ import annotations

import asyncio
import sys

import pytest

from mockbroker_conformance.audit import Auditor
from mockbroker_conformance.clients import DRIVERS, ClientSpec
from mockbroker_conformance.model import Finding
from mockbroker_conformance.scenarios import Context
from mockbroker_conformance.targets import EmbeddedTarget


def misbehaving(mode: str) -> ClientSpec:
    return ClientSpec(
        f"misbehaving-{mode}",
        lambda b, c: [sys.executable, str(DRIVERS / "misbehaving.py"), "--misbehave", mode, "--bootstrap", b, "--client-id", c],
        lambda: None, short=f"bad-{mode}",
    )  # fmt: skip


async def run_misbehaving(mode: str, session_timeout_ms: int = 6000, commit: bool = False) -> tuple[list[Finding], Auditor]:
    target = EmbeddedTarget()
    cluster = await target.start(1, mode)
    ctx = Context(misbehaving(mode), cluster, "audit")
    try:
        topic = await ctx.topic("t", 2)
        group = ctx.group("g")
        d = await ctx.spawn("member")
        await d.call({"cmd": "subscribe", "topic": topic, "group": group, "session_timeout_ms": session_timeout_ms}, "subscribed", 20)
        if commit:
            await d.send({"cmd": "commit", "offsets": {"0": 1}})
            await d.wait(lambda e: e.get("event") in ("committed", "commit_failed"), "the commit's answer", 20)
        if mode == "no-heartbeat":  # the broker's own expiry of the silent member
            await cluster.control.wait_for_event("member.expired", group_id=group, timeout=20)
        findings = await cluster.audit_findings()
        await d.close(10)
    finally:
        problems = await cluster.close()
    assert not problems
    assert cluster.auditor is not None
    return findings, cluster.auditor


def test_stale_generation_commit_is_a_finding() -> None:
    findings, _ = asyncio.run(run_misbehaving("stale-generation", commit=True))
    stale = [f for f in findings if f.check == "commit-generation"]
    assert len(stale) == 1, findings
    assert stale[0].request["api"] == "OffsetCommit"
    assert stale[0].request["generation_id_or_member_epoch"] == 1
    assert "generation 1" in stale[0].message and "generation 2" in stale[0].message


def test_a_member_that_stops_heartbeating_is_a_finding() -> None:
    findings, _ = asyncio.run(run_misbehaving("no-heartbeat", session_timeout_ms=500))
    silent = [f for f in findings if f.check == "heartbeat-interval"]
    assert len(silent) == 1, findings
    assert "session timeout of 500 ms" in silent[0].message
    assert silent[0].request["api"] == "SyncGroup"  # the last time the broker heard from it


def test_join_without_the_required_member_id_is_a_finding() -> None:
    findings, _ = asyncio.run(run_misbehaving("ignore-member-id"))
    assert [f.check for f in findings] == ["member-id-required"], findings
    assert findings[0].request["api"] == "JoinGroup" and "member_id" not in findings[0].request


def test_a_well_behaved_member_has_no_findings() -> None:
    findings, auditor = asyncio.run(run_misbehaving("none", commit=True))
    assert findings == []
    assert auditor.requests_seen > 5


@pytest.mark.parametrize("excused", [False, True])
def test_a_killed_client_is_excused(excused: bool) -> None:
    """The end-of-scenario check: a member silent past its session timeout is a finding unless the
    scenario killed its client on purpose."""
    from mockbroker_conformance.audit import _Member

    auditor = Auditor()
    auditor.members[("g", "m-1")] = _Member("c-1", 1000, last_ms=0, last_request={"api": "Heartbeat"})
    if excused:
        auditor.excuse("c-1")
    findings = auditor.finish(now_ms=5000)
    assert [f.check for f in findings] == ([] if excused else ["heartbeat-interval"])


async def run_streams_member(leave: bool) -> list[Finding]:
    """One KIP-1071 member over our codec (a word-count topology), then either a leave (epoch -1)
    or silence until the broker fences it (group.streams.session.timeout.ms 500 ms)."""
    from mockbroker_protocol.messages import streams_group_heartbeat as sgh
    from tests.differential.harness import Connection

    cluster = await EmbeddedTarget(group_streams_session_timeout_ms=500).start(1, "streams-audit")
    try:
        await cluster.create_topic("words", 2)
        topology = sgh.Topology(epoch=1, subtopologies=[sgh.Subtopology(subtopology_id="0", source_topics=["words"])])
        join = sgh.StreamsGroupHeartbeatRequest(
            group_id="app", member_id="m-1", member_epoch=0, rebalance_timeout_ms=30_000, topology=topology,
            process_id="p-1", active_tasks=[], standby_tasks=[], warmup_tasks=[],
        )  # fmt: skip
        host, port = cluster.bootstrap.split(",")[0].rsplit(":", 1)
        connection = Connection((host, int(port)))
        try:
            answer = await asyncio.to_thread(connection.call, 88, 0, join)
            assert answer.error_code == 0 and answer.member_epoch >= 1, answer
            if leave:
                bye = sgh.StreamsGroupHeartbeatRequest(group_id="app", member_id="m-1", member_epoch=-1)
                assert (await asyncio.to_thread(connection.call, 88, 0, bye)).error_code == 0
            else:
                await cluster.control.wait_for_event("streams_group.member_fenced", group_id="app", timeout=20)
        finally:
            connection.sock.close()
        return await cluster.audit_findings()
    finally:
        assert not await cluster.close()


@pytest.mark.parametrize("leave", [False, True])
def test_a_streams_member_silent_past_its_session_is_a_finding(leave: bool) -> None:
    """KIP-1071 members are followed through StreamsGroupHeartbeat, with the streams session
    timeout: silence past it is a finding naming the last heartbeat; a member that left is none."""
    findings = asyncio.run(run_streams_member(leave))
    if leave:
        assert findings == []
        return
    assert [f.check for f in findings] == ["heartbeat-interval"], findings
    assert "session timeout of 500 ms" in findings[0].message
    assert findings[0].request["api"] == "StreamsGroupHeartbeat" and findings[0].request["member_epoch"] == 0


def test_a_killed_clients_prefix_is_excused() -> None:
    """Kafka Streams names its consumers after its client.id (``<id>-StreamThread-1-consumer``):
    excusing a killed driver's id excuses them, and no other client."""
    from mockbroker_conformance.audit import _Member

    auditor = Auditor()
    auditor.members[("g", "m-1")] = _Member("app-a-StreamThread-1-consumer", 1000, last_ms=0, last_request={})
    auditor.members[("g", "m-2")] = _Member("app-ab-StreamThread-1-consumer", 1000, last_ms=0, last_request={})
    auditor.excuse("app-a")
    assert [f.client_id for f in auditor.finish(now_ms=5000)] == ["app-ab-StreamThread-1-consumer"]
