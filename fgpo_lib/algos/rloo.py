"""RLOO, REINFORCE with a leave-one-out baseline (Kool et al., 2019; Ahmadian et al., 2024), one of the GRPO
community's answers to dead groups.

Per question, draw ``G`` subsets with replacement from pi and score each against the mean reward of the **other**
``G - 1`` samples:

    A_i = R(S_i) - (1 / (G - 1)) sum_{j != i} R(S_j),     objective = mean_i A_i log pi(S_i)

The baseline of sample ``i`` never includes ``R(S_i)``, so the estimate is unbiased. How it departs from GRPO: no std
scaling, no ratio clipping (one step per draw, on-policy), and the unbiased leave-one-out mean instead of the group
mean. A group whose rewards are all equal still gives zero: RLOO does not cure dead groups, it only scales them
honestly.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._lazy import torch

from ..validation import Ranged


@dataclass
class RLOOConfig(Ranged):
    group_size: int = 8
    """G: draws per question (at least 2: the baseline needs another sample)."""

    RANGES = {"group_size": (2, None)}


def rloo_advantages(rewards: torch.Tensor) -> torch.Tensor:
    """``rewards: (..., G)`` -> ``R_i`` minus the mean of the other ``G - 1`` rewards, same shape."""
    G = rewards.shape[-1]
    return rewards - (rewards.sum(-1, keepdim=True) - rewards) / (G - 1)


def rloo_surrogate(config: RLOOConfig):
    """The surrogate of :mod:`fgpo_lib.algos.sampled` for RLOO."""

    def surrogate(logits: torch.Tensor, reward_of, generator: torch.Generator):
        logp = torch.log_softmax(logits, -1)
        draws = torch.multinomial(logp.detach().exp(), config.group_size, replacement=True, generator=generator)
        adv = rloo_advantages(reward_of(draws))
        return (adv * logp.gather(1, draws)).mean(1).mean(), draws

    return surrogate
