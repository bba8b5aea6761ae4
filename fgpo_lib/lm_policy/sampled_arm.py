"""The sampled arm: FGPO's arm with GRPO's sampled estimator of the reward term, and nothing else changed.

It isolates the estimator. Backbone, LoRA adapter, warm start, candidate scores, ``q = softmax(scores / tau)``, the
exact entropy term ``entropy_coef H(q)`` (it needs no reward), the recipe, the data order, dev selection and seeds are FGPO's
(:func:`~fgpo_lib.lm_policy.fgpo_arm.train_on_candidates`); only the gradient of the reward term differs. Per training
question it draws ``G = group_size`` subsets from ``q`` (with replacement, as G independent completions), reads the
reward cells of the drawn subsets alone, and takes GRPO's group-normalised advantage on them
(:func:`fgpo_lib.algos.grpo.grpo_advantages`, TRL's ``scale_rewards``)::

    loss(x) = -(1/G) sum_i A_i log q(S_i|x) - entropy_coef H(q(.|x)),   A_i = (r_i - mean_j r_j) / (std_j r_j + 1e-4)

How it departs from TRL's loss: a "completion" is one action (a subset scored listwise over the candidates), so the
policy ratio is 1 on the update that drew it (one update per draw, as TRL's ``num_iterations = 1``) and clipping
never binds; TRL's loss aggregations (``grpo``, ``dapo``, ``dr_grpo``) all reduce to this mean over the G samples.
``scale_rewards="none"`` is Dr. GRPO's unscaled advantage ``r_i - mean_j r_j``, whose expectation is
``(G - 1)/G`` times the exact gradient of the expected reward (the sample's own reward is in its baseline).

Per update it records two shares of dead groups and the distinct (question, subset) cells read so far, the reasoner
calls a cache would make (:meth:`SampledEstimator.record`): ``dead_group_rate``, groups whose G training rewards
(Eq. 1) are all equal, so that the question gives no reward gradient; and ``score_dead_rate``, groups whose G raw
scores are all equal (the paper's dead group: every draw right, or every draw wrong). Under Eq. 1 the second kind is
not dead: its rewards still differ by the parsimony term ``lam (1 - 2|S|/n)``, and the group-normalised advantage
scales that difference to unit size, so such a group pushes q towards fewer tools as hard as a group that tells right
from wrong. Dr. GRPO's unscaled advantage (``scale_rewards="none"``) keeps it at its own size. Its draws come from their own random stream (seeded by the run's seed), so the
data order is FGPO's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..algos.grpo import SCALE_REWARDS, grpo_advantages
from ..validation import MAX_GROUP, check_choice, check_int_fields
from .fgpo_arm import LMFGPOConfig, train_on_candidates
from .resume import RunCheckpoint

#: the draw stream's key beside the run's seed (numpy's SeedSequence), so draws never share FGPO's data-order stream
DRAW_STREAM = 1


@dataclass
class LMSampledConfig(LMFGPOConfig):
    group_size: int = 6
    """G: subsets drawn from q per question (the paper's 6)."""
    scale_rewards: str = "group"
    """GRPO's advantage scaling (TRL's): 'group' divides by the group's standard deviation + 1e-4; 'none' is
    Dr. GRPO's unscaled advantage r - mean r; 'batch' divides by the update's standard deviation."""

    RANGES = {**LMFGPOConfig.RANGES, "group_size": (2, MAX_GROUP)}

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int_fields(self, ("group_size",))
        check_choice("scale_rewards", self.scale_rewards, SCALE_REWARDS)
        if self.objective != "expected":
            raise ValueError(f"objective must be 'expected' for the sampled arm (it samples the expected reward's gradient), got {self.objective!r}")


def sampled_reward_loss(logits: torch.Tensor, rewards: torch.Tensor, draws: torch.Tensor, entropy_coef: float, scale_rewards: str = "group") -> torch.Tensor:
    """The sampled arm's loss on one question (module doc) for fixed ``draws``.

    ``logits: (n_candidates,)``, the scores divided by the temperature; ``rewards: (n_candidates,)``, the question's
    row of the table (only ``rewards[draws]`` is read); ``draws: (G,)`` candidate indices drawn from
    ``softmax(logits)``. The entropy term is exact, as FGPO's."""
    logq = torch.log_softmax(logits, dim=-1)
    adv = grpo_advantages(rewards[draws].reshape(1, -1), scale_rewards)[0].detach()
    q = logq.exp()
    return -(adv * logq[draws]).mean() + entropy_coef * (q * logq).sum()


class SampledEstimator:
    """The reward term by G draws from ``q`` (module doc), an estimator of
    :func:`~fgpo_lib.lm_policy.fgpo_arm.train_on_candidates`. ``rewards: (n_questions, n_subsets)``."""

    def __init__(self, rewards: torch.Tensor, cfg: LMSampledConfig, scores: torch.Tensor | None = None) -> None:
        self.rewards, self.cfg = rewards, cfg
        self.scores = rewards if scores is None else scores  # (n_questions, n_subsets): the raw scores, for score_dead_rate
        self.rng = np.random.default_rng([cfg.seed, DRAW_STREAM])
        self.read: set[tuple[int, int]] = set()
        self.dead: list[bool] = []  # this update's questions: were the group's training rewards all equal?
        self.score_dead: list[bool] = []  # ... its raw scores?

    def draw(self, logits: torch.Tensor) -> torch.Tensor:
        """``(G,)`` candidate indices drawn from ``softmax(logits)`` with replacement."""
        q = torch.softmax(logits.detach().double(), dim=-1).cpu().numpy()
        return torch.as_tensor(self.rng.choice(len(q), size=self.cfg.group_size, p=q / q.sum()), device=logits.device)

    def loss(self, scores: torch.Tensor, row: int) -> torch.Tensor:
        logits = scores / self.cfg.temperature
        draws = self.draw(logits)
        drawn = self.rewards[row, draws]
        self.read.update((row, int(s)) for s in draws)
        self.dead.append(bool((drawn == drawn[0]).all()))
        raw = self.scores[row, draws]
        self.score_dead.append(bool((raw == raw[0]).all()))
        return sampled_reward_loss(logits, self.rewards[row], draws, self.cfg.entropy_coef, self.cfg.scale_rewards)

    def end_update(self) -> dict:
        out = {"dead_group_rate": float(np.mean(self.dead)) if self.dead else 0.0, "score_dead_rate": float(np.mean(self.score_dead)) if self.score_dead else 0.0,
               "cells_read": len(self.read)}
        self.dead, self.score_dead = [], []
        return out

    def state(self) -> dict:
        return {"rng": self.rng.bit_generator.state, "read": sorted(self.read)}

    def load_state(self, held: dict) -> None:
        self.rng.bit_generator.state = held["rng"]
        self.read = {tuple(c) for c in held["read"]}

    def record(self, n_train: int) -> dict:
        """The record's fields: the reasoner calls are the distinct cells the draws read (a cache asks each once)."""
        return {"reasoner_calls": len(self.read), "group_size": self.cfg.group_size}


def train_sampled(model, tokenizer, table, splits: dict, cfg: LMSampledConfig, progress: bool = False, checkpoint: RunCheckpoint | None = None) -> dict:
    """Train ``model``'s adapter with the sampled arm; the record is FGPO's
    (:func:`~fgpo_lib.lm_policy.fgpo_arm.train_fgpo`) plus ``updates``: per update, its dead-group rate and the
    distinct cells read so far."""
    return train_on_candidates(model, tokenizer, table, splits, cfg, SampledEstimator, progress, checkpoint)
