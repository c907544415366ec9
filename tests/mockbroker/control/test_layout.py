"""The control package's public names: ``mockbroker.intercept`` (a documented module path) and
``mockbroker.control`` re-export the objects themselves, and pushed errors are accepted only for
APIs that are served and have a fault point."""

from __future__ import annotations

import importlib

import mockbroker.control as control
import mockbroker.control.intercept as intercept_impl
import mockbroker.intercept as intercept_shim
from mockbroker.control.faults import PARTITION_APIS, REQUEST_APIS
from mockbroker.dispatch.table import HANDLERS


def test_the_intercept_shim_re_exports_the_same_objects() -> None:
    for name in intercept_shim.__all__:
        assert getattr(intercept_shim, name) is getattr(intercept_impl, name), name


def test_the_control_package_exports_what_its_modules_define() -> None:
    for name in control.__all__:
        value = getattr(control, name)
        home = getattr(value, "__module__", None)
        if home is not None and home.startswith("mockbroker.control."):
            assert getattr(importlib.import_module(home), name) is value, name


def test_pushed_errors_go_only_to_served_apis() -> None:
    assert PARTITION_APIS <= REQUEST_APIS
    assert set(HANDLERS) >= REQUEST_APIS
