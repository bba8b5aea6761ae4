"""SFT on the language-model policy with TRL's ``SFTTrainer``: the best candidate of each training question (the
paper's SFT arm), one file.

The dataset is prompt-completion pairs: the one prompt, and the answer string of the question's best subset (ties:
the smallest). TRL trains on the completion's tokens only. Every ``eval_every`` steps the dev questions are scored
by candidate scoring and the best checkpoint is kept, as for FGPO.

The answer-format warm start every arm begins from is in :mod:`.warmup`.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import asdict, dataclass

import numpy as np

from ..validation import MAX_QUESTIONS, MAX_SEED, MAX_STEPS, Ranged, check_choice, check_int_fields
from .dev import DEV_MEASURES, DevSelector, evaluate_on_test
from .trl_dev import train_with_dev
from .data import best_candidates, check_table, prompt_text
from .resume import RunCheckpoint
from .prompt import candidates


@dataclass
class LMSFTConfig(Ranged):
    lr: float = 3e-4
    """Learning rate of the adapter."""
    batch_questions: int = 16
    """Examples per optimizer step."""
    epochs: float = 4.0
    """Passes over the training questions (as FGPO's)."""
    eval_every: int = 10
    """Steps between dev evaluations (and checkpoints)."""
    seed: int = 0
    """TRL's seed: data order."""
    schedule: str = "cosine"
    """Learning-rate schedule: 'cosine' to 0 over the run or 'constant' (as FGPO's)."""
    warmup_ratio: float = 0.0
    """Share of the steps over which the learning rate rises linearly from 0."""
    dev_measures: str = "full"
    """What a dev point measures: 'full' or 'scoring' (candidate scoring only; checkpoints.DEV_MEASURES)."""

    RANGES = {"lr": (1e-12, 1.0), "batch_questions": (1, MAX_QUESTIONS), "epochs": (1e-6, 10_000), "eval_every": (1, MAX_STEPS), "seed": (0, MAX_SEED), "warmup_ratio": (0, 0.99)}

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice("schedule", self.schedule, ("cosine", "constant"))
        check_choice("dev_measures", self.dev_measures, DEV_MEASURES)
        check_int_fields(self, ("batch_questions", "eval_every", "seed"))


def sft_args(model, out: str, lr: float, batch: int, steps: int, seed: int, progress: bool, saving: dict | None = None, schedule: str = "cosine", warmup_ratio: float = 0.0):
    from trl import SFTConfig

    from .model import trainer_device_args as device_args

    saving = {"save_strategy": "no", "output_dir": out, **(saving or {})}
    return SFTConfig(**saving, learning_rate=lr, per_device_train_batch_size=batch, max_steps=steps, **device_args(model), logging_steps=1,
                     report_to=[], seed=seed, disable_tqdm=not progress, packing=False,
                     lr_scheduler_type={"cosine": "cosine", "constant": "constant_with_warmup"}[schedule], warmup_steps=float(warmup_ratio),  # a float < 1: a share
                     gradient_checkpointing=True)  # set explicitly: see grpo_arm.grpo_args


def train_sft(model, tokenizer, table, splits: dict, cfg: LMSFTConfig, progress: bool = False, checkpoint: RunCheckpoint | None = None) -> dict:
    """Train ``model``'s adapter with TRL's SFTTrainer on each training question's best candidate; returns the record.
    With a ``checkpoint`` the run saves at every dev point and resumes from the last one (:mod:`.resume`)."""
    from datasets import Dataset
    from trl import SFTTrainer

    check_table(table)
    rows = np.asarray(splits["train"])
    answers = candidates(table.space)
    data = Dataset.from_dict({"prompt": [prompt_text(tokenizer, table.questions[r], table.space.n_tools) for r in rows],
                              "completion": [answers[s] for s in best_candidates(table, rows)]})
    steps = max(1, math.ceil(cfg.epochs * len(rows) / cfg.batch_questions))
    dev = DevSelector(model, tokenizer, table, splits["dev"], "scoring", measures=cfg.dev_measures)

    with tempfile.TemporaryDirectory() as out:
        saving = checkpoint.trl_settings(cfg.eval_every) if checkpoint else None
        args = sft_args(model, out, cfg.lr, cfg.batch_questions, steps, cfg.seed, progress, saving, cfg.schedule, cfg.warmup_ratio)
        trainer = SFTTrainer(model=model, args=args, train_dataset=data, processing_class=tokenizer)
        seconds = train_with_dev(trainer, dev, steps, cfg.eval_every, checkpoint=checkpoint)
    return {"config": asdict(cfg), "curve": dev.curve, "selected_step": dev.best_step, "train_seconds": seconds,
            "reasoner_calls": int(len(rows) * table.n_subsets), "test": evaluate_on_test(model, tokenizer, table, splits["test"]),
            "test_last_tie": dev.last_tie_test(splits["test"])}
