"""The shared frame of the sampled estimators: draw subsets, ask the oracle, build a surrogate, step.

Each estimator is a function ``surrogate(logits, reward_of, generator) -> (objective, cells)``: ``logits: (B, S)`` of
the batch, ``reward_of(cols) -> (B, n)`` the oracle on subset columns ``cols: (B, n)``; ``objective`` is a scalar
whose gradient is the estimator's estimate of the gradient of ``mean_q sum_S pi(S|q) R(q, S)``, and ``cells`` the
``(B, n)`` columns it asked for. :class:`SampledEstimator` turns one into an optimizer with the interface of
:class:`~fgpo_lib.algos.grpo.GRPO` (``update``, ``evaluations``), counting every oracle call.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from .._lazy import torch


class SampledEstimator:
    """An optimizer around a surrogate (module doc); ``oracle`` counts ``calls`` and ``unique_calls``."""

    def __init__(self, surrogate: Callable, oracle) -> None:
        self.surrogate, self.oracle = surrogate, oracle

    @property
    def evaluations(self) -> dict:
        return {"reasoner_calls": int(self.oracle.calls), "unique_reasoner_calls": int(self.oracle.unique_calls)}

    def update(self, policy: torch.nn.Module, optimizer: torch.optim.Optimizer, features: torch.Tensor, rows: torch.Tensor, generator: torch.Generator) -> dict:
        row_ids = rows.numpy()

        def reward_of(cols: torch.Tensor) -> torch.Tensor:
            return torch.as_tensor(self.oracle(row_ids, cols.numpy()), dtype=torch.float32)

        objective, cells = self.surrogate(policy(features[rows]), reward_of, generator)
        optimizer.zero_grad()
        (-objective).backward()
        optimizer.step()
        return {"loss": -objective.item(), "optimizer_steps": 1}


def table_reward_of(rewards: np.ndarray | torch.Tensor):
    """``reward_of`` for one batch of table rows (tests and analyses): ``rewards: (B, S)``."""
    r = torch.as_tensor(rewards, dtype=torch.float32)
    return lambda cols: r.gather(1, cols)
