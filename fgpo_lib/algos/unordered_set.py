"""The unordered-set estimator (Kool, van Hoof and Welling, ICLR 2020), with its built-in baseline.

Per question, draw ``k`` **distinct** subsets without replacement from pi (Gumbel-top-k), ask the oracle for each,
and weight each by the leave-one-out ratio ``R(S^k, s) = p^{D minus s}(S^k minus s) / p(S^k)``, where ``p(A)`` is the
probability of drawing the unordered set ``A`` (a sum over its orderings) and ``p^{D minus s}`` is pi renormalised
without ``s``:

    estimate = sum_{s in S^k} grad pi(s) R(S^k, s) (f(s) - b_s)

The built-in baseline ``b_s = pi(s) f(s) + sum_{s' in S^k, s' != s} pi(s') R^{D minus s}(S^k minus s, s') f(s')`` is an
unbiased estimate of ``E_pi[f]`` built from the sample: given that ``s`` was drawn first, the other ``k - 1`` are a
sample without replacement from ``D minus s``. So ``E[estimate] = sum_s grad pi(s) (f(s) - E_pi[f]) = grad E_pi[f]``:
unbiased, with zero weight on every sample when all ``k`` rewards are equal.

How it departs from the paper: its variables are tokens in a sequence model; here one categorical choice of a
subset. Set probabilities are summed over all orderings exactly, so ``k`` is limited to :data:`MAX_K` (``k!`` terms);
the paper's numerical integration for large ``k`` is not needed at these sizes.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache

from .._lazy import torch

from ..validation import Ranged

MAX_K = 6


@dataclass
class UnorderedSetConfig(Ranged):
    set_size: int = 4
    """k: distinct subsets drawn per question (at most MAX_K)."""

    RANGES = {"set_size": (2, MAX_K)}


@lru_cache(maxsize=None)
def _perms(m: int) -> torch.Tensor:
    return torch.tensor(list(itertools.permutations(range(m))), dtype=torch.long).reshape(-1, m)


def set_prob(p: torch.Tensor) -> torch.Tensor:
    """``p: (..., m)`` probabilities of ``m`` distinct items -> ``(...)``: the probability that drawing ``m`` times
    without replacement yields exactly these items, in any order (``p`` may be renormalised; items must be distinct)."""
    m = p.shape[-1]
    if m == 0:
        return torch.ones(p.shape[:-1], dtype=p.dtype)
    q = p[..., _perms(m)]  # (..., m!, m) in every order
    before = torch.cumsum(q, -1) - q  # mass drawn before each step
    return (q / (1 - before)).prod(-1).sum(-1)


def _without(x: torch.Tensor, i: int) -> torch.Tensor:
    return torch.cat([x[..., :i], x[..., i + 1 :]], -1)


def unordered_set_weights(p_items: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
    """``p_items, f: (B, k)`` pi and rewards of the ``k`` drawn subsets -> ``(B, k)`` weights ``R(S^k, s)(f(s) - b_s)``
    (module doc), with no gradient."""
    p_items, f = p_items.detach().double(), f.double()
    B, k = p_items.shape
    p_set = set_prob(p_items)
    out = torch.zeros(B, k, dtype=torch.float64)
    for i in range(k):
        rest, f_rest = _without(p_items, i), _without(f, i)
        p_rest = set_prob(rest / (1 - p_items[:, i : i + 1]))  # p^{D minus s}(S^k minus s)
        ratio = p_rest / p_set
        baseline = p_items[:, i] * f[:, i]
        for j in range(k - 1):  # leave s out, then s' out: the second-order ratios of the baseline
            two_out = set_prob(_without(rest, j) / (1 - p_items[:, i : i + 1] - rest[:, j : j + 1]))
            baseline = baseline + rest[:, j] * (two_out / p_rest) * f_rest[:, j]
        out[:, i] = ratio * (f[:, i] - baseline)
    return out


def gumbel_top_k(logp: torch.Tensor, k: int, generator: torch.Generator) -> torch.Tensor:
    """``(B, S)`` log-probabilities -> ``(B, k)`` distinct columns drawn without replacement (Gumbel-top-k)."""
    u = torch.rand(logp.shape, generator=generator).clamp_min(1e-20)
    return torch.topk(logp.detach() - torch.log(-torch.log(u)), k, dim=1).indices


def unordered_set_surrogate(config: UnorderedSetConfig):
    """The surrogate of :mod:`fgpo_lib.algos.sampled` for the unordered-set estimator."""

    def surrogate(logits: torch.Tensor, reward_of, generator: torch.Generator):
        logp = torch.log_softmax(logits, -1)
        k = min(config.set_size, logits.shape[1])
        draws = gumbel_top_k(logp, k, generator)
        p_items = logp.exp().gather(1, draws)
        weights = unordered_set_weights(p_items, reward_of(draws)).to(p_items.dtype)
        return (p_items * weights).sum(1).mean(), draws

    return surrogate
