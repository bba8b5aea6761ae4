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
    of every question in the batch, and those requests are counted like any other call (an on-demand GRPO with this
    reward pays for them; a cached reasoner pays once per question). ``calls`` and ``unique_calls`` are the inner
    oracle's.
    """

    def __init__(self, oracle, spec: RewardSpec, space: SubsetSpace) -> None:
        self.oracle, self.spec, self.space = oracle, spec, space
        if spec.kind == "differential" and not space.has_empty:
            raise ValueError("the differential reward compares with the empty subset, which this space leaves out")

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
            empty = self.oracle(rows, np.full((len(subsets), 1), self.space.index_of([]), dtype=np.int64))
        return self.spec.from_scores(raw, self.space.sizes[subsets], self.space.n_tools, empty)
