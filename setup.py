"""Build hook: compile the codecs' compiled shape (mockbroker_protocol/_compiled/) with mypyc.

All metadata lives in pyproject.toml; this file only adds the extension modules. They are an
accelerator: when there is no C compiler or no Python headers, or MOCKBROKER_PURE_CODEC=1 is set at
build time, the package builds without them and the pure codecs (mockbroker_protocol/messages/) serve alone.
`make test` makes sure CI has both, so CI always builds and tests the compiled shape.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
COMPILED = HERE / "mockbroker_protocol" / "_compiled"


def _reason_not_to_compile() -> str | None:
    if os.environ.get("MOCKBROKER_PURE_CODEC", "").strip().lower() in ("1", "true", "yes", "on"):
        return "MOCKBROKER_PURE_CODEC is set"
    if sys.implementation.name != "cpython":
        return f"{sys.implementation.name} is not CPython"
    include = sysconfig.get_paths().get("include")
    if not include or not Path(include, "Python.h").exists():
        return f"no Python headers (Python.h) in {include} (Debian: apt-get install python3-dev)"
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(os.environ.get("CC", cc).split()[0]) is None:
        return f"no C compiler ({cc}) (Debian: apt-get install gcc)"
    return None


def _ext_modules() -> list[object]:
    reason = _reason_not_to_compile()
    if reason is not None:
        print(f"mockbroker: not compiling the codecs ({reason}); the pure ones will be used", file=sys.stderr)
        return []
    from mypyc.build import mypycify

    # Sorted relative paths: the generated C (and so the build) does not depend on directory order.
    sources = sorted(str(p.relative_to(HERE)) for p in COMPILED.glob("*.py") if p.name != "__init__.py")
    return list(
        mypycify(
            sources,
            opt_level="3",
            # one shared library for the group, named for us rather than by a hash
            group_name="mockbroker_codec",
            # mypy options: the package is typed (mypy --strict in CI); nothing more to check here
            target_dir=os.environ.get("MOCKBROKER_MYPYC_BUILD_DIR", "build/mypyc"),
        )
    )


setup(ext_modules=_ext_modules())
