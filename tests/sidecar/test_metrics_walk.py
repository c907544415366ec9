"""The metrics' error-code walk (planned per class from type hints) finds exactly what the
generic walk of the request log finds (mockbroker.intercept.error_codes), for every generated
message class at its highest version, on random messages."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mockbroker.admin_http import _PLANS, response_error_codes
from mockbroker.intercept import error_codes
from tests.protocol import message_strategies as ms

CLASSES = [cls for cls in ms.top_classes() if cls.__name__.endswith("Response")]


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_planned_walk_equals_the_generic_walk(cls: type, data: Any) -> None:
    message = data.draw(ms.message(cls, cls.SPEC.valid_versions[1]))  # type: ignore[attr-defined]
    assert response_error_codes(message) == error_codes(message)
    assert _PLANS[cls] is not None  # the generated classes' hints resolve: the fast path was taken


def test_classes_to_check_exist() -> None:
    assert len(CLASSES) >= 30
