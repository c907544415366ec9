"""The assignor lab on Spark: a scenario grid x every registered assignor, run on the executors.

The driver builds one row per (scenario, assignor) from ``mockbroker_pipeline.scenarios.grid`` and
``mockbroker_assignors.registry`` (built-ins and plugins found through the ``mockbroker.assignors`` entry
points; the executors resolve the same names, so a plugin must be installed where they run), and
``mapInPandas`` plays each through ``mockbroker_pipeline.scenarios.simulate``. Outputs, as Parquet under --out:
``lab_steps`` (one row per scenario, assignor and churn step), ``lab_summary`` (one row per scenario
and assignor) and ``lab_claims`` (the reference claims, each with its numbers from this grid and
whether it holds), plus ``report.html``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from mockbroker_pipeline.scenarios import (
    STEP_COLUMNS,
    Scenario,
    assignor_names,
    grid,
    rows_as_dicts,
    simulate_safely,
)
from mockbroker_pipeline.session import prepare_out, report_path, table_path

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame, SparkSession

STEP_SCHEMA = ", ".join(f"{name} {kind}" for name, kind in STEP_COLUMNS.items())


@dataclass(frozen=True)
class Claim:
    name: str
    statement: str
    evidence: str
    holds: bool


@dataclass
class LabResult:
    steps: DataFrame
    summary: list[dict[str, Any]]
    claims: list[Claim]
    out: str | None  # where the Parquet tables went


def _label(name: str, kind: str) -> str:
    """Client-side assignors by protocol name; KIP-848 server-side ones marked, since both have a "range"."""
    return name if kind == "client" or ":" in name else f"{name} (KIP-848)"


def _run_batches(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """mapInPandas body: (scenario JSON, assignor, kind) rows -> step rows."""
    import pandas as pd

    for batch in batches:
        rows: list[dict[str, Any]] = []
        for spec, assignor, kind in zip(batch["spec"], batch["assignor"], batch["kind"], strict=True):
            for row in rows_as_dicts(simulate_safely(Scenario.from_json(spec), assignor, kind)):
                row["assignor"] = _label(assignor, kind)
                rows.append(row)
        yield pd.DataFrame(rows, columns=list(STEP_COLUMNS))


def run_grid(spark: SparkSession, scenarios: Sequence[Scenario], assignors: Sequence[tuple[str, str]] | None = None,
             partitions: int | None = None) -> DataFrame:  # fmt: skip
    """Every scenario through every assignor on the executors: the ``lab_steps`` table."""
    assignors = list(assignors if assignors is not None else assignor_names())
    work = [(s.to_json(), name, kind) for s in scenarios for name, kind in assignors]
    if not work:
        raise ValueError("the lab has nothing to run: no scenarios or no assignors")
    slices = partitions or max(spark.sparkContext.defaultParallelism, 1) * 2
    df = spark.createDataFrame(work, "spec STRING, assignor STRING, kind STRING").repartition(slices)
    return df.mapInPandas(_run_batches, STEP_SCHEMA)


def summarize(steps: DataFrame) -> DataFrame:
    """``lab_summary``: per scenario and assignor (DataFrame API)."""
    from pyspark.sql import functions as F

    churn = F.col("step") > 0
    rebalancing = churn & (F.col("rebalances") > 0)
    return (
        steps.groupBy("scenario", "assignor", "protocol", "members", "topics", "partitions", "pattern", "churn")
        .agg(
            F.max(F.when(F.col("step") == 0, F.col("spread"))).alias("initial_spread"),
            F.max(F.when(F.col("step") == 0, F.col("stddev"))).alias("initial_stddev"),
            F.max("spread").alias("worst_spread"),
            F.sum(F.when(churn, F.col("rebalances")).otherwise(0)).alias("rebalances"),
            F.sum(F.when(churn, F.col("moved")).otherwise(0)).alias("moved"),
            F.coalesce(
                F.sum(F.when(rebalancing, F.col("moved"))) / F.sum(F.when(rebalancing, F.col("rebalances"))), F.lit(0.0)
            ).alias("moved_per_rebalance"),
            F.coalesce(F.avg(F.when(churn, F.col("revoked"))), F.lit(0.0)).alias("revoked_per_step"),
            F.sum(F.when(churn, F.col("revoked")).otherwise(0)).alias("revoked"),
            F.sum(F.when(churn, F.col("ownership_changes")).otherwise(0)).alias("ownership_changes"),
            F.avg(F.when(F.col("rebalances") > 0, F.col("assign_ms") / F.col("rebalances"))).alias("assign_ms"),
            F.concat_ws("; ", F.collect_set(F.when(F.col("errors") != "", F.col("errors")))).alias("errors"),
        )
        .orderBy("scenario", "assignor")
    )


def _rows(steps: list[dict[str, Any]], **where: Any) -> list[dict[str, Any]]:
    return [r for r in steps if all(r[k] == v for k, v in where.items())]


def evaluate_claims(steps: list[dict[str, Any]]) -> list[Claim]:
    """The reference articles' claims, measured on the lab's rows (any grid that has the scenarios)."""
    claims: list[Claim] = []

    # 1. Range balances each topic on its own, so with many topics the first members win every time.
    initial = [r for r in _rows(steps, step=0, pattern="uniform") if r["topics"] >= 4]
    by = {(r["scenario"], r["assignor"]): r for r in initial}
    cases = sorted({s for s, a in by if a == "range" and (s, "roundrobin") in by})
    if cases:
        worst = max(cases, key=lambda s: by[(s, "range")]["spread"])
        rng, rr = by[(worst, "range")], by[(worst, "roundrobin")]
        counts = json.loads(rng["counts_json"])
        first_win = counts == sorted(counts, reverse=True) and counts[0] > counts[-1]
        claims.append(Claim(
            "range_overloads_first_members",
            "range overloads the first members when there are many topics",
            f"{worst}: range gives {counts} partitions per member in member order (spread {rng['spread']}); "
            f"roundrobin gives {json.loads(rr['counts_json'])} (spread {rr['spread']})",
            first_win and rng["spread"] > rr["spread"],
        ))  # fmt: skip

    # 2. Round robin deals over all members in turn, skipping non-subscribers: unbalanced when
    # subscriptions differ; sticky balances within what each member may take.
    hetero = [r for r in _rows(steps, step=0) if r["pattern"] == "nested"]
    hby = {(r["scenario"], r["assignor"]): r for r in hetero}
    hcases = sorted({s for s, a in hby if a == "roundrobin" and (s, "sticky") in hby})
    if hcases:
        rr_spread = sum(hby[(s, "roundrobin")]["spread"] for s in hcases)
        st_spread = sum(hby[(s, "sticky")]["spread"] for s in hcases)
        example = hcases[0]
        claims.append(Claim(
            "roundrobin_unbalanced_heterogeneous",
            "round robin is unbalanced when members subscribe to different topics",
            f"{len(hcases)} nested-subscription scenarios: roundrobin spread {rr_spread} in total vs sticky {st_spread}; "
            f"e.g. {example}: roundrobin {json.loads(hby[(example, 'roundrobin')]['counts_json'])}, "
            f"sticky {json.loads(hby[(example, 'sticky')]['counts_json'])}",
            rr_spread > st_spread,
        ))  # fmt: skip

    # 3. Sticky keeps what it can: when a member leaves it moves only what must move.
    leaves = _rows(steps, action="leave")
    range_moved = sum(r["moved"] for r in leaves if r["assignor"] == "range")
    sticky_moved = sum(r["moved"] for r in leaves if r["assignor"] == "sticky")
    if leaves:
        claims.append(Claim(
            "sticky_moves_fewer_than_range_on_leave",
            "sticky moves fewer partitions than range when a member leaves",
            f"{len([r for r in leaves if r['assignor'] == 'range'])} leave steps: range moved {range_moved} partitions, "
            f"sticky {sticky_moved}",
            sticky_moved < range_moved,
        ))  # fmt: skip

    # 4. KIP-429: cooperative-sticky revokes only what moves away from a member that stays; eager
    # protocols revoke everything survivors hold.
    coop = [r for r in steps if r["assignor"] == "cooperative-sticky" and r["step"] > 0]
    eager = [r for r in steps if r["assignor"] == "sticky" and r["step"] > 0]
    if coop and eager:
        mismatched = [r for r in coop if r["revoked"] != r["moved_from_survivors"]]
        claims.append(Claim(
            "cooperative_revokes_only_what_moves",
            "cooperative-sticky revokes only the partitions that move",
            f"{len(coop)} churn steps: cooperative-sticky revoked {sum(r['revoked'] for r in coop)} and moved "
            f"{sum(r['moved_from_survivors'] for r in coop)} away from remaining members "
            f"({len(mismatched)} steps differ); eager sticky revoked {sum(r['revoked'] for r in eager)} "
            f"to move {sum(r['moved_from_survivors'] for r in eager)}",
            not mismatched and sum(r["revoked"] for r in eager) > sum(r["moved_from_survivors"] for r in eager),
        ))  # fmt: skip
    return claims


def lab(spark: SparkSession, scenarios: Sequence[Scenario], out: str | Path | None = None,
        assignors: Sequence[tuple[str, str]] | None = None) -> LabResult:  # fmt: skip
    steps = run_grid(spark, scenarios, assignors).cache()
    summary_df = summarize(steps).cache()
    rows = [r.asDict() for r in steps.collect()]
    claims = evaluate_claims(rows)
    out_path = None
    if out is not None:
        out_path = prepare_out(out)
        steps.coalesce(1).write.mode("overwrite").parquet(table_path(out_path, "lab_steps"))
        summary_df.coalesce(1).write.mode("overwrite").parquet(table_path(out_path, "lab_summary"))
        claims_df = spark.createDataFrame(
            [(c.name, c.statement, c.evidence, c.holds) for c in claims],
            "name STRING, statement STRING, evidence STRING, holds BOOLEAN",
        )
        claims_df.coalesce(1).write.mode("overwrite").parquet(table_path(out_path, "lab_claims"))
    summary = [r.asDict() for r in summary_df.collect()]
    return LabResult(steps, summary, claims, out_path)


def summary_text(result: LabResult) -> str:
    errors = [r for r in result.summary if r["errors"]]
    lines = [
        f"assignor lab: {len({r['scenario'] for r in result.summary})} scenarios x "
        f"{len({r['assignor'] for r in result.summary})} assignors",
        "",
        "claims:",
    ]
    for c in result.claims:
        lines.append(f"  [{'holds' if c.holds else 'DOES NOT HOLD'}] {c.statement}")
        lines.append(f"      {c.evidence}")
    lines += ["", "per assignor (over all scenarios): mean initial spread, moved per rebalance, revoked per step, ms per assignment"]
    for assignor in sorted({r["assignor"] for r in result.summary}):
        mine = [r for r in result.summary if r["assignor"] == assignor]

        def mean(key: str, rows: list[dict[str, Any]] = mine) -> float:
            values = [float(r[key]) for r in rows if r[key] is not None]
            return sum(values) / len(values) if values else 0.0

        lines.append(f"  {assignor:24} {mean('initial_spread'):7.2f} {mean('moved_per_rebalance'):7.2f} "
                     f"{mean('revoked_per_step'):7.2f} {mean('assign_ms'):9.3f}")  # fmt: skip
    for r in errors:
        lines.append(f"  error: {r['assignor']} on {r['scenario']}: {r['errors']}")
    if result.out is not None:
        tables = ", ".join(table_path(result.out, t) for t in ("lab_steps", "lab_summary", "lab_claims"))
        lines += ["", f"written: {tables}, {report_path(result.out)}"]
    return "\n".join(lines)


def parse_assignors(specs: Sequence[str]) -> list[tuple[str, str]]:
    """--assignor values -> (name, kind): ``server:NAME`` or ``NAME (KIP-848)`` a server-side one, a
    ``module:attr`` reference loaded here to learn its kind, else a client-side protocol name."""
    from mockbroker_assignors import registry

    chosen: list[tuple[str, str]] = []
    for spec in specs:
        if spec.startswith("server:"):
            name, kind = spec.removeprefix("server:"), "server"
        elif spec.endswith(" (KIP-848)"):
            name, kind = spec.removesuffix(" (KIP-848)"), "server"
        elif ":" in spec:
            name, kind = spec, registry.kind_of(registry.load(spec))
        else:
            name, kind = spec, "client"
        try:  # unknown names fail here, before Spark starts
            if kind == "server":
                registry.resolve_server(name)
            else:
                registry.resolve(name)
        except KeyError as exc:
            raise ValueError(str(exc)) from None
        chosen.append((name, kind))
    return chosen


def run(size: str, out: str | Path, master: str | None = None, stdout: TextIO | None = None,
        assignors: Sequence[str] | None = None) -> LabResult:  # fmt: skip
    """``mockbroker assignor-lab``."""
    from mockbroker_pipeline.report import write_report
    from mockbroker_pipeline.session import get_session

    scenarios = grid(size)  # ValueError for an unknown size, before Spark starts
    chosen = parse_assignors(assignors) if assignors else None
    spark = get_session(master)
    result = lab(spark, scenarios, out, chosen)
    write_report(report_path(out), lab=result)
    print(summary_text(result), file=stdout or sys.stdout, flush=True)
    return result

