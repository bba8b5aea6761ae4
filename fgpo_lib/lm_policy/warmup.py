"""The answer-format warm start every arm of a run begins from: SFT (TRL's ``SFTTrainer``) on random candidates, so
the policy learns the format ``<answer>...</answer>`` and no routing; and the folder where runs that share one keep
it (:func:`shared_warm_start`)."""

from __future__ import annotations

import math
import tempfile
from dataclasses import asdict, dataclass

import numpy as np



#: training questions on which the warm start's result is measured (:func:`format_warmup`); a module constant, not a
#: field of FormatWarmup, so that the identity of runs begun before the measure existed is unchanged
WARMUP_PROBE_QUESTIONS = 32


@dataclass
class FormatWarmup:
    """The answer-format warm start every arm of a run begins from (the record keeps it)."""

    epochs: float = 1.0
    """Passes over the training questions; 0: none (the backbone's own format). One pass is enough for arms that
    score teacher-forced candidates (FGPO, SFT); GRPO samples, and the chapter's GRPO runs take more
    (fgpo_lib.lm_policy.arms.LM_ARMS says why)."""
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

    from .data import prompt_text
    from .evaluate import dev_measures, sampled_candidate_mass
    from .prompt import candidates
    from .sft_arm import sft_args

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
        SFTTrainer(model=model, args=sft_args(model, out, cfg.lr, cfg.batch_questions, steps, cfg.seed, progress), train_dataset=data, processing_class=tokenizer).train()
    model.eval()
    seconds = time.time() - started
    _, masses, tags = dev_measures(model, tokenizer, table, rows[:WARMUP_PROBE_QUESTIONS])
    return {"config": asdict(cfg), "steps": steps, "seconds": seconds, "sampled_candidate_mass": sampled_candidate_mass(masses),
            "tag_logp": float(tags.mean()) if len(tags) else float("nan")}


def shared_warm_start(out: str | Path | None, identity: dict) -> "RunCheckpoint | None":
    """Where runs whose answer-format warm start is the same (table, backbone, dtype, device, split and warm-start
    settings with its seed) share it: ``<records folder>/warm_starts/<hash>/``, beside ``out``. The warm start
    ignores the arm and its reward, so every arm and search point of one seed starts from the same adapter; computing
    it once saves its minutes for every run after the first, and changes no result (it is the same computation)."""
    if out is None:
        return None
    import hashlib
    import json
    from pathlib import Path

    from .resume import RunCheckpoint

    key = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]
    return RunCheckpoint(Path(out).parent / "warm_starts" / key, identity)
