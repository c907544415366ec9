"""``mockbroker analyze --bootstrap HOST:PORT``: the rebalance analysis as a Structured Streaming
job reading the broker's event topic (``__mockbroker_events``, docs/events.md "As a topic") with
Spark's own Kafka source, the way Spark reads any Kafka cluster.

Each micro-batch (``foreachBatch``) parses the records' JSON values with the file job's schema,
appends them to ``OUT/events`` (Parquet, one directory per batch id, so a batch Spark runs again
after a restart replaces its own output instead of doubling it), then recomputes the four tables
and ``report.html`` over every event so far with the file job's code (``analyze_events``): after
each batch the tables are those the file job gives for the same events. Progress (the topic's
offsets) is checkpointed under ``--checkpoint`` (default ``OUT/_checkpoint``): a job started again
goes on where it stopped.

The job stops when asked (SIGINT or SIGTERM, or ``stop`` set by a caller) or, with
``--idle-timeout``, once no record has arrived for that long after the last batch that had some.
Spark's Kafka source is loaded from the cached jars (mockbroker_pipeline.jars, ``spark.jars``):
nothing is fetched at run time.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from mockbroker.model import EVENTS_TOPIC
from mockbroker_pipeline.analyze import EVENT_SCHEMA, Analysis, EventLogError, analyze_events, summary_text
from mockbroker_pipeline.replay import SCHEMA_VERSION
from mockbroker_pipeline.session import prepare_out, report_path

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# The file job names a run after its file; the stream names it after where it read.
JARS_ENV = "MOCKBROKER_SPARK_KAFKA_JARS"  # a directory of jars to use instead of the cache
TRIGGER = "500 milliseconds"


def run_name(bootstrap: str) -> str:
    return f"kafka://{bootstrap}/{EVENTS_TOPIC}"


def jar_paths() -> list[str]:
    """The Kafka source's jars: $MOCKBROKER_SPARK_KAFKA_JARS (a directory) or the cache."""
    override = os.environ.get(JARS_ENV)
    if override:
        jars = sorted(str(p) for p in Path(override).glob("*.jar"))
        if not jars:
            raise EventLogError(f"{JARS_ENV}={override}: no jars there")
        return jars
    from mockbroker_pipeline.jars import kafka_jars

    return [str(p) for p in kafka_jars()]


def parse_batch(batch: DataFrame, run: str) -> DataFrame:
    """Kafka records -> the event rows ``read_events`` makes of a file (checked the same way)."""
    from pyspark.sql import functions as F

    schema = EVENT_SCHEMA.replace(", _corrupt_record STRING", "")
    parsed = batch.select(
        F.from_json(F.col("value").cast("string"), schema, {"mode": "PERMISSIVE"}).alias("e"),
        F.col("value").cast("string").alias("raw"),
    )
    bad = parsed.filter(F.col("e.seq").isNull() | F.col("e.time_ms").isNull() | F.col("e.type").isNull()).limit(1).collect()
    if bad:
        raise EventLogError(f"{run}: a record is not an event (docs/events.md): {(bad[0]['raw'] or '')[:200]!r}")
    rows = parsed.select("e.*").withColumn("run", F.lit(run))
    newer = rows.filter(F.col("v").isNull() | (F.col("v") > SCHEMA_VERSION)).select("v").limit(1).collect()
    if newer:
        raise EventLogError(f"{run}: event schema version {newer[0]['v']}; this pipeline reads version {SCHEMA_VERSION}")
    return rows


class StreamJob:
    """The streaming query and what it has done (batches, rows, the last analysis)."""

    def __init__(
        self, spark: SparkSession, bootstrap: str, out: str | Path, checkpoint: str | Path | None = None, partitions: int = 1
    ) -> None:
        self.spark = spark
        self.partitions = partitions
        self.bootstrap = bootstrap
        self.run = run_name(bootstrap)
        self.out = prepare_out(out)
        self.checkpoint = str(checkpoint) if checkpoint is not None else f"{self.out}/_checkpoint"
        self.events_dir = f"{self.out}/events"
        self.batches = 0
        self.rows = 0
        self.last_rows_at = time.monotonic()
        self.in_batch = False
        self.analysis: Analysis | None = None
        self.error: BaseException | None = None

    def on_batch(self, batch: DataFrame, batch_id: int) -> None:
        from mockbroker_pipeline.report import write_report

        self.in_batch = True
        try:
            rows = parse_batch(batch, self.run).cache()
            count = rows.count()
            if count:
                rows.write.mode("overwrite").parquet(f"{self.events_dir}/batch={batch_id}")
                self.rows += count
                events = self.spark.read.parquet(self.events_dir).drop("batch")
                self.analysis = analyze_events(events, self.out)
                write_report(report_path(self.out), analysis=self.analysis)
            rows.unpersist()
            self.batches += 1
            if count:
                self.last_rows_at = time.monotonic()  # idle time counts from the end of the last batch with events
        except BaseException as exc:  # seen by the driver loop, which stops the query and raises it
            self.error = exc
            raise
        finally:
            self.in_batch = False

    def idle_for(self) -> float:
        """Seconds since the last batch with events ended (0 while a batch runs or before any)."""
        if self.in_batch or not self.rows:
            return 0.0
        return time.monotonic() - self.last_rows_at

    def start(self) -> Any:
        source = (
            self.spark.readStream.format("kafka")
            .option("kafka.bootstrap.servers", self.bootstrap)
            # The topic is internal (Metadata's is_internal, as __consumer_offsets): Spark's
            # Admin-based offset reader leaves internal topics out of every strategy
            # (ConsumerStrategy.retrieveAllPartitions filters describeTopics on isInternal), and
            # the Java consumer drops them from its metadata unless exclude.internal.topics is
            # false (ConsumerMetadata.retainTopic). So: the consumer-based offset reader
            # (spark.sql.streaming.kafka.useDeprecatedOffsetFetching, set on the session), the
            # partitions assigned, and internal topics kept.
            .option("assign", json.dumps({EVENTS_TOPIC: list(range(self.partitions))}))
            .option("kafka.exclude.internal.topics", "false")
            .option("startingOffsets", "earliest")
            .load()
        )
        return (
            source.writeStream.foreachBatch(self.on_batch)
            .option("checkpointLocation", self.checkpoint)
            .trigger(processingTime=TRIGGER)
            .start()
        )


def run(
    bootstrap: str,
    out: str | Path,
    master: str | None = None,
    *,
    checkpoint: str | Path | None = None,
    idle_timeout_s: float | None = None,
    stop: threading.Event | None = None,
    partitions: int = 1,
    stdout: TextIO | None = None,
) -> StreamJob:
    """``mockbroker analyze --bootstrap``: run until asked to stop or idle; print the summary."""
    from mockbroker_pipeline.session import get_session

    conf = {"spark.jars": ",".join(jar_paths()), "spark.sql.streaming.kafka.useDeprecatedOffsetFetching": "true"}
    spark = get_session(master, conf)
    job = StreamJob(spark, bootstrap, out, checkpoint, partitions)
    stop = stop or threading.Event()
    previous = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, lambda *_: stop.set())
    query = job.start()
    try:
        while query.isActive and not stop.is_set():
            if idle_timeout_s is not None and job.idle_for() > idle_timeout_s:
                break
            query.awaitTermination(0.2)
    finally:
        query.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if job.error is not None:
        raise job.error
    exc = query.exception()
    if exc is not None:
        raise RuntimeError(f"the streaming query failed: {exc}")
    out_stream = stdout or sys.stdout
    print(f"streamed {job.rows} events in {job.batches} batches from {job.run}", file=out_stream, flush=True)
    if job.analysis is not None:
        print(summary_text(job.analysis), file=out_stream, flush=True)
    return job
