"""The differential harness itself, without a broker: normalisation, field paths, listed divergences."""

from __future__ import annotations

import uuid

import pytest

from tests.differential.harness import Canon, Outcome, Step, compare, flatten, listed_divergences, plain


def outcome(tree: object, label: str = "s") -> Outcome:
    return Outcome([(label, tree)])


def step(**kwargs: object) -> Step:
    return Step(3, 12, None, label="s", **kwargs)  # type: ignore[arg-type]


def test_made_up_identities_compare_by_first_appearance() -> None:
    a, b = Canon(), Canon()
    ids_a, ids_b = [uuid.uuid4() for _ in range(2)], [uuid.uuid4() for _ in range(2)]
    tree_a = a.tree(plain({"topic_id": ids_a[0], "x": [{"topic_id": ids_a[1]}, {"topic_id": ids_a[0]}]}))
    tree_b = b.tree(plain({"topic_id": ids_b[0], "x": [{"topic_id": ids_b[1]}, {"topic_id": ids_b[0]}]}))
    assert tree_a == tree_b == {"topic_id": "<uuid#0>", "x": [{"topic_id": "<uuid#1>"}, {"topic_id": "<uuid#0>"}]}
    # a different relation (the second id repeated instead of the first) is a difference
    tree_c = Canon().tree(plain({"topic_id": ids_b[0], "x": [{"topic_id": ids_b[1]}, {"topic_id": ids_b[1]}]}))
    assert tree_c != tree_a


def test_sentinels_and_masks() -> None:
    tree = Canon().tree({"leader_id": -1, "member_id": "", "host": "127.0.0.1", "port": 1, "throttle_time_ms": 5})
    assert tree == {"leader_id": -1, "member_id": "", "host": "<host>", "port": "<port>", "throttle_time_ms": "<throttle>"}


def test_flatten_paths() -> None:
    assert flatten({"a": [{"b": 1}, {"b": []}], "c": {}}) == {"a.0.b": 1, "a.1.b": [], "c": {}}


def test_a_difference_fails_with_its_path() -> None:
    with pytest.raises(AssertionError, match=r"s: topics.0.error_code: kafka=3 mockbroker=0"):
        compare([step()], outcome({"topics": [{"error_code": 3}]}), outcome({"topics": [{"error_code": 0}]}))


def test_a_listed_divergence_is_tolerated_and_must_occur() -> None:
    known = sorted(listed_divergences())[0]
    listed = step(divergences={known: ["topics.*"]})
    compare([listed], outcome({"topics": [1]}), outcome({"topics": [2]}))
    with pytest.raises(AssertionError, match="did not occur"):
        compare([listed], outcome({"topics": [1]}), outcome({"topics": [1]}))


def test_an_unlisted_divergence_id_fails() -> None:
    with pytest.raises(AssertionError, match=r"not listed in docs/divergences\.md"):
        compare([step(divergences={"D999": ["x"]})], outcome({"x": 1}), outcome({"x": 2}))
