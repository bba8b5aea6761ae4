"""Sum-and-sample (Liu et al., ICML 2019, "Rao-Blackwellized stochastic gradients for discrete distributions").

Per question, split the subsets into ``C``, the policy's current top-``m`` (by pi), and the rest. The expected reward
is ``sum_{S in C} pi(S) R(S) + (1 - pi(C)) E_{S ~ q}[R(S)]``, with ``q`` = pi renormalised on the rest. The first term
is summed exactly (``m`` oracle calls); the second is estimated from ``n_samples`` draws of ``q``:

    objective = sum_C pi R + (1 - pi(C)) mean_i R(S_i) + sg(1 - pi(C)) mean_i (R(S_i) - b) log q(S_i)

(``sg``: stop-gradient). Its gradient is unbiased: the product rule on the second term gives
``-grad pi(C) E_q[R] + (1 - pi(C)) E_q[R grad log q]``, each replaced by its sample mean. The baseline ``b``, the
exact mean reward over ``C`` under pi renormalised on ``C``, does not depend on the draws, so it keeps the estimate
unbiased and lowers its variance.

How it departs from the paper: the paper's categorical variable is a token; here it is a subset, and ``C`` is chosen
by pi before drawing (not by a fixed order), as the paper allows. With ``m`` = every subset the sampled term vanishes
and the objective is FGPO's exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._lazy import torch

from ..validation import Ranged


@dataclass
class SumAndSampleConfig(Ranged):
    top_m: int = 8
    """m: subsets summed exactly per question (the policy's current most probable)."""
    n_samples: int = 4
    """Draws from the rest per question."""

    RANGES = {"top_m": (1, None), "n_samples": (1, None)}


def sum_and_sample_surrogate(config: SumAndSampleConfig):
    """The surrogate of :mod:`fgpo_lib.algos.sampled` for sum-and-sample."""

    def surrogate(logits: torch.Tensor, reward_of, generator: torch.Generator):
        B, S = logits.shape
        m = min(config.top_m, S)
        logp = torch.log_softmax(logits, -1)
        p = logp.exp()
        top = torch.topk(p.detach(), m, dim=1).indices  # (B, m): C, chosen without gradient
        r_top = reward_of(top)
        p_top = p.gather(1, top)
        objective = (p_top * r_top).sum(1)
        cells = [top]
        if m < S:
            in_c = torch.zeros(B, S, dtype=torch.bool).scatter_(1, top, True)
            rest_logp = torch.log_softmax(logits.masked_fill(in_c, float("-inf")), -1)
            draws = torch.multinomial(rest_logp.detach().exp(), config.n_samples, replacement=True, generator=generator)
            r_draw = reward_of(draws)
            mass_rest = 1 - p_top.sum(1)
            baseline = (p_top.detach() * r_top).sum(1) / p_top.detach().sum(1)
            logq = rest_logp.gather(1, draws)
            objective = objective + mass_rest * r_draw.mean(1) + mass_rest.detach() * ((r_draw - baseline[:, None]) * logq).mean(1)
            cells.append(draws)
        return objective.mean(), torch.cat(cells, 1)

    return surrogate
