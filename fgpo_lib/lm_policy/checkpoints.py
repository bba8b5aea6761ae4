"""Dev-selected checkpoints of a LoRA policy, kept in memory, and the run record every arm writes.

A checkpoint is the adapter's trainable tensors (a few MB), copied when the dev score beats every earlier one (ties:
the earlier, as the linear protocol chooses). The untrained step 0 is no candidate, so a tie never reports the initial
policy as a trained one. At the end the best checkpoint is restored and evaluated on test under both decodings.
"""

from __future__ import annotations

import time

import numpy as np

from .data import score_choices
from .evaluate import candidate_distribution, entropy, generated_choices


def trainable_state(model) -> dict:
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def restore(model, state: dict) -> None:
    params = dict(model.named_parameters())
    for n, t in state.items():
        params[n].data.copy_(t)


class DevSelector:
    """Keeps the best dev checkpoint; ``curve`` holds one point per evaluation.

    Args:
        decoding: ``"scoring"`` (candidate scoring, FGPO's and SFT's) or ``"generation"`` (GRPO's own decoding).
    """

    def __init__(self, model, tokenizer, table, dev_rows, decoding: str, length_norm: bool = True, max_new_tokens: int = 16) -> None:
        self.model, self.tokenizer, self.table, self.rows = model, tokenizer, table, np.asarray(dev_rows)
        self.decoding, self.length_norm, self.max_new_tokens = decoding, length_norm, max_new_tokens
        self.best, self.best_step, self.best_state = -np.inf, None, None
        self.curve: list[dict] = []
        self.started = time.time()

    def __call__(self, step: int, extra: dict | None = None) -> None:
        q = candidate_distribution(self.model, self.tokenizer, self.table, self.rows, self.length_norm)
        point = {"step": step, "seconds": time.time() - self.started, "q_entropy": float(entropy(q).mean()), "q_top_mass": float(q.max(1).mean())}
        if self.decoding == "scoring":
            res = score_choices(self.table, self.rows, list(q.argmax(1)))
        else:
            choices, _ = generated_choices(self.model, self.tokenizer, self.table, self.rows, self.max_new_tokens)
            res = score_choices(self.table, self.rows, choices)
            point["generated_entropy"] = _choice_entropy(choices)
        point.update({"dev_score": float(np.mean(res["scores"])), "dev_format_failures": res["format_failures"], **(extra or {})})
        self.curve.append(point)
        if step > 0 and point["dev_score"] > self.best:
            self.best, self.best_step, self.best_state = point["dev_score"], step, trainable_state(self.model)


def _choice_entropy(choices: list) -> float:
    """Entropy (nats) of the empirical distribution of generated choices (a format failure is its own outcome)."""
    _, counts = np.unique(["x" if c is None else str(c) for c in choices], return_counts=True)
    p = counts / counts.sum()
    return float(-(p * np.log(p)).sum())


def evaluate_on_test(model, tokenizer, table, rows, length_norm: bool = True, max_new_tokens: int = 16) -> dict:
    """Both decodings on ``rows``: ``{"scoring": ..., "generation": ...}`` of :func:`~fgpo_lib.lm_policy.data.score_choices`,
    with the question ids, ``q``'s entropy and top mass, and the generated texts."""
    rows = np.asarray(rows)
    q = candidate_distribution(model, tokenizer, table, rows, length_norm)
    scoring = score_choices(table, rows, list(q.argmax(1)))
    choices, texts = generated_choices(model, tokenizer, table, rows, max_new_tokens)
    generation = score_choices(table, rows, choices)
    return {"question_ids": [table.question_ids[r] for r in rows], "scoring": scoring, "generation": {**generation, "texts": texts},
            "q_entropy": float(entropy(q).mean()), "q_top_mass": float(q.max(1).mean())}


def train_with_dev(trainer, dev: DevSelector, steps: int, eval_every: int, extra=None) -> float:
    """Run a TRL trainer with a dev evaluation (and checkpoint) every ``eval_every`` steps and at the last, then
    restore the best checkpoint; ``extra() -> dict`` adds fields to each dev point. Returns the training seconds."""
    from transformers import TrainerCallback

    model = dev.model

    class DevCheckpoints(TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            if state.global_step % eval_every == 0 or state.global_step == steps:
                model.eval()
                dev(state.global_step, extra() if extra else None)
                model.train()

    trainer.add_callback(DevCheckpoints())
    model.eval()
    dev(0)
    started = time.time()
    trainer.train()
    seconds = time.time() - started
    if dev.best_state is not None:
        restore(model, dev.best_state)
    model.eval()
    return seconds
