"""Every code snippet of README.md and docs/*.md runs as a user would paste it, in a fresh project
(a temporary directory outside this repository, so none of its pytest settings apply).

By the fence's language, unless an HTML comment before it says otherwise (tests/docs/snippets.py):
- python with ``>>>``: a doctest; with a ``def test_``: a test module of a fresh project, run by
  ``python -m pytest``; otherwise a script, run by ``python``. ``<!-- snippet: file NAME -->``
  writes it as NAME (a conftest.py gets a test that uses the fixture beside it);
  ``<!-- snippet: cluster -->`` runs it with ``kafka`` bound to a started cluster, as the text
  around it assumes.
- toml: parsed; a ``mockbroker serve --config`` file is also read by ``mockbroker serve``'s own
  settings loader (every key checked, nothing started). json: every line (or the whole) parses.
- sh: each ``mockbroker ...`` command is parsed by mockbroker's own command line (every flag
  and value checked; nothing is started); any other command (make, curl, pip, zip) is reported as
  not run. A snippet that cannot run here is marked ``<!-- snippet: skip REASON -->`` and is still
  checked: a "shortened quote of tests/X.py::test_y" must show that existing test, and Python
  must compile; such snippets are reported with their reasons and kept few.
- no language: text (a program's output, a directory tree), not code.

The interpreter is this suite's, which has every client installed; tests/docs/test_install.py
covers a fresh virtualenv with only mockbroker and pytest.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.docs.snippets import ROOT, Snippet, all_snippets

SNIPPETS = all_snippets()
MAX_SKIPS = 12
RUN_TIMEOUT_S = 300.0  # a guard against a hang, never a speed assertion
CONFTEST_CHECK = "def test_the_conftest_applies(kafka_cluster):\n    assert kafka_cluster.bootstrap_servers\n"
CLUSTER_PREAMBLE = "from mockbroker.testing import start_cluster\nkafka = start_cluster(topics={'orders': 3})\n"
CLUSTER_POSTAMBLE = "\nkafka.close()\n"


def _run(command: list[str], cwd: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "MOCKBROKER_"))}
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    assert done.returncode == 0, f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-4000:]}\n{done.stderr[-3000:]}"


def _shell_lines(text: str) -> list[str]:
    lines: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line, pending = pending + line, ""
        if line.strip() and not line.lstrip().startswith("#"):
            lines.append(line.strip())
    return lines


def _check_mockbroker_command(line: str, cwd: Path) -> None:
    from mockbroker.cli import build_parser, parse_serve

    argv = shlex.split(line, comments=True)[1:]
    if argv and argv[-1] == "&":  # the shell's "run in the background", not an argument
        argv = argv[:-1]
    try:
        if argv and argv[0] == "serve":
            parse_serve(argv[1:], {})  # raises SettingsError naming the flag
        elif argv and argv[0] == "conformance":
            from mockbroker_conformance.cli import build_parser as conformance_parser

            conformance_parser().parse_args(argv[1:])
        elif argv and argv[0] in ("analyze", "assignor-lab"):
            from mockbroker_pipeline.cli import build_parser as pipeline_parser

            pipeline_parser(argv[0]).parse_args(argv[1:])
        else:
            build_parser().parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"`{line}` is refused by mockbroker's command line (exit {exc.code})")


QUOTE = re.compile(r"shortened quote of (tests/\S+\.py)::(\w+)")


def _check_not_run(snippet: Snippet) -> list[str]:
    """A snippet that cannot run as pasted is still checked: a shortened quote must name a test that
    exists, and Python must compile (a quote keeps the test's statements, with ``...`` for what it
    leaves out, so a quote that no longer parses has drifted)."""
    quoted = QUOTE.search(snippet.argument)
    if quoted is not None:
        source = (ROOT / quoted.group(1)).read_text()
        assert f"def {quoted.group(2)}(" in source, f"{snippet.where}: {quoted.group(1)} has no {quoted.group(2)}"
        assert quoted.group(2) in snippet.text, f"{snippet.where}: the quote does not show {quoted.group(2)}"
    if snippet.language == "python":
        compile(snippet.text, snippet.where, "exec")
    return [f"not run: {snippet.argument}"]


def run_snippet(snippet: Snippet, project: Path) -> list[str]:
    """Run one snippet in ``project``; return the commands it has that were not run."""
    text, language = snippet.text, snippet.language
    if snippet.action == "skip":
        assert snippet.argument, f"{snippet.where}: a skip needs a reason"
        return _check_not_run(snippet)
    if language == "python":
        if snippet.action == "cluster":
            (project / "snippet.py").write_text(CLUSTER_PREAMBLE + text + CLUSTER_POSTAMBLE)
            _run([sys.executable, "snippet.py"], project)
        elif snippet.action == "file" or "def test_" in text:
            name = snippet.argument if snippet.action == "file" else "test_snippet.py"
            (project / name).write_text(text)
            if name == "conftest.py":
                (project / "test_conftest_applies.py").write_text(CONFTEST_CHECK)
            _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], project)
        elif text.lstrip().startswith(">>>"):
            (project / "snippet.txt").write_text(text)
            _run([sys.executable, "-m", "doctest", "snippet.txt"], project)
        else:
            (project / "snippet.py").write_text(text)
            _run([sys.executable, "snippet.py"], project)
        return []
    if language == "toml":
        document = tomllib.loads(text)
        if "mockbroker serve --config" in text:
            from mockbroker.cli import parse_serve

            (project / "broker.toml").write_text(text)
            parse_serve(["--config", str(project / "broker.toml")], {})
        assert document
        return []
    if language == "json":
        try:
            json.loads(text)  # one document, maybe wrapped
        except json.JSONDecodeError:
            for line in text.strip().splitlines():  # JSON Lines
                json.loads(line)
        return []
    if language == "sh":
        not_run = []
        for line in _shell_lines(text):
            if line.startswith("mockbroker "):
                _check_mockbroker_command(line, project)
            else:
                not_run.append(line)
        return not_run
    assert language == "", f"{snippet.where}: no runner for ```{language}"
    return []


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.where for s in SNIPPETS])
def test_a_snippet_runs_as_pasted(snippet: Snippet, tmp_path: Path) -> None:
    not_run = run_snippet(snippet, tmp_path)
    if not_run:
        print(f"{snippet.where}: not run: {not_run}")


def test_skips_are_few_and_each_says_why() -> None:
    skips = [s for s in SNIPPETS if s.action == "skip"]
    report = "\n".join(f"  {s.where}: {s.argument}" for s in skips)
    print(f"{len(SNIPPETS)} snippets, {len(skips)} skipped:\n{report}")
    assert all(s.argument for s in skips), report
    for s in skips:  # a reason pointing at the test that runs the real thing names one that exists
        for path, name in re.findall(r"(tests/\S+\.py)::(\w+)", s.argument):
            assert f"def {name}(" in (ROOT / path).read_text(), f"{s.where}: {path} has no {name}"
    assert len(skips) <= MAX_SKIPS, f"{len(skips)} snippets skipped (at most {MAX_SKIPS}):\n{report}"
