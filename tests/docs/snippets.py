"""The code snippets of README.md and docs/*.md, as a user would copy them.

A fenced block is a snippet. An HTML comment on the line before its fence says how to use it:
``<!-- snippet: file NAME -->`` (write it as NAME of a fresh project), ``<!-- snippet: skip
REASON -->`` (illustrative only; the reason is reported). Without a comment, the fence's language
decides (tests/docs/test_snippets.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^```(\S*)\s*$")
_MARKER = re.compile(r"^<!--\s*snippet:\s*(\w+)\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Snippet:
    document: Path
    line: int  # of the opening fence, 1-based
    language: str
    text: str
    action: str | None  # "file", "skip" or None
    argument: str  # the file name, or the reason to skip

    @property
    def where(self) -> str:
        return f"{self.document.relative_to(ROOT)}:{self.line}"


def snippets(document: Path) -> list[Snippet]:
    lines = document.read_text().splitlines()
    out: list[Snippet] = []
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if fence is None:
            i += 1
            continue
        start = i
        i += 1
        body: list[str] = []
        while i < len(lines) and lines[i].rstrip() != "```":
            body.append(lines[i])
            i += 1
        i += 1
        marker = _MARKER.match(lines[start - 1]) if start > 0 else None
        out.append(
            Snippet(
                document, start + 1, fence.group(1), "\n".join(body) + "\n",
                marker.group(1) if marker else None, marker.group(2) if marker else "",
            )
        )  # fmt: skip
    return out


def all_snippets() -> list[Snippet]:
    return [s for d in DOCUMENTS for s in snippets(d)]


def readme_fixture_examples() -> dict[str, Snippet]:
    """The README's three first tests, by the client each imports."""
    found: dict[str, Snippet] = {}
    for s in snippets(ROOT / "README.md"):
        if s.action == "file" and s.argument == "test_orders.py":
            for client in ("kafka", "aiokafka", "confluent_kafka"):
                if re.search(rf"^from {client} import", s.text, re.M):
                    found[client] = s
    return found
