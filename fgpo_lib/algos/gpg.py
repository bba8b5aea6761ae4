"""GPG, Group Policy Gradient (Chu et al., arXiv 2504.02546): GRPO's sampled groups with a plain policy-gradient
advantage, corrected for the batch's dead groups.

``A_i = alpha (r_i - mean(r))`` with no division by the group's standard deviation, and
``alpha = B / (B - M)``: ``B`` groups in the batch, ``M`` of them with all ``G`` rewards equal. A dead group still gives
no gradient, as in GRPO; the live ones are scaled up so that the batch's mean gradient is not diluted by the dead ones
(the paper's "accurate gradient estimation"). When every group is dead, ``alpha`` is 1 and the advantages are 0.

How it departs from the paper, stated: the paper's loss is a bare policy gradient on generated tokens; here a
completion is one action (a subset), and the arm keeps GRPO's clipped ratio and KL settings, so a comparison with
GRPO isolates the advantage, as for the other 2025 controls (:mod:`.zero_variance`).

Shapes: ``rewards: (..., B, G)`` -> advantages ``(..., B, G)``.
"""

from __future__ import annotations

from .._lazy import torch


def gpg_advantages(rewards: torch.Tensor) -> torch.Tensor:
    """GPG's advantages (module doc): mean-centred within each group, times ``B / (B - M)`` over the batch."""
    centred = rewards - rewards.mean(-1, keepdim=True)
    dead = (rewards == rewards[..., :1]).all(-1)  # (..., B)
    n_groups = rewards.shape[-2]
    live = (n_groups - dead.sum(-1, keepdim=True)).clamp(min=1)  # (..., 1)
    alpha = torch.where(dead.all(-1, keepdim=True), torch.ones_like(live), n_groups / live)
    return centred * alpha.unsqueeze(-1).to(rewards.dtype)
