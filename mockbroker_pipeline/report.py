"""The pipeline's report: one self-contained HTML file (inline CSS and SVG, no script, no network).

``write_report(path, analysis=..., lab=...)`` renders whichever parts it is given: the rebalance
analytics (runs, groups, each rebalance's duration and partition churn) and the assignor lab (the
claims with their numbers, balance and movement per assignor). Charts are grouped bar charts drawn
as SVG here, so the file opens anywhere, offline, and prints.
"""

from __future__ import annotations

import html
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mockbroker_pipeline.analyze import Analysis
    from mockbroker_pipeline.lab import LabResult

PALETTE = ("#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2", "#97bbf5", "#9c6b4e")
MAX_TABLE_ROWS = 300
MAX_BARS = 60

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1180px; color: #1d1d1f; }
h1 { font-size: 24px; } h2 { font-size: 19px; margin-top: 36px; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 12.5px; }
th, td { border: 1px solid #ddd; padding: 3px 7px; text-align: right; }
th { background: #f3f4f6; } td.l, th.l { text-align: left; }
.ok { color: #1a7f37; font-weight: 600; } .bad { color: #cf222e; font-weight: 600; }
figure { margin: 12px 0 24px; } figcaption { font-size: 12.5px; color: #555; }
.note { color: #555; font-size: 12.5px; } .wide { overflow-x: auto; }
"""


def _esc(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.2f}"
    return html.escape(str(value))


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str], left: Sequence[str] = ()) -> str:
    shown = rows[:MAX_TABLE_ROWS]
    head = "".join(f'<th class="{"l" if c in left else ""}">{_esc(c)}</th>' for c in columns)
    body = "".join(
        "<tr>" + "".join(f'<td class="{"l" if c in left else ""}">{_esc(r.get(c))}</td>' for c in columns) + "</tr>"
        for r in shown
    )
    more = f'<p class="note">{len(rows) - len(shown)} more rows in the Parquet output.</p>' if len(rows) > len(shown) else ""
    return f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>{more}'


def bar_chart(title: str, categories: Sequence[str], series: Mapping[str, Sequence[float | None]], unit: str = "") -> str:
    """A grouped bar chart as inline SVG: one group per category, one bar per series."""
    if len(categories) > MAX_BARS:
        title = f"{title} (the first {MAX_BARS} of {len(categories)})"
    categories = list(categories)[:MAX_BARS]
    names = list(series)
    values = [[float(v or 0) for v in list(series[n])[: len(categories)]] for n in names]
    top = max([v for vs in values for v in vs] + [0.0]) or 1.0
    width, height, left, bottom, top_pad = 1100, 340, 150, 110, 30
    plot_w, plot_h = width - left - 20, height - bottom - top_pad
    group_w = plot_w / max(len(categories), 1)
    bar_w = max(group_w * 0.8 / max(len(names), 1), 1.0)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{_esc(title)}">',
        f'<rect width="{width}" height="{height}" fill="#ffffff"/>',
    ]
    for i in range(5):  # grid lines and y labels
        value = top * i / 4
        y = top_pad + plot_h - plot_h * i / 4
        parts.append(f'<line x1="{left}" x2="{width - 20}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e7eb"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end">{value:.4g}</text>')
    for ci, category in enumerate(categories):
        x0 = left + ci * group_w + group_w * 0.1
        for si, name in enumerate(names):
            v = values[si][ci] if ci < len(values[si]) else 0.0
            h = plot_h * v / top
            x = x0 + si * bar_w
            parts.append(
                f'<rect x="{x:.1f}" y="{top_pad + plot_h - h:.1f}" width="{bar_w:.1f}" height="{h:.1f}" '
                f'fill="{PALETTE[si % len(PALETTE)]}"><title>{_esc(category)} {_esc(name)}: {v:.4g}{unit}</title></rect>'
            )
        cx = left + ci * group_w + group_w / 2
        parts.append(
            f'<text x="{cx:.1f}" y="{top_pad + plot_h + 12}" font-size="10" text-anchor="end" '
            f'transform="rotate(-35 {cx:.1f} {top_pad + plot_h + 12})">{_esc(category[-30:])}</text>'
        )
    parts.append(f'<line x1="{left}" x2="{width - 20}" y1="{top_pad + plot_h}" y2="{top_pad + plot_h}" stroke="#333"/>')
    for si, name in enumerate(names):  # legend
        x = left + si * 170
        parts.append(f'<rect x="{x}" y="6" width="12" height="12" fill="{PALETTE[si % len(PALETTE)]}"/>')
        parts.append(f'<text x="{x + 16}" y="16" font-size="12">{_esc(name)}</text>')
    parts.append("</svg>")
    return f"<figure>{''.join(parts)}<figcaption>{_esc(title)}</figcaption></figure>"


def _analysis_section(analysis: Analysis) -> str:
    runs = [r.asDict() for r in analysis.runs.collect()]
    groups = [r.asDict() for r in analysis.groups.collect()]
    rebalances = [r.asDict() for r in analysis.rebalances.limit(MAX_TABLE_ROWS * 4).collect()]
    for rows in (runs, groups, rebalances):
        for r in rows:
            r["run"] = os.path.basename(r["run"])
    labels = [f"{r['run']}:{r['group_id']}:g{r['generation_id']}" for r in rebalances]
    out = ["<h2>Rebalance analytics</h2>", "<h3>Runs</h3>"]
    out.append(table(runs, ["run", "events", "groups", "generations", "total_rebalance_ms", "max_rebalance_ms",
                            "partitions_moved", "partitions_revoked", "static_replacements", "members_expired"],
                     left=["run"]))  # fmt: skip
    out.append("<h3>Groups</h3>")
    out.append(table(groups, ["run", "group_id", "generations", "triggers", "rebalance_protocols", "total_rebalance_ms",
                              "max_rebalance_ms", "partitions_moved", "partitions_revoked", "static_replacements",
                              "static_rebalances", "members_now"], left=["run", "group_id", "triggers", "rebalance_protocols"]))  # fmt: skip
    out.append(bar_chart(
        "Duration to Stable per rebalance (ms), split by rebalance protocol",
        labels,
        {p: [r["duration_ms"] if r["rebalance_protocol"] == p else 0 for r in rebalances]
         for p in sorted({r["rebalance_protocol"] for r in rebalances}) or ["eager"]},
        " ms",
    ))  # fmt: skip
    out.append(bar_chart(
        "Partitions moved and revoked per rebalance",
        labels,
        {"moved": [r["partitions_moved"] for r in rebalances], "revoked": [r["partitions_revoked"] for r in rebalances]},
    ))  # fmt: skip
    out.append(bar_chart(
        "Longest time a member went without partitions, per rebalance (ms)",
        labels,
        {"max time without partitions": [r["max_time_without_partitions_ms"] for r in rebalances]},
        " ms",
    ))  # fmt: skip
    out.append(_epochs_section(analysis))
    out.append("<h3>Rebalances</h3>")
    out.append(table(rebalances, ["run", "group_id", "generation_id", "trigger", "rebalance_protocol", "protocol_name",
                                  "duration_ms", "members_before", "members_after", "partitions_moved",
                                  "partitions_revoked", "max_time_without_partitions_ms", "max_partitions_per_member",
                                  "min_partitions_per_member", "outcome"],
                     left=["run", "group_id", "trigger", "rebalance_protocol", "protocol_name", "outcome"]))  # fmt: skip
    return "\n".join(out)


# Each group kind's section: (anchor, heading and chart prefix, what its partitions are).
_KIND_TITLES = {
    "consumer_group": ("kip848", "KIP-848 consumer groups", "partitions moved"),
    "share_group": ("share", "KIP-932 share groups", "partitions moved"),
    "streams_group": ("streams", "KIP-1071 streams groups", "active tasks moved"),
}


def _epochs_section(analysis: Analysis) -> str:
    """KIP-848, share and streams groups: their own charts (one bar per group epoch), for each kind
    the runs have."""
    kinds = analysis.kind_epochs or ({"consumer_group": analysis.epochs} if analysis.epochs is not None else {})
    return "\n".join(_kind_section(kind, df) for kind, df in kinds.items())


def _kind_section(kind: str, df: Any) -> str:
    epochs = [r.asDict() for r in df.limit(MAX_TABLE_ROWS * 4).collect()]
    if not epochs:
        return ""
    anchor, title, moved = _KIND_TITLES[kind]
    prefix = title.split(" ")[0] if kind == "consumer_group" else title
    for r in epochs:
        r["run"] = os.path.basename(r["run"])
    labels = [f"{r['run']}:{r['group_id']}:e{r['group_epoch']}" for r in epochs]
    out = [f'<h3 id="{anchor}">{title}: epochs</h3>']
    out.append(bar_chart(
        f"{prefix} reconciliation time per group epoch (ms, epoch bump to Stable)",
        labels, {"reconciliation": [r["reconciliation_ms"] for r in epochs]}, " ms",
    ))  # fmt: skip
    out.append(bar_chart(
        f"{prefix} {moved} per group epoch (target owner changed)",
        labels, {"moved": [r["partitions_moved"] for r in epochs]},
    ))  # fmt: skip
    out.append(table(epochs, ["run", "group_id", "group_epoch", "trigger", "cause", "control", "reconciliation_ms",
                              "members", "partitions_assigned", "partitions_moved", "reconciliation_steps"],
                     left=["run", "group_id", "trigger", "cause"]))  # fmt: skip
    return "\n".join(out)


def _lab_section(lab: LabResult) -> str:
    claims = lab.claims
    out = ["<h2>Assignor lab</h2>", "<h3>Claims, checked on this grid</h3>"]
    rows = [
        {"claim": c.statement, "evidence": c.evidence, "holds": "yes" if c.holds else "NO"}
        for c in claims
    ]
    head = "<tr><th class='l'>claim</th><th class='l'>numbers</th><th>holds</th></tr>"
    body = "".join(
        f"<tr><td class='l'>{_esc(r['claim'])}</td><td class='l'>{_esc(r['evidence'])}</td>"
        f"<td class='{'ok' if r['holds'] == 'yes' else 'bad'}'>{r['holds']}</td></tr>"
        for r in rows
    )
    out.append(f"<table>{head}{body}</table>")
    summary = lab.summary
    assignors = sorted({r["assignor"] for r in summary})
    scenarios = sorted({r["scenario"] for r in summary})

    def metric(name: str) -> dict[str, list[float | None]]:
        by = {(r["scenario"], r["assignor"]): r[name] for r in summary}
        return {a: [by.get((s, a)) for s in scenarios] for a in assignors}

    out.append(bar_chart("Balance after the initial assignment: max - min partitions per member", scenarios,
                         metric("initial_spread")))  # fmt: skip
    out.append(bar_chart("Partitions moved per rebalance (mean over the churn steps)", scenarios,
                         metric("moved_per_rebalance")))  # fmt: skip
    out.append(bar_chart("Partitions revoked per churn step (mean)", scenarios, metric("revoked_per_step")))
    out.append(bar_chart("Time per assignment (ms, mean)", scenarios, metric("assign_ms"), " ms"))
    out.append("<h3>Per scenario and assignor</h3>")
    out.append(table(summary, ["scenario", "assignor", "protocol", "members", "topics", "partitions", "pattern", "churn",
                               "initial_spread", "initial_stddev", "worst_spread", "rebalances", "moved_per_rebalance",
                               "revoked_per_step", "ownership_changes", "assign_ms"],
                     left=["scenario", "assignor", "protocol", "pattern", "churn"]))  # fmt: skip
    return "\n".join(out)


def render(analysis: Analysis | None = None, lab: LabResult | None = None, title: str = "mockbroker pipeline report") -> str:
    sections = []
    if analysis is not None:
        sections.append(_analysis_section(analysis))
    if lab is not None:
        sections.append(_lab_section(lab))
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{_esc(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{_esc(title)}</h1>{''.join(sections)}"
        "<p class='note'>Generated by mockbroker's Spark pipeline; column meanings in docs/pipeline.md.</p>"
        "</body></html>\n"
    )


def write_report(path: str | Path, analysis: Analysis | None = None, lab: LabResult | None = None) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render(analysis, lab), encoding="utf-8")
    return target
