"""The coordinators package's own layering, read from the source (function-local and TYPE_CHECKING
imports included): each kind of group stays in its folder, only the router and the migration
package know several kinds, nothing imports a module that imports it back, and nothing reaches up
into the cluster, the handlers or the control API."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import mockbroker.coordinators

ROOT = Path(mockbroker.coordinators.__file__).parent
PACKAGE = "mockbroker.coordinators"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join((PACKAGE, *parts[:-1])) if parts[-1] == "__init__" else ".".join((PACKAGE, *parts))


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name.startswith("mockbroker.")}


GRAPH = {module_name(path): imports_of(path) for path in ROOT.rglob("*.py")}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found: list[list[str]] = []

    def visit(name: str, stack: list[str]) -> None:
        for dep in sorted(graph.get(name, ())):
            if dep in stack:
                found.append([*stack[stack.index(dep) :], dep])
            elif dep in graph:
                visit(dep, [*stack, dep])

    for name in graph:
        visit(name, [name])
    return found


def test_no_module_imports_one_that_imports_it_back() -> None:
    assert cycles(GRAPH) == []


def test_the_cycle_finder_finds_a_cycle() -> None:  # the test above can fail
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"], ["b", "c", "a", "b"], ["c", "a", "b", "c"]]


# folder -> the folders of this package it must not import
FORBIDDEN = {
    "classic": ("consumer", "migration", "router"),
    "consumer": ("classic", "migration", "router"),
    "offsets": ("classic", "consumer", "migration", "router"),
    "migration": ("router",),
}


@pytest.mark.parametrize("folder", sorted(FORBIDDEN))
def test_each_kind_stays_in_its_folder(folder: str) -> None:
    prefix = f"{PACKAGE}.{folder}"
    banned = tuple(f"{PACKAGE}.{other}" for other in FORBIDDEN[folder])
    offending = {
        name: sorted(dep for dep in deps if dep.startswith(banned))
        for name, deps in GRAPH.items()
        if name.startswith(prefix)
    }
    assert {name: deps for name, deps in offending.items() if deps} == {}


def test_nothing_reaches_up_into_the_broker() -> None:
    allowed = (f"{PACKAGE}.", "mockbroker.config.", "mockbroker.events", "mockbroker.timers")
    reaching = {name: sorted(d for d in deps if not d.startswith(allowed)) for name, deps in GRAPH.items()}
    assert {name: deps for name, deps in reaching.items() if deps} == {}
