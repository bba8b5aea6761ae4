"""Several methods x seeds on one table, and their summary with confidence intervals.

``runs: {method: [run record per seed]}`` (records from :func:`fgpo_lib.train.train`); scores for the CIs are
``(n_seeds, n_questions)`` per-question greedy rewards (:mod:`fgpo_lib.stats` convention).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from .stats import bootstrap_ci
from .table import RewardTable
from .train import TrainConfig, train

SUMMARY_METRICS = ("expected_reward", "failure_rate_closed_form", "failure_rate_observed", "greedy_size", "expected_size", "entropy")


def compare_runs(table: RewardTable, base: TrainConfig, methods: list[str], seeds: list[int], progress: bool = False, features=None) -> dict[str, list[dict]]:
    """Train every method on every seed with ``base``'s other settings (``features``: see :func:`train`)."""
    return {m: [train(table, replace(base, method=m, seed=s), features=features, progress=progress) for s in seeds] for m in methods}


def per_question_scores(runs: list[dict], split: str = "test", key: str = "greedy_reward") -> np.ndarray:
    """``(n_seeds, n_questions)`` per-question ``key`` of each run."""
    return np.array([r["per_question"][split][key] for r in runs], dtype=np.float64)


class Summary(pd.DataFrame):
    """A DataFrame that prints whole: every column, the CI bounds included, however wide the terminal."""

    @property
    def _constructor(self):
        return Summary

    def __repr__(self) -> str:
        return self.to_string(index=False, float_format=lambda v: f"{v:.4f}")


def summarize(runs: dict[str, list[dict]], split: str = "test") -> pd.DataFrame:
    """One row per method: greedy reward with its 95% CI over seeds x questions, mean final metrics, reasoner calls.
    An untrained policy that reads no reward (``uniform``) reports its expected reward as its greedy reward. The frame
    prints whole (:class:`Summary`)."""
    from .algos.registry import METHODS

    rows = []
    for method, rs in runs.items():
        # a policy that reads no reward (uniform) has no top subset: every one ties, and argmax would report the first
        # subset's reward; it picks a subset at random, so its greedy reward is its expected reward
        key = "expected_reward" if method in METHODS and METHODS[method].reads == "nothing" else "greedy_reward"
        mean, lo, hi = bootstrap_ci(per_question_scores(rs, split, key))
        finals = [r["final"][split] for r in rs]
        rows.append(
            {
                "method": method,
                "seeds": len(rs),
                "greedy_reward": mean,
                "ci_lo": lo,
                "ci_hi": hi,
                **{k: float(np.mean([f[k] for f in finals])) for k in SUMMARY_METRICS},
                "reasoner_calls": float(np.mean([r["final"]["reasoner_calls"] for r in rs])),
                "unique_reasoner_calls": float(np.mean([r["final"]["unique_reasoner_calls"] for r in rs])),
            }
        )
    return Summary(rows)


def curves_frame(runs: dict[str, list[dict]], split: str = "train") -> pd.DataFrame:
    """Long frame of the learning curves: one row per (method, seed, evaluation point) with every metric."""
    rows = []
    for method, rs in runs.items():
        for r in rs:
            for c in r["curves"]:
                rows.append({"method": method, "seed": r["config"]["seed"], "step": c["step"], "optimizer_steps": c["optimizer_steps"], "reasoner_calls": c["reasoner_calls"], **c[split]})
    return pd.DataFrame(rows)
