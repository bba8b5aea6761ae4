"""FGPO: Full-Group Policy Optimization over a precomputed reward table.

What it computes
----------------
For a batch of questions ``Q`` (all training questions by default, or a minibatch), with ``pi = softmax(logits)``:

    loss = - mean_{q in Q} sum_S pi(S|q) R(q,S)                        (exact expected reward, every subset)
           - entropy_coef * mean_q H(pi(.|q))                           (optional entropy bonus)
           + kl_coef      * mean_q KL(pi(.|q) || pi_ref(.|q))           (optional, exact, to a frozen reference)

and takes one optimizer step on it. There is no sampling anywhere: the gradient of the first term is exactly
``d/d logit_S = -pi(S|q) (R(q,S) - sum_S' pi(S'|q) R(q,S')) / |Q|``, so it is deterministic and nonzero for every
question whose reward is not constant over the subsets the policy can reach.

How it departs from a textbook policy gradient: no sampling, no advantage estimate, no baseline (the exact
expectation needs none), no ratio clipping (updates are on-policy by construction).

KL on constant-reward questions: if ``R(q,.)`` is constant, ``sum_S pi R = c`` for every pi, so the reward term has
zero gradient there. Only the entropy and KL terms act on such questions: the KL pulls pi(.|q) back toward the
reference (the initial, uniform policy) and the entropy bonus toward uniform. Because the policy's weights are
shared across questions, that pull also reaches similar questions that do carry signal. With
``kl_coef = entropy_coef = 0`` constant-reward questions contribute exactly nothing.

Reasoner evaluations: FGPO reads the table's cells for its training questions once, before training:
``n_train_questions * n_subsets``, whatever the number of updates.

Coverage-preserving candidate sets (``candidate_tools = t``, what the paper's conclusion suggests past 10-15 tools):
per question, the ``t`` tools with the most policy mass (``sum_{S containing the tool} pi(S|q)``) plus the tools of the
best cell seen so far for it; the candidate set is every subset of those tools, and FGPO is exact on it (pi
renormalised there). Sets are rebuilt once per epoch of updates; their cells are the calls it pays for.

The k-subset dial (``subsets_per_update = k``, the paper's coverage dial): each update draws, per question, ``k``
distinct subsets uniformly at random, renormalises pi on them (a softmax over their logits only) and takes the exact
expectation over those ``k``. At ``k = 0`` (all) it is FGPO exactly. Its cost is the cells it has seen: ``k`` per
question per update in all, and the distinct (question, subset) pairs drawn so far as unique calls.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._lazy import torch

from ..validation import Ranged


@dataclass
class FGPOConfig(Ranged):
    entropy_coef: float = 0.0
    """Weight of the mean policy entropy bonus (nats); 0 disables it."""
    kl_coef: float = 0.0
    """Weight of the exact KL(pi || pi_ref) penalty to the frozen initial policy; 0 disables it."""
    subsets_per_update: int = 0
    """k of the k-subset dial (module doc): subsets drawn per question per update, pi renormalised on them; 0 = all."""
    candidate_tools: int = 0
    """t of the candidate sets (module doc): tools whose subsets each question enumerates, rebuilt every epoch; 0 = off."""

    RANGES = {"entropy_coef": (0, None), "kl_coef": (0, None), "subsets_per_update": (0, None), "candidate_tools": (0, None)}


def fgpo_loss(
    logits: torch.Tensor,
    rewards: torch.Tensor,
    entropy_coef: float = 0.0,
    kl_coef: float = 0.0,
    ref_logits: torch.Tensor | None = None,
    subset_mask: torch.Tensor | None = None,
    reduction: str = "mean",
) -> torch.Tensor:
    """FGPO loss (module doc). ``logits, rewards, ref_logits: (..., n_subsets)``, one row per question; returns the
    mean over questions (``reduction="mean"``) or each question's loss, shape ``(...)`` (``"none"``).

    ``subset_mask: (..., n_subsets) bool``, the k-subset dial: pi (and the reference) renormalised on the subsets
    where it is True; the others carry no probability and no reward.
    """
    def log_pi(z: torch.Tensor) -> torch.Tensor:
        if subset_mask is None:
            return torch.log_softmax(z, dim=-1)
        # -inf outside the mask, then 0 there: 0 log 0 = 0, and no NaN reaches the gradient
        return torch.log_softmax(z.masked_fill(~subset_mask, float("-inf")), dim=-1).masked_fill(~subset_mask, 0.0)

    logp = log_pi(logits)
    p = logp.exp() if subset_mask is None else logp.exp() * subset_mask
    loss = -(p * rewards).sum(dim=-1)
    if entropy_coef:
        loss = loss + entropy_coef * (p * logp).sum(dim=-1)
    if kl_coef:
        if ref_logits is None:
            raise ValueError("kl_coef > 0 needs ref_logits")
        loss = loss + kl_coef * (p * (logp - log_pi(ref_logits))).sum(dim=-1)
    return loss.mean() if reduction == "mean" else loss


def draw_subset_mask(n_rows: int, n_subsets: int, k: int, generator: torch.Generator) -> torch.Tensor:
    """``(n_rows, n_subsets) bool``: ``k`` distinct subsets per row, uniformly at random (all when ``k`` is 0 or more
    than ``n_subsets``)."""
    if k <= 0 or k >= n_subsets:
        return torch.ones(n_rows, n_subsets, dtype=torch.bool)
    picks = torch.rand(n_rows, n_subsets, generator=generator).argsort(dim=1)[:, :k]
    return torch.zeros(n_rows, n_subsets, dtype=torch.bool).scatter_(1, picks, True)


class FGPO:
    """One FGPO update per :meth:`update` call; see the module doc.

    Args:
        config: :class:`FGPOConfig`.
        rewards: ``(n_questions, n_subsets) float32`` the full table (rows are selected per update).
        ref_policy: frozen reference policy for the KL term (a copy of the initial policy), or ``None``.
        n_train: number of training questions, for the evaluation count.
    """

    def __init__(self, config: FGPOConfig, rewards: torch.Tensor, ref_policy: torch.nn.Module | None, n_train: int, tool_masks: torch.Tensor | None = None) -> None:
        self.config = config
        self.rewards = rewards
        self.ref_policy = ref_policy
        self.n_train = n_train
        self.k = config.subsets_per_update if 0 < config.subsets_per_update < rewards.shape[1] else 0
        self.tool_masks = tool_masks  # (n_subsets, n_tools) bool: which tools each subset calls (candidate sets)
        if config.candidate_tools and tool_masks is None:
            raise ValueError("candidate sets need the subset space's tool masks")
        self.candidates: dict[int, tuple[torch.Tensor, int]] = {}  # row -> (candidate mask (n_subsets,), built at update)
        self.n_updates = 0
        if self.k or config.candidate_tools:
            self.seen = torch.zeros(rewards.shape, dtype=torch.bool)
            self.evaluations = {"reasoner_calls": 0, "unique_reasoner_calls": 0}
        else:
            self.evaluations = {"reasoner_calls": n_train * rewards.shape[1], "unique_reasoner_calls": n_train * rewards.shape[1]}

    def update(self, policy: torch.nn.Module, optimizer: torch.optim.Optimizer, features: torch.Tensor, rows: torch.Tensor, generator: torch.Generator) -> dict:
        """One gradient step on questions ``rows`` (``features: (n_all, d)``): exact, or over ``k`` drawn subsets per
        question (drawn with ``generator``)."""
        x = features[rows]
        ref_logits = None
        if self.config.kl_coef:
            with torch.no_grad():
                ref_logits = self.ref_policy(x)
        mask = None
        if self.k:
            mask = draw_subset_mask(len(rows), self.rewards.shape[1], self.k, generator)
            self.seen[rows] |= mask
            self.evaluations = {"reasoner_calls": self.evaluations["reasoner_calls"] + int(mask.sum()), "unique_reasoner_calls": int(self.seen.sum())}
        elif self.config.candidate_tools:
            mask = self._candidate_masks(policy, x, rows)
        self.n_updates += 1
        loss = fgpo_loss(policy(x), self.rewards[rows], self.config.entropy_coef, self.config.kl_coef, ref_logits, mask)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return {"loss": loss.item(), "optimizer_steps": 1}

    def _candidate_masks(self, policy: torch.nn.Module, x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """``(len(rows), n_subsets) bool`` candidate sets, rebuilt for rows whose set is an epoch old (module doc)."""
        epoch = max(1, -(-self.n_train // len(rows)))  # updates per pass over the training questions
        stale = [i for i, r in enumerate(rows.tolist()) if r not in self.candidates or self.n_updates - self.candidates[r][1] >= epoch]
        if stale:
            with torch.no_grad():
                probs = torch.softmax(policy(x[stale]), -1)
            fresh = candidate_mask(probs, self.tool_masks, self.config.candidate_tools, self.rewards[rows[stale]], self.seen[rows[stale]])
            for i, m in zip(stale, fresh):
                self.candidates[int(rows[i])] = (m, self.n_updates)
                self.seen[rows[i]] |= m
            self.evaluations = {"reasoner_calls": self.evaluations["reasoner_calls"] + int(fresh.sum()), "unique_reasoner_calls": int(self.seen.sum())}
        return torch.stack([self.candidates[int(r)][0] for r in rows])


def candidate_mask(probs: torch.Tensor, tool_masks: torch.Tensor, t: int, rewards: torch.Tensor, seen: torch.Tensor) -> torch.Tensor:
    """Candidate sets (module doc). ``probs, rewards, seen: (B, S)``, ``tool_masks: (S, T) bool`` -> ``(B, S) bool``:
    the subsets whose tools all lie among the ``t`` tools of most policy mass and the tools of the best cell seen."""
    tm = tool_masks.to(probs.dtype)
    marginal = probs @ tm  # (B, T): P(tool called)
    allowed = torch.zeros_like(marginal, dtype=torch.bool).scatter_(1, torch.topk(marginal, min(t, tm.shape[1]), dim=1).indices, True)
    has_seen = seen.any(1)
    best = torch.where(seen, rewards, torch.full_like(rewards, float("-inf"))).argmax(1)
    allowed |= tool_masks[best] & has_seen[:, None]
    return ~((tool_masks[None].float() * (~allowed)[:, None, :].float()).sum(-1) > 0)  # subset within the allowed tools
