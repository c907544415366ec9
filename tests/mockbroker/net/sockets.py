"""Counting a listener's accepted sockets from the kernel's table (/proc/net/tcp and tcp6), and
reading a listening socket's accept queue from the kernel (sock_diag netlink, what `ss -lt` shows),
so a test sees what the broker holds (CLOSE_WAIT included), not what its own bookkeeping says."""

from __future__ import annotations

import socket
import struct
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


# linux/sock_diag.h and linux/inet_diag.h: a dump of the IPv4 TCP sockets in LISTEN.
_NETLINK_SOCK_DIAG = 4
_SOCK_DIAG_BY_FAMILY = 20
_NLM_F_REQUEST_DUMP = 0x301
_NLMSG_ERROR, _NLMSG_DONE = 2, 3
_TCP_LISTEN_STATE = 1 << 10
# inet_diag_msg: family, state, timer, retrans (4 bytes), inet_diag_sockid (48: sport first),
# expires, then rqueue and wqueue, which for a listening socket are the accept queue's length
# (sk_ack_backlog) and its bound (sk_max_ack_backlog: what listen() was given, capped at somaxconn).
_SPORT_AT, _QUEUES_AT = 4, 56


def listen_queue(port: int) -> tuple[int, int]:
    """The IPv4 listening socket on ``port``: (connections completed and not accepted yet, the
    backlog the kernel holds it to)."""
    request = struct.pack("=BBBxI", socket.AF_INET, socket.IPPROTO_TCP, 0, _TCP_LISTEN_STATE) + bytes(48)
    header = struct.pack("=IHHII", 16 + len(request), _SOCK_DIAG_BY_FAMILY, _NLM_F_REQUEST_DUMP, 1, 0)
    found: list[tuple[int, int]] = []
    with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG) as netlink:
        netlink.sendto(header + request, (0, 0))
        while True:
            data, offset = netlink.recv(1 << 16), 0
            while offset < len(data):
                length, kind = struct.unpack_from("=IH", data, offset)
                if kind == _NLMSG_ERROR:
                    raise OSError("sock_diag refused the dump")
                if kind == _NLMSG_DONE:
                    assert len(found) == 1, f"listening sockets on port {port}: {found}"
                    return found[0]
                body = data[offset + 16 : offset + length]
                if struct.unpack_from(">H", body, _SPORT_AT)[0] == port:
                    found.append(struct.unpack_from("=II", body, _QUEUES_AT))
                offset += (length + 3) & ~3
