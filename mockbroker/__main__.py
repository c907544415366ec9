"""``python -m mockbroker serve ...``: the same command as the ``mockbroker`` console script."""

from __future__ import annotations

import sys

from mockbroker.cli import main

if __name__ == "__main__":
    sys.exit(main())
