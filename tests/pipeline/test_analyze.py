"""Rebalance analytics (mockbroker_pipeline.analyze) on a local Spark session, over event logs the suite records
from real confluent-kafka consumers (tests/pipeline/recorded.py). Every expected number comes from
the scenario itself: the broker's group state at each settled step and the members' own rebalance
callbacks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mockbroker_pipeline.analyze import EventLogError
from tests.pipeline import recorded


def _read(out: Path, table: str) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return pq.read_table(out / table).to_pylist()


def _rows(out: Path, group: str, after: int, upto: int) -> list[dict[str, Any]]:
    """The group's generations in (after, upto], in order."""
    rows = [r for r in _read(out, "rebalances") if r["group_id"] == group and after < r["generation_id"] <= upto]
    return sorted(rows, key=lambda r: r["generation_id"])


def _members(out: Path, group: str, generation: int) -> dict[str, dict[str, Any]]:
    return {
        m["member_id"]: m
        for m in _read(out, "rebalance_members")
        if m["group_id"] == group and m["generation_id"] == generation
    }


def _times(path: Path, group: str, generation: int) -> tuple[int, int]:
    """From the raw log: when the rebalance forming ``generation`` began and when it reached Stable."""
    events = [json.loads(line) for line in path.read_text().splitlines()]
    mine = [e for e in events if e.get("group_id") == group and e["type"] == "group.transition"]
    formed = next(e for e in mine if e["details"]["to_state"] == "CompletingRebalance" and e["generation_id"] == generation)
    start = [e for e in mine if e["details"]["to_state"] == "PreparingRebalance" and e["seq"] < formed["seq"]][-1]
    stable = next(e for e in mine if e["details"]["to_state"] == "Stable" and e["generation_id"] == generation)
    return start["time_ms"], stable["time_ms"]


def test_eager_rebalances_revoke_everything(analysis_out: Path, eager_run: recorded.Eager) -> None:
    views, group = eager_run.views, eager_run.group
    steps = [("three", "four", "join", 3, 4), ("four", "left", "leave", 4, 3), ("left", "killed", "session_expiry", 3, 2)]
    for before_key, after_key, trigger, n_before, n_after in steps:
        before, after = views[before_key], views[after_key]
        rows = _rows(analysis_out, group, before.generation_id, after.generation_id)
        # confluent-kafka settles each change in one generation; should a client rejoin once more
        # (a metadata refresh), that extra generation must move nothing.
        row, extra = rows[0], rows[1:]
        assert all(r["partitions_moved"] == 0 and r["trigger"] != trigger for r in extra), extra
        assert (row["trigger"], row["rebalance_protocol"], row["protocol_name"], row["outcome"]) == (
            trigger, "eager", "range", "stable"
        )  # fmt: skip
        assert (row["members_before"], row["members_after"]) == (n_before, n_after)
        held = {m.member_id: len(m.assignment) for m in before.members}
        survivors = {m.member_id for m in after.members} & set(held)
        # Every surviving member lost all it held: revoked is everything they owned.
        assert row["partitions_revoked"] == sum(held[m] for m in survivors)
        members = _members(analysis_out, group, row["generation_id"])
        for member_id in survivors:
            assert members[member_id]["revoked"] == members[member_id]["partitions_before"] == held[member_id] > 0
            assert members[member_id]["time_without_partitions_ms"] is not None
        assert row["partitions_moved"] == recorded.moved_between(before, after)
        counts = [len(m.assignment) for m in after.members]
        assert (row["max_partitions_per_member"], row["min_partitions_per_member"]) == (max(counts), min(counts))
        assert row["partitions_assigned"] == recorded.PARTITIONS
        start, end = _times(eager_run.path, group, row["generation_id"])
        assert (row["start_ms"], row["end_ms"], row["duration_ms"]) == (start, end, end - start)


def test_cooperative_rebalance_revokes_only_what_moves(
    analysis_out: Path, cooperative_run: recorded.Cooperative
) -> None:
    before, after, group = cooperative_run.before, cooperative_run.after, cooperative_run.group
    assert before is not None and after is not None
    rows = _rows(analysis_out, group, before.generation_id, after.generation_id)
    # KIP-429: two generations, one to revoke what moves, a follow-up to hand it out (any further
    # generation, should a client rejoin again, must neither move nor revoke anything).
    rows, extra = rows[:2], rows[2:]
    assert all(r["partitions_moved"] == r["partitions_revoked"] == 0 for r in extra), extra
    assert [(r["trigger"], r["rebalance_protocol"]) for r in rows] == [
        ("join", "cooperative"), ("cooperative_followup", "cooperative")
    ]  # fmt: skip
    revoke, follow = rows
    ids = {m.client_id: m.member_id for m in after.members}
    callbacks = {ids[c]: len(parts) for c, parts in cooperative_run.revoked.items()}
    members = _members(analysis_out, group, revoke["generation_id"])
    assert {m: members[m]["revoked"] for m in callbacks} == callbacks
    assert revoke["partitions_revoked"] == sum(callbacks.values()) > 0
    for m in callbacks:  # only some of what each member held
        assert 0 < members[m]["revoked"] < members[m]["partitions_before"]
    assert revoke["partitions_moved"] == 0 and follow["partitions_revoked"] == 0
    # Everything revoked moved to the newcomer, and nothing else moved.
    newcomer = ids["coop-3"]
    assert follow["partitions_moved"] == sum(callbacks.values()) == len(after.by_member_id()[newcomer].assignment)
    assert revoke["partitions_moved"] + follow["partitions_moved"] == recorded.moved_between(before, after)
    waited = _members(analysis_out, group, follow["generation_id"])
    assert [m for m, row in waited.items() if row["time_without_partitions_ms"] is not None] == [newcomer]


def test_static_rolling_restart_has_no_rebalance(analysis_out: Path, static_run: recorded.StaticRestart) -> None:
    before, after, group = static_run.before, static_run.after, static_run.group
    assert before is not None and after is not None
    assert after.generation_id == before.generation_id
    rows = [r for r in _read(analysis_out, "rebalances") if r["group_id"] == group]
    assert max(r["generation_id"] for r in rows) == before.generation_id
    assert not [r for r in rows if r["trigger"] == "static_replacement"]
    (summary,) = [g for g in _read(analysis_out, "group_summary") if g["group_id"] == group]
    assert summary["static_replacements"] == static_run.restarts == 3
    assert summary["static_rebalances"] == 0
    assert summary["generations"] == len(rows) == before.generation_id


def test_summaries_add_up(analysis_out: Path) -> None:
    rebalances = _read(analysis_out, "rebalances")
    groups = _read(analysis_out, "group_summary")
    runs = _read(analysis_out, "run_summary")
    assert sorted(Path(r["run"]).name for r in runs) == ["cooperative.jsonl", "eager.jsonl", "static.jsonl"]
    for run in runs:
        mine = [r for r in rebalances if r["run"] == run["run"]]
        assert run["generations"] == len(mine)
        assert run["partitions_moved"] == sum(r["partitions_moved"] for r in mine)
        assert run["total_rebalance_ms"] == sum(r["duration_ms"] or 0 for r in mine)
    for g in groups:
        mine = [r for r in rebalances if (r["run"], r["group_id"]) == (g["run"], g["group_id"])]
        assert g["partitions_revoked"] == sum(r["partitions_revoked"] for r in mine)
        counted = " ".join(f"{t}={sum(1 for r in mine if r['trigger'] == t)}" for t in sorted({r["trigger"] for r in mine}))
        assert g["triggers"] == counted


def test_cli_summary_and_bad_input(spark: Any, eager_run: recorded.Eager, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    from mockbroker.cli import main

    assert main(["analyze", str(eager_run.path), "--out", str(tmp_path / "out")]) == 0
    text = capsys.readouterr().out
    assert "runs: 1" in text and "eager.jsonl" in text and "session_expiry" in text
    assert (tmp_path / "out" / "report.html").is_file()

    assert main(["analyze", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o2")]) == 2
    assert "no such file" in capsys.readouterr().err

    bad = tmp_path / "bad.jsonl"
    bad.write_text(eager_run.path.read_text().splitlines()[0] + "\n{not json\n")
    assert main(["analyze", str(bad), "--out", str(tmp_path / "o3")]) == 2
    assert "not event records" in capsys.readouterr().err

    twice = tmp_path / "twice.jsonl"
    twice.write_text(eager_run.path.read_text() * 2)
    assert main(["analyze", str(twice), "--out", str(tmp_path / "o4")]) == 2
    assert "more than one run" in capsys.readouterr().err

    with pytest.raises(EventLogError, match="schema version 2"):
        from mockbroker_pipeline.analyze import read_events

        newer = tmp_path / "newer.jsonl"
        newer.write_text('{"v":2,"seq":1,"time_ms":1,"type":"group.created","group_id":"g"}\n')
        read_events(spark, [str(newer)])
