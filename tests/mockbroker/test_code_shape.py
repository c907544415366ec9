"""The broker's code keeps the shape docs/architecture.md promises: no hand-written function in
mockbroker/ longer than 60 lines (decorators and docstring included), so each rule stays readable
in one screen; the check itself fails on a longer function."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import mockbroker

ROOT = Path(mockbroker.__file__).parent
MAX_LINES = 60


def long_functions(source: str, name: str) -> list[str]:
    """``file:line function (N lines)`` for each function or method over MAX_LINES lines."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            length = (node.end_lineno or node.lineno) - first + 1
            if length > MAX_LINES:
                found.append(f"{name}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_no_function_in_mockbroker_is_over_60_lines() -> None:
    found = [
        line
        for path in sorted(ROOT.rglob("*.py"))
        for line in long_functions(path.read_text(), str(path.relative_to(ROOT.parent)))
    ]
    assert not found, "split these functions:\n" + "\n".join(found)


def test_the_check_finds_a_long_function_and_passes_a_short_one() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_LINES - 1))
    assert long_functions(f"def fits():\n{body}", "a.py") == []
    longer = f"@decorated\ndef too_long():\n{body}"
    assert long_functions(longer, "a.py") == [f"a.py:2 too_long ({MAX_LINES + 1} lines)"]
    nested = "class C:\n" + textwrap.indent(longer, "    ")
    assert long_functions(nested, "b.py") == [f"b.py:3 too_long ({MAX_LINES + 1} lines)"]
