"""Aggregate statistics over seeds and questions.

Array convention (every function): ``scores: (n_runs, n_questions)``, one row per seed, one column per question,
the same questions in the same order in every row (and in both arrays of a paired comparison).
Confidence intervals are percentile bootstraps that resample runs and questions independently, with replacement
(a two-level bootstrap), from a seeded generator.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from scipy import stats as _stats


@lru_cache(maxsize=16)
def _counts(seed: int, n_boot: int, *sizes: int) -> tuple[np.ndarray, ...]:
    """The bootstrap's resampling counts, drawn in order from ``default_rng(seed)``: one ``(n_boot, size)`` integer
    array of multinomial counts per size. Read-only and cached: a chapter asks for the same draws (the same seed and
    sizes) hundreds of times, and drawing them is most of a bootstrap's cost. The draws, and so every interval, are
    those of a fresh generator, and the arithmetic on them is unchanged to the last bit."""
    rng = np.random.default_rng(seed)
    out = []
    for n in sizes:
        w = rng.multinomial(n, np.full(n, 1 / n), size=n_boot)
        w.setflags(write=False)
        out.append(w)
    return tuple(out)


def _resampled_means(scores: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """``(n_boot,)`` grand means of ``scores`` after resampling runs and questions; uses counts, not copies."""
    n_runs, n_q = scores.shape
    run_w, q_w = (w.astype(np.float64) for w in _counts(seed, n_boot, n_runs, n_q))
    return np.einsum("br,rq,bq->b", run_w, scores, q_w) / (n_runs * n_q)


def bootstrap_ci(scores: np.ndarray, confidence: float = 0.95, n_boot: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """Grand mean of ``scores (n_runs, n_questions)`` and its percentile-bootstrap CI: ``(mean, lo, hi)``."""
    scores = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    boots = _resampled_means(scores, n_boot, seed)
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
    n_q = a.shape[1]
    q_w, w_a, w_b = _counts(seed, n_boot, n_q, len(a), len(b))
    q_w = q_w.astype(np.float64)
    run_a = w_a @ a / len(a)  # (n_boot, n_q)
    run_b = w_b @ b / len(b)
    boots = ((run_a - run_b) * q_w).sum(axis=1) / n_q
    alpha = (1 - confidence) / 2
    lo, hi = np.quantile(boots, [alpha, 1 - alpha])
    return float(a.mean() - b.mean()), float(lo), float(hi)


def iqm(values: np.ndarray, axis: int | None = None) -> np.ndarray | float:
    """Interquartile mean: the mean of the middle 50% (``scipy.stats.trim_mean`` with 25% cut from each end)."""
    return _stats.trim_mean(np.asarray(values, np.float64), 0.25, axis=axis)


# --- paired tests across questions ------------------------------------------------------------------------------------
def mcnemar(a_correct: np.ndarray, b_correct: np.ndarray, exact_below: int = 25) -> dict:
    """McNemar's test of two methods answering the same questions: ``a_correct, b_correct: (n_questions,) bool``,
    computed by statsmodels (``statsmodels.stats.contingency_tables.mcnemar``).

    ``b10`` counts questions ``a`` gets right and ``b`` wrong, ``b01`` the reverse. With fewer than ``exact_below``
    discordant questions the two-sided p-value is the exact binomial one (``2 P(X <= min(b10, b01))``,
    ``X ~ Bin(b10 + b01, 1/2)``, capped at 1); otherwise the chi-squared statistic with continuity correction,
    ``(|b10 - b01| - 1)^2 / (b10 + b01)`` on one degree of freedom. Returns ``{"b10", "b01", "p", "method"}``.
    """
    from statsmodels.stats.contingency_tables import mcnemar as _mcnemar

    a, b = np.asarray(a_correct, bool), np.asarray(b_correct, bool)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"a_correct and b_correct must be 1-D over the same questions, got {a.shape} and {b.shape}")
    b10, b01 = int((a & ~b).sum()), int((~a & b).sum())
    n = b10 + b01
    if n == 0:
        return {"b10": 0, "b01": 0, "p": 1.0, "method": "none discordant"}
    exact = n < exact_below
    res = _mcnemar([[int((a & b).sum()), b10], [b01, int((~a & ~b).sum())]], exact=exact, correction=True)
    return {"b10": b10, "b01": b01, "p": float(min(1.0, res.pvalue)), "method": "exact binomial" if exact else "chi-squared, continuity corrected"}


def holm(pvalues) -> np.ndarray:
    """Holm's step-down adjustment of ``pvalues (m,)`` for ``m`` tests: adjusted p-values, in the input order
    (statsmodels' ``multipletests(..., method="holm")``)."""
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(pvalues, np.float64)
    if p.size == 0:
        return p
    return multipletests(p, method="holm")[1]


def min_detectable_difference(differences: np.ndarray, alpha: float = 0.05, power: float = 0.80) -> float:
    """The smallest mean paired difference a two-sided test at level ``alpha`` detects with ``power``, for this many
    questions and this spread: ``(z_{1 - alpha/2} + z_power) * sd(d) / sqrt(n)``, ``differences: (n_questions,)``
    (per-question differences between two methods; 0/1/-1 for correct/incorrect outcomes). A normal approximation."""
    d = np.asarray(differences, np.float64)
    if len(d) < 2:
        raise ValueError("need at least two questions")
    z = _stats.norm.ppf(1 - alpha / 2) + _stats.norm.ppf(power)
    return float(z * d.std(ddof=1) / np.sqrt(len(d)))
