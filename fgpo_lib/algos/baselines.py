"""Two reference policies that need no training.

* ``uniform``: pi(S|q) = 1 / n_subsets for every question; what an untrained policy does, and the paper's
  starting point for the failure rate.
* ``oracle-best``: all mass on the best subset of each question, read from the table (ties go to the lowest
  canonical index, which is also the smallest subset). It sees test rewards, so it is an upper bound, not a method.

Shapes: ``rewards: (n_questions, n_subsets)`` -> ``probs: (n_questions, n_subsets) float64``.
"""

from __future__ import annotations

import numpy as np


def uniform_probs(rewards: np.ndarray) -> np.ndarray:
    return np.full(rewards.shape, 1.0 / rewards.shape[1])


def oracle_best_probs(rewards: np.ndarray) -> np.ndarray:
    probs = np.zeros(rewards.shape)
    probs[np.arange(len(rewards)), np.argmax(rewards, axis=1)] = 1.0
    return probs


BASELINES = {"uniform": uniform_probs, "oracle-best": oracle_best_probs}
