"""Reward oracles: where a sampled optimizer gets R(q, S) on demand, and how many reasoner calls that costs.

Convention: ``rows: (B,) int`` question rows of a :class:`~fgpo_lib.table.RewardTable`,
``subsets: (B, G) int`` canonical subset indices; an oracle returns ``(B, G) float32`` rewards.
Every oracle counts ``calls`` (every (question, subset) request, repeats included) and ``unique_calls``
(distinct pairs: what a reasoner with a perfect cache would have run).
"""

from __future__ import annotations

import numpy as np

from .table import RewardTable


class TableOracle:
    """Answers from a precomputed :class:`RewardTable`, counting calls as if each were a live reasoner call."""

    def __init__(self, table: RewardTable) -> None:
        self.rewards = table.rewards
        self.n_subsets = table.n_subsets
        self.calls = 0
        self._seen: set[int] = set()

    @property
    def unique_calls(self) -> int:
        return len(self._seen)

    def __call__(self, rows: np.ndarray, subsets: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.int64)
        subsets = np.asarray(subsets, dtype=np.int64)
        self.calls += subsets.size
        self._seen.update((rows[:, None] * self.n_subsets + subsets).reshape(-1).tolist())
        return self.rewards[rows[:, None], subsets]
