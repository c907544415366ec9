"""Long decoder fuzz (issue #19, "must show" 3): N mutated frames per API key, without hypothesis.

The same corpus and the same mutations as tests/protocol/fuzz/test_decoders.py (bytes set,
flipped, inserted, deleted, extreme lengths and counts written over, the frame cut short), drawn
from a seeded ``random.Random`` instead of hypothesis: hypothesis's own generation costs about
2 ms an input, which makes a million inputs per decoder (24 keys) a day's run; this loop does it in
minutes. Every input must decode or be refused with a DecodeError; anything else is a crash, and
its frame is written to ``--crashes`` for the corpus. Also reported: the slowest single decode (a
forged count must not buy time out of proportion to the frame) and the peak RSS.

    nice -n 19 python bench/fuzz.py --inputs 1000000 --jobs 2 --write

Benchmarks, never tests: nothing here asserts.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import resource
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import append_results, loadavg, markdown_table
from mockbroker_protocol import registry
from mockbroker_protocol.errors import DecodeError

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "protocol" / "fuzz" / "corpus"
# Values that make lengths and counts extreme: int16/int32 bounds, -1 (null), and uvarints.
EXTREMES = [
    b"\x7f\xff", b"\x80\x00", b"\xff\xff", b"\x7f\xff\xff\xff", b"\x80\x00\x00\x00", b"\xff\xff\xff\xff",
    b"\x00\x00", b"\xff\xff\xff\xff\x0f", b"\x80\x80\x80\x80\x08", b"\x00",
]  # fmt: skip
KINDS = ["set", "flip", "insert", "delete", "extreme", "cut"]


def corpus() -> dict[int, list[bytes]]:
    frames: dict[int, list[bytes]] = {}
    for path in sorted(CORPUS.glob("*.bin")):
        frames.setdefault(int(path.name.split("-")[0]), []).append(path.read_bytes())
    return frames


def mutate(rng: random.Random, frames: list[bytes]) -> bytes:
    frame = bytearray(rng.choice(frames))
    for _ in range(rng.randint(1, 4)):
        pos = rng.randint(0, max(len(frame) - 1, 0))
        kind = rng.choice(KINDS)
        if kind == "set" and frame:
            frame[pos] = rng.randrange(256)
        elif kind == "flip" and frame:
            frame[pos] ^= 1 << rng.randrange(8)
        elif kind == "insert":
            frame[pos:pos] = rng.randbytes(rng.randint(1, 8))
        elif kind == "delete":
            del frame[pos : pos + rng.randint(1, 8)]
        elif kind == "extreme":
            value = rng.choice(EXTREMES)
            frame[pos : pos + len(value)] = value
        elif kind == "cut":
            del frame[pos:]
    return bytes(frame)


def fuzz_key(job: tuple[int, int, int, str]) -> list[object]:
    """Fuzz one API key; returns one row: key, inputs, decoded, refused, crashes, slowest ms, s."""
    api_key, inputs, seed, crashes_dir = job
    frames = corpus()[api_key]
    rng = random.Random(seed * 1000 + api_key)
    decoded = refused = crashed = 0
    slowest = 0.0
    t0 = time.perf_counter()
    for _ in range(inputs):
        frame = mutate(rng, frames)
        start = time.perf_counter()
        try:
            registry.decode_request(frame)
            decoded += 1
        except DecodeError:
            refused += 1
        except Exception:  # a crash is what this looks for: keep the frame
            crashed += 1
            path = Path(crashes_dir) / f"crash-{api_key}-{crashed}.bin"
            path.write_bytes(frame)
            print(f"crash on key {api_key}: {path}\n{traceback.format_exc()}", file=sys.stderr, flush=True)
        slowest = max(slowest, time.perf_counter() - start)
    return [api_key, inputs, decoded, refused, crashed, f"{slowest * 1000:.2f}", f"{time.perf_counter() - t0:.0f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--inputs", type=int, default=10000, help="mutated frames per API key")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--crashes", default="/tmp", help="where a crashing frame is written")
    parser.add_argument("--write", action="store_true", help="append the result to bench/RESULTS.md")
    args = parser.parse_args()
    jobs = [(key, args.inputs, args.seed, args.crashes) for key in sorted(corpus())]
    t0 = time.monotonic()
    rows = []
    with multiprocessing.Pool(args.jobs) as pool:
        for row in pool.imap_unordered(fuzz_key, jobs):
            print(" ".join(str(x) for x in row), flush=True)
            rows.append(row)
    rows.sort(key=lambda r: int(str(r[0])))
    elapsed = time.monotonic() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    headers = ["API key", "inputs", "decoded", "refused (DecodeError)", "crashes", "slowest ms", "s"]
    total = sum(int(str(r[1])) for r in rows)
    crashes = sum(int(str(r[4])) for r in rows)
    text = markdown_table(headers, rows)
    text += f"\n\n- inputs: {total:,} over {len(rows)} API keys; crashes: {crashes}; {elapsed:.0f} s"
    text += f" with {args.jobs} jobs; peak RSS of a job {peak:.1f} MB\n"
    print(text)
    if args.write:
        load = " ".join(f"{x:.2f}" for x in loadavg())
        append_results(
            f"\n## Decoder fuzz (bench/fuzz.py), {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}\n\n"
            f"{args.inputs:,} mutated frames per API key from the corpus (seed {args.seed}); "
            f"load average at the end {load}.\n\n{text}"
        )


if __name__ == "__main__":
    main()
