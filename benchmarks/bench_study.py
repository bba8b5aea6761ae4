"""Training runs per second for a study arm: the batched trainer (all seeds x folds x learning rates in one tensor
program, fgpo_lib.batched) against the same runs one after another (fgpo_lib.train.train).

    .venv/bin/python benchmarks/bench_study.py [--benchmark geneturing] [--steps 200] [--sequential 4]

The table is the records reader's over every question of the benchmark (built here through the precompute engine,
in seconds) with its 163 subsets; 5 folds x 5 seeds x 3 learning rates = 75 runs per arm, evaluated every 25 steps
on train, dev and test. Sequential time is measured on the first --sequential runs and scaled to 75.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import torch

from fgpo_lib import TrainConfig, train
from fgpo_lib.batched import runs_grid, train_batched
from fgpo_lib.crossfit import crossfit_folds
from fgpo_lib.features import make_featurizer
from fgpo_lib.precompute import PrecomputeEngine, PrecomputeSpec
from fgpo_lib.study.protocol import ARMS as PROTOCOL_ARMS
from fgpo_lib.study.protocol import FGPO_ARM, GRPO_PAPER, LR_GRID, SFT_ARM

#: the protocol's arms this benchmark times, by their registry keys (fgpo_lib.study.protocol.ARMS)
TIMED = (FGPO_ARM, "FGPO k=8", GRPO_PAPER, SFT_ARM, "DPO (beta 0.1)")
ARMS = {name: PROTOCOL_ARMS[name].config for name in TIMED}


def main() -> None:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    ap.add_argument("--benchmark", default="geneturing")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--sequential", type=int, default=4, help="runs timed one after another")
    args = ap.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        engine = PrecomputeEngine(PrecomputeSpec(args.benchmark, "records"), cache=Path(tmp) / "c.sqlite")
        engine.run(progress=False)
        table = engine.build_table()
    features = make_featurizer("text")(table.questions)
    folds = crossfit_folds(table.question_ids, table.tasks, k=5, seed=0)
    runs = runs_grid(folds, seeds=[0, 1, 2, 3, 4], lrs=list(LR_GRID))
    print(f"{args.benchmark} x records: {table.n_questions} questions x {table.n_subsets} subsets; {len(runs)} runs per arm, {args.steps} updates, 1 thread")
    for name, base in ARMS.items():
        cfg = TrainConfig(**{**base.__dict__, "steps": args.steps, "eval_every": 25})
        t0 = time.perf_counter()
        train_batched(table, cfg, runs, features)
        batched = time.perf_counter() - t0
        t0 = time.perf_counter()
        for run in runs[: args.sequential]:
            train(table, TrainConfig(**{**cfg.__dict__, "seed": run.seed, "lr": run.lr}), features=features, splits=run.splits)
        per_run = (time.perf_counter() - t0) / args.sequential
        print(f"{name:<36} batched {len(runs) / batched:7.2f} runs/s ({batched:6.1f} s for {len(runs)}), sequential {1 / per_run:6.2f} runs/s ({per_run:5.2f} s each): {per_run * len(runs) / batched:5.1f}x")


if __name__ == "__main__":
    main()
