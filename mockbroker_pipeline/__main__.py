"""``python -m mockbroker_pipeline analyze|assignor-lab ...``, and the script to hand to spark-submit:

    spark-submit --master yarn --py-files mockbroker_pipeline.zip mockbroker_pipeline/__main__.py analyze logs/ --out out/
"""

from __future__ import annotations

import sys

if __package__ in (None, ""):  # run as a file (spark-submit): make the packages importable
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mockbroker_pipeline.cli import main

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in ("analyze", "assignor-lab"):
        print("usage: python -m mockbroker_pipeline analyze|assignor-lab ... (see mockbroker analyze --help)", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(main(sys.argv[1:]))
