"""The pipeline's commands from mockbroker's CLI: listed, lazily imported (``mockbroker serve`` never
loads pyspark), their argument errors; and the zip shipped to a cluster's executors. No Spark."""

from __future__ import annotations

import subprocess
import sys
import zipfile

import pytest

from mockbroker.cli import main
from mockbroker_pipeline.session import package_zip


def test_serve_does_not_import_pyspark() -> None:
    code = (
        "import sys; import mockbroker.cli as c; c.build_parser(); c.parse_serve([], {}); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pyspark', 'pandas', 'pyarrow', 'pipeline')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_help_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "analyze" in text and "assignor-lab" in text
    with pytest.raises(SystemExit):
        main(["assignor-lab", "--help"])
    assert "--grid" in capsys.readouterr().out


def test_argument_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["assignor-lab", "--grid", "huge", "--out", "x"])
    assert exited.value.code == 2
    assert "invalid choice: 'huge'" in capsys.readouterr().err
    # Neither EVENTS nor --bootstrap: a usage error (exit 2) that says what to give.
    assert main(["analyze", "--out", "x"]) == 2
    assert "give event-log files (EVENTS) or --bootstrap" in capsys.readouterr().err
    assert main(["assignor-lab", "--assignor", "no-such-assignor", "--out", "x"]) == 2
    assert "no-such-assignor" in capsys.readouterr().err


def test_the_executor_zip_holds_both_packages() -> None:
    with zipfile.ZipFile(package_zip()) as bundle:
        names = set(bundle.namelist())
    assert {"mockbroker_pipeline/replay.py", "mockbroker_pipeline/scenarios.py", "mockbroker_assignors/range.py", "mockbroker_assignors/registry.py", "mockbroker_protocol/hashing.py"} <= names
    assert not [n for n in names if n.endswith(".pyc")]


def test_the_executor_zip_is_enough_to_run_the_assignors() -> None:
    """An executor has only the zip: the assignors and the replay import from it alone (``-S``: no
    site-packages, so nothing of the installed packages can stand in for a missing file)."""
    code = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "import mockbroker_assignors.registry, mockbroker_assignors.sticky, mockbroker_assignors.uniform\n"
        "import mockbroker_pipeline.replay, mockbroker_pipeline.scenarios\n"
        "assert mockbroker_assignors.sticky.__file__.startswith(sys.argv[1])\n"
    )
    done = subprocess.run([sys.executable, "-S", "-c", code, str(package_zip())], capture_output=True, text=True, cwd="/")
    assert done.returncode == 0, done.stderr
