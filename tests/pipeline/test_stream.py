"""``mockbroker analyze --bootstrap``: the streaming job reads the broker's event topic over the
Kafka protocol with Spark's own Kafka source (Java kafka-clients) and gives the same tables as the
file job on the same events (the broker writes both: ``events_path`` and ``events_topic``).

The scenario is scripted with real clients (confluent-kafka, one process per member): a classic
eager group (range: two members, a third joins), a cooperative one (cooperative-sticky: two, a
third joins), a KIP-848 consumer group (group.protocol=consumer: two members, then a rebalance
forced and a session expired by the control API) and a KIP-932 share group (two confluent-kafka
ShareConsumers), whose events flow through the topic too. Known values are checked against what the
clients and the broker saw."""

from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.integration.groups_support import Members, group_broker, settle
from tests.integration.support import in_ci, wait_until

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

PARTITIONS = 6
CLIENT = "confluent"
JOB_TIMEOUT_S = 300


def _jars_or_skip() -> None:
    if os.environ.get("MOCKBROKER_SPARK_KAFKA_JARS"):
        return
    from mockbroker_pipeline.jars import MissingJars, kafka_jars

    try:
        kafka_jars()
    except MissingJars as exc:
        if in_ci():
            pytest.fail(f"{exc}; CI must run every test")
        pytest.skip(str(exc))


def _kip848_stable(events: list[Any]) -> bool:
    joined = {e.member_id for e in events if e.type == "consumer_group.member_joined"}
    last = [e for e in events if e.type == "consumer_group.transition"]
    return len(joined) == 2 and bool(last) and last[-1].details.get("to_state") == "Stable"


def _last_state(events: list[Any]) -> str | None:
    last = [e for e in events if e.type == "consumer_group.transition"]
    return last[-1].details.get("to_state") if last else None


def _share_members_gone(events: list[Any]) -> bool:
    joined = {e.member_id for e in events if e.type == "share_group.member_joined"}
    gone = {e.member_id for e in events if e.type in ("share_group.member_left", "share_group.member_fenced")}
    return bool(joined) and joined <= gone


def _reconciled_since(events: list[Any], since: int) -> bool:
    """A KIP-848 member joined after ``since`` and the group is Stable at its latest epoch."""
    joined = [e for e in events if e.type == "consumer_group.member_joined" and e.seq > since]
    bumps = [e.details["group_epoch"] for e in events if e.type == "consumer_group.epoch_bumped"]
    last = [e for e in events if e.type == "consumer_group.transition"]
    return bool(joined) and last[-1].details.get("to_state") == "Stable" and last[-1].details["group_epoch"] == bumps[-1]


def _share_group(broker: Any) -> None:
    """Two share consumers of ``q`` join group ``share`` one after the other; both hold partitions."""
    from confluent_kafka import ShareConsumer

    def member(name: str) -> Any:
        c = ShareConsumer({"bootstrap.servers": broker.bootstrap_servers, "group.id": "share", "client.id": name})
        c.subscribe(["q"])
        return c

    def assigned(consumers: list[Any], count: int) -> bool:
        for c in consumers:
            c.poll(0.2)
        got = broker.call(lambda: broker.cluster.events.filter(group_id="share"))
        holders = {e.member_id for e in got if e.type == "share_group.member_assignment" and e.details["assigned"]}
        return len(holders) >= count

    consumers = [member("s-1")]
    try:
        wait_until(lambda: assigned(consumers, 1), "the first share consumer assigned")
        consumers.append(member("s-2"))
        wait_until(lambda: assigned(consumers, 2), "both share consumers assigned")
    finally:
        for c in consumers:
            c.close()


def _rows(df: Any, drop: tuple[str, ...] = ("run",)) -> list[dict[str, Any]]:
    cols = [c for c in df.columns if c not in drop]
    key = [c for c in ("group_id", "generation_id", "member") if c in cols]
    return [r.asDict() for r in df.select(*cols).orderBy(*(key or cols)).collect()]


def test_streaming_analyze_matches_the_file_job(spark: SparkSession, tmp_path: Path) -> None:
    _jars_or_skip()
    from mockbroker_pipeline.analyze import analyze
    from mockbroker_pipeline.epochs import KINDS

    path = tmp_path / "events.jsonl"
    out = tmp_path / "stream-out"
    with contextmanager(group_broker)(events_path=str(path), events_topic=True) as broker:
        broker.create_topic("eager", PARTITIONS)
        broker.create_topic("coop", PARTITIONS)
        broker.create_topic("kip848", PARTITIONS)
        broker.create_topic("q", 2)
        with Members(broker, "eager", "eager") as eager:
            e1, e2 = eager.start(CLIENT, "eager-1"), eager.start(CLIENT, "eager-2")
            settle(broker, eager, [e1, e2], PARTITIONS)
            e3 = eager.start(CLIENT, "eager-3")
            eager_after = settle(broker, eager, [e1, e2, e3], PARTITIONS)
        with Members(broker, "coop", "coop") as coop:
            c1 = coop.start(CLIENT, "coop-1", assignor="cooperative-sticky")
            c2 = coop.start(CLIENT, "coop-2", assignor="cooperative-sticky")
            settle(broker, coop, [c1, c2], PARTITIONS)
            c3 = coop.start(CLIENT, "coop-3", assignor="cooperative-sticky")
            coop_after = settle(broker, coop, [c1, c2, c3], PARTITIONS)
        with Members(broker, "kip848", "kip848") as k:
            k1 = k.start(CLIENT, "k-1", group_protocol="consumer")
            k2 = k.start(CLIENT, "k-2", group_protocol="consumer")
            wait_until(
                lambda: broker.call(lambda: _kip848_stable(broker.cluster.events.filter(group_id="kip848"))),
                "the KIP-848 group Stable with both members",
            )
            # The control API: a forced rebalance, then k-1's session expired (it rejoins with epoch 0).
            since = broker.last_event_seq()
            assert broker.force_rebalance("kip848") == "Reconciling"
            wait_until(lambda: broker.call(lambda: any(
                e.type == "consumer_group.transition" and e.seq > since and e.details.get("to_state") == "Stable"
                for e in broker.cluster.events.filter(group_id="kip848"))), "Stable after the forced rebalance")  # fmt: skip
            since = broker.last_event_seq()
            broker.expire_session("kip848", client_id="k-1")
            wait_until(
                lambda: broker.call(lambda: _reconciled_since(broker.cluster.events.filter(group_id="kip848"), since)),
                "k-1 back in the KIP-848 group, Stable",
            )
            del k1, k2
        # The block's end killed both members: their sessions expire after the session timeout.
        # Wait for that (the group Empty), so that every event of the script is written before the
        # streaming job reads the topic and the file job reads the file.
        wait_until(
            lambda: broker.call(lambda: _last_state(broker.cluster.events.filter(group_id="kip848")) == "Empty"),
            "the killed KIP-848 members expired (the group Empty)",
        )
        _share_group(broker)
        wait_until(
            lambda: broker.call(lambda: _share_members_gone(broker.cluster.events.filter(group_id="share"))),
            "both share consumers gone (left, or fenced when their sessions expired)",
        )
        job = subprocess.run(
            [sys.executable, "-m", "mockbroker_pipeline", "analyze", "--bootstrap", broker.bootstrap_servers,
             "--out", str(out), "--master", "local[1]", "--idle-timeout", "3"],
            capture_output=True, text=True, timeout=JOB_TIMEOUT_S,
        )  # fmt: skip
        assert job.returncode == 0, job.stderr[-4000:]
        total = broker.call(lambda: len(broker.cluster.events))
    assert f"streamed {total} events" in job.stdout, job.stdout

    files = analyze(spark, [str(path)])
    streamed = {t: spark.read.parquet(str(out / t)) for t in ("rebalances", "rebalance_members", "group_summary", "run_summary")}
    assert _rows(streamed["rebalances"]) == _rows(files.rebalances)
    assert _rows(streamed["rebalance_members"]) == _rows(files.members)
    assert _rows(streamed["group_summary"]) == _rows(files.groups)
    assert _rows(streamed["run_summary"]) == _rows(files.runs)
    for kind, name in KINDS.items():
        assert _rows(spark.read.parquet(str(out / name))) == _rows(files.kind_epochs[kind]), name
    assert (out / "report.html").is_file()

    # Known values of the script: each classic group formed at generation 1 with two members and
    # rebalanced once for the third joiner.
    by_group: dict[str, list[dict[str, Any]]] = {}
    for row in _rows(streamed["rebalances"]):
        by_group.setdefault(row["group_id"], []).append(row)
    for group, after in (("eager", eager_after), ("coop", coop_after)):
        rows = [r for r in by_group[group] if r["outcome"] == "stable"]
        assert [r["members_after"] for r in rows][-1] == 3
        assert rows[-1]["generation_id"] == after.generation_id
        assert rows[-1]["partitions_assigned"] == PARTITIONS
    assert by_group["eager"][-1]["rebalance_protocol"] == "eager"
    assert by_group["coop"][-1]["rebalance_protocol"] == "cooperative"
    # The KIP-848 group: the first member's epoch (nothing to move), then one whose target gives both
    # members partitions (some moved from the first), reconciled to Stable; then the leaves.
    epochs = [r for r in _rows(spark.read.parquet(str(out / "consumer_group_epochs"))) if r["group_id"] == "kip848"]
    assert epochs[0]["members"] == 1 and epochs[0]["partitions_moved"] == 0
    both = [r for r in epochs if r["members"] == 2 and r["partitions_assigned"] == PARTITIONS]
    moved = [r for r in both if r["partitions_moved"] > 0]
    assert moved and moved[0]["reconciliation_ms"] is not None, epochs
    # The control API's triggers, as causes of the epochs that followed them.
    causes = [(r["cause"], r["control"]) for r in epochs]
    assert ("forced_rebalance", True) in causes and ("session_timeout", True) in causes, causes
    assert ("join", False) in causes, causes
    # The share group: the first member's epoch, then one with both members holding a partition each.
    shared = _rows(spark.read.parquet(str(out / "share_group_epochs")))
    assert {r["group_id"] for r in shared} == {"share"}
    assert shared[0]["members"] == 1 and shared[0]["cause"] == "join"
    two = [r for r in shared if r["members"] == 2]
    assert two and two[0]["partitions_assigned"] == 2 and two[0]["partitions_moved"] == 1 and two[0]["reconciliation_ms"] is not None
    assert spark.read.parquet(str(out / "streams_group_epochs")).count() == 0  # no streams group in this run
    report = (out / "report.html").read_text()
    assert "KIP-932 share groups: epochs" in report and "KIP-848 consumer groups: epochs" in report
