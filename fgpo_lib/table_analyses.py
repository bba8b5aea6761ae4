"""Table-level analyses of the study: how degenerate outcomes get with the library size, and dead groups against G.

Array convention: ``scores: (n_questions, n_subsets)`` in the canonical order of ``space``;
``probs: (n_questions, n_subsets)`` a policy's pi(S|q) on the same columns.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from .metrics import constant_reward, zero_variance_prob
from .subsets import SubsetSpace


def sub_library_columns(space: SubsetSpace, tools: tuple[str, ...]) -> np.ndarray:
    """``(n,) int64`` columns of ``space`` whose subsets use only ``tools``."""
    allowed = np.zeros(space.n_tools, dtype=bool)
    allowed[[space.tool_index(t) for t in tools]] = True
    return np.flatnonzero(~(space.masks & ~allowed).any(axis=1))


def degenerate_share_by_library_size(scores: np.ndarray, space: SubsetSpace) -> pd.DataFrame:
    """The paper's outcome-degenerate share against library size: for each size ``m`` = 1..n_tools, the share of
    questions whose score is the same under every subset of a sub-library of ``m`` tools (within the space's size
    cap), averaged over all ``C(n_tools, m)`` sub-libraries. Columns: ``tools``, ``libraries``, ``degenerate_share``."""
    rows = []
    for m in range(1, space.n_tools + 1):
        shares = [constant_reward(scores[:, sub_library_columns(space, combo)]).mean() for combo in itertools.combinations(space.tool_names, m)]
        rows.append({"tools": m, "libraries": len(shares), "degenerate_share": float(np.mean(shares))})
    return pd.DataFrame(rows)


def dead_group_rate(probs: np.ndarray, rewards: np.ndarray, group_sizes=range(2, 33)) -> pd.DataFrame:
    """The closed-form dead-group rate ``mean_q sum_v P_pi(r = v | q)^G`` for each ``G``: the share of questions whose
    group of G samples would all get the same reward (``rewards`` the reward the optimizer sees, e.g. Eq. 1's).
    Columns: ``G``, ``dead_group_rate``."""
    return pd.DataFrame([{"G": int(g), "dead_group_rate": float(zero_variance_prob(probs, rewards, int(g)).mean())} for g in group_sizes])
