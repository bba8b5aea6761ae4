"""Metrics of a subset policy against a reward table.

Array convention (every function): ``probs: (n_questions, n_subsets)`` rows of pi(S|q) summing to 1;
``rewards: (n_questions, n_subsets)``; columns in the canonical subset order. Per-question functions return
``(n_questions,) float64``; :func:`evaluate` averages them over questions.
"""

from __future__ import annotations

import numpy as np

from .subsets import SubsetSpace


def greedy_reward(probs: np.ndarray, rewards: np.ndarray) -> np.ndarray:
    """Reward of the argmax subset per question (ties: lowest canonical index)."""
    return rewards[np.arange(len(rewards)), np.argmax(probs, axis=1)].astype(np.float64)


def expected_reward(probs: np.ndarray, rewards: np.ndarray) -> np.ndarray:
    """``sum_S pi(S|q) R(q,S)`` per question."""
    return (np.asarray(probs, np.float64) * rewards).sum(axis=1)


def reward_classes(rewards: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct reward values ``(k,)`` and each cell's value index ``(n_questions, n_subsets)``: computed once per
    table, then sliced by rows, so repeated evaluations skip the sort."""
    values, inverse = np.unique(rewards, return_inverse=True)
    return values, inverse.reshape(rewards.shape)


def reward_value_probs(probs: np.ndarray, rewards: np.ndarray, classes: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``P_pi(R = r | q)`` for each distinct reward value ``r``: returns ``values (k,)`` and ``(n_questions, k)``.

    ``classes``: :func:`reward_classes` of ``rewards`` (the same rows), if already known.
    """
    values, inverse = classes if classes is not None else reward_classes(rewards)
    n, k = inverse.shape[0], len(values)
    flat = (np.arange(n)[:, None] * k + inverse).ravel()
    return values, np.bincount(flat, weights=np.asarray(probs, np.float64).ravel(), minlength=n * k).reshape(n, k)


def zero_variance_prob(probs: np.ndarray, rewards: np.ndarray, group_size: int, classes: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Closed form of the chance that ``group_size`` i.i.d. samples from pi all get the same reward.

    ``sum_r P_pi(R=r|q)^G`` per question: the GRPO failure probability of that question.
    """
    _, p = reward_value_probs(probs, rewards, classes)
    return dead_prob(p, group_size)


def dead_prob(masses: np.ndarray, group_size: int) -> np.ndarray:
    """The paper's Eq. 7: ``sum_v w_v^G`` for reward-class masses ``masses: (..., n_classes)``; ``(...)``."""
    return (np.asarray(masses, np.float64) ** group_size).sum(axis=-1)


def zero_variance_observed(sampled: np.ndarray, rewards: np.ndarray) -> np.ndarray:
    """``sampled: (n_questions, G) int`` subset indices -> ``(n_questions,) float64`` 1 where all G rewards are equal."""
    r = rewards[np.arange(len(rewards))[:, None], sampled]
    return (r == r[:, :1]).all(axis=1).astype(np.float64)


def constant_reward(rewards: np.ndarray) -> np.ndarray:
    """1 where a question's reward is the same for every subset: no method can learn from it."""
    return (rewards == rewards[:, :1]).all(axis=1).astype(np.float64)


def entropy(probs: np.ndarray) -> np.ndarray:
    """Shannon entropy of pi(.|q) in nats."""
    p = np.asarray(probs, np.float64)
    return -(p * np.log(np.where(p > 0, p, 1.0))).sum(axis=1)


def evaluate(probs: np.ndarray, rewards: np.ndarray, space: SubsetSpace, group_size: int, rng: np.random.Generator, classes: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, float]:
    """All metrics, averaged over the given questions. ``rng`` draws one group of ``group_size`` per question;
    ``classes`` (:func:`reward_classes` of these rows) saves re-sorting the rewards.

    Keys: ``greedy_reward`` (accuracy of the argmax subset), ``expected_reward``, ``failure_rate_observed`` (share
    of sampled groups with zero reward variance), ``failure_rate_closed_form``, ``constant_share``,
    ``greedy_size`` and ``expected_size`` (tools per question), ``entropy`` (nats).
    """
    probs = np.asarray(probs, np.float64)
    cum = probs.cumsum(axis=1)
    cum[:, -1] = 1.0
    u = rng.random((len(probs), group_size))
    sampled = np.minimum((u[:, :, None] >= cum[:, None, :]).sum(axis=2), probs.shape[1] - 1)  # inverse-CDF draw
    sizes = space.sizes.astype(np.float64)
    return {
        "greedy_reward": float(greedy_reward(probs, rewards).mean()),
        "expected_reward": float(expected_reward(probs, rewards).mean()),
        "failure_rate_observed": float(zero_variance_observed(sampled, rewards).mean()),
        "failure_rate_closed_form": float(zero_variance_prob(probs, rewards, group_size, classes).mean()),
        "constant_share": float(constant_reward(rewards).mean()),
        "greedy_size": float(sizes[np.argmax(probs, axis=1)].mean()),
        "expected_size": float((probs @ sizes).mean()),
        "entropy": float(entropy(probs).mean()),
    }
