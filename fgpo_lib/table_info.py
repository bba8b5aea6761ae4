"""Summary statistics of a reward table (what ``fgpo table-info`` prints).

Input convention: ``table.rewards: (n_questions, n_subsets)``, canonical subset order.
"""

from __future__ import annotations

import numpy as np

from .metrics import constant_reward
from .table import RewardTable


def table_info(table: RewardTable) -> dict:
    """Mean reward, share of constant-reward questions, best single subset, oracle-best mean, mean reward by size."""
    r = table.rewards.astype(np.float64)
    by_subset = r.mean(axis=0)
    best = int(np.argmax(by_subset))
    sizes = table.space.sizes
    return {
        "questions": table.n_questions,
        "subsets": table.n_subsets,
        "mean_reward": float(r.mean()),
        "constant_share": float(constant_reward(r).mean()),
        "best_subset": table.space.label(best) or "(no tool)",
        "best_subset_mean": float(by_subset[best]),
        "oracle_best_mean": float(r.max(axis=1).mean()),
        "mean_by_size": {int(k): float(r[:, sizes == k].mean()) for k in np.unique(sizes)},
    }


def format_table_info(info: dict) -> str:
    lines = [
        f"questions x subsets: {info['questions']} x {info['subsets']}",
        f"mean reward: {info['mean_reward']:.4f}",
        f"questions with constant reward over all subsets: {100 * info['constant_share']:.1f}%",
        f"best single subset: {info['best_subset']} (mean {info['best_subset_mean']:.4f})",
        f"oracle-best mean (best subset per question): {info['oracle_best_mean']:.4f}",
        "mean reward by subset size: " + ", ".join(f"{k}: {v:.4f}" for k, v in info["mean_by_size"].items()),
    ]
    return "\n".join(lines)
