"""Optimizers, one file each: :mod:`.fgpo` (exact), :mod:`.grpo` (sampled), :mod:`.baselines`."""

from .baselines import BASELINES, oracle_best_probs, uniform_probs
from .fgpo import FGPO, FGPOConfig, fgpo_loss
from .grpo import GRPO, GRPOConfig, grpo_advantages, grpo_loss

__all__ = ["BASELINES", "FGPO", "FGPOConfig", "GRPO", "GRPOConfig", "fgpo_loss", "grpo_advantages", "grpo_loss", "oracle_best_probs", "uniform_probs"]
