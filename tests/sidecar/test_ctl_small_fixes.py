"""`mockbroker ctl` for a new user (#26): every groups and faults action has help text, records
go out with headers and as base64, an unknown error name gets a short answer with close matches."""

from __future__ import annotations

import argparse
import base64
import json
from typing import Any

from mockbroker.cli import build_parser
from tests.sidecar.support import Sidecar, ctl_json, run_cli


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _helps(parser: argparse.ArgumentParser) -> dict[str, str | None]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {c.dest: c.help for c in action._choices_actions}


def test_every_groups_and_faults_action_has_help_text() -> None:
    ctl = _subparsers(_subparsers(build_parser())["ctl"])
    for area in ("groups", "faults", "transactions"):
        helps = _helps(ctl[area])
        assert set(helps) == set(_subparsers(ctl[area])), area
        assert all(helps.values()), f"ctl {area}: no help for {[a for a, h in helps.items() if not h]}"


def test_records_produce_with_headers_and_base64(sidecar: Any) -> None:
    side: Sidecar = sidecar()
    env = {"MOCKBROKER_ADMIN_URL": side.admin}
    ctl_json(["topics", "create", "bin"], env)
    raw = bytes([0, 255, 1])
    value = base64.b64encode(raw).decode()
    header = base64.b64encode(b"\x00trace").decode()
    ctl_json(["records", "produce", "bin", value, "--base64", "--key", base64.b64encode(b"k").decode(),
              "--header", f"trace={header}"], env)  # fmt: skip
    ctl_json(["records", "produce", "bin", "plain", "--header", "source=ctl", "--header", "n=2"], env)
    records = ctl_json(["records", "read", "bin", "0", "--base64"], env)["records"]
    assert base64.b64decode(records[0]["value"]) == raw and base64.b64decode(records[0]["key"]) == b"k"
    assert [(h["key"], base64.b64decode(h["value"])) for h in records[0]["headers"]] == [("trace", b"\x00trace")]
    text = ctl_json(["records", "read", "bin", "0", "--offset", "1"], env)["records"]
    assert text[0]["value"] == "plain" and text[0]["headers"] == [{"key": "source", "value": "ctl"}, {"key": "n", "value": "2"}]

    typo = run_cli(["ctl", "faults", "errors", "Produce", "NOT_LEADER_OR_FOLOWER"], env)
    assert typo.returncode == 1
    error = json.loads(typo.stderr)["error"]
    assert "close matches: NOT_LEADER_OR_FOLLOWER" in error and len(error) < 300, error


def test_transactions_and_their_coordinator_faults(sidecar: Any) -> None:
    """`ctl transactions` and the transaction coordinator's faults, a transactional producer
    (confluent-kafka) waiting out the loading, then listed and aborted."""
    from confluent_kafka import Producer

    side: Sidecar = sidecar("--brokers", "2")
    env = {"MOCKBROKER_ADMIN_URL": side.admin}
    assert ctl_json(["transactions", "list"], env) == {"transactions": []}
    moved = ctl_json(["faults", "move-transaction-coordinator", "app-1", "2"], env)
    assert moved["coordinator"] == 2
    loading = ctl_json(["faults", "load-transaction-coordinator", "app-1", "300000"], env)
    assert ctl_json(["faults", "list"], env)["transaction_coordinators_loading"] == {"app-1": loading["until_ms"]}
    assert ctl_json(["faults", "load-transaction-coordinator", "app-1", "0"], env)["coordinator"] == 2
    producer = Producer({"bootstrap.servers": side.bootstrap, "transactional.id": "app-1"})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce("orders-txn", b"v")
    producer.flush(30)
    (listed,) = ctl_json(["transactions", "list", "--state", "Ongoing"], env)["transactions"]
    assert (listed["transactional_id"], listed["coordinator"], listed["partitions"]) == (
        "app-1", 2, [{"topic": "orders-txn", "partition": 0}],
    )  # fmt: skip
    aborted = ctl_json(["transactions", "abort", "app-1", "--reason", "ops"], env)
    assert (aborted["state"], aborted["producer_epoch"]) == ("CompleteAbort", listed["producer_epoch"] + 1)
    assert ctl_json(["transactions", "describe", "app-1"], env)["state"] == "CompleteAbort"
    missing = run_cli(["ctl", "transactions", "describe", "nobody"], env)
    assert missing.returncode == 1 and "nobody" in missing.stderr
