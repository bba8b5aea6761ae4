"""SFT and DPO on the table's best subsets: the paper's two supervised baselines, for a subset policy.

Both read every cell of their training questions once (like FGPO) to find each question's **best subset**: the
highest raw score, ties to the lowest canonical index, which is also the smallest subset (as ``oracle-best``).

* **SFT**: cross-entropy ``-log pi(best | q)``, averaged over the batch, one optimizer step per update.
* **DPO** (Rafailov et al., 2023): chosen = the best subset; rejected = one subset drawn uniformly, per question and
  update, among those that score strictly lower; loss
  ``-log sigmoid(beta [(log pi(c) - log pi_ref(c)) - (log pi(r) - log pi_ref(r))])`` with the frozen initial policy
  as reference. Questions whose every subset scores the same have no rejected subset and are left out of the loss.

How they depart from the textbook: a "completion" is one action (a subset), so sequence log-probabilities are the
policy's log-probabilities of that subset; the preference pairs come from the reward table, not from annotators.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._lazy import torch

from ..validation import Ranged


def best_subsets(scores: torch.Tensor) -> torch.Tensor:
    """``scores: (n_questions, n_subsets)`` -> ``(n_questions,) int64``: the best subset (ties: lowest index)."""
    return torch.argmax(scores, dim=1)  # torch.argmax returns the first maximal index


class _TableImitation:
    """Shared by SFT and DPO: the best subsets, and the evaluation count of reading the table once."""

    def __init__(self, scores: torch.Tensor, n_train: int) -> None:
        self.scores = scores
        self.best = best_subsets(scores)
        self.evaluations = {"reasoner_calls": n_train * scores.shape[1], "unique_reasoner_calls": n_train * scores.shape[1]}

    def _step(self, optimizer: torch.optim.Optimizer, loss: torch.Tensor) -> dict:
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return {"loss": loss.item(), "optimizer_steps": 1}


class SFT(_TableImitation):
    """Cross-entropy to each training question's best subset (module doc)."""

    def update(self, policy: torch.nn.Module, optimizer: torch.optim.Optimizer, features: torch.Tensor, rows: torch.Tensor, generator: torch.Generator) -> dict:
        return self._step(optimizer, torch.nn.functional.cross_entropy(policy(features[rows]), self.best[rows]))


@dataclass
class DPOConfig(Ranged):
    beta: float = 0.1
    """DPO's inverse temperature; the paper tries 0.1, 0.3 and 0.5."""

    RANGES = {"beta": (1e-6, None)}
    FLAG_PREFIX = "dpo_"  # the command line's --dpo-beta (GRPO has a beta of its own)


def draw_rejected(scores: torch.Tensor, best: torch.Tensor, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Per row, one subset drawn uniformly among those scoring strictly below the best: ``(rejected (n,), has (n,) bool)``;
    ``has`` is False (and ``rejected`` meaningless) where every subset scores the same."""
    worse = scores < scores.gather(1, best[:, None])
    has = worse.any(dim=1)
    noise = torch.rand(scores.shape, generator=generator).masked_fill(~worse, -1.0)
    return noise.argmax(dim=1), has


class DPO(_TableImitation):
    """DPO with the table's best subset as chosen and a random worse subset as rejected (module doc)."""

    def __init__(self, config: DPOConfig, scores: torch.Tensor, ref_policy: torch.nn.Module, n_train: int) -> None:
        super().__init__(scores, n_train)
        self.config, self.ref_policy = config, ref_policy

    def update(self, policy: torch.nn.Module, optimizer: torch.optim.Optimizer, features: torch.Tensor, rows: torch.Tensor, generator: torch.Generator) -> dict:
        scores, chosen = self.scores[rows], self.best[rows]
        rejected, has = draw_rejected(scores, chosen, generator)
        x = features[rows][has]
        if len(x) == 0:  # every question of the batch is constant: nothing to prefer
            return {"loss": 0.0, "optimizer_steps": 0}
        chosen, rejected = chosen[has], rejected[has]
        logp = torch.log_softmax(policy(x), dim=-1)
        with torch.no_grad():
            ref = torch.log_softmax(self.ref_policy(x), dim=-1)
        margin = (logp.gather(1, chosen[:, None]) - ref.gather(1, chosen[:, None])) - (logp.gather(1, rejected[:, None]) - ref.gather(1, rejected[:, None]))
        return self._step(optimizer, -torch.nn.functional.logsigmoid(self.config.beta * margin).mean())
