"""mockbroker.intercept.error_codes, the one error-code walker (request log, metrics): planned per
class from type hints, it finds exactly what a plain walk of every field finds, for every
generated response class, on random messages."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockbroker.control.intercept import _PLANS, error_codes
from tests.protocol import message_strategies as ms

CLASSES = [cls for cls in ms.top_classes() if cls.__name__.endswith("Response")]


def reference(obj: Any, seen: dict[int, None] | None = None) -> tuple[int, ...]:
    """Every field of every nested message, in field order: slow and obviously right."""
    seen = {} if seen is None else seen
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if f.name.endswith("error_code") and value:
            seen[int(value)] = None
        for item in value if isinstance(value, list) else [value]:
            if dataclasses.is_dataclass(item) and not isinstance(item, type):
                reference(item, seen)
    return tuple(seen)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_the_planned_walk_finds_what_every_field_holds(cls: type, data: Any) -> None:
    message = data.draw(ms.message(cls, cls.SPEC.valid_versions[1]))  # type: ignore[attr-defined]
    assert error_codes(message) == reference(message)
    assert _PLANS[cls] is not None  # the generated classes' hints resolve: the planned walk ran


def test_every_response_class_is_checked() -> None:
    assert len(CLASSES) >= 30
