"""Genomics environment speed: building the replay indexes, loading the benchmarks, running tool subsets.

    .venv/bin/python benchmarks/bench_env.py [--repeats 5]

The index build is timed from the packaged .jsonl.gz (no cache), in a fresh call each time.
"""

from __future__ import annotations

import argparse
import statistics
import time

from fgpo_lib.genomics import benchmarks as B
from fgpo_lib.genomics.ncbi_replay import build_replay
from fgpo_lib.genomics.tools import TOOL_ORDER, make_tools, run_subset
from fgpo_lib.subsets import SubsetSpace


def main() -> None:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        rp = build_replay()
        times.append(time.perf_counter() - t0)
    print(f"replay index build (all indexes): median {statistics.median(times):.2f} s, max {max(times):.2f} s over {args.repeats} runs")
    print(f"  {len(rp.genes)} gene records, {len(rp.gene_search)} gene searches, {len(rp.snps)} SNPs, {len(rp.omim)} OMIM entries, {len(rp.blast)} BLAST queries")
    for name in B.BENCHMARKS:
        B._load.cache_clear()
        t0 = time.perf_counter()
        qs = B.load_benchmark(name)
        print(f"load {name}: {len(qs)} questions in {time.perf_counter() - t0:.2f} s")
    tools = make_tools(rp)
    space = SubsetSpace(len(TOOL_ORDER), max_size=4, tool_names=TOOL_ORDER)
    qs = B.load_benchmark("geneturing")[::9]
    for cached in (False, True):
        t0 = time.perf_counter()
        for q in qs:
            cache = {} if cached else None
            for s in range(space.n_subsets):
                run_subset(tools, space.names_of(s), q.text, cache)
        dt = time.perf_counter() - t0
        print(f"tool subsets ({'with' if cached else 'without'} the per-question cache): {len(qs) * space.n_subsets / dt:,.0f} subsets/s")


if __name__ == "__main__":
    main()
