"""Build hook: compile the codecs' compiled shape (mockbroker_protocol/_compiled/) with mypyc.

All metadata lives in pyproject.toml; this file only adds the extension modules. They are an
accelerator: when there is no C compiler or no Python headers, or MOCKBROKER_PURE_CODEC=1 is set at
build time, the package builds without them and the pure codecs (mockbroker_protocol/messages/) serve alone.
`make test` makes sure CI has both, so CI always builds and tests the compiled shape.

A build leaves the checkout as it found it: setuptools' build/ and *.egg-info, mypyc's generated C
and mypy's cache go to a directory outside it (MOCKBROKER_BUILD_DIR, by default one per checkout
under the system's temporary directory, so a rebuild reuses it).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import sysconfig
import tempfile
from pathlib import Path

from setuptools import setup

HERE = Path(__file__).resolve().parent
COMPILED = HERE / "mockbroker_protocol" / "_compiled"
BUILD_DIR = Path(
    os.environ.get("MOCKBROKER_BUILD_DIR")
    or Path(tempfile.gettempdir()) / f"mockbroker-build-{hashlib.sha256(str(HERE).encode()).hexdigest()[:12]}"
)


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

    # mypyc runs mypy, whose cache would otherwise be .mypy_cache/ in the checkout.
    os.environ.setdefault("MYPY_CACHE_DIR", str(BUILD_DIR / "mypy_cache"))

    # Sorted relative paths: the generated C (and so the build) does not depend on directory order.
    sources = sorted(str(p.relative_to(HERE)) for p in COMPILED.glob("*.py") if p.name != "__init__.py")
    return list(
        mypycify(
            sources,
            opt_level="3",
            # one shared library for the group, named for us rather than by a hash
            group_name="mockbroker_codec",
            # mypy options: the package is typed (mypy --strict in CI); nothing more to check here
            # (relative to this directory: setuptools refuses absolute source paths)
            target_dir=os.path.relpath(os.environ.get("MOCKBROKER_MYPYC_BUILD_DIR") or BUILD_DIR / "mypyc", HERE),
        )
    )


BUILD_DIR.mkdir(parents=True, exist_ok=True)
setup(
    ext_modules=_ext_modules(),
    options={"build": {"build_base": str(BUILD_DIR / "build")}, "egg_info": {"egg_base": str(BUILD_DIR)}},
)
