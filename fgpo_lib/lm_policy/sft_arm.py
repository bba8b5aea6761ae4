"""SFT on the language-model policy with TRL's ``SFTTrainer``: the best candidate of each training question (the
paper's SFT arm), one file.

The dataset is prompt-completion pairs: the one prompt, and the answer string of the question's best subset (ties:
the smallest). TRL trains on the completion's tokens only. Every ``eval_every`` steps the dev questions are scored
by candidate scoring and the best checkpoint is kept, as for FGPO.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import asdict, dataclass

import numpy as np

from .checkpoints import DevSelector, evaluate_on_test, train_with_dev
from .data import best_candidates, check_table, prompt_text
from .prompt import candidates


@dataclass
class LMSFTConfig:
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


def train_sft(model, tokenizer, table, splits: dict, cfg: LMSFTConfig, progress: bool = False) -> dict:
    """Train ``model``'s adapter with TRL's SFTTrainer on each training question's best candidate; returns the record."""
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    check_table(table)
    rows = np.asarray(splits["train"])
    answers = candidates(table.space)
    data = Dataset.from_dict({"prompt": [prompt_text(tokenizer, table.questions[r], table.space.n_tools) for r in rows],
                              "completion": [answers[s] for s in best_candidates(table, rows)]})
    steps = max(1, math.ceil(cfg.epochs * len(rows) / cfg.batch_questions))
    dev = DevSelector(model, tokenizer, table, splits["dev"], "scoring")

    with tempfile.TemporaryDirectory() as out:
        args = SFTConfig(output_dir=out, learning_rate=cfg.lr, per_device_train_batch_size=cfg.batch_questions, max_steps=steps, use_cpu=True, bf16=False,
                         logging_steps=1, save_strategy="no", report_to=[], seed=cfg.seed, disable_tqdm=not progress, lr_scheduler_type="cosine", packing=False)
        trainer = SFTTrainer(model=model, args=args, train_dataset=data, processing_class=tokenizer)
        seconds = train_with_dev(trainer, dev, steps, cfg.eval_every)
    return {"config": asdict(cfg), "curve": dev.curve, "selected_step": dev.best_step, "train_seconds": seconds,
            "reasoner_calls": int(len(rows) * table.n_subsets), "test": evaluate_on_test(model, tokenizer, table, splits["test"])}
