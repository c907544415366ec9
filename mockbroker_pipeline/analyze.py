"""Rebalance analytics on Spark: event logs in, one row per (run, group, generation) out.

A *run* is one event-log file (``MockCluster(events_path=...)`` or ``mockbroker serve --event-log``);
many runs are given as several files, a directory (every ``*.jsonl`` below it) or a glob. The job:

1. reads the JSON Lines with an explicit schema (``details`` kept as JSON text) and checks them:
   malformed lines, a schema version newer than this reader, or a file holding two runs (its
   ``seq`` repeats: the broker appends, so reusing a path appends a second run) fail loudly;
2. replays each (run, group) on the executors: repartitioned by (run, group), sorted by ``seq``
   within partitions, and handed to ``mockbroker_pipeline.replay`` by ``mapInPandas`` many groups per batch:
   the ``rebalances`` and ``rebalance_members`` tables;
3. aggregates per group and per run with the DataFrame API: ``group_summary``, ``run_summary``;
4. writes the four tables as Parquet under ``--out``, ``report.html`` beside them, and prints a
   summary.

Column meanings: docs/pipeline.md.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from mockbroker_pipeline.epochs import EPOCH_COLUMNS, KINDS
from mockbroker_pipeline.replay import SCHEMA_VERSION, replay
from mockbroker_pipeline.session import prepare_out, report_path, table_path

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame, SparkSession

EVENT_SCHEMA = (
    "v INT, seq LONG, time_ms LONG, type STRING, broker_id INT, group_id STRING, generation_id INT, "
    "member_id STRING, reason STRING, details STRING, _corrupt_record STRING"
)

REBALANCE_COLUMNS = (
    "run STRING, group_id STRING, generation_id INT, trigger STRING, trigger_member STRING, "
    "start_ms LONG, formed_ms LONG, end_ms LONG, duration_ms LONG, outcome STRING, "
    "members_before INT, members_after INT, members_joined INT, members_departed INT, "
    "protocol_name STRING, rebalance_protocol STRING, leader STRING, partitions_assigned INT, "
    "partitions_moved INT, partitions_revoked INT, members_without_partitions INT, "
    "max_time_without_partitions_ms LONG, total_time_without_partitions_ms LONG, "
    "max_partitions_per_member INT, min_partitions_per_member INT, stddev_partitions_per_member DOUBLE"
)
MEMBER_STRUCT = (
    "STRUCT<member: STRING, member_id: STRING, partitions_before: INT, partitions_after: INT, revoked: INT, "
    "gained: INT, time_without_partitions_ms: LONG>"
)
TABLES = ("rebalances", "rebalance_members", "group_summary", "run_summary")
EPOCHS_TABLE = "consumer_group_epochs"  # KIP-848 groups (mockbroker_pipeline/epochs.py)


class EventLogError(ValueError):
    """An event log the pipeline cannot read as documented (docs/events.md)."""


@dataclass
class Analysis:
    """The job's four tables (Spark DataFrames, cached) and where they were written."""

    rebalances: DataFrame
    members: DataFrame
    groups: DataFrame
    runs: DataFrame
    out: str | None  # where the Parquet tables went
    # KIP-848 consumer groups: one row per (run, group, group epoch) (mockbroker_pipeline/epochs.py)
    epochs: DataFrame | None = None
    # Every group kind's epochs, by kind (epochs.KINDS: consumer_group, share_group, streams_group)
    kind_epochs: dict[str, DataFrame] = field(default_factory=dict)


def expand_paths(inputs: Sequence[str]) -> list[str]:
    """Files, directories (every ``*.jsonl`` below) and globs -> a sorted list of files. Paths with a
    URI scheme (``hdfs://``, ``s3a://``) are passed to Spark as they are."""
    files: list[str] = []
    for raw in inputs:
        if "://" in raw:
            files.append(raw)
            continue
        if any(c in raw for c in "*?["):
            matched = sorted(p for p in glob.glob(raw, recursive=True) if os.path.isfile(p))
            if not matched:
                raise EventLogError(f"{raw}: no file matches")
            files.extend(matched)
        elif os.path.isdir(raw):
            found = sorted(str(p) for p in Path(raw).rglob("*.jsonl") if p.is_file())
            if not found:
                raise EventLogError(f"{raw}: a directory with no *.jsonl event logs")
            files.extend(found)
        elif os.path.isfile(raw):
            files.append(raw)
        else:
            raise EventLogError(f"{raw}: no such file or directory")
    if not files:
        raise EventLogError("no event logs given")
    return [str(Path(f).resolve()) if "://" not in f else f for f in dict.fromkeys(files)]


def read_events(spark: SparkSession, inputs: Sequence[str]) -> DataFrame:
    """Every event of every run, with a ``run`` column (the file's path), checked (EventLogError)."""
    from pyspark.sql import functions as F

    paths = expand_paths(inputs)
    raw = (
        spark.read.schema(EVENT_SCHEMA)
        .option("mode", "PERMISSIVE")
        .option("columnNameOfCorruptRecord", "_corrupt_record")
        .json(paths)
        .withColumn("run", F.regexp_replace(F.col("_metadata.file_path"), "^file:(//)?", ""))
        .cache()
    )
    bad = raw.filter(
        F.col("_corrupt_record").isNotNull() | F.col("seq").isNull() | F.col("time_ms").isNull() | F.col("type").isNull()
    )
    first_bad = bad.select("run", "_corrupt_record").limit(1).collect()
    if first_bad:
        count = bad.count()
        run, line = first_bad[0]["run"], first_bad[0]["_corrupt_record"]
        raise EventLogError(
            f"{count} line(s) are not event records (docs/events.md: seq, time_ms and type are required); "
            f"first in {run}: {(line or '').strip()[:200]!r}"
        )
    newer = raw.filter(F.col("v").isNull() | (F.col("v") > SCHEMA_VERSION)).select("run", "v").limit(1).collect()
    if newer:
        raise EventLogError(
            f"{newer[0]['run']}: event schema version {newer[0]['v']}; this pipeline reads version {SCHEMA_VERSION}"
        )
    repeated = raw.groupBy("run", "seq").count().filter(F.col("count") > 1).limit(1).collect()
    if repeated:
        raise EventLogError(
            f"{repeated[0]['run']}: seq {repeated[0]['seq']} appears {repeated[0]['count']} times, so the file holds "
            "more than one run (the broker appends to an existing events file); give each run its own file"
        )
    return raw.drop("_corrupt_record")


_REPLAY_COLUMNS = [c.split(" ")[0] for c in REBALANCE_COLUMNS.split(", ")] + ["members_json"]


def _replay_partition(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """mapInPandas body: a partition's events, sorted by (run, group_id, seq), so each group's events
    are contiguous (a group may straddle two Arrow batches: its events are carried over) -> the
    groups' generation rows. Many groups per pandas call: the per-call cost is paid per batch."""
    import pandas as pd

    key: tuple[str, str] | None = None
    events: list[dict[str, Any]] = []
    for batch in batches:
        rows: list[dict[str, Any]] = []
        for record in batch.astype(object).where(batch.notna(), None).to_dict("records"):
            here = (record["run"], record["group_id"])
            if here != key:
                if key is not None:
                    rows += _group_rows(key, events)
                key, events = here, []
            events.append(record)
        if rows:
            yield pd.DataFrame(rows, columns=_REPLAY_COLUMNS)
    if key is not None:
        yield pd.DataFrame(_group_rows(key, events), columns=_REPLAY_COLUMNS)


def _group_rows(key: tuple[str, str], events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    run, group_id = key
    return [dict(r.to_record(), run=run) for r in replay(group_id, events)]


def rebalances(events: DataFrame) -> tuple[DataFrame, DataFrame]:
    """The ``rebalances`` and ``rebalance_members`` tables: every (run, group)'s events go to one
    partition, sorted, and are replayed there (``mockbroker_pipeline.replay``)."""
    from pyspark.sql import functions as F

    group_events = (
        events.filter(
            F.col("group_id").isNotNull() & (F.col("type").startswith("group.") | F.col("type").startswith("member."))
        )
        .select("run", "group_id", "seq", "time_ms", "type", "generation_id", "member_id", "reason", "details")
        .repartition("run", "group_id")
        .sortWithinPartitions("run", "group_id", "seq")
    )
    rows = group_events.mapInPandas(_replay_partition, schema=f"{REBALANCE_COLUMNS}, members_json STRING").cache()
    table = rows.drop("members_json")
    members = rows.select(
        "run",
        "group_id",
        "generation_id",
        F.explode(F.from_json("members_json", f"ARRAY<{MEMBER_STRUCT}>")).alias("m"),
    ).select("run", "group_id", "generation_id", "m.*")
    return table, members


def _epochs_of_group(frame: pd.DataFrame) -> pd.DataFrame:
    """applyInPandas body: one (run, group)'s events of one kind (column ``kind``) -> its epoch rows."""
    import pandas as pd

    from mockbroker_pipeline.epochs import replay_epochs

    records = frame.sort_values("seq").astype(object).where(frame.notna(), None).to_dict("records")
    run, group_id, kind = records[0]["run"], records[0]["group_id"], records[0]["kind"]
    rows = [dict(e.to_record(), run=run) for e in replay_epochs(group_id, records, kind)]
    return pd.DataFrame(rows, columns=["run", *(c.split(" ")[0] for c in EPOCH_COLUMNS.split(", "))])


def group_epochs(events: DataFrame, kind: str = "consumer_group") -> DataFrame:
    """The ``<kind>_epochs`` table (``consumer_group``: KIP-848, ``share_group``, ``streams_group``;
    mockbroker_pipeline/epochs.py): the groups that have events of that kind, with the control API's
    events of those groups (causes)."""
    from pyspark.sql import functions as F

    with_group = events.filter(F.col("group_id").isNotNull())
    of_kind = with_group.filter(F.col("type").startswith(f"{kind}.")).select("run", "group_id").distinct()
    return (
        with_group.filter(F.col("type").startswith(f"{kind}.") | F.col("type").startswith("control."))
        .join(of_kind, ["run", "group_id"])
        .select("run", "group_id", "seq", "time_ms", "type", "generation_id", "member_id", "reason", "details",
                F.lit(kind).alias("kind"))
        .groupBy("run", "group_id")
        .applyInPandas(_epochs_of_group, schema=f"run STRING, {EPOCH_COLUMNS}")
    )  # fmt: skip


def consumer_group_epochs(events: DataFrame) -> DataFrame:
    """The ``consumer_group_epochs`` table: KIP-848 groups' epochs (mockbroker_pipeline/epochs.py)."""
    return group_epochs(events, "consumer_group")


def summaries(events: DataFrame, table: DataFrame) -> tuple[DataFrame, DataFrame]:
    """``group_summary`` (one row per run and group) and ``run_summary`` (one row per run)."""
    from pyspark.sql import functions as F

    def count_of(kind: str) -> Any:
        return F.sum(F.when(F.col("type") == kind, 1).otherwise(0))

    from_events = (
        events.filter(F.col("group_id").isNotNull())
        .groupBy("run", "group_id")
        .agg(
            F.count("*").alias("events"),
            F.min("time_ms").alias("first_ms"),
            F.max("time_ms").alias("last_ms"),
            count_of("member.joined").alias("members_joined"),
            count_of("member.left").alias("members_left"),
            count_of("member.expired").alias("members_expired"),
            count_of("member.replaced").alias("static_replacements"),
            count_of("offset.committed").alias("offset_commits"),
        )
    )
    triggers = (
        table.groupBy("run", "group_id", "trigger")
        .count()
        .groupBy("run", "group_id")
        .agg(
            F.concat_ws(" ", F.sort_array(F.collect_list(F.concat_ws("=", "trigger", F.col("count").cast("string"))))).alias(
                "triggers"
            )
        )
    )
    from_rebalances = table.groupBy("run", "group_id").agg(
        F.count("*").alias("generations"),
        F.sum(F.when(F.col("outcome") == "aborted", 1).otherwise(0)).alias("aborted_generations"),
        F.sum(F.when(F.col("trigger") == "static_replacement", 1).otherwise(0)).alias("static_rebalances"),
        F.coalesce(F.sum("duration_ms"), F.lit(0)).alias("total_rebalance_ms"),
        F.max("duration_ms").alias("max_rebalance_ms"),
        F.sum("partitions_moved").alias("partitions_moved"),
        F.sum("partitions_revoked").alias("partitions_revoked"),
        F.max("max_time_without_partitions_ms").alias("max_time_without_partitions_ms"),
        F.sum("total_time_without_partitions_ms").alias("total_time_without_partitions_ms"),
        F.concat_ws(",", F.sort_array(F.collect_set("rebalance_protocol"))).alias("rebalance_protocols"),
        F.concat_ws(",", F.sort_array(F.collect_set("protocol_name"))).alias("protocol_names"),
        F.max_by("members_after", "generation_id").alias("members_now"),
    )
    zero = ["generations", "aborted_generations", "static_rebalances", "total_rebalance_ms", "partitions_moved",
            "partitions_revoked", "total_time_without_partitions_ms"]  # fmt: skip
    groups = (
        from_events.join(from_rebalances, ["run", "group_id"], "left")
        .join(triggers, ["run", "group_id"], "left")
        .fillna(0, subset=zero)
        .fillna("", subset=["triggers", "rebalance_protocols", "protocol_names"])
        .orderBy("run", "group_id")
    )
    runs = (
        events.groupBy("run")
        .agg(
            F.count("*").alias("events"),
            F.countDistinct("group_id").alias("groups"),
            (F.max("time_ms") - F.min("time_ms")).alias("span_ms"),
        )
        .join(
            groups.groupBy("run").agg(
                F.sum("generations").alias("generations"),
                F.sum("total_rebalance_ms").alias("total_rebalance_ms"),
                F.max("max_rebalance_ms").alias("max_rebalance_ms"),
                F.sum("partitions_moved").alias("partitions_moved"),
                F.sum("partitions_revoked").alias("partitions_revoked"),
                F.sum("static_replacements").alias("static_replacements"),
                F.sum("members_expired").alias("members_expired"),
            ),
            ["run"],
            "left",
        )
        .fillna(0)
        .orderBy("run")
    )
    return groups, runs


def analyze(spark: SparkSession, inputs: Sequence[str], out: str | Path | None = None) -> Analysis:
    """Run the whole job; with ``out``, write the Parquet tables there (replacing earlier ones)."""
    return analyze_events(read_events(spark, inputs), out)


def analyze_events(events: DataFrame, out: str | Path | None = None) -> Analysis:
    """The tables of checked events (``read_events``' columns, or the streaming job's: mockbroker_pipeline.stream)."""
    table, members = rebalances(events)
    groups, runs = summaries(events, table)
    kinds = {kind: group_epochs(events, kind).cache() for kind in KINDS}
    table, members, groups, runs = (df.cache() for df in (table, members, groups, runs))
    out_path = None
    if out is not None:
        out_path = prepare_out(out)
        for name, df in zip(TABLES, (table, members, groups, runs), strict=True):
            df.coalesce(1).write.mode("overwrite").parquet(table_path(out_path, name))
        for kind, df in kinds.items():
            df.coalesce(1).write.mode("overwrite").parquet(table_path(out_path, KINDS[kind]))
    ordered = {kind: df.orderBy("run", "group_id", "group_epoch") for kind, df in kinds.items()}
    return Analysis(
        table.orderBy("run", "group_id", "generation_id"), members, groups, runs, out_path,
        ordered["consumer_group"], ordered,
    )  # fmt: skip


# -- the summary on stdout --------------------------------------------------------------------


def _table(rows: list[dict[str, Any]], columns: Sequence[str]) -> list[str]:
    cells = [[("" if r.get(c) is None else str(r.get(c))) for c in columns] for r in rows]
    widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(columns)]
    lines = ["  " + "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  " + "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return lines


def summary_text(analysis: Analysis, max_rows: int = 40) -> str:
    """A readable summary: runs, groups, and the rebalances (the longest first when there are many)."""
    runs = [r.asDict() for r in analysis.runs.collect()]
    groups = [r.asDict() for r in analysis.groups.limit(max_rows).collect()]
    total = analysis.rebalances.count()
    longest = [
        r.asDict() for r in analysis.rebalances.orderBy(
            analysis.rebalances["duration_ms"].desc_nulls_last()).limit(max_rows).collect()
    ]  # fmt: skip
    longest.sort(key=lambda r: (r["run"], r["group_id"], r["generation_id"]))
    for rows in (runs, groups, longest):
        for r in rows:
            r["run"] = os.path.basename(r["run"])
    lines = [f"runs: {len(runs)}"]
    lines += _table(runs, ["run", "events", "groups", "generations", "total_rebalance_ms", "max_rebalance_ms",
                           "partitions_moved", "partitions_revoked", "static_replacements", "members_expired"])  # fmt: skip
    lines += ["", f"groups: {analysis.groups.count()}" + (f" (first {max_rows})" if len(groups) == max_rows else "")]
    lines += _table(groups, ["run", "group_id", "generations", "triggers", "rebalance_protocols", "total_rebalance_ms",
                             "partitions_moved", "partitions_revoked", "static_replacements", "members_now"])  # fmt: skip
    shown = f" (the {max_rows} longest)" if total > max_rows else ""
    lines += ["", f"rebalances: {total}{shown}"]
    lines += _table(longest, ["run", "group_id", "generation_id", "trigger", "rebalance_protocol", "duration_ms",
                              "members_before", "members_after", "partitions_moved", "partitions_revoked",
                              "max_time_without_partitions_ms", "max_partitions_per_member",
                              "min_partitions_per_member", "outcome"])  # fmt: skip
    if analysis.out is not None:
        lines += ["", f"written: {', '.join(table_path(analysis.out, t) for t in (*TABLES, *KINDS.values()))}, {report_path(analysis.out)}"]
    return "\n".join(lines)


def run(inputs: Sequence[str], out: str | Path, master: str | None = None, stdout: TextIO | None = None) -> Analysis:
    """``mockbroker analyze``: the job, the report and the summary."""
    import sys

    from mockbroker_pipeline.report import write_report
    from mockbroker_pipeline.session import get_session

    spark = get_session(master)
    analysis = analyze(spark, inputs, out)
    write_report(report_path(out), analysis=analysis)
    print(summary_text(analysis), file=stdout or sys.stdout, flush=True)
    return analysis
