"""Two 2025 repairs of GRPO's dead groups that enumerate nothing: each changes only the advantage of a sampled group.

* **NGRPO** (Nan et al., arXiv 2509.18851): the group's mean and standard deviation are computed with one *virtual*
  sample of the maximum reward added, so a group whose samples are all wrong gets negative advantages instead of
  zero. ``A_i = (r_i - mean(r ∪ {r_max})) / (std(r ∪ {r_max}) + eps)``, Bessel's std over the ``G + 1`` values, the
  virtual sample itself not trained on. A group whose samples all reach ``r_max`` stays dead, as in the paper.
* **RL-ZVP** (Le et al., arXiv 2509.21880): a group with non-zero variance keeps GRPO's advantage; a zero-variance
  group gets a signed, entropy-scaled one: ``+alpha H`` when its common reward is positive (all correct) and
  ``-alpha (H_max - H)`` when it is negative (all wrong), so a confident wrong policy is pushed hardest.

How they depart from their papers, stated: both papers shape *token*-level advantages of a generated text; here a
completion is one action (a subset), so RL-ZVP's token entropy is the entropy of ``pi_old(.|q)`` over the subsets
(detached), and ``H_max = log n_subsets``, its largest value, stands for the paper's maximum over the group's tokens.
"Correct" is the sign of the training reward: under the paper's Eq. 1, a correct answer scores at least ``1 - lam`` and
a wrong one at most ``-1 + lam``; a common reward of exactly 0 gives no signal. NGRPO's asymmetric clipping is left
out: the arms keep GRPO's clipping, so the comparison isolates the advantage. NGRPO's ``r_max`` is the training
reward's upper bound (:meth:`fgpo_lib.rewards.RewardSpec.range`), known without any cell.

Shapes: ``rewards: (..., B, G)``, ``logp_all: (..., B, S)`` (``log pi_old`` of every subset) -> ``(..., B, G)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._lazy import torch

from ..validation import Ranged
from .grpo import STD_EPS, grpo_advantages


@dataclass
class RLZVPConfig(Ranged):
    alpha: float = 0.1
    """Scale of a zero-variance group's advantage (the paper's alpha)."""

    RANGES = {"alpha": (0, None)}


def ngrpo_advantages(rewards: torch.Tensor, r_max: float) -> torch.Tensor:
    """NGRPO's advantages (module doc): group statistics over the samples and one virtual sample of ``r_max``."""
    virtual = torch.full_like(rewards[..., :1], float(r_max))
    augmented = torch.cat([rewards, virtual], dim=-1)
    return (rewards - augmented.mean(-1, keepdim=True)) / (augmented.std(-1, keepdim=True) + STD_EPS)


def rl_zvp_advantages(rewards: torch.Tensor, logp_all: torch.Tensor, alpha: float, scale_rewards: str = "group") -> torch.Tensor:
    """RL-ZVP's advantages (module doc): GRPO's on live groups, ``+alpha H`` / ``-alpha (H_max - H)`` on dead ones."""
    live = grpo_advantages(rewards, scale_rewards)
    entropy = -(logp_all.exp() * logp_all).sum(-1, keepdim=True).detach()  # (..., B, 1)
    h_max = math.log(logp_all.shape[-1])
    dead = (rewards == rewards[..., :1]).all(-1, keepdim=True)
    sign = torch.sign(rewards[..., :1])
    shaped = torch.where(sign > 0, alpha * entropy, -alpha * (h_max - entropy)) * (sign != 0)
    return torch.where(dead, shaped.expand_as(rewards), live)
