"""The fixture fails the test that caused a problem, end to end: inner pytest runs (``pytester``)
of tests that use ``kafka_cluster``, with real clients.

- Strict mode (``assignment_strict="violations"``): a hand-made leader (kafka-python's low-level
  client, groups_support.hand_made_leader) syncs an overlapping assignment; the inner test body
  passes, as the client got no error (Kafka stores what the leader sends), and the run reports an
  error at that test's teardown naming the finding. The same members with a correct assignment
  pass.
- A broker bug (an interceptor that raises) while serving a real producer: the producer carries
  on (its connection is closed and it reconnects), and the test fails at teardown naming the bug.
"""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

HAND_MADE = """
import pytest

from tests.integration.groups_support import hand_made_leader

STRICT = pytest.mark.kafka_cluster(assignment_strict="violations", group_initial_rebalance_delay_ms=0, topics={"hand": 2})


@STRICT
def test_overlapping_leader(kafka_cluster):
    hand_made_leader(kafka_cluster, "overlapping", "hand", lambda a, b: {a: {"hand": [0, 1]}, b: {"hand": [1]}})


@STRICT
def test_correct_leader(kafka_cluster):
    hand_made_leader(kafka_cluster, "correct", "hand", lambda a, b: {a: {"hand": [0]}, b: {"hand": [1]}})
"""

BROKER_BUG = """
from kafka import KafkaProducer


def test_interceptor_bug(kafka_cluster):
    def broken(request):
        raise RuntimeError("the interceptor fell over")

    kafka_cluster.intercept("Metadata", broken)
    producer = KafkaProducer(bootstrap_servers=kafka_cluster.bootstrap_servers, client_id="teardown-producer")
    try:
        producer.send("events", b"still delivered").get(30)
    finally:
        producer.close(30)
    assert [r.value for r in kafka_cluster.read("events")] == [b"still delivered"]
"""


def run_inner(pytester: pytest.Pytester, **modules: str) -> pytest.RunResult:
    """An inner run with the project's strictness (the plugin must register its marker)."""
    pytester.makeini("[pytest]\naddopts = --strict-markers\nasyncio_default_fixture_loop_scope = function\n")
    pytester.makepyfile(**modules)
    return pytester.runpytest("-p", "no:cacheprovider")


def test_strict_mode_fails_the_offending_test_at_teardown(pytester: pytest.Pytester) -> None:
    result = run_inner(pytester, test_hand_made=HAND_MADE)
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines([
        "*ERROR at teardown of test_overlapping_leader*",
        "*the mock Kafka cluster reported problems at teardown:*",
        "*strict mode: group overlapping generation 2 (leader, multiple_owners): *hand-1*",
    ])  # fmt: skip
    result.stdout.no_fnmatch_line("*ERROR at teardown of test_correct_leader*")
    result.stdout.no_fnmatch_line("*strict mode: group correct*")


def test_a_broker_bug_fails_the_test_at_teardown(pytester: pytest.Pytester) -> None:
    result = run_inner(pytester, test_broker_bug=BROKER_BUG)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines([
        "*ERROR at teardown of test_interceptor_bug*",
        "*broker bug: RuntimeError: the interceptor fell over*",
    ])  # fmt: skip
