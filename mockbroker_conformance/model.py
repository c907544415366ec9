"""The conformance suite's results: one cell per (client, scenario), with its findings."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

PASS, FAIL, UNSUPPORTED = "pass", "fail", "not supported"
STATUSES = (PASS, FAIL, UNSUPPORTED)


class ScenarioFailed(Exception):
    """An expected outcome did not happen; the message says what was expected and what was seen."""


class NotSupported(Exception):
    """The client (or the target) cannot do this scenario; the message is the reason."""


@dataclass(frozen=True)
class Finding:
    """A client audit violation, seen from the broker's side, with the request that showed it."""

    check: str  # "heartbeat-interval", "commit-generation", "api-version", "coordinator", "member-id-required"
    client_id: str
    message: str
    request: dict[str, Any] = field(default_factory=dict)  # api, version, broker, seq, and the fields that matter

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class CellResult:
    client: str
    scenario: str
    status: str
    detail: str = ""
    findings: list[Finding] = field(default_factory=list)
    duration_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "client": self.client,
            "scenario": self.scenario,
            "status": self.status,
            "detail": self.detail,
            "findings": [f.to_json() for f in self.findings],
            "duration_s": round(self.duration_s, 2),
        }


@dataclass
class Matrix:
    """A whole run: the target, the clients and scenarios in order, and every cell."""

    target: str
    clients: list[str]
    scenarios: list[str]
    cells: list[CellResult]
    client_versions: dict[str, str] = field(default_factory=dict)
    started_at: str = ""
    duration_s: float = 0.0

    def cell(self, client: str, scenario: str) -> CellResult | None:
        for c in self.cells:
            if c.client == client and c.scenario == scenario:
                return c
        return None

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for c in self.cells if c.status == s) for s in STATUSES}

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "clients": self.clients,
            "client_versions": self.client_versions,
            "scenarios": self.scenarios,
            "started_at": self.started_at,
            "duration_s": round(self.duration_s, 1),
            "counts": self.counts(),
            "cells": [c.to_json() for c in self.cells],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Matrix:
        cells = [
            CellResult(c["client"], c["scenario"], c["status"], c.get("detail", ""),
                       [Finding(**f) for f in c.get("findings", [])], c.get("duration_s", 0.0))
            for c in data["cells"]
        ]
        return cls(
            data["target"], list(data["clients"]), list(data["scenarios"]), cells,
            dict(data.get("client_versions", {})), data.get("started_at", ""), data.get("duration_s", 0.0),
        )  # fmt: skip
