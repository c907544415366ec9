"""CRC-32C (Castagnoli), the checksum of record batch v2: the C-accelerated ``crc32c`` package when
importable, a pure-Python table-driven implementation otherwise.

Record batch v2 switched from CRC-32 (IEEE, used by message format v0/v1) to CRC-32C (KIP-98,
DefaultRecordBatch.java) because CPUs compute it in hardware (SSE 4.2, ARMv8 CRC). The broker
checks it on every produced batch, so the fast path matters; the fallback keeps ``protocol``
importable where the wheel is missing (an exotic platform, a stripped container).
"""

from __future__ import annotations

from collections.abc import Callable

from mockbroker_protocol.primitives import Buffer

__all__ = ["CRC32C_BACKEND", "crc32c", "crc32c_python"]

# The reflected Castagnoli polynomial 0x1EDC6F41 (RFC 3720, section B.4).
_POLY = 0x82F63B78


def _make_table() -> tuple[int, ...]:
    table = []
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        table.append(c)
    return tuple(table)


_TABLE = _make_table()


def crc32c_python(data: Buffer, value: int = 0) -> int:
    """CRC-32C of ``data`` in pure Python, continuing from ``value`` (a previous result), so
    ``crc32c_python(b, crc32c_python(a)) == crc32c_python(a + b)``. Byte at a time: slow (a few
    MB/s), only the fallback."""
    table = _TABLE
    crc = (value & 0xFFFFFFFF) ^ 0xFFFFFFFF
    # Iterating a memoryview of unsigned bytes yields ints, whatever the buffer's own format.
    for b in memoryview(data).cast("B"):
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


# The C implementation (hardware-accelerated where the CPU has it) takes any buffer without copying.
crc32c: Callable[[Buffer], int]
CRC32C_BACKEND: str


def _load_c_crc32c() -> Callable[[Buffer], int] | None:
    """The ``crc32c`` package's C function, loaded from its extension module directly: the
    package's ``__init__`` also imports importlib.metadata (for its version) and its command-line
    module, which made up a tenth of a broker's cold start. Any surprise in the package's layout
    falls back to the ordinary import."""
    import importlib.machinery
    import importlib.util

    try:
        spec = importlib.util.find_spec("crc32c")
        locations = list(spec.submodule_search_locations or ()) if spec is not None else []
        for location in locations:
            for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                path = f"{location}/_crc32c{suffix}"
                ext = importlib.util.spec_from_file_location("crc32c._crc32c", path)
                if ext is None or ext.loader is None:
                    continue
                try:
                    module = importlib.util.module_from_spec(ext)
                except ImportError:
                    continue
                ext.loader.exec_module(module)
                fn: Callable[[Buffer], int] = module.crc32c
                return fn
    except (ImportError, AttributeError, ValueError):  # pragma: no cover - depends on the environment
        pass
    try:
        from crc32c import crc32c as c_crc32c
    except ImportError:  # pragma: no cover - depends on the environment
        return None
    return c_crc32c


_c_crc32c = _load_c_crc32c()
if _c_crc32c is None:  # pragma: no cover - depends on the environment
    crc32c = crc32c_python
    CRC32C_BACKEND = "python"
else:
    crc32c = _c_crc32c
    CRC32C_BACKEND = "crc32c"
