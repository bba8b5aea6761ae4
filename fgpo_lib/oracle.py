"""Reward oracles: where a sampled optimizer gets R(q, S) on demand, and how many reasoner calls that costs.

Convention: ``rows: (B,) int`` question rows of a :class:`~fgpo_lib.table.RewardTable`,
``subsets: (B, G) int`` canonical subset indices; an oracle returns ``(B, G) float32`` rewards.
Every oracle counts ``calls`` (every (question, subset) request, repeats included) and ``unique_calls``
(distinct pairs: what a reasoner with a perfect cache would have run).
"""

from __future__ import annotations

import numpy as np

from .rewards import RewardSpec
from .subsets import SubsetSpace
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


class RewardOracle:
    """Another oracle's raw scores turned into a :class:`~fgpo_lib.rewards.RewardSpec`'s reward.

    The ``differential`` reward needs each question's no-tool score: it asks the inner oracle for the empty subset
    of a question the first time the question comes up, and keeps the answer (a cached reasoner pays for it once per
    question, as the paper counts it). ``calls`` and ``unique_calls`` are the inner oracle's.
    """

    def __init__(self, oracle, spec: RewardSpec, space: SubsetSpace) -> None:
        self.oracle, self.spec, self.space = oracle, spec, space
        if spec.kind == "differential" and not space.has_empty:
            raise ValueError("the differential reward compares with the empty subset, which this space leaves out")
        self._empty: dict[int, float] = {}  # row -> its no-tool score, asked for once

    @property
    def calls(self) -> int:
        return self.oracle.calls

    @property
    def unique_calls(self) -> int:
        return self.oracle.unique_calls

    def __call__(self, rows: np.ndarray, subsets: np.ndarray) -> np.ndarray:
        subsets = np.asarray(subsets, dtype=np.int64)
        raw = self.oracle(rows, subsets)
        empty = None
        if self.spec.kind == "differential":
            rows = np.asarray(rows, dtype=np.int64)
            new = [r for r in dict.fromkeys(rows.tolist()) if r not in self._empty]
            if new:
                got = self.oracle(np.array(new, dtype=np.int64), np.full((len(new), 1), self.space.index_of([]), dtype=np.int64))
                self._empty.update(zip(new, np.asarray(got, dtype=np.float64)[:, 0].tolist()))
            empty = np.array([[self._empty[r]] for r in rows.tolist()])
        return self.spec.from_scores(raw, self.space.sizes[subsets], self.space.n_tools, empty)
