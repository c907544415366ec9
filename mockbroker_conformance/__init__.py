"""Conformance checks: one scenario suite, many real clients, any broker, a compatibility matrix.

``run_suite()`` (or ``mockbroker conformance``) runs every scenario of ``scenarios.SCENARIOS`` with
every client of ``clients.CLIENTS`` (each a driver program speaking the JSON-lines protocol of
docs/conformance.md) against a target: an embedded mockbroker (with the client audit of
``audit``), librdkafka's mock cluster, or any broker at a bootstrap address; ``report`` turns the
resulting ``Matrix`` into Markdown, JSON, HTML and the README's compatibility table.
"""

from __future__ import annotations

from mockbroker_conformance.model import FAIL, PASS, UNSUPPORTED, CellResult, Finding, Matrix
from mockbroker_conformance.runner import run_suite, run_suite_async

__all__ = ["FAIL", "PASS", "UNSUPPORTED", "CellResult", "Finding", "Matrix", "run_suite", "run_suite_async"]
