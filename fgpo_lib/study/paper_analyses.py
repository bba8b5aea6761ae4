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
* :func:`tool_removal`: the oracle, the best fixed subset and FGPO retrained with each tool's cells dropped
  (Table 12).
* :func:`proposition1_check`: the paper's Proposition 1 on a table's rewards: merging reward classes (Eq. 1 to the
  differential reward) cannot lower the closed-form dead rate, and moving mass onto a larger class raises it.

How it departs from the paper: an arm's "mass" is read from its greedy choices (the saved results keep the subset
each test question gets, not the whole distribution), so the shares are shares of questions.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..metrics import dead_prob, reward_classes, reward_value_probs, zero_variance_prob
from ..rewards import RewardSpec
from ..table import RewardTable


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


def tool_removal(table: RewardTable, arms: dict | None = None) -> pd.DataFrame:
    """For each tool: the oracle and the best fixed subset (points) over the subsets without it, and their change
    from the full library. With ``arms`` (name -> ArmResult, the protocol's), also FGPO retrained without the tool
    (:func:`~fgpo_lib.study.protocol.removal_arm`) and its change from FGPO on the full library, mean over seeds."""
    from .protocol import FGPO_ARM, removal_arm

    r, space = table.rewards, table.space
    full_oracle, full_best = _pts(r.max(axis=1)), 100 * float(r.mean(axis=0).max())
    rows = {}
    for j, t in enumerate(space.tool_names):
        keep = ~np.asarray(space.masks)[:, j]
        sub = r[:, keep]
        rows[t] = {"oracle": _pts(sub.max(axis=1)), "oracle change": _pts(sub.max(axis=1)) - full_oracle,
                   "best fixed": 100 * float(sub.mean(axis=0).max()), "best fixed change": 100 * float(sub.mean(axis=0).max()) - full_best}
        if arms and removal_arm(j) in arms and FGPO_ARM in arms and not arms[removal_arm(j)].pending:
            fgpo = 100 * float(np.nanmean(arms[removal_arm(j)].scores))
            rows[t].update({"FGPO": fgpo, "FGPO change": fgpo - 100 * float(np.nanmean(arms[FGPO_ARM].scores))})
    return pd.DataFrame(rows).T


def coarsens(fine: np.ndarray, coarse: np.ndarray) -> np.ndarray:
    """``(n_questions,) bool``: whether each row of ``coarse: (n_questions, n_subsets)`` merges reward classes of
    ``fine`` (the same shape) and never splits one, i.e. subsets with equal ``fine`` rewards have equal ``coarse``."""
    out = np.empty(len(fine), dtype=bool)
    for i, (f, c) in enumerate(zip(np.asarray(fine), np.asarray(coarse))):
        out[i] = len(np.unique(np.stack([f, c]), axis=1).T) == len(np.unique(f))
    return out


def proposition1_check(table: RewardTable, group_size: int = 6, n_random: int = 20, seed: int = 0) -> pd.DataFrame:
    """The paper's Proposition 1 on ``table``'s rewards, under sampling policies of every concentration: uniform, and
    ``n_random`` seeded Dirichlet draws per question at each of the concentrations 1 and 0.1 (a policy near one
    subset). One row per policy family:

    * ``coarsening (%)``: the share of questions whose differential-reward classes merge Eq. 1's (part (i) applies);
    * ``dead Eq. 1 (%)``, ``dead differential (%)``: the closed-form dead rate at ``group_size``, mean over questions
      and draws;
    * ``(i) violations``: (question, draw) pairs where the classes coarsen and yet the differential rate is lower
      (more than 1e-12 below);
    * ``(ii) raised (%)``: of the pairs with two classes of mass at least 1e-9 under Eq. 1 (below that, float64
      cannot see the change), the share in which moving half the smallest such class's mass onto the largest raises
      the dead rate; the proposition says 100.
    """
    if not table.space.has_empty:
        raise ValueError("the differential reward needs the empty subset, which this table leaves out")
    eq1 = RewardSpec("eq1").apply(table.rewards, table.space)
    diff = RewardSpec("differential").apply(table.rewards, table.space)
    merged = coarsens(eq1, diff)
    eq1_classes, diff_classes = reward_classes(eq1), reward_classes(diff)  # once per table, not once per draw
    n_q, n_s = table.rewards.shape
    rng = np.random.default_rng(seed)
    families = {"uniform": np.full((1, n_q, n_s), 1.0 / n_s)}
    for alpha in (1.0, 0.1):
        families[f"Dirichlet({alpha:g})"] = rng.dirichlet(np.full(n_s, alpha), size=(n_random, n_q))
    rows = {}
    for name, draws in families.items():
        d_eq1, d_diff = np.empty((len(draws), n_q)), np.empty((len(draws), n_q))
        raised, eligible = 0, 0
        for i, p in enumerate(draws):
            _, w = reward_value_probs(p, eq1, eq1_classes)
            d_eq1[i], d_diff[i] = dead_prob(w, group_size), zero_variance_prob(p, diff, group_size, diff_classes)
            w = np.sort(w, axis=1)
            pos = (w >= 1e-9).sum(axis=1)
            small = w[np.arange(n_q), w.shape[1] - pos]  # the smallest class mass at least 1e-9
            ok = pos >= 2
            moved = w.copy()
            moved[np.arange(n_q), w.shape[1] - pos] -= small / 2
            moved[:, -1] += small / 2
            raised += int((dead_prob(moved, group_size) > dead_prob(w, group_size))[ok].sum())
            eligible += int(ok.sum())
        rows[name] = {"coarsening (%)": 100 * float(merged.mean()), "dead Eq. 1 (%)": 100 * float(d_eq1.mean()),
                      "dead differential (%)": 100 * float(d_diff.mean()),
                      "(i) violations": int(((d_diff < d_eq1 - 1e-12) & merged[None, :]).sum()),
                      "(ii) raised (%)": 100 * raised / eligible if eligible else float("nan")}
    return pd.DataFrame(rows).T
