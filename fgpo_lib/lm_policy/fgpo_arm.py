"""FGPO on the language-model policy: the exact expected reward over every candidate subset, one file.

Per update, for each of ``batch_questions`` training questions, the candidates' scores come from one batched pass
that computes the prompt once (:func:`~fgpo_lib.lm_policy.candidate_scores.candidate_scores`), ``q = softmax(scores)``, and
the loss is ``-sum_S q(S|x) r(x,S) - entropy_coef H(q(.|x))`` with Eq. 1's reward (:func:`~fgpo_lib.lm_policy.candidate_scores.expected_reward_loss`),
averaged over the batch; with ``format_weight`` > 0 the loss also subtracts
``format_weight * sum_S q(S|x) log p(y_S|x)`` with ``q`` held fixed (:func:`~fgpo_lib.lm_policy.candidate_scores.format_anchor`,
not in the paper). AdamW on the LoRA adapter, a cosine schedule over the run. Every ``eval_every`` updates the dev
questions are scored by candidate scoring and the best checkpoint is kept (:mod:`.checkpoints`).

How it departs from the paper: the paper's learning rate, 1e-5, is for a 7B model's adapter over many more updates;
a 135M model's adapter over a few hundred updates moves too little at that rate, so the rate comes from a small grid
chosen on dev (:data:`LM_LR_GRID`). The gradient of a batch is accumulated question by question (one graph at a time),
which is the same gradient as one batched graph.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass

import numpy as np
import torch

from ..algos.tpo import tpo_loss
from ..rewards import RewardSpec
from ..validation import MAX_QUESTIONS, MAX_SEED, MAX_STEPS, Ranged, check_bool_fields, check_choice, check_int_fields
from .dev import DEV_MEASURES, TIE_BREAKS, DevSelector, evaluate_on_test
from .data import candidate_token_ids, check_table, prompt_text
from .resume import RunCheckpoint, restore, trainable_state
from .candidate_scores import candidate_token_logps, expected_reward_loss, format_anchor, reduce_scores

LM_LR_GRID = (1e-4, 3e-4, 1e-3)
#: the objectives the arm can step on (:attr:`LMFGPOConfig.objective`)
OBJECTIVES = ("expected", "tpo")
#: the learning-rate schedules (:attr:`LMFGPOConfig.schedule`)
SCHEDULES = ("cosine", "constant")


@dataclass
class LMFGPOConfig(Ranged):
    lr: float = 3e-4
    """AdamW learning rate of the adapter (the chapter's runs choose it from LM_LR_GRID on dev)."""
    entropy_coef: float = 0.03
    """Weight of the entropy bonus H(q) (the paper's beta, 0.03; the linear head's FGPOConfig.entropy_coef). Run
    records made before this name held it as ``beta``."""
    batch_questions: int = 16
    """Training questions per update (the paper's)."""
    epochs: float = 4.0
    """Passes over the training questions (the paper's FGPO schedule)."""
    eval_every: int = 10
    """Updates between dev evaluations (and checkpoints)."""
    length_norm: bool = True
    """Score a candidate by its per-token mean log-probability (Eq. 4); False: the sum (the ablation)."""
    reward: str = "eq1"
    """The training reward (fgpo_lib.rewards): the paper's Eq. 1."""
    seed: int = 0
    """Fixes the order of the training questions."""
    weight_decay: float = 0.0
    """AdamW's weight decay."""
    format_weight: float = 0.0
    """Weight lambda of the format anchor: the loss also subtracts lambda * sum_S q(S|x) log p(y_S|x) with q held
    fixed, so that free generation follows q (scoring.format_anchor). 0 is the paper's objective. Not in the paper:
    SmolLM2-135M's FGPO runs lose the answer tag without it (the chapter's tag section). The tag's gradient from
    Eq. 4 is Cov_q(r, 1/L), of order 0.01 for rewards in [0, 1] and 5-13 tokens, while the anchor's is lambda, so 0.1
    holds the tag by an order of magnitude."""
    temperature: float = 1.0
    """Temperature tau of the listwise softmax, q = softmax(scores / tau); 1 is Eq. 4 (the paper's Table 5 tries 0.7)."""
    objective: str = "expected"
    """'expected': the exact expected reward with the entropy bonus (Eq. 2 and 5, the paper's); 'tpo': the
    cross-entropy to the target q exp(r / eta), exact over every candidate (TPO, the linear study's second exact
    method; entropy_coef is not used)."""
    eta: float = 0.5
    """The TPO target's temperature (objective 'tpo'): smaller puts the target on the best candidates."""
    schedule: str = "cosine"
    """Learning-rate schedule: 'cosine' to 0 over the run (the paper's) or 'constant'."""
    warmup_ratio: float = 0.0
    """Share of the updates over which the learning rate rises linearly from 0 (0: none)."""
    dev_measures: str = "full"
    """What a dev point measures: 'full' (both decodings and every diagnostic) or 'scoring' (candidate scoring, q and
    the routing measures only, about a tenth of the cost); the test questions get both decodings either way."""
    tie_break: str = "first"
    """Which checkpoint dev selection keeps when later ones tie the best dev score: 'first' (the rule of every run
    before it) or 'expected', the tied checkpoint with the higher exact expected reward of q on dev (fgpo_lib.lm_policy.dev)."""

    RANGES = {"lr": (1e-12, 1.0), "entropy_coef": (0, None), "batch_questions": (1, MAX_QUESTIONS), "epochs": (1e-6, 10_000), "eval_every": (1, MAX_STEPS),
              "seed": (0, MAX_SEED), "weight_decay": (0, None), "format_weight": (0, None), "temperature": (1e-6, None), "eta": (1e-6, None), "warmup_ratio": (0, 1)}

    def __post_init__(self) -> None:
        super().__post_init__()
        check_choice("objective", self.objective, OBJECTIVES)
        check_choice("schedule", self.schedule, SCHEDULES)
        check_choice("dev_measures", self.dev_measures, DEV_MEASURES)
        check_choice("tie_break", self.tie_break, TIE_BREAKS)
        check_int_fields(self, ("batch_questions", "eval_every", "seed"))
        check_bool_fields(self, ("length_norm",))
        RewardSpec.parse(self.reward)


def objective_loss(scores: torch.Tensor, rewards: torch.Tensor, cfg: LMFGPOConfig) -> torch.Tensor:
    """The arm's loss on one question from its candidates' ``scores`` and ``rewards: (n_candidates,)`` (the scores
    are divided by ``cfg.temperature`` first): FGPO's (:func:`~fgpo_lib.lm_policy.candidate_scores.expected_reward_loss`) or TPO's
    cross-entropy to its target (:func:`fgpo_lib.algos.tpo.tpo_loss`)."""
    logits = scores / cfg.temperature
    if cfg.objective == "tpo":
        return tpo_loss(logits, rewards, cfg.eta)
    return expected_reward_loss(logits, rewards, cfg.entropy_coef)


def lr_schedule(optimizer, cfg, steps: int):
    """The run's learning-rate schedule (transformers'): cosine to 0 or constant, after ``warmup_ratio`` of the
    ``steps`` rising linearly from 0."""
    from transformers import get_constant_schedule_with_warmup, get_cosine_schedule_with_warmup

    warm = int(round(cfg.warmup_ratio * steps))
    return get_cosine_schedule_with_warmup(optimizer, warm, steps) if cfg.schedule == "cosine" else get_constant_schedule_with_warmup(optimizer, warm)


class ExactEstimator:
    """FGPO's reward term: the exact expectation over every candidate, reading every training cell once.

    An estimator is what :func:`train_on_candidates` asks for each question's loss; the sampled arm
    (:mod:`.sampled_arm`) swaps this one for a sampled one and keeps everything else. ``rewards: (n_questions,
    n_subsets)``, Eq. 1's reward of the table."""

    def __init__(self, rewards: torch.Tensor, cfg: LMFGPOConfig, scores: torch.Tensor | None = None) -> None:
        self.rewards, self.cfg = rewards, cfg

    def loss(self, scores: torch.Tensor, row: int) -> torch.Tensor:
        """The loss on training question ``row`` from its candidates' ``scores: (n_candidates,)``."""
        return objective_loss(scores, self.rewards[row], self.cfg)

    def end_update(self) -> dict:
        """What the curve records of the update just made (nothing: the exact term has no per-update randomness)."""
        return {}

    def state(self) -> dict:
        return {}

    def load_state(self, held: dict) -> None:
        pass

    def record(self, n_train: int) -> dict:
        """The record's fields of the estimator: the reasoner calls are every training cell, once."""
        return {"reasoner_calls": int(n_train * self.rewards.shape[1])}


def train_fgpo(model, tokenizer, table, splits: dict, cfg: LMFGPOConfig, progress: bool = False, checkpoint: RunCheckpoint | None = None) -> dict:
    """Train the adapter of ``model`` (a peft model) with FGPO; returns ``{"config", "curve", "selected_step", "test",
    "train_seconds", "reasoner_calls"}``. ``splits``: :func:`~fgpo_lib.lm_policy.data.lm_splits`. With a
    ``checkpoint`` the loop saves its whole state at every dev point and resumes from the last one, with the same
    data order, so a resumed run's result is an uninterrupted run's (:mod:`.resume`)."""
    return train_on_candidates(model, tokenizer, table, splits, cfg, ExactEstimator, progress, checkpoint)


def train_on_candidates(model, tokenizer, table, splits: dict, cfg: LMFGPOConfig, estimator, progress: bool = False, checkpoint: RunCheckpoint | None = None) -> dict:
    """The loop of :func:`train_fgpo` with the reward term of ``estimator``, a class called as ``estimator(rewards,
    cfg, scores)`` (the training reward and the raw scores, both ``(n_questions, n_subsets)``; :class:`ExactEstimator`
    or the sampled arm's): everything else (data order, warm-up, schedule, entropy
    term, format anchor, dev selection, checkpoints) is the same for every estimator."""
    from tqdm import tqdm

    check_table(table)
    if model.is_gradient_checkpointing:  # TRL's warm start turns it on; it drops the KV cache the shared prompt needs
        model.gradient_checkpointing_disable()
    rewards = torch.as_tensor(RewardSpec.parse(cfg.reward).apply(table.rewards, table.space), dtype=torch.float32, device=model.device)
    term = estimator(rewards, cfg, torch.as_tensor(table.rewards, dtype=torch.float32, device=model.device))
    train_rows = np.asarray(splits["train"])
    cands = candidate_token_ids(tokenizer, table)
    prompts = {int(r): tokenizer(prompt_text(tokenizer, table.questions[r], table.space.n_tools), add_special_tokens=False, return_tensors="pt")["input_ids"][0] for r in train_rows}
    batch = min(cfg.batch_questions, len(train_rows))
    steps = max(1, math.ceil(cfg.epochs * len(train_rows) / batch))
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    schedule = lr_schedule(optimizer, cfg, steps)
    rng = np.random.default_rng(cfg.seed)
    dev = DevSelector(model, tokenizer, table, splits["dev"], "scoring", cfg.length_norm, measures=cfg.dev_measures, temperature=cfg.temperature, tie_break=cfg.tie_break)
    order, cursor, started, first, before = rng.permutation(train_rows), 0, time.time(), 1, 0.0
    updates: list[dict] = []  # the estimator's per-update measures (empty for the exact one)
    held = checkpoint.load_arm() if checkpoint else None
    if held is not None:
        restore(model, held["adapter"])
        optimizer.load_state_dict(held["optimizer"])
        schedule.load_state_dict(held["schedule"])
        rng.bit_generator.state = held["rng"]
        dev.load_state(held["dev"])
        term.load_state(held.get("estimator", {}))
        updates = list(held.get("updates", []))
        order, cursor, first, before = np.asarray(held["order"]), held["cursor"], held["step"] + 1, held["seconds"]
    else:
        dev(0)
    for step in tqdm(range(first, steps + 1), desc="lm fgpo", initial=first - 1, total=steps, disable=not progress):
        if cursor + batch > len(order):
            order, cursor = rng.permutation(train_rows), 0
        rows, cursor = order[cursor : cursor + batch], cursor + batch
        model.train()
        optimizer.zero_grad()
        total = 0.0
        for r in rows:
            token_logp, mask = candidate_token_logps(model, prompts[int(r)], cands, tokenizer.pad_token_id or 0)
            scores = reduce_scores(token_logp, mask, cfg.length_norm)
            loss = term.loss(scores.float(), int(r))
            if cfg.format_weight:
                loss = loss - cfg.format_weight * format_anchor(reduce_scores(token_logp, mask, False), scores / cfg.temperature)
            loss = loss / len(rows)
            loss.backward()
            total += float(loss.detach())
        optimizer.step()
        schedule.step()
        measured = term.end_update()
        if measured:
            updates.append({"step": step, **measured})
        model.eval()
        if step % cfg.eval_every == 0 or step == steps:
            dev(step, {"loss": total, **measured})
            if checkpoint is not None:
                checkpoint.save_arm({"step": step, "adapter": trainable_state(model), "optimizer": optimizer.state_dict(), "schedule": schedule.state_dict(),
                                     "rng": rng.bit_generator.state, "order": order, "cursor": cursor, "dev": dev.state(), "seconds": before + time.time() - started,
                                     "estimator": term.state(), "updates": updates})
    seconds = before + time.time() - started
    if dev.best_state is not None:
        restore(model, dev.best_state)
    return {"config": asdict(cfg), "curve": dev.curve, "selected_step": dev.best_step, "train_seconds": seconds, **term.record(len(train_rows)),
            **({"updates": updates} if updates else {}),
            "test": evaluate_on_test(model, tokenizer, table, splits["test"], cfg.length_norm, temperature=cfg.temperature),
            "test_last_tie": dev.last_tie_test(splits["test"], cfg.length_norm, cfg.temperature),
            "test_first_rule": dev.first_rule_test(splits["test"], cfg.length_norm, cfg.temperature)}
