"""The arm registry of the language-model policy: one row per arm, light enough for ``fgpo lm-train --help``.

An arm is **one module and one row here**. The module defines the arm's settings dataclass and its trainer
``train(model, tokenizer, table, splits, cfg, progress, checkpoint) -> record``; the row names them by import path
(they load when a run needs them) and carries what the commands, the run registry and the chapter read of the arm:
its label, its measured cost rate, its main-table seeds, its answer-format warm start and the settings every run of
it has. ``fgpo lm-train --arm``, the chapter's run registry (:mod:`fgpo_lib.study.lm_runs`) and its report derive
from :data:`LM_ARMS`; nothing else lists the arms.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field


@dataclass(frozen=True)
class LMArm:
    """One arm of the policy (module doc)."""

    module: str
    """The module that defines the arm (its settings class and trainer)."""
    settings_class: str
    """The name of its settings dataclass in :attr:`module` (``fgpo lm-train --set FIELD=VALUE``)."""
    trainer: str
    """The name of its trainer in :attr:`module`."""
    label: str
    """As the chapter writes it."""
    help: str
    """One line for ``--arm``'s help."""
    cpu_hours: float
    """CPU-hours of one run (warm start and training, wall seconds x threads), rounded from the committed records'
    (the chapter's cost table, on a 2-core machine shared with other runs, so upper bounds): what the run registry's
    cost estimate multiplies; ``tests/test_lm_policy.py`` checks it against the records."""
    seeds: tuple[int, ...] = (0, 1, 2)
    """Its seeds in the main table."""
    samples: bool = False
    """Whether it writes its training completions (TRL's GRPO): it selects its checkpoint on free generation, and
    its reasoner calls are the cells its completions named. The others score the candidates."""
    warmup: float = 1.0
    """Passes of its answer-format warm start (:class:`~fgpo_lib.lm_policy.warmup.FormatWarmup`)."""
    run_settings: dict = field(default_factory=dict)
    """Settings every run of the arm has, beyond its dataclass's defaults (they are part of a run's name)."""

    @property
    def settings(self) -> type:
        return getattr(importlib.import_module(self.module), self.settings_class)

    @property
    def train(self):
        return getattr(importlib.import_module(self.module), self.trainer)


#: the arms of the policy (module doc)
LM_ARMS: dict[str, LMArm] = {
    "fgpo": LMArm("fgpo_lib.lm_policy.fgpo_arm", "LMFGPOConfig", "train_fgpo", "FGPO",
                  "the exact expected reward over every candidate subset (or TPO's exact target)", cpu_hours=1.9),
    "sampled": LMArm("fgpo_lib.lm_policy.sampled_arm", "LMSampledConfig", "train_sampled", "Sampled",
                     "FGPO's arm with GRPO's sampled estimator: G draws from q per question, group-normalised advantage", cpu_hours=3.1),
    # GRPO gets 1x FGPO's table cells in sampled completions, not the paper's 2.4x (the chapter's cost section gives
    # what 2.4x would take, from the runs' measured seconds); its dev evaluations (both decodings) come every 20 steps.
    # It samples its completions, so it needs a policy that writes the format at temperature 1: after one warm-start
    # pass SmolLM2-135M rarely opened the answer tag and GRPO collapsed onto the empty answer (each record's warm
    # start says how often it opens it); three passes
    "grpo": LMArm("fgpo_lib.lm_policy.grpo_arm", "LMGRPOConfig", "train_grpo", "GRPO (TRL)", "TRL's GRPOTrainer on sampled completions",
                  cpu_hours=4.4, seeds=(0, 1), samples=True, warmup=3.0, run_settings={"budget": 1.0, "eval_every": 20}),
    "sft": LMArm("fgpo_lib.lm_policy.sft_arm", "LMSFTConfig", "train_sft", "SFT (TRL)", "TRL's SFTTrainer on each question's best candidate", cpu_hours=1.7),
}
#: each arm's label in the chapter's tables and figures
ARM_LABELS = {name: arm.label for name, arm in LM_ARMS.items()}
