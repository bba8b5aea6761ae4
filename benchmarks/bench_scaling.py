"""Libraries of 8 to 20 tools: subsets, table memory, and the time of one update of each estimator.

    .venv/bin/python benchmarks/bench_scaling.py [--questions 450] [--batch 16] [--updates 20]

Tables are synthetic (fgpo_lib.examples.synthetic_table: one relevant tool or pair per task, distractors that
mislead) with the size cap k = 4, because what is timed here is the optimizer, not a reasoner: full FGPO reads all
subsets, the others a part. One thread; the time per update is that of --updates updates of a factorized linear
policy on batches of --batch questions, less the same run with 0 updates (so the evaluations are not counted), each
the fastest of 3 runs. Cells
are what an estimator reads after those updates: all of them (repeats included) and the distinct ones; full FGPO
reads every cell of its training questions once.
"""

from __future__ import annotations

import argparse
import time

import torch

from fgpo_lib import TrainConfig, train
from fgpo_lib.examples import synthetic_table
from fgpo_lib.scaling import ESTIMATORS  # the scaling chapter's registry: every estimator it compares
from fgpo_lib.subsets import format_bytes


def main() -> None:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=450)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--updates", type=int, default=20)
    args = ap.parse_args()
    torch.set_num_threads(1)
    train(synthetic_table(n_questions=20), TrainConfig(steps=2, featurizer="text"))  # warm-up: imports, first calls
    for n_tools in (8, 12, 16, 20):
        table = synthetic_table(n_questions=args.questions, n_tools=n_tools, max_size=4, seed=0)
        print(f"N = {n_tools}: {table.n_subsets:,} subsets; table {table.n_questions} x {table.n_subsets:,}: {format_bytes(table.rewards.nbytes)}")
        for name, kw in ESTIMATORS.items():
            seconds = []
            for steps in (0, args.updates):
                cfg = TrainConfig(steps=steps, batch_questions=args.batch, eval_every=max(steps, 1), featurizer="text", group_size=8, **kw)
                best = float("inf")
                for _ in range(3):  # the fastest of 3 (after a warm-up run), so other load on the machine counts least
                    t0 = time.perf_counter()
                    run = train(table, cfg)
                    best = min(best, time.perf_counter() - t0)
                seconds.append(best)
            per_update = (seconds[1] - seconds[0]) / args.updates
            final = run["final"]
            print(f"  {name:<26} {1000 * per_update:7.2f} ms per update   cells read {final['reasoner_calls']:>10,} ({final['unique_reasoner_calls']:,} distinct)")


if __name__ == "__main__":
    main()
