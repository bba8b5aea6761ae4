"""Aggregate statistics over seeds and questions.

Array convention (every function): ``scores: (n_runs, n_questions)``, one row per seed, one column per question,
the same questions in the same order in every row (and in both arrays of a paired comparison).
Confidence intervals are percentile bootstraps that resample runs and questions independently, with replacement
(a two-level bootstrap), from a seeded generator.
"""

from __future__ import annotations

import numpy as np
from scipy import stats as _stats


def _resampled_means(scores: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_boot,)`` grand means of ``scores`` after resampling runs and questions; uses counts, not copies."""
    n_runs, n_q = scores.shape
    run_w = rng.multinomial(n_runs, np.full(n_runs, 1 / n_runs), size=n_boot).astype(np.float64)
    q_w = rng.multinomial(n_q, np.full(n_q, 1 / n_q), size=n_boot).astype(np.float64)
    return np.einsum("br,rq,bq->b", run_w, scores, q_w) / (n_runs * n_q)


def bootstrap_ci(scores: np.ndarray, confidence: float = 0.95, n_boot: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """Grand mean of ``scores (n_runs, n_questions)`` and its percentile-bootstrap CI: ``(mean, lo, hi)``."""
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    boots = _resampled_means(scores, n_boot, np.random.default_rng(seed))
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(boots, [alpha, 1 - alpha])
    return float(scores.mean()), float(lo), float(hi)


def paired_difference_ci(a: np.ndarray, b: np.ndarray, confidence: float = 0.95, n_boot: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """Mean of ``a - b`` with a CI that keeps questions paired.

    ``a, b: (n_runs, n_questions)`` over the same questions (runs need not be paired; each method's seeds are
    averaged first): the bootstrap resamples questions of the per-question difference of seed means, and runs
    within each method.
    """
    a = np.atleast_2d(np.asarray(a, np.float64))
    b = np.atleast_2d(np.asarray(b, np.float64))
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"a and b cover {a.shape[1]} and {b.shape[1]} questions; a paired difference needs the same questions")
    rng = np.random.default_rng(seed)
    n_q = a.shape[1]
    q_w = rng.multinomial(n_q, np.full(n_q, 1 / n_q), size=n_boot).astype(np.float64)
    run_a = rng.multinomial(len(a), np.full(len(a), 1 / len(a)), size=n_boot) @ a / len(a)  # (n_boot, n_q)
    run_b = rng.multinomial(len(b), np.full(len(b), 1 / len(b)), size=n_boot) @ b / len(b)
    boots = ((run_a - run_b) * q_w).sum(axis=1) / n_q
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(boots, [alpha, 1 - alpha])
    return float(a.mean() - b.mean()), float(lo), float(hi)


def iqm(values: np.ndarray, axis: int | None = None) -> np.ndarray | float:
    """Interquartile mean: the mean of the middle 50% (``scipy.stats.trim_mean`` with 25% cut from each end)."""
    return _stats.trim_mean(np.asarray(values, np.float64), 0.25, axis=axis)
