"""Group epochs (KIP-848 consumer, share and streams groups) from hand-written events (docs/events.md),
without Spark; and the tables and report charts on Spark."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mockbroker_pipeline.epochs import replay_epochs


def _e(seq: int, time_ms: int, type: str, reason: str | None = None, member: str | None = None, epoch: int | None = None,
       **details: Any) -> dict[str, Any]:
    return {"seq": seq, "time_ms": time_ms, "type": type, "group_id": "g", "reason": reason, "member_id": member,
            "generation_id": epoch, "details": json.dumps(details)}  # fmt: skip


def _events() -> list[dict[str, Any]]:
    return [
        _e(1, 100, "consumer_group.created", state="Empty"),
        _e(2, 100, "consumer_group.epoch_bumped", "member m1 joined", group_epoch=1),
        _e(3, 100, "consumer_group.target_assignment", assignor="uniform", assignment_epoch=1,
           target={"m1": {"t": [0, 1, 2, 3]}}),
        _e(4, 105, "consumer_group.member_reconciled", assignment_epoch=1, member_epoch=1),
        _e(5, 105, "consumer_group.transition", from_state="Reconciling", to_state="Stable", group_epoch=1),
        _e(6, 200, "consumer_group.epoch_bumped", "member m2 joined", group_epoch=2),
        _e(7, 200, "consumer_group.target_assignment", assignor="uniform", assignment_epoch=2,
           target={"m1": {"t": [0, 1]}, "m2": {"t": [2, 3]}}),
        _e(8, 210, "consumer_group.member_reconciled", assignment_epoch=2),
        _e(9, 230, "consumer_group.member_reconciled", assignment_epoch=2),
        _e(10, 250, "consumer_group.transition", from_state="Reconciling", to_state="Stable", group_epoch=2),
        _e(11, 300, "consumer_group.epoch_bumped", "member m2 left", group_epoch=3),
        _e(12, 300, "consumer_group.target_assignment", assignor="uniform", assignment_epoch=3,
           target={"m1": {"t": [0, 1, 2, 3]}}),
        _e(13, 301, "member.joined"),  # another kind: ignored
    ]


def test_epochs_reconciliation_time_and_moves() -> None:
    events = _events()
    rows = [r.to_record() for r in replay_epochs("g", events)]
    assert [(r["group_epoch"], r["trigger"], r["reconciliation_ms"], r["partitions_moved"], r["members"],
             r["reconciliation_steps"]) for r in rows] == [
        (1, "member m1 joined", 5, 0, 1, 1),
        (2, "member m2 joined", 50, 2, 2, 2),
        (3, "member m2 left", None, 2, 1, 0),
    ]  # fmt: skip
    assert all(r["partitions_assigned"] == 4 for r in rows)
    # No member event before the bumps here, so no cause but the reason text.
    assert {r["cause"] for r in rows} == {"other"} and not any(r["control"] for r in rows)


def test_epoch_causes_include_the_control_api() -> None:
    """A forced rebalance and a session expired by the control API (their ``control.*`` events come
    first, then the coordinator's own), beside a member that joined."""
    events = [
        _e(1, 100, "consumer_group.member_joined", member="m1"),
        _e(2, 100, "consumer_group.member_updated", member="m1", changes=["subscribed_topic_names"]),
        _e(3, 100, "consumer_group.epoch_bumped", "member m1 joined", group_epoch=1),
        _e(3, 200, "control.rebalance_forced", "forced by the test"),
        _e(4, 200, "consumer_group.epoch_bumped", "forced by the test", group_epoch=2),
        _e(5, 300, "control.session_expired", "session of member m1 expired now", member="m1"),
        _e(6, 300, "consumer_group.member_fenced", "member m1 fenced", member="m1", cause="session_timeout"),
        _e(7, 300, "consumer_group.epoch_bumped", "member m1 fenced", group_epoch=3),
        _e(8, 400, "consumer_group.member_fenced", "member m2 fenced", member="m2", cause="session_timeout"),
        _e(9, 400, "consumer_group.epoch_bumped", "member m2 fenced", group_epoch=4),
    ]
    rows = [(r.group_epoch, r.cause, r.control) for r in replay_epochs("g", events)]
    assert rows == [(1, "join", False), (2, "forced_rebalance", True), (3, "session_timeout", True),
                    (4, "session_timeout", False)]  # fmt: skip


def _share_events() -> list[dict[str, Any]]:
    """A share group: m1 joins (epoch 1), m2 joins (epoch 2; both take the target at their next
    heartbeats), m2 leaves (epoch 3, no epoch_bumped: the removal bumps it)."""
    return [
        _e(1, 100, "share_group.member_joined", member="m1", epoch=0),
        _e(2, 100, "share_group.epoch_bumped", member="m1", epoch=1),
        _e(3, 100, "share_group.target_assignment", epoch=1, assignment_epoch=1, target={"m1": {"q": [0, 1]}}),
        _e(4, 100, "share_group.transition", epoch=1, from_state="Empty", to_state="Stable", group_epoch=1),
        _e(5, 100, "share_group.member_assignment", member="m1", epoch=1, member_epoch=1, assigned={"q": [0, 1]}),
        _e(6, 200, "share_group.member_joined", member="m2", epoch=1),
        _e(7, 200, "share_group.epoch_bumped", member="m2", epoch=2),
        _e(8, 200, "share_group.target_assignment", epoch=2, assignment_epoch=2,
           target={"m1": {"q": [0]}, "m2": {"q": [1]}}),
        _e(9, 200, "share_group.member_assignment", member="m2", epoch=2, member_epoch=2, assigned={"q": [1]}),
        _e(10, 260, "share_group.member_assignment", member="m1", epoch=2, member_epoch=2, assigned={"q": [0]}),
        _e(11, 300, "control.rebalance_forced", "forced"),  # a share group cannot be forced: ignored cause
        _e(12, 300, "share_group.member_left", "member m2 left", member="m2", epoch=3, cause="left"),
        _e(13, 300, "share_group.target_assignment", epoch=3, assignment_epoch=3, target={"m1": {"q": [0, 1]}}),
    ]


def test_share_group_epochs() -> None:
    rows = [r.to_record() for r in replay_epochs("g", _share_events(), "share_group")]
    assert [(r["group_epoch"], r["cause"], r["reconciliation_ms"], r["members"], r["partitions_moved"],
             r["reconciliation_steps"]) for r in rows] == [
        (1, "join", 0, 1, 0, 1),
        (2, "join", 60, 2, 1, 2),
        (3, "leave", None, 1, 1, 0),
    ]  # fmt: skip
    assert rows[2]["trigger"] == "member m2 leave"
    assert rows[2]["control"]  # the control event before it is kept as a cause: it came first


def test_streams_group_epochs_count_active_tasks() -> None:
    def target(**members: list[int]) -> dict[str, Any]:
        return {m: {"active": {"0": parts}, "standby": {}} for m, parts in members.items()}

    events = [
        _e(1, 100, "streams_group.member_joined", member="a"),
        _e(2, 100, "streams_group.epoch_bumped", "member a: joined", group_epoch=1),
        _e(3, 100, "streams_group.target_assignment", assignment_epoch=1, target=target(a=[0, 1, 2, 3])),
        _e(4, 110, "streams_group.member_reconciled", member="a", member_epoch=1),
        _e(5, 110, "streams_group.transition", from_state="Reconciling", to_state="Stable", group_epoch=1),
        _e(6, 200, "control.rebalance_forced", "forced"),
        _e(7, 200, "streams_group.epoch_bumped", "forced", group_epoch=2),
        _e(8, 200, "streams_group.target_assignment", assignment_epoch=2, target=target(a=[0, 1], b=[2, 3])),
        _e(9, 230, "streams_group.member_reconciled", member="a", member_epoch=2),
        _e(10, 240, "streams_group.transition", from_state="Reconciling", to_state="Stable", group_epoch=2),
    ]
    rows = [r.to_record() for r in replay_epochs("g", events, "streams_group")]
    assert [(r["group_epoch"], r["cause"], r["control"], r["reconciliation_ms"], r["partitions_assigned"],
             r["partitions_moved"], r["reconciliation_steps"]) for r in rows] == [
        (1, "join", False, 10, 4, 0, 1),
        (2, "forced_rebalance", True, 40, 4, 2, 1),
    ]  # fmt: skip


def test_epochs_table_and_report_charts(spark: Any, tmp_path: Path) -> None:
    """The file job's ``consumer_group_epochs`` table, and the report's KIP-848 charts rendered in
    headless Chromium (the bar colour of the KIP-848 charts on the screenshot)."""
    from mockbroker_pipeline.analyze import EPOCHS_TABLE, analyze
    from mockbroker_pipeline.report import PALETTE, write_report
    from tests.pipeline.test_report import colours, decode_png, screenshot

    log = tmp_path / "kip848.jsonl"
    lines = []
    for e in _events():
        record = {k: v for k, v in e.items() if v is not None}
        record["v"] = 1
        record["details"] = json.loads(e["details"])
        lines.append(json.dumps(record))
    log.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    analysis = analyze(spark, [str(log)], out)
    assert analysis.epochs is not None
    rows = [r.asDict() for r in analysis.epochs.collect()]
    assert [(r["group_epoch"], r["reconciliation_ms"], r["partitions_moved"]) for r in rows] == [
        (1, 5, 0), (2, 50, 2), (3, None, 2)
    ]  # fmt: skip
    assert spark.read.parquet(str(out / EPOCHS_TABLE)).count() == 3

    html = write_report(out / "report.html", analysis=analysis)
    text = html.read_text()
    assert "KIP-848 reconciliation time per group epoch" in text and "KIP-848 partitions moved per group epoch" in text
    # Only the KIP-848 group here: the first series' colour on the screenshot is its bars.
    _, _, png_rows = decode_png(screenshot(html, tmp_path / "kip848.png", tmp_path))
    bar = tuple(int(PALETTE[0][i : i + 2], 16) for i in (1, 3, 5))
    assert bar in colours(png_rows)
