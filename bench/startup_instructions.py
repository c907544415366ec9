"""Instructions from exec to the first answered ApiVersions, for each broker's process (valgrind).

The startup scenario's wall-clock times move with the machine's load; instruction counts do not, so
start-up work is developed against these (bench/RESULTS.md, "startup" subsections):

    python bench/startup_instructions.py             # ours and librdkafka's mock
    python bench/startup_instructions.py --floor     # also the interpreter's start, a bare uvloop server

Each process runs under ``valgrind --tool=cachegrind --cache-sim=no`` with PYTHONHASHSEED=0 (the
counts repeat to 0.1M). Once its READY line is read, one connection sends ApiVersions v2 and reads
the answer; the process is then killed by SIGUSR1 (no handler: a fatal signal, on which valgrind
still reports), so the count stops at the first answer and leaves shutdown out. Needs valgrind.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import PYTHON, ROOT, mockbroker_command, rdkafka_command

# ApiVersions v2 (header v1, empty body): what a client sends first.
_CLIENT_ID = b"bench"
_BODY = struct.pack(">hhih", 18, 2, 1, len(_CLIENT_ID)) + _CLIENT_ID
API_VERSIONS_V2 = struct.pack(">i", len(_BODY)) + _BODY

# A bare uvloop server that answers one ApiVersions frame with an empty v2 answer: the floor of any
# broker on this interpreter and loop.
BARE_SERVER = """
import asyncio, struct, uvloop
class Answer(asyncio.Protocol):
    def connection_made(self, transport): self.transport = transport
    def data_received(self, data):  # correlation id, error 0, no api keys, throttle 0
        self.transport.write(struct.pack(">i", 14) + data[8:12] + bytes(10))
async def main():
    server = await asyncio.get_running_loop().create_server(Answer, "127.0.0.1", 0)
    print(f"BARE READY bootstrap=127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
    await asyncio.Event().wait()
uvloop.run(main())
"""


def instructions(cmd: list[str], answer: bool = True) -> int:
    """Cachegrind's instruction count for ``cmd``: to its first answer, or to its exit."""
    with tempfile.TemporaryDirectory() as tmp:
        valgrind = ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={tmp}/out"]
        proc = subprocess.Popen(
            valgrind + cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, cwd=ROOT, env=dict(os.environ, PYTHONHASHSEED="0"),
        )  # fmt: skip
        assert proc.stdout is not None
        if answer:
            line = proc.stdout.readline()
            bootstrap = dict(f.split("=", 1) for f in line.split()[2:])["bootstrap"]
            host, port = bootstrap.split(",")[0].rsplit(":", 1)
            with socket.create_connection((host, int(port))) as sock:
                sock.sendall(API_VERSIONS_V2)
                (size,) = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))
                sock.recv(size, socket.MSG_WAITALL)
            proc.send_signal(signal.SIGUSR1)
        _, err = proc.communicate()
    found = re.search(r"I\s+refs:\s+([\d,]+)", err)
    if found is None:
        raise SystemExit(f"no instruction count from valgrind for {cmd}:\n{err[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--floor", action="store_true", help="also the interpreter's own start and a bare uvloop server"
    )
    args = parser.parse_args(argv)
    rows = [
        ("mockbroker serve", instructions(mockbroker_command())),
        ("librdkafka mock (bench/rdkafka_mock.py)", instructions(rdkafka_command())),
    ]
    if args.floor:
        # The interpreter's start alone, left without finalising (as the brokers are, at their answer).
        rows.append(
            (
                "python start (site, no imports)",
                instructions([PYTHON, "-c", "import os; os._exit(0)"], answer=False),
            )
        )
        rows.append(("bare uvloop server", instructions([PYTHON, "-c", BARE_SERVER])))
    for what, count in rows:
        print(f"{what:42s} {count / 1e6:8.1f}M instructions")


if __name__ == "__main__":
    main()
