"""Speed of llama.cpp builds: cells per second on the same cells, under this environment's build and another's.

    python benchmarks/bench_llama_builds.py --table tables/genehop__smollm2-135m__4tools.npz --questions 4
    python benchmarks/bench_llama_builds.py ... --other-python .venv-avx512/bin/python     # a second environment

A second environment is ``python -m venv .venv-avx512`` and the Makefile's pip command with
``CMAKE_ARGS="$(make -s print-llama-args LLAMA_BUILD=avx512)"``. Every question's 16 (or 163) cells are evaluated in
trie order, as precompute does, with 1 thread, after one warm-up question. An AVX-512 build cannot run on a CPU
without AVX-512 (it dies with SIGILL): the script checks the CPU's flags and says so instead of timing it. For
context it also prints the rate stored in the table itself (its cells' wall times, on the machine that made it).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def time_cells(table_path: str, questions: int) -> dict:
    """Evaluate every cell of the table's first ``questions`` + 1 questions (the first is a warm-up, not timed)."""
    from fgpo_lib import RewardTable
    from fgpo_lib.crossbuild import build_name
    from fgpo_lib.genomics.benchmarks import load_benchmark
    from fgpo_lib.precompute import evaluate_question
    from fgpo_lib.verify import table_reasoner, table_spec

    table = RewardTable.load(table_path)
    spec, reasoner = table_spec(table), table_reasoner(table)
    by_id = {q.qid: q for q in load_benchmark(spec.benchmark)}
    order = table.space.trie_order().tolist()
    qs = [by_id[q] for q in table.question_ids[: questions + 1]]
    evaluate_question(spec, qs[0], order, reasoner)  # warm-up: model pages, the shared prompt prefix
    t0 = time.perf_counter()
    agree = 0
    for row, q in enumerate(qs[1:], start=1):
        for s, _, r, _, _ in evaluate_question(spec, q, order, reasoner):
            agree += abs(r - float(table.rewards[row, s])) < 1e-6
    seconds = time.perf_counter() - t0
    cells = questions * len(order)
    return {"build": build_name(reasoner.backend()), "cells": cells, "seconds": seconds, "cells_per_second": cells / seconds, "agree": agree}


def cpu_has_avx512() -> bool:
    return "avx512f" in Path("/proc/cpuinfo").read_text().split()


def main() -> None:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    ap.add_argument("--table", default=str(ROOT / "tables" / "genehop__smollm2-135m__4tools.npz"))
    ap.add_argument("--questions", type=int, default=4, help="questions timed (after one warm-up)")
    ap.add_argument("--other-python", help="the python of a second environment with another llama.cpp build")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(time_cells(args.table, args.questions)))
        return
    from fgpo_lib import RewardTable
    from fgpo_lib.crossbuild import build_name
    from fgpo_lib.table_info import cost_info

    table = RewardTable.load(args.table)
    stored = cost_info(table)
    print(f"{Path(args.table).name}: made by the {build_name(table.provenance.get('backend'))} build; its stored cell times give "
          + (f"{stored['cells_per_second']:.2f} cells/s (on the machine and load that made it)" if stored else "no rate"))
    print(f"this CPU has AVX-512: {cpu_has_avx512()}")
    runs = [(sys.executable, "this environment")] + ([(args.other_python, "other environment")] if args.other_python else [])
    rates = {}
    for python, label in runs:
        res = subprocess.run([python, __file__, "--child", "--table", args.table, "--questions", str(args.questions)], capture_output=True, text=True)
        if res.returncode != 0:
            why = "SIGILL: the build uses instructions this CPU lacks" if res.returncode in (-4, 132) else res.stderr.strip().splitlines()[-1:]
            print(f"{label}: could not run ({why})")
            continue
        r = json.loads(res.stdout.strip().splitlines()[-1])
        rates[r["build"]] = r["cells_per_second"]
        print(f"{label}: {r['build']} build, {r['cells']} cells in {r['seconds']:.1f} s = {r['cells_per_second']:.2f} cells/s ({r['agree']} agree with the table)")
    if len(rates) == 2:
        (a, ra), (b, rb) = rates.items()
        print(f"{a} / {b} speed: {ra / rb:.2f}x")
    elif not cpu_has_avx512():
        print("the AVX-512 build cannot be timed on this CPU; run this script with --other-python on a CPU with AVX-512")


if __name__ == "__main__":
    main()
