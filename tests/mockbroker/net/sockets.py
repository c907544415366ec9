"""Counting a listener's accepted sockets from the kernel's table (/proc/net/tcp and tcp6), so a
test sees what the broker holds (CLOSE_WAIT included), not what its own bookkeeping says."""

from __future__ import annotations

from pathlib import Path

LISTEN = "0A"
CLOSE_WAIT = "08"


def broker_sockets(port: int, states: frozenset[str] | None = None) -> int:
    """How many sockets with local port ``port`` are open, the listening one left out; only those
    in ``states`` (kernel codes, e.g. CLOSE_WAIT) when given."""
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        path = Path(table)
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            local, state = fields[1], fields[3]
            if int(local.rsplit(":", 1)[1], 16) != port or state == LISTEN:
                continue
            if states is None or state in states:
                count += 1
    return count
