"""How long the command line takes to start: process wall time of ``fgpo --help``, of ``fgpo COMMAND --help`` for every
subcommand of the subcommand table (the target: at most 1 s each), ``fgpo questions --benchmark genehop`` and ``fgpo
score`` (a bad prediction file, so the work is the start), median over several runs, for this checkout and, with
``--before REV``, for another commit of the repository (checked out into a temporary worktree and run with the same
interpreter and packages).

    python benchmarks/bench_cli.py [--runs 7] [--before 504504f]

Prints one line per command: the median and the range in seconds, for each checkout, and the slowest ``--help``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from fgpo_lib.cli import COMMANDS as SUBCOMMANDS  # noqa: E402  (the table only: no command module is imported)

COMMANDS = {
    "fgpo --help": ["--help"],
    **{f"fgpo {name} --help": [name, "--help"] for name in SUBCOMMANDS},
    "fgpo questions --benchmark genehop": ["questions", "--benchmark", "genehop"],
    "fgpo score (a missing prediction file)": ["score", "--benchmark", "genehop", "--predictions", "/nonexistent.jsonl"],
}


def wall_seconds(source: Path, argv: list[str], runs: int) -> list[float]:
    """Process wall times of ``python -m fgpo_lib.cli argv`` with ``source`` first on the path."""
    env = {**os.environ, "PYTHONPATH": str(source)}
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-m", "fgpo_lib.cli", *argv], env=env, cwd=source, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out.append(time.perf_counter() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--before", help="a commit to time as well (e.g. 504504f, before the command line became lazy)")
    args = ap.parse_args()
    checkouts = {"this checkout": ROOT}
    tmp = None
    if args.before:
        tmp = Path(tempfile.mkdtemp()) / "before"
        subprocess.run(["git", "worktree", "add", "--detach", str(tmp), args.before], cwd=ROOT, check=True, capture_output=True)
        checkouts = {args.before: tmp, **checkouts}
    try:
        slowest = ("", 0.0)
        for label, argv in COMMANDS.items():
            for name, source in checkouts.items():
                secs = wall_seconds(source, argv, args.runs)
                med = statistics.median(secs)
                if name == "this checkout" and label.endswith("--help") and med > slowest[1]:
                    slowest = (label, med)
                print(f"{label:<42} {name:<14} median {med:.2f} s (range {min(secs):.2f}-{max(secs):.2f}, {args.runs} runs)", flush=True)
        print(f"slowest --help of this checkout: {slowest[0]}, {slowest[1]:.2f} s (target: at most 1 s)")
    finally:
        if tmp is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(tmp)], cwd=ROOT, capture_output=True)


if __name__ == "__main__":
    main()
