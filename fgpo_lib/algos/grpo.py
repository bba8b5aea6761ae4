"""GRPO for a one-step problem, following TRL's ``GRPOTrainer``.

What it computes, per :meth:`GRPO.update` (one "generation batch"):

1. For each question ``q`` in the batch, sample ``G = group_size`` subsets i.i.d. from
   ``pi_old = softmax(logits / temperature)`` (with replacement, like G independent completions).
2. Ask the reward oracle for ``r_{q,i} = R(q, S_i)`` (counted as reasoner calls).
3. Advantages, TRL's ``scale_rewards``:
   ``A = r - mean_group(r)``, then divided by ``std + 1e-4`` where ``std`` is Bessel's (unbiased) standard deviation
   of the group (``'group'``), of the whole batch (``'batch'``), or not at all (``'none'``).
4. ``num_iterations`` optimizer steps on the same samples, each minimising
   ``mean_{q,i} [ -min(rho A, clip(rho, 1 - epsilon, 1 + epsilon) A) + beta * KL_k3 ]`` with
   ``rho = pi_theta(S_i|q) / pi_old(S_i|q)`` and TRL's k3 estimator
   ``KL_k3 = exp(log pi_ref - log pi_theta) - (log pi_ref - log pi_theta) - 1`` to the frozen initial policy.

How it departs from TRL: a "completion" here is one action (a subset), so each sequence has exactly one token and
TRL's loss aggregations (``grpo``, ``bnpo``, ``dr_grpo``, ``dapo``) all reduce to the mean over the ``B * G``
samples used here. No generation, tokenizer or reward functions: rewards come from an oracle.

Why it fails: if every sample in a group gets the same reward, ``A = 0`` for the whole group, so with ``beta = 0``
that question contributes exactly zero gradient. Once pi concentrates, the chance of that is
``sum_r P_pi(R=r|q)^G`` (:func:`fgpo_lib.metrics.zero_variance_prob`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .._lazy import torch

from ..validation import Ranged

STD_EPS = 1e-4
SCALE_REWARDS = ("group", "batch", "none")


@dataclass
class GRPOConfig(Ranged):
    temperature: float = 1.0
    """Sampling temperature: samples come from softmax(logits / temperature), as in TRL."""
    num_iterations: int = 1
    """TRL's mu: optimizer steps per generation batch; >1 makes the clipped ratio matter."""
    epsilon: float = 0.2
    """Ratio clipping half-width."""
    beta: float = 0.0
    """Weight of the k3 KL estimate to the frozen initial policy (TRL's default is 0)."""
    scale_rewards: str = "group"
    """Advantage scaling: 'group' (per-group std), 'batch' (batch std) or 'none' (Dr. GRPO)."""
    entropy_bonus: float = 0.0
    """Weight of an exact entropy bonus of pi(.|q) on the batch's questions (a peer's fix for collapse); 0 disables it.
    (FGPO's is ``FGPOConfig.entropy_coef``.)"""
    dynamic_sampling: int = 0
    """DAPO-style dynamic sampling: redraw a dead group (all rewards equal) up to this many times, then leave it out
    of the loss; every redrawn sample is a counted call. 0 disables it."""
    skip_dead: float = 0.0
    """GRESO-style skipping: a question whose last group was dead is skipped (no calls) with this probability, so
    questions that come alive again are still noticed; 0 disables it."""
    replay: int = 0
    """Replay buffer capacity (as in TRL's replay-buffer GRPO): the batch's dead groups are replaced by live groups
    stored from earlier batches (no new calls; the clipped ratio uses their stored old log-probabilities); 0 disables it."""

    RANGES = {
        "temperature": (1e-3, None), "num_iterations": (1, None), "epsilon": (0, None), "beta": (0, None), "entropy_bonus": (0, None),
        "dynamic_sampling": (0, None), "skip_dead": (0, 1), "replay": (0, None),
    }

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.scale_rewards not in SCALE_REWARDS:
            raise ValueError(f"scale_rewards must be one of {SCALE_REWARDS}, got {self.scale_rewards!r}")


def grpo_advantages(rewards: torch.Tensor, scale_rewards: str = "group") -> torch.Tensor:
    """``rewards: (..., B, G)`` -> advantages of the same shape (module doc, step 3); a leading dimension holds
    independent runs, each with its own batch std."""
    if scale_rewards not in SCALE_REWARDS:
        raise ValueError(f"unknown scale_rewards {scale_rewards!r}; use one of {SCALE_REWARDS}")
    adv = rewards - rewards.mean(dim=-1, keepdim=True)
    if scale_rewards == "group":
        adv = adv / (rewards.std(dim=-1, keepdim=True) + STD_EPS)
    elif scale_rewards == "batch":
        adv = adv / (rewards.std(dim=(-2, -1), keepdim=True) + STD_EPS)
    return adv


def grpo_loss(
    logp: torch.Tensor,
    logp_old: torch.Tensor,
    advantages: torch.Tensor,
    epsilon: float = 0.2,
    beta: float = 0.0,
    logp_ref: torch.Tensor | None = None,
    reduction: str = "mean",
) -> torch.Tensor:
    """Clipped surrogate plus k3 KL (module doc, step 4). All inputs ``(..., B, G)``; returns the mean over samples
    (``reduction="mean"``) or each sample's term (``"none"``)."""
    ratio = torch.exp(logp - logp_old)
    per_sample = -torch.minimum(ratio * advantages, torch.clamp(ratio, 1 - epsilon, 1 + epsilon) * advantages)
    if beta:
        if logp_ref is None:
            raise ValueError("beta > 0 needs logp_ref")
        per_sample = per_sample + beta * (torch.exp(logp_ref - logp) - (logp_ref - logp) - 1)
    return per_sample.mean() if reduction == "mean" else per_sample


class GRPO:
    """Sampled GRPO updates against a reward oracle (module doc).

    Args:
        config: :class:`GRPOConfig`.
        oracle: callable ``(rows (B,), subsets (B, G)) -> (B, G)`` rewards that counts ``calls`` and ``unique_calls``.
        group_size: ``G``, samples per question.
        ref_policy: frozen initial policy for the KL term, or ``None``.
        advantage: ``(rewards (B, G), log pi_old (B, S)) -> (B, G)``, a variant's advantage (for example
            :mod:`fgpo_lib.algos.zero_variance`); ``None`` is GRPO's own (module doc, step 3).
    """

    def __init__(self, config: GRPOConfig, oracle, group_size: int, ref_policy: torch.nn.Module | None, advantage=None) -> None:
        if config.scale_rewards not in SCALE_REWARDS:
            raise ValueError(f"unknown scale_rewards {config.scale_rewards!r}; use one of {SCALE_REWARDS}")
        if group_size < 2:
            raise ValueError(f"GRPO needs a group size of at least 2, got {group_size}")
        self.config = config
        self.oracle = oracle
        self.group_size = group_size
        self.ref_policy = ref_policy
        self.advantage = advantage
        self.last_dead: dict[int, bool] = {}  # question row -> was its last group dead (GRESO)
        self.buffer: list[tuple] = []  # live groups (row, samples, rewards, old log-probs), newest last (replay)
        self.skipped = self.replayed = 0

    @property
    def evaluations(self) -> dict:
        return {"reasoner_calls": int(self.oracle.calls), "unique_reasoner_calls": int(self.oracle.unique_calls)}

    def update(self, policy: torch.nn.Module, optimizer: torch.optim.Optimizer, features: torch.Tensor, rows: torch.Tensor, generator: torch.Generator) -> dict:
        """Sample a group per question in ``rows``, then ``num_iterations`` clipped steps. Returns diagnostics."""
        cfg = self.config
        if cfg.skip_dead:  # GRESO: skip questions predicted dead, before any call
            coin = torch.rand(len(rows), generator=generator)
            skip = torch.tensor([self.last_dead.get(int(r), False) for r in rows]) & (coin < cfg.skip_dead)
            self.skipped += int(skip.sum())
            rows = rows[~skip]
            if len(rows) == 0:  # every question skipped: no call, no step, no group to count
                return {"loss": 0.0, "optimizer_steps": 0}
        x = features[rows]
        with torch.no_grad():
            logp_all_old = torch.log_softmax(policy(x) / cfg.temperature, dim=-1)
            samples = torch.multinomial(logp_all_old.exp(), self.group_size, replacement=True, generator=generator)
            logp_old = logp_all_old.gather(1, samples)
            logp_ref = None
            if cfg.beta:
                logp_ref = torch.log_softmax(self.ref_policy(x) / cfg.temperature, dim=-1).gather(1, samples)
        rewards = torch.as_tensor(self.oracle(rows.numpy(), samples.numpy()), dtype=torch.float32)
        dead = (rewards == rewards[:, :1]).all(dim=1)
        zero_var = dead.float().mean()  # the first draw's dead share, whatever dynamic sampling does next
        keep = torch.ones(len(rows), dtype=torch.bool)
        if cfg.dynamic_sampling:
            samples, rewards, keep = self._redraw_dead(rows, logp_all_old, samples, rewards, generator)
            logp_old = logp_all_old.gather(1, samples)
            if logp_ref is not None:
                with torch.no_grad():
                    logp_ref = torch.log_softmax(self.ref_policy(x) / cfg.temperature, dim=-1).gather(1, samples)
        self.last_dead.update({int(r): bool(d) for r, d in zip(rows, ~keep if cfg.dynamic_sampling else dead)})
        if cfg.replay:
            keep = keep & ~(rewards == rewards[:, :1]).all(dim=1)
            x, samples, rewards, logp_old, logp_ref = self._replay(features, rows, keep, x, samples, rewards, logp_old, logp_ref, generator)
            keep = torch.ones(len(samples), dtype=torch.bool)
        if not keep.any():  # every group is still dead: nothing to learn from this batch
            return {"loss": 0.0, "optimizer_steps": 0, "group_zero_variance": float(zero_var)}
        x, samples, rewards, logp_old = x[keep], samples[keep], rewards[keep], logp_old[keep]
        logp_ref = None if logp_ref is None else logp_ref[keep]
        if self.advantage is None:
            advantages = grpo_advantages(rewards, cfg.scale_rewards)
        else:
            with torch.no_grad():
                advantages = self.advantage(rewards, torch.log_softmax(policy(x) / cfg.temperature, dim=-1))
        for _ in range(cfg.num_iterations):
            logp_all = torch.log_softmax(policy(x) / cfg.temperature, dim=-1)
            loss = grpo_loss(logp_all.gather(1, samples), logp_old, advantages, cfg.epsilon, cfg.beta, logp_ref)
            if cfg.entropy_bonus:
                loss = loss + cfg.entropy_bonus * (logp_all.exp() * logp_all).sum(-1).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        return {"loss": loss.item(), "optimizer_steps": cfg.num_iterations, "group_zero_variance": float(zero_var)}

    def _replay(self, features, rows, live, x, samples, rewards, logp_old, logp_ref, generator):
        """Store this batch's live groups; fill its dead slots with stored live groups (no calls). Returns the batch."""
        n_dead = int((~live).sum())
        reused = []
        if n_dead and self.buffer:
            picks = torch.randint(len(self.buffer), (n_dead,), generator=generator).tolist()
            reused = [self.buffer[i] for i in picks]
            self.replayed += len(reused)
        self.buffer += [(int(r), s, w, lp) for r, s, w, lp in zip(rows[live], samples[live], rewards[live], logp_old[live])]
        del self.buffer[: max(0, len(self.buffer) - self.config.replay)]
        if not reused:
            return x[live], samples[live], rewards[live], logp_old[live], None if logp_ref is None else logp_ref[live]
        r_rows = torch.tensor([r for r, *_ in reused])
        cat = lambda a, b: torch.cat([a, torch.stack(b)])  # noqa: E731
        ref = None
        if logp_ref is not None:
            with torch.no_grad():
                ref_all = torch.log_softmax(self.ref_policy(features[r_rows]) / self.config.temperature, dim=-1)
            ref = torch.cat([logp_ref[live], ref_all.gather(1, torch.stack([s for _, s, _, _ in reused]))])
        return (
            torch.cat([x[live], features[r_rows]]),
            cat(samples[live], [s for _, s, _, _ in reused]),
            cat(rewards[live], [w for _, _, w, _ in reused]),
            cat(logp_old[live], [lp for _, _, _, lp in reused]),
            ref,
        )

    def _redraw_dead(self, rows, logp_all_old, samples, rewards, generator):
        """Dynamic sampling: redraw dead groups up to ``dynamic_sampling`` times (each draw asks the oracle, so every
        discarded sample is counted); returns samples, rewards and ``keep``, False for groups still dead."""
        samples, rewards = samples.clone(), rewards.clone()
        for _ in range(self.config.dynamic_sampling):
            dead = (rewards == rewards[:, :1]).all(dim=1)
            if not dead.any():
                break
            idx = dead.nonzero()[:, 0]
            new = torch.multinomial(logp_all_old[idx].exp(), self.group_size, replacement=True, generator=generator)
            samples[idx] = new
            rewards[idx] = torch.as_tensor(self.oracle(rows[idx].numpy(), new.numpy()), dtype=torch.float32)
        return samples, rewards, ~(rewards == rewards[:, :1]).all(dim=1)
