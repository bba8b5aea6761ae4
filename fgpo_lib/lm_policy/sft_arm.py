"""SFT on the language-model policy with TRL's ``SFTTrainer``: the best candidate of each training question (the
paper's SFT arm), one file.

The dataset is prompt-completion pairs: the one prompt, and the answer string of the question's best subset (ties:
the smallest). TRL trains on the completion's tokens only. Every ``eval_every`` steps the dev questions are scored
by candidate scoring and the best checkpoint is kept, as for FGPO.

Also the answer-format warm start every arm of a run begins from (:func:`format_warmup`): the same trainer on
random candidates, so the policy learns the format and no routing.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import asdict, dataclass

import numpy as np

from ..validation import MAX_QUESTIONS, MAX_SEED, MAX_STEPS, Ranged, check_choice, check_int_fields
from .checkpoints import DEV_MEASURES, DevSelector, evaluate_on_test, train_with_dev
from .data import best_candidates, check_table, prompt_text
from .evaluate import dev_measures, sampled_candidate_mass
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


def _sft_args(model, out: str, lr: float, batch: int, steps: int, seed: int, progress: bool, saving: dict | None = None, schedule: str = "cosine", warmup_ratio: float = 0.0):
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
        args = _sft_args(model, out, cfg.lr, cfg.batch_questions, steps, cfg.seed, progress, saving, cfg.schedule, cfg.warmup_ratio)
        trainer = SFTTrainer(model=model, args=args, train_dataset=data, processing_class=tokenizer)
        seconds = train_with_dev(trainer, dev, steps, cfg.eval_every, checkpoint=checkpoint)
    return {"config": asdict(cfg), "curve": dev.curve, "selected_step": dev.best_step, "train_seconds": seconds,
            "reasoner_calls": int(len(rows) * table.n_subsets), "test": evaluate_on_test(model, tokenizer, table, splits["test"])}


#: training questions on which the warm start's result is measured (:func:`format_warmup`); a module constant, not a
#: field of FormatWarmup, so that the identity of runs begun before the measure existed is unchanged
WARMUP_PROBE_QUESTIONS = 32


@dataclass
class FormatWarmup:
    """The answer-format warm start every arm of a run begins from (the record keeps it)."""

    epochs: float = 1.0
    """Passes over the training questions; 0: none (the backbone's own format). One pass is enough for arms that
    score teacher-forced candidates (FGPO, SFT); GRPO samples, and the chapter's GRPO runs take more
    (runs.ARM_WARMUP says why)."""
    lr: float = 3e-4
    """Learning rate of the adapter."""
    batch_questions: int = 16
    """Examples per optimizer step."""
    seed: int = 0
    """Draws the random targets and TRL's data order."""


def format_warmup(model, tokenizer, table, rows, cfg: FormatWarmup, progress: bool = False) -> dict:
    """Teach the adapter the answer format and nothing else: SFT (TRL's ``SFTTrainer``) on a candidate drawn
    uniformly at random for each training question and pass, independent of the reward.

    Why: the paper's 7B instruct policy writes ``<answer>...</answer>`` from the prompt alone; SmolLM2-135M does not
    (at temperature 1 about 1 completion in 100 parses), so GRPO's groups would be all format failures, all reward 0,
    all dead, and it could not start. A uniform target moves the policy towards the paper's *uniform reference*
    (every candidate equally likely) without telling it which subset is good. Returns ``{"config", "steps", "seconds",
    "sampled_candidate_mass", "tag_logp"}``, the last two measured after it on :data:`WARMUP_PROBE_QUESTIONS`
    training questions (:func:`~fgpo_lib.lm_policy.evaluate.dev_measures`): the mean chance that a completion sampled
    at temperature 1 begins with a candidate string, and the mean log-probability of the opening tag."""
    import time

    from datasets import Dataset
    from trl import SFTTrainer

    rows = np.asarray(rows)
    n = max(1, math.ceil(cfg.epochs * len(rows)))
    rng = np.random.default_rng(cfg.seed)
    answers = candidates(table.space)
    picked = np.resize(rows, n)
    data = Dataset.from_dict({"prompt": [prompt_text(tokenizer, table.questions[r], table.space.n_tools) for r in picked],
                              "completion": [answers[s] for s in rng.integers(0, table.n_subsets, n)]})
    steps = max(1, math.ceil(n / cfg.batch_questions))
    started = time.time()
    with tempfile.TemporaryDirectory() as out:
        model.train()
        SFTTrainer(model=model, args=_sft_args(model, out, cfg.lr, cfg.batch_questions, steps, cfg.seed, progress), train_dataset=data, processing_class=tokenizer).train()
    model.eval()
    seconds = time.time() - started
    _, masses, tags = dev_measures(model, tokenizer, table, rows[:WARMUP_PROBE_QUESTIONS])
    return {"config": asdict(cfg), "steps": steps, "seconds": seconds, "sampled_candidate_mass": sampled_candidate_mass(masses),
            "tag_logp": float(tags.mean()) if len(tags) else float("nan")}
