"""Where a clean ``make book`` spends its time, and what the protocol's selection-only evaluation saves.

    .venv/bin/python benchmarks/bench_book.py [--book-dir book] [--setting geneturing/smollm2-135m] [--repeats 1]

1. **The last build's profile**, from ``<book-dir>/_generated/study.json`` (written by every ``fgpo study``): the wall
   seconds of each setting's notebook (they run ``--workers`` at a time) and of each chapter (one after another).
   Run it after a clean build (``make clean-book && time make book``) for the whole picture.
2. **One setting's protocol** (``--setting benchmark/reasoner``, its committed or built tables), one thread: the
   wall time of every trained arm on the 4-tool table with the evaluation the study uses (``train_batched``'s
   ``curves=False``: the dev greedy score at each checkpoint, all dev selection needs) and with every metric on every
   split (``curves=True``, what the protocol computed before), checking that the chosen subsets are the same.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def build_profile(book_dir: Path) -> None:
    path = book_dir / "_generated" / "study.json"
    if not path.exists():
        print(f"no {path}: build the book first (make book)")
        return
    study = json.loads(path.read_text())
    settings, chapters = study["timings"]["settings"], study["timings"]["chapters"]
    workers = study.get("workers", 1)
    print(f"last build ({path}): {len(settings)} settings on {workers} workers, {len(chapters)} chapters")
    print(f"  settings: {sum(settings.values()):7.1f} s of notebook time (~{sum(settings.values()) / workers:6.1f} s wall); the slowest:")
    for name, s in sorted(settings.items(), key=lambda kv: -kv[1])[:5]:
        print(f"    {name:<40} {s:6.1f} s")
    print(f"  chapters: {sum(chapters.values()):7.1f} s")
    for name, s in sorted(chapters.items(), key=lambda kv: -kv[1]):
        print(f"    {name:<40} {s:6.1f} s")


def protocol_evaluation(setting: str, repeats: int) -> None:
    import numpy as np
    import torch

    from fgpo_lib.batched import BATCHED_METHODS, train_batched
    from fgpo_lib.features import make_featurizer
    from fgpo_lib.study.protocol import ARMS, LR_GRID, arm_runs
    from fgpo_lib.study.runner import library_tables
    from fgpo_lib.table import RewardTable

    torch.set_num_threads(1)
    benchmark, reasoner = setting.split("/")
    with tempfile.TemporaryDirectory() as tmp:
        tables = library_tables(benchmark, reasoner, Path(tmp), Path(tmp) / "cells.sqlite")
        table = RewardTable.load(tables["4 tools"])
    features = make_featurizer("text")(table.questions)
    seeds = [0, 1, 2]
    totals = {True: 0.0, False: 0.0}
    print(f"\n{setting}, 4-tool table: {table.n_questions} questions x {table.n_subsets} subsets; 3 seeds x 5 folds x the arm's learning rates, 1 thread")
    for name, arm in ARMS.items():
        if arm.fixed or arm.config.method not in BATCHED_METHODS or arm.without_tool >= 0:
            continue
        cfg, runs = arm_runs(arm, table, seeds, 5, arm.lrs or LR_GRID, 8)  # as the study's run_arm builds them
        steps = cfg.steps
        seconds, chosen = {}, {}
        for curves in (True, False):
            best = float("inf")
            for _ in range(repeats):
                t0 = time.perf_counter()
                records = train_batched(table, cfg, runs, features, curves=curves)
                best = min(best, time.perf_counter() - t0)
            seconds[curves] = best
            totals[curves] += best
            chosen[curves] = [np.asarray(r["selected"]["per_question"]["test"]["greedy_subset"]) for r in records]
        same = all((a == b).all() for a, b in zip(chosen[True], chosen[False]))
        print(f"  {name:<34} {len(runs):3d} runs x {steps:4d} updates: every metric {seconds[True]:6.2f} s, dev only {seconds[False]:6.2f} s ({seconds[True] / seconds[False]:4.1f}x), same choices: {same}")
    print(f"  all these arms: every metric {totals[True]:.1f} s, dev only {totals[False]:.1f} s ({totals[True] / totals[False]:.1f}x)")


def main() -> None:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    ap.add_argument("--book-dir", default=str(Path(__file__).resolve().parents[1] / "book"))
    ap.add_argument("--setting", default="geneturing/smollm2-135m", help="benchmark/reasoner of the timed protocol")
    ap.add_argument("--repeats", type=int, default=1, help="timings per arm and mode (the fastest is shown)")
    args = ap.parse_args()
    build_profile(Path(args.book_dir))
    protocol_evaluation(args.setting, args.repeats)


if __name__ == "__main__":
    main()
