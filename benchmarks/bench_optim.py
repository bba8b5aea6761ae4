"""Optimizer speed on a 600 x 163 table (8 tools, at most 4 per call): time per update, and the updates and
reasoner evaluations each method needs to reach 95% of oracle-best train accuracy.

    .venv/bin/python benchmarks/bench_optim.py [--seeds 0,1,2] [--max-steps 400]

The table is synthetic (fgpo_lib.examples.synthetic_table: 9 tasks, one relevant tool or pair per task, distractors
that mislead), because this issue's benchmark predates the real tables. Accuracy is the reward of the greedy subset
on the 420 training questions. FGPO's evaluations are its table cells; GRPO's are on-demand oracle calls (all, and
distinct (question, subset) pairs), counted up to the first evaluation at or above the target.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numpy as np
import torch

from fgpo_lib import TrainConfig, train
from fgpo_lib.algos import FGPO, GRPO, FGPOConfig, GRPOConfig
from fgpo_lib.examples import synthetic_table
from fgpo_lib.features import make_featurizer
from fgpo_lib.oracle import TableOracle
from fgpo_lib.policy import SubsetPolicy


def time_updates(table, method: str, n: int = 60, batch: int = 0) -> float:
    """Median seconds per update (one FGPO step, or one GRPO generation batch with G=8, num_iterations=1)."""
    x = torch.from_numpy(make_featurizer("text")(table.questions))
    rows = torch.from_numpy(table.split_index("train"))
    if batch:
        rows = rows[:batch]
    policy = SubsetPolicy(x.shape[1], table.space)
    opt = torch.optim.Adam(policy.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(0)
    algo = FGPO(FGPOConfig(), torch.from_numpy(table.rewards), None, len(rows)) if method == "fgpo" else GRPO(GRPOConfig(), TableOracle(table), 8, None)
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        algo.update(policy, opt, x, rows, gen)
        times.append(time.perf_counter() - t0)
    return statistics.median(times[5:])


def to_target(table, cfg: TrainConfig, target: float) -> dict:
    run = train(table, cfg)
    for c in run["curves"]:
        if c["train"]["greedy_reward"] >= target:
            return {"updates": c["step"], "calls": c["reasoner_calls"], "unique": c["unique_reasoner_calls"], "final_acc": run["final"]["train"]["greedy_reward"]}
    return {"updates": None, "calls": run["final"]["reasoner_calls"], "unique": run["final"]["unique_reasoner_calls"], "final_acc": run["final"]["train"]["greedy_reward"]}


def main() -> None:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="0,1,2")
    ap.add_argument("--max-steps", type=int, default=1000)
    ap.add_argument("--eval-every", type=int, default=5)
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    torch.set_num_threads(torch.get_num_threads())
    table = synthetic_table(n_questions=600, n_tools=8, max_size=4, seed=0)
    train_rows = table.split_index("train")
    oracle_best = float(table.rewards[train_rows].max(axis=1).mean())
    target = 0.95 * oracle_best
    print(f"machine: {platform.processor() or platform.machine()}, torch {torch.__version__}, {torch.get_num_threads()} threads")
    print(f"table: {table.space.describe_table(table.n_questions)}; {len(train_rows)} train questions (synthetic)")
    print(f"oracle-best train accuracy {oracle_best:.4f}; target (95%) {target:.4f}\n")

    print("time per update (median of 55):")
    for batch in (0, 32):
        label = "all train questions" if batch == 0 else f"{batch} questions"
        f, g = time_updates(table, "fgpo", batch=batch), time_updates(table, "grpo", batch=batch)
        print(f"  batch = {label:<20} FGPO {f * 1e3:7.2f} ms   GRPO (G=8) {g * 1e3:7.2f} ms")

    print(f"\nto reach 95% of oracle-best train accuracy (lr 0.05, G=8, at most {args.max_steps} updates, checked every {args.eval_every}), per seed:")
    print(f"  {'policy':<10} {'method':<6} {'batch':>5} {'seed':>4} {'updates':>8} {'reasoner evals':>15} {'unique evals':>13}  final acc")
    summary = {}
    for param in ("flat", "factorized"):
        for method in ("fgpo", "grpo"):
            for batch in (0, 32):
                res = []
                for seed in seeds:
                    cfg = TrainConfig(method=method, seed=seed, steps=args.max_steps, batch_questions=batch, eval_every=args.eval_every, parameterization=param)
                    r = to_target(table, cfg, target)
                    res.append(r)
                    upd = "not hit" if r["updates"] is None else str(r["updates"])
                    print(f"  {param:<10} {method:<6} {batch or 'all':>5} {seed:>4} {upd:>8} {r['calls']:>15,} {r['unique']:>13,}  {r['final_acc']:.4f}", flush=True)
                hit = [r for r in res if r["updates"] is not None]
                med = lambda k: float(np.median([r[k] for r in hit])) if hit else None  # noqa: E731
                summary[(param, method, batch)] = (len(hit), med("updates"), med("calls"), med("unique"))
    print("\nmedian over the seeds that reached the target:")
    for (param, method, batch), (n_hit, upd, calls, uniq) in summary.items():
        head = f"  {param:<10} {method:<6} batch {batch or 'all':>4}:"
        if upd is None:
            print(f"{head} target not reached in {args.max_steps} updates on any of {len(seeds)} seeds")
        else:
            print(f"{head} {n_hit}/{len(seeds)} seeds, {upd:.0f} updates, {calls:,.0f} reasoner evaluations ({uniq:,.0f} unique)")
    for param in ("flat", "factorized"):
        for batch in (0, 32):
            f, g = summary[(param, "fgpo", batch)], summary[(param, "grpo", batch)]
            if f[2] and g[2]:
                print(f"  {param:<10} batch {batch or 'all':>4}: GRPO/FGPO reasoner evaluations {g[2] / f[2]:.2f}x (all calls), {g[3] / f[3]:.2f}x (unique)")

if __name__ == "__main__":
    main()
