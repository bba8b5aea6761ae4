"""The paper's remaining analyses, on a committed table and the protocol's saved arm results.

Array convention: ``table.rewards: (n_questions, n_subsets)`` raw scores in [0, 1], columns in the canonical subset
order of ``table.space``; an arm's ``subsets: (n_seeds, n_questions)`` is the canonical index of the subset it calls
on each test question (greedy, dev-selected checkpoint), -1 outside the table. Every score here is a mean raw score
in points (x 100).

* :func:`single_tools`: each tool alone beside No-Tool, All-Tools, the best fixed subset and the oracle (the paper's
  Fig. 1a).
* :func:`empty_subset_frame`: offline collapse (the paper's Table 16): the share of questions whose best subset is the
  empty one, and each arm's share of questions on which it calls no tool.
* :func:`top_subset_share`: where each arm's choices go (Fig. 3b): the share of questions on its most-called subset.
* :func:`dead_rate_by_reward`: the closed-form dead-group rate of the uniform policy at ``G`` under the paper's Eq. 1
  and under GRPO's differential reward (Fig. 5, Table 15).
* :func:`versus_best_fixed`: an arm against the best single fixed subset (Table 10), per seed.
* :func:`tool_removal`: the oracle and the best fixed subset with each tool's cells dropped (Table 12).

How it departs from the paper: an arm's "mass" is read from its greedy choices (the saved results keep the subset
each test question gets, not the whole distribution), so the shares are shares of questions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .metrics import zero_variance_prob
from .rewards import RewardSpec
from .table import RewardTable


def _pts(x) -> float:
    return 100 * float(np.mean(x))


def single_tools(table: RewardTable) -> pd.DataFrame:
    """One row per policy: No-Tool, each tool alone (library order), All-Tools, the best fixed subset, the oracle;
    columns ``score`` (points) and ``subset``."""
    space, r = table.space, table.rewards
    rows = []
    if space.has_empty:
        rows.append(("No-Tool", "", _pts(r[:, space.index_of([])])))
    singles = {space.label(i): i for i in np.flatnonzero(space.sizes == 1)}  # a candidate set may lack some
    for t in space.tool_names:
        if t in singles:
            rows.append((f"{t} alone", t, _pts(r[:, singles[t]])))
    extra = table.extras.get("all_tools")
    if extra is not None:
        rows.append(("All-Tools", extra["subsets"][0], _pts(np.asarray(extra["rewards"], np.float64))))
    elif space.max_size >= space.n_tools:
        rows.append(("All-Tools", "+".join(space.tool_names), _pts(r[:, space.index_of(space.tool_names)])))
    best = int(r.mean(axis=0).argmax())
    rows.append(("best fixed subset", space.label(best), _pts(r[:, best])))
    rows.append(("oracle", "per question", _pts(r.max(axis=1))))
    return pd.DataFrame(rows, columns=["policy", "subset", "score"]).set_index("policy")


def empty_optimal_share(table: RewardTable) -> dict:
    """Shares (%) of questions whose best subset is the empty one: the empty subset scores the row's maximum, over
    every question and over the questions some subset changes (non-constant rows)."""
    r = table.rewards
    if not table.space.has_empty:
        raise ValueError("the table's subsets leave out the empty one")
    empty = r[:, table.space.index_of([])] == r.max(axis=1)
    varies = r.max(axis=1) > r.min(axis=1)
    return {"all questions": 100 * float(empty.mean()), "questions a subset changes": 100 * float(empty[varies].mean()) if varies.any() else float("nan")}


def empty_subset_frame(arms: dict, table: RewardTable) -> pd.DataFrame:
    """Each arm's share (%) of (seed, question) pairs on which it calls no tool; ``arms``: name -> ArmResult."""
    e = table.space.index_of([])
    return pd.DataFrame({"no tool called (%)": {name: 100 * float((a.subsets == e).mean()) for name, a in arms.items() if not a.pending}})


def top_subset_share(arms: dict, table: RewardTable) -> pd.DataFrame:
    """Per arm: its most-called subset and the share (%) of questions it goes to, mean over seeds."""
    out = {}
    for name, a in arms.items():
        if a.pending:
            continue
        shares, tops = [], []
        for row in a.subsets:
            vals, counts = np.unique(row, return_counts=True)
            shares.append(counts.max() / len(row))
            tops.append(int(vals[counts.argmax()]))
        top = max(set(tops), key=tops.count)
        out[name] = {"top subset": "outside the table" if top < 0 else table.space.label(top) or "(none)", "share (%)": 100 * float(np.mean(shares))}
    return pd.DataFrame(out).T


def dead_rate_by_reward(table: RewardTable, group_size: int = 6) -> pd.DataFrame:
    """Closed-form dead-group rate (%) of the uniform policy at ``group_size`` under each training reward."""
    uniform = np.full(table.rewards.shape, 1.0 / table.n_subsets)
    kinds = ("score", "eq1", "differential") if table.space.has_empty else ("score", "eq1")
    return pd.DataFrame({"dead rate (%)": {k: 100 * float(zero_variance_prob(uniform, RewardSpec(k).apply(table.rewards, table.space), group_size).mean()) for k in kinds}})


def versus_best_fixed(arm, table: RewardTable) -> dict:
    """``arm`` (an ArmResult) against the best fixed subset of the whole table (chosen with every question's rewards,
    so the comparison favours the fixed subset): per-seed differences in points, and how many seeds the arm wins."""
    best = table.rewards.mean(axis=0).max()
    diffs = 100 * (np.nanmean(arm.scores, axis=1) - best)
    return {"best fixed": 100 * float(best), "arm - best fixed (mean)": float(diffs.mean()), "seeds won": int((diffs > 0).sum()), "seeds": len(diffs)}


def tool_removal(table: RewardTable) -> pd.DataFrame:
    """For each tool: the oracle and the best fixed subset (points) over the subsets without it, and their change
    from the full library."""
    r, space = table.rewards, table.space
    full_oracle, full_best = _pts(r.max(axis=1)), 100 * float(r.mean(axis=0).max())
    rows = {}
    for j, t in enumerate(space.tool_names):
        keep = ~np.asarray(space.masks)[:, j]
        sub = r[:, keep]
        rows[t] = {"oracle": _pts(sub.max(axis=1)), "oracle change": _pts(sub.max(axis=1)) - full_oracle,
                   "best fixed": 100 * float(sub.mean(axis=0).max()), "best fixed change": 100 * float(sub.mean(axis=0).max()) - full_best}
    return pd.DataFrame(rows).T
