"""The pipeline's HTML reports open in headless Chromium and their charts render: a screenshot of
each is taken and must show the charts' bar colours (decoded from the PNG here, no imaging library).
Chromium is a tool like kcat: `make deps` installs Debian's chromium; missing, the test skips on a
user's machine and fails under CI=true."""

from __future__ import annotations

import re
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from mockbroker_pipeline.report import PALETTE
from tests.integration.support import require_tool

CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
    "--disable-component-update", "--disable-sync", "--hide-scrollbars",
)  # fmt: skip


def decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB(A) bytes) of an 8-bit, non-interlaced RGB or RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert header is not None
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    bpp = 3 if colour == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line) if bpp == 3 else bytes(v for j in range(0, stride, 4) for v in line[j : j + 3]))
        prev = line
    return width, height, rows


def screenshot(html: Path, png: Path, tmp_path: Path) -> bytes:
    chromium = require_tool("chromium")
    argv = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,2600",
            f"--screenshot={png}", html.as_uri()]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, timeout=120, check=False)
    assert png.is_file(), f"chromium wrote no screenshot (exit {done.returncode}): {done.stderr.decode()[-2000:]}"
    return png.read_bytes()


def colours(rows: list[bytes]) -> set[tuple[int, int, int]]:
    return {(row[i], row[i + 1], row[i + 2]) for row in rows for i in range(0, len(row), 3 * 3)}


@pytest.mark.parametrize("which", ["analysis", "lab"])
def test_report_renders_in_headless_chromium(which: str, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    require_tool("chromium")
    out: Path = request.getfixturevalue("analysis_out" if which == "analysis" else "lab_out")
    html = out / "report.html"
    text = html.read_text()
    # Self-contained: no script, no stylesheet or image fetched from anywhere.
    assert "<script" not in text and not re.search(r"""(src|href)=["']?(https?:)?//""", text)
    assert text.count("<svg") >= 3
    width, height, rows = decode_png(screenshot(html, tmp_path / f"{which}.png", tmp_path))
    assert (width, height) == (1200, 2600)
    seen = colours(rows)
    assert len(seen) > 10, f"the screenshot is nearly one colour: {sorted(seen)[:10]}"
    # The charts drew bars: the first two series' colours are on the page.
    bars = {tuple(int(c[i : i + 2], 16) for i in (1, 3, 5)) for c in PALETTE[:2]}
    assert bars <= seen, f"no chart bars in the screenshot (looked for {sorted(bars)})"
