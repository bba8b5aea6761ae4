"""Optimizers, one file each: :mod:`.fgpo` (exact), :mod:`.grpo` (sampled), :mod:`.imitation` (SFT, DPO),
:mod:`.baselines` (untrained reference policies)."""

from .baselines import BASELINES, oracle_best_probs, uniform_probs
from .fgpo import FGPO, FGPOConfig, fgpo_loss
from .grpo import GRPO, GRPOConfig, grpo_advantages, grpo_loss
from .imitation import DPO, SFT, DPOConfig, best_subsets

__all__ = [
    "BASELINES", "DPO", "DPOConfig", "FGPO", "FGPOConfig", "GRPO", "GRPOConfig", "SFT", "best_subsets", "fgpo_loss",
    "grpo_advantages", "grpo_loss", "oracle_best_probs", "uniform_probs",
]
