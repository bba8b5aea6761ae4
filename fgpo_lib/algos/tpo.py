"""Target Policy Optimization (arXiv 2604.06159) with every reward known: a second enumeration-based method.

Per update, for each question of the batch, the target distribution over subsets is

    q(S|x) ∝ pi_old(S|x) exp(R(x, S) / eta)

with ``pi_old`` the policy before the update, and the policy takes one step on the cross-entropy
``-sum_S q(S|x) log pi_theta(S|x)``. With the table, ``q`` is exact: every subset's reward is known, so no group is
sampled and none can be dead. The gradient in the logits is ``pi_theta - q``: it moves mass toward subsets whose reward
beats the policy's softmax-weighted average, as FGPO's does, but through a fixed target rather than the expectation.

How it departs from the paper: the paper builds its target over the G sampled completions of a prompt; here the group
is every subset (the enumeration the table makes possible), and ``pi_old`` is the policy at the start of each update
(one step per target, so target and step share one forward pass). Its cost is FGPO's: every cell of the training
questions, read once.

Shapes: ``logits, rewards: (..., n_subsets)`` -> per-question loss ``(...)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._lazy import torch

from ..validation import Ranged


@dataclass
class TPOConfig(Ranged):
    eta: float = 0.5
    """Temperature of the target: smaller puts the target's mass on the best subsets faster."""

    RANGES = {"eta": (1e-6, None)}


def tpo_target(logits: torch.Tensor, rewards: torch.Tensor, eta: float) -> torch.Tensor:
    """``q ∝ softmax(logits) exp(rewards / eta)``, detached: ``(..., n_subsets)``."""
    return torch.softmax(logits.detach() + rewards / eta, dim=-1)


def tpo_loss(logits: torch.Tensor, rewards: torch.Tensor, eta: float, reduction: str = "mean") -> torch.Tensor:
    """Cross-entropy of ``pi_theta`` against :func:`tpo_target` of the same logits (module doc)."""
    loss = -(tpo_target(logits, rewards, eta) * torch.log_softmax(logits, dim=-1)).sum(-1)
    return loss.mean() if reduction == "mean" else loss


class TPO:
    """One TPO step per :meth:`update` on ``rewards: (n_questions, n_subsets)`` (the training reward)."""

    def __init__(self, config: TPOConfig, rewards: torch.Tensor, n_train: int) -> None:
        self.config, self.rewards = config, rewards
        self.evaluations = {"reasoner_calls": n_train * rewards.shape[1], "unique_reasoner_calls": n_train * rewards.shape[1]}

    def update(self, policy: torch.nn.Module, optimizer: torch.optim.Optimizer, features: torch.Tensor, rows: torch.Tensor, generator: torch.Generator) -> dict:
        loss = tpo_loss(policy(features[rows]), self.rewards[rows], self.config.eta)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return {"loss": loss.item(), "optimizer_steps": 1}
