"""The assignor lab (mockbroker_pipeline.lab) on a local Spark session: the small grid through every registered
assignor, including a plugin registered through the entry-point group; the reference claims hold
with the numbers shown; the simulation's bookkeeping is checked against the assignors themselves."""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path
from typing import Any

import pytest

from mockbroker_assignors import registry
from mockbroker_assignors.types import ClusterMetadata, Subscription
from mockbroker_pipeline.scenarios import Scenario, assignor_names, grid, simulate


def _read(out: Path, table: str) -> list[dict[str, Any]]:
    import pyarrow.parquet as pq

    return pq.read_table(out / table).to_pylist()


def test_every_assignor_runs_every_scenario(lab_out: Path) -> None:
    steps = _read(lab_out, "lab_steps")
    expected = {(s.scenario, name if kind == "client" else f"{name} (KIP-848)")
                for s in grid("small") for name, kind in assignor_names()}  # fmt: skip
    assert {(r["scenario"], r["assignor"]) for r in steps} == expected
    assert not [r for r in steps if r["errors"]]
    summary = _read(lab_out, "lab_summary")
    assert len(summary) == len(expected)


def test_the_reference_claims_hold_on_the_small_grid(lab_out: Path) -> None:
    claims = {c["name"]: c for c in _read(lab_out, "lab_claims")}
    assert set(claims) == {
        "range_overloads_first_members",
        "roundrobin_unbalanced_heterogeneous",
        "sticky_moves_fewer_than_range_on_leave",
        "cooperative_revokes_only_what_moves",
    }
    failing = {n: c["evidence"] for n, c in claims.items() if not c["holds"]}
    assert not failing, failing
    report = (lab_out / "report.html").read_text()
    for c in claims.values():
        assert c["evidence"].split(":")[0] in report


def test_claim_numbers_are_the_assignors_own() -> None:
    """The many-topics scenario's range numbers are exactly range's result on that group."""
    scenario = next(s for s in grid("small") if s.scenario.startswith("many-topics"))
    rows = simulate(scenario, "range", "client")
    members = {f"m{i}": Subscription(tuple(scenario.topics)) for i in range(scenario.members)}
    direct = registry.get("range").assign(ClusterMetadata.of(scenario.topics), members)
    assert json.loads(rows[0].counts_json) == [len(direct[m].partitions) for m in sorted(members)]


def test_static_restarts_never_rebalance_dynamic_ones_do() -> None:
    static = Scenario("s", 4, {"t": 12}, "uniform", "rolling_restart_static")
    dynamic = Scenario("d", 4, {"t": 12}, "uniform", "rolling_restart_dynamic")
    for name, kind in assignor_names():
        s_rows, d_rows = simulate(static, name, kind)[1:], simulate(dynamic, name, kind)[1:]
        assert [r.rebalances for r in s_rows] == [0, 0, 0, 0]
        assert sum(r.moved + r.revoked for r in s_rows) == 0
        assert all(r.rebalances >= 2 for r in d_rows)  # a leave, then a join


def test_eager_revokes_everything_cooperative_only_what_moves() -> None:
    scenario = Scenario("o", 3, {"t": 12}, "uniform", "scale_out")
    sticky_rows = simulate(scenario, "sticky", "client")
    coop_rows = simulate(scenario, "cooperative-sticky", "client")
    for s, c in zip(sticky_rows[1:], coop_rows[1:], strict=True):
        assert s.revoked == 12  # every partition survivors held
        assert c.revoked == c.moved_from_survivors == c.moved > 0
        assert c.rebalances == 2  # revoke, then the follow-up


def test_plugins_join_the_lab(monkeypatch: pytest.MonkeyPatch, spark: Any, tmp_path: Path) -> None:
    # An entry-point plugin is listed with the built-ins (what the lab runs by default)...
    point = importlib.metadata.EntryPoint(
        name="topic-roundrobin", value="tests.pipeline.plugin:TopicRoundRobinAssignor", group="mockbroker.assignors"
    )
    monkeypatch.setattr(registry, "default_registry", registry.AssignorRegistry(entry_points=lambda: [point]))
    assert ("topic-roundrobin", "client") in assignor_names()
    # ...and a "module:attr" reference runs on the executors, which resolve it themselves.
    from mockbroker.cli import main

    reference = "tests.pipeline.plugin:TopicRoundRobinAssignor"
    out = tmp_path / "lab"
    assert main(["assignor-lab", "--grid", "small", "--assignor", reference, "--assignor", "range",
                 "--out", str(out)]) == 0  # fmt: skip
    steps = _read(out, "lab_steps")
    assert {r["assignor"] for r in steps} == {reference, "range"}
    assert not [r for r in steps if r["errors"]]
    many = next(r for r in steps if r["assignor"] == reference and r["step"] == 0 and r["scenario"].startswith("many"))
    # It deals each topic from its first subscriber: 8 topics of 2 partitions go to c00 and c01 only.
    assert json.loads(many["counts_json"]) == [8, 8, 0]
