"""The full-information reference selector: predict every subset's reward from the question, take the argmax.

With the whole reward table in hand, picking a subset per question is cost-sensitive classification: each training
question comes with the cost (reward) of every label (subset). The reference is its plainest solver, one ridge
regression per subset from the question features to the training reward (scikit-learn's ``RidgeCV``, one
multi-output fit, its penalty chosen from :attr:`ReferenceConfig.alphas` by the efficient leave-one-out error on the
training questions), and the greedy choice ``argmax_S`` of the predicted rewards. No policy gradient and no sampling:
it says how much routing the features allow once every cell is known, which none of the paper's baselines says, and
whether a trained policy's gap to it is the optimizer's or the features'.

How it departs from a textbook ridge: no separate intercept (every built-in featurizer ends with a constant 1
feature, so the intercept is that feature's weight, penalised like the others); and its "policy" is
``softmax(prediction / temperature)``, written into a flat linear head (:class:`~fgpo_lib.policy.SubsetPolicy`),
so that every metric of :func:`fgpo_lib.train.train` applies to it. Only the greedy choice is the reference's; the
probabilities are a display.

Shapes: ``features: (n_questions, d)``, ``rewards: (n_questions, n_subsets)`` -> ``coef: (n_subsets, d)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from .._lazy import torch

from ..validation import Ranged


@dataclass
class ReferenceConfig(Ranged):
    alphas: tuple = (0.01, 0.1, 1.0, 10.0, 100.0)
    """Ridge penalties to choose from by leave-one-out error on the training questions (one value: that penalty)."""
    temperature: float = 0.05
    """The displayed policy is softmax(predicted reward / temperature); the greedy choice does not depend on it."""

    RANGES = {"temperature": (1e-6, None)}

    def __post_init__(self) -> None:
        super().__post_init__()
        self.alphas = tuple(float(a) for a in self.alphas)
        if not self.alphas or any(not a > 0 for a in self.alphas):
            raise ValueError(f"alphas must be one or more penalties > 0, got {self.alphas!r}")


def fit_reference(features: np.ndarray, rewards: np.ndarray, alphas=(1.0,)) -> tuple[np.ndarray, float]:
    """``(coef (n_subsets, d), alpha)``: the ridge regression of each subset's reward on the features, with no
    separate intercept, and the penalty chosen (module doc). ``features: (n, d)``, ``rewards: (n, n_subsets)``."""
    from sklearn.linear_model import RidgeCV

    model = RidgeCV(alphas=np.asarray(alphas, np.float64), fit_intercept=False).fit(np.asarray(features, np.float64), np.asarray(rewards, np.float64))
    return np.atleast_2d(model.coef_), float(model.alpha_)


class Reference:
    """The method's object for :func:`fgpo_lib.train.train`: :meth:`fit` writes the ridge solution into the policy's
    flat head once (no updates follow). ``rewards: (n_questions, n_subsets)`` the training reward."""

    def __init__(self, config: ReferenceConfig, rewards: torch.Tensor, n_train: int) -> None:
        self.config, self.rewards = config, rewards
        self.evaluations = {"reasoner_calls": n_train * rewards.shape[1], "unique_reasoner_calls": n_train * rewards.shape[1]}
        self.alpha: float | None = None

    def fit(self, policy: torch.nn.Module, features: torch.Tensor, rows: torch.Tensor) -> None:
        if policy.parameterization != "flat" or not isinstance(policy.body, torch.nn.Identity):
            raise ValueError("the reference selector fits a flat linear head (parameterization 'flat', hidden 0)")
        coef, self.alpha = fit_reference(features[rows].numpy(), self.rewards[rows].numpy(), self.config.alphas)
        with torch.no_grad():
            policy.head.weight.copy_(torch.as_tensor(coef / self.config.temperature, dtype=policy.head.weight.dtype))
            policy.head.bias.zero_()
