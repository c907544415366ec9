"""The layering contracts (pyproject.toml [tool.importlinter], docs/architecture.md) hold, and the
checker fails on what they forbid: a lower module importing a higher one, at module level, inside
a function (a deferred import) or only for type checking."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = str(Path(sys.executable).parent / "lint-imports")


def lint_imports(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    return subprocess.run([LINT_IMPORTS, "--no-cache", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_contracts_hold() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


CONFIG = """
[tool.importlinter]
root_packages = ["pkg"]
exclude_type_checking_imports = false

[[tool.importlinter.contracts]]
name = "pkg layers"
type = "layers"
layers = ["pkg.high", "pkg.low"]
"""

LOW_IMPORTS = {
    "module level": "import pkg.high\n",
    "deferred": "def use():\n    import pkg.high\n    return pkg.high\n",
    "type checking": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.high\n",
}


def write_package(root: Path, low: str) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "high.py").write_text("import pkg.low\n")
    (root / "pkg" / "low.py").write_text(low)
    (root / "pyproject.toml").write_text(textwrap.dedent(CONFIG))


@pytest.mark.parametrize("kind", list(LOW_IMPORTS))
def test_a_cycle_across_layers_breaks_the_contract(tmp_path: Path, kind: str) -> None:
    write_package(tmp_path, LOW_IMPORTS[kind])
    result = lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "pkg.low is not allowed to import pkg.high" in result.stdout


def test_the_same_package_without_the_cycle_passes(tmp_path: Path) -> None:  # the tests above can pass
    write_package(tmp_path, "VALUE = 1\n")
    result = lint_imports(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
