"""KIP-848 epochs from hand-written consumer-group events (docs/events.md), without Spark."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mockbroker_pipeline.epochs import replay_epochs


def _e(seq: int, time_ms: int, type: str, reason: str | None = None, **details: Any) -> dict[str, Any]:
    return {"seq": seq, "time_ms": time_ms, "type": type, "group_id": "g", "reason": reason, "details": json.dumps(details)}


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
