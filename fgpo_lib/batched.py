"""Many training runs of one method at once: one tensor program with a leading run dimension.

A study trains every arm over seeds x folds x learning rates: hundreds of small runs of one method on one table.
Run one after another, each pays Python and dispatch overhead on every update. Here run ``r``'s policy is slice
``r`` of one set of weights, every update is one batched matmul over all runs, and Adam is applied elementwise with
each run's own learning rate. A run's loss touches only its own slice, so runs never interact: the result equals
``R`` separate runs of :func:`fgpo_lib.train.train` up to floating-point order (``tests/test_batched.py`` checks
FGPO and SFT, which draw nothing, and DPO, which draws in train()'s order, against it).

How it departs from :func:`~fgpo_lib.train.train`:

* linear policies only (``hidden = 0``), flat or factorized, optionally with a prior;
* a run draws from its own seeded generator, but not in train()'s order, so GRPO and the k-subset dial match
  train() in distribution, not draw for draw;
* methods: those the registry marks ``batched`` (:func:`fgpo_lib.algos.registry.batched_methods`): the ``exact``
  family through its ``loss`` (FGPO with the entropy bonus and the k-subset dial, TPO), the ``grpo`` family through its
  ``advantage`` (``beta = 0``), ``sft``, ``dpo``; the
  KL terms and GRPO's ``beta`` need train(); with full batches of unequal runs, padded rows enter GRPO's ``batch``
  std (not its ``group`` or ``none`` scaling, nor any loss);
* DPO: a run whose batch holds no preference pair (every question constant) still takes an Adam step, with a zero
  gradient (train() skips it), since the runs share Adam's step count;
* evaluation points, dev selection and the run record follow train(); a record holds ``config``, ``curves``,
  ``final``, ``selected`` and the test ``per_question`` scores. With ``curves=False`` (the study's protocol, which
  reads only the dev-selected and final test choices) an evaluation point computes the dev greedy score alone, the
  one number dev selection compares: the choices, ``per_question`` and ``selected["dev"]["greedy_reward"]`` are
  those of a full run, and the curves, ``final`` and ``selected`` hold no train or test averages.

Shapes: ``R`` runs, ``n`` questions, ``d`` features, ``S`` subsets, ``O`` outputs per question (``S`` for flat,
``n_tools + n_sizes`` for factorized), ``B`` questions per update. Weights ``(R, d, O)``, bias ``(R, O)``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np
import torch
import torch.nn.functional as F

from .algos import GRPOConfig, best_subsets, grpo_advantages, grpo_loss
from .algos.fgpo import draw_subset_mask
from .algos.registry import METHODS, batched_methods
from .algos.imitation import draw_rejected
from .metrics import evaluate, greedy_reward, reward_classes
from .policy import SubsetPolicy
from .rewards import RewardSpec
from .table import RewardTable
from .train import TrainConfig, _per_question, prior_probs

BATCHED_METHODS = batched_methods()
ADAM_BETAS, ADAM_EPS = (0.9, 0.999), 1e-8  # torch.optim.Adam's defaults


@dataclass(frozen=True)
class RunSpec:
    """One run of a batch: its seed, learning rate and rows (``splits``: ``{"train", "dev", "test"}`` row indices)."""

    seed: int
    lr: float
    splits: dict
    tag: str = ""
    """Free text carried into the record (e.g. ``fold 3``)."""
    fold: int = -1
    """The cross-fitting fold of ``splits`` (-1: none)."""


def _design(space, parameterization: str) -> torch.Tensor | None:
    """The factorized policy's ``(S, O)`` design matrix (as :class:`~fgpo_lib.policy.SubsetPolicy` builds it)."""
    if parameterization == "flat":
        return None
    return SubsetPolicy(1, space, "factorized").design


def train_batched(table: RewardTable, config: TrainConfig, runs: list[RunSpec], features: np.ndarray, curves: bool = True) -> list[dict]:
    """Train ``config.method`` once per :class:`RunSpec`, all at once (module doc). ``config.seed`` and
    ``config.lr`` are ignored: each run has its own. ``features: (n, d)``. ``curves``: every metric on every split at
    each evaluation point (``False``: the dev greedy score only, module doc). Returns one record per run, in order."""
    cfg = config
    if cfg.method not in BATCHED_METHODS:
        raise ValueError(f"train_batched runs {', '.join(BATCHED_METHODS)}; use fgpo_lib.train.train for {cfg.method!r}")
    if cfg.fgpo.candidate_tools:
        raise ValueError("train_batched has no candidate sets; use fgpo_lib.train.train")
    if cfg.hidden or cfg.fgpo.kl_coef or cfg.grpo.beta:
        raise ValueError("train_batched needs a linear policy (hidden = 0) and no KL term (kl_coef = beta = 0)")
    if cfg.grpo.entropy_bonus or cfg.grpo.dynamic_sampling or cfg.grpo.skip_dead or cfg.grpo.replay:
        raise ValueError("train_batched has none of GRPO's fixes for dead groups (entropy bonus, dynamic sampling, skipping, replay); use fgpo_lib.train.train")
    if not runs:
        raise ValueError("no runs")
    space, R = table.space, len(runs)
    x = torch.as_tensor(np.asarray(features, np.float32))
    n, d = x.shape
    design = _design(space, cfg.parameterization)
    n_out = space.n_subsets if design is None else design.shape[1]
    prior = prior_probs(space, cfg.prior)
    prior_logits = torch.zeros(space.n_subsets) if prior is None else torch.as_tensor(prior).log().float()
    spec = RewardSpec.parse(cfg.reward)
    reward = torch.as_tensor(spec.apply(table.rewards, space))  # what the optimizer sees
    differential = spec.kind == "differential"
    method = METHODS[cfg.method]
    grpo_family = method.family == "grpo"
    advantage = (method.advantage(cfg, spec) if method.advantage else lambda r, logp: grpo_advantages(r, cfg.grpo.scale_rewards)) if grpo_family else None
    scores = torch.as_tensor(table.rewards)
    best = best_subsets(scores)
    values, classes = reward_classes(table.rewards)  # the raw score's classes, sorted once

    params = [torch.zeros(R, d, n_out), torch.zeros(R, n_out)]  # weights and bias start at zero: the prior policy
    moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p in params]
    lrs = torch.tensor([r.lr for r in runs], dtype=torch.float32)
    gens = [torch.Generator().manual_seed(r.seed) for r in runs]
    train_rows = [torch.as_tensor(np.asarray(r.splits["train"], np.int64)) for r in runs]
    if min(len(t) for t in train_rows) == 0:
        raise ValueError("a run has no training questions")
    batch = min(len(t) for t in train_rows) if cfg.batch_questions > 0 else max(len(t) for t in train_rows)
    if cfg.batch_questions > 0:
        batch = min(cfg.batch_questions, batch)
    orders, cursors = [t for t in train_rows], [len(t) for t in train_rows]
    seen = torch.zeros(R, n, space.n_subsets, dtype=torch.bool)
    calls = torch.zeros(R, dtype=torch.int64)
    asked_empty = torch.zeros(R, n, dtype=torch.bool)  # differential reward: questions whose no-tool cell was asked for
    if method.family in ("exact", "imitation") and not (cfg.method == "fgpo" and 0 < cfg.fgpo.subsets_per_update < space.n_subsets):
        for r, t in enumerate(train_rows):  # methods that read every cell of their training questions once
            seen[r, t] = True
            calls[r] = len(t) * space.n_subsets

    def logits(w, b, rows=None):  # rows: (R, B) -> (R, B, S); None: every question, (R, n, S)
        out = (torch.einsum("nd,rdo->rno", x, w) if rows is None else torch.bmm(x[rows], w)) + b[:, None, :]
        return (out if design is None else out @ design.T) + prior_logits

    def next_rows() -> tuple[torch.Tensor, torch.Tensor]:
        """``(R, B)`` rows and a ``(R, B)`` weight mask (full batches of unequal runs are padded)."""
        rows, mask = torch.zeros(R, batch, dtype=torch.int64), torch.zeros(R, batch)
        for r, t in enumerate(train_rows):
            if cfg.batch_questions <= 0:
                rows[r, : len(t)], mask[r, : len(t)] = t, 1.0
                rows[r, len(t):] = t[0]
                continue
            if cursors[r] + batch > len(orders[r]):
                orders[r], cursors[r] = t[torch.randperm(len(t), generator=gens[r])], 0
            rows[r], mask[r] = orders[r][cursors[r] : cursors[r] + batch], 1.0
            cursors[r] += batch
        return rows, mask

    def adam_step(grads, t: int) -> None:
        b1, b2 = ADAM_BETAS
        for p, g, (m, v) in zip(params, grads, moments):
            m.mul_(b1).add_(g, alpha=1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
            denom = (v.sqrt() / (1 - b2**t) ** 0.5).add_(ADAM_EPS)
            step = (lrs / (1 - b1**t)).view(-1, *([1] * (p.dim() - 1)))
            p.sub_(step * m / denom)

    def loss_of(w, b, rows, mask, drawn) -> torch.Tensor:
        z = logits(w, b, rows)
        per_run = lambda per_q: ((per_q * mask).sum(1) / mask.sum(1)).sum()  # noqa: E731 - each run's own mean, summed
        if method.family == "exact":
            return per_run(method.loss(cfg, z, reward[rows], drawn))
        if cfg.method == "sft":
            return per_run(-torch.log_softmax(z, -1).gather(2, best[rows][..., None])[..., 0])
        if cfg.method == "dpo":  # the reference is the initial policy: every run starts at zero weights
            rejected, has = drawn
            gap = lambda lp, i: lp.gather(2, i[..., None])[..., 0]  # noqa: E731
            logp, ref = torch.log_softmax(z, -1), torch.log_softmax(prior_logits, -1)
            chosen = best[rows]
            margin = (gap(logp, chosen) - ref[chosen]) - (gap(logp, rejected) - ref[rejected])
            w = has.float() * mask
            return (((-F.logsigmoid(cfg.dpo.beta * margin)) * w).sum(1) / w.sum(1).clamp(min=1)).sum()
        samples, logp_old, adv = drawn
        logp = torch.log_softmax(z / cfg.grpo.temperature, -1).gather(2, samples)
        return per_run(grpo_loss(logp, logp_old, adv, cfg.grpo.epsilon, reduction="none").mean(-1))

    split_rows = [{k: np.asarray(r.splits.get(k, []), np.int64) for k in ("train", "test", "dev")} for r in runs]
    records = [{"config": {**asdict(replace(cfg, seed=r.seed, lr=r.lr)), "tag": r.tag, "fold": r.fold}, "curves": []} for r in runs]
    best_dev: list[tuple | None] = [None] * R
    optimizer_steps = 0
    for step in range(cfg.steps + 1):
        if step % max(cfg.eval_every, 1) == 0 or step == cfg.steps:
            with torch.no_grad():
                probs = torch.softmax(logits(params[0], params[1]).double(), -1).numpy()
            for r, run in enumerate(runs):
                point = {"step": step, "optimizer_steps": optimizer_steps, "reasoner_calls": int(calls[r]), "unique_reasoner_calls": int(seen[r].sum())}
                for salt, split in enumerate(("train", "test", "dev")):
                    rows = split_rows[r][split]
                    if not len(rows):
                        continue
                    if curves:
                        point[split] = evaluate(probs[r][rows], table.rewards[rows], space, cfg.group_size, np.random.default_rng([run.seed, step, salt]), (values, classes[rows]))
                    elif split == "dev":
                        point[split] = {"greedy_reward": float(greedy_reward(probs[r][rows], table.rewards[rows]).mean())}
                records[r]["curves"].append(point)
                if "dev" in point and (step > 0 or cfg.steps == 0) and (best_dev[r] is None or point["dev"]["greedy_reward"] > best_dev[r][0]["dev"]["greedy_reward"]):
                    best_dev[r] = (point, probs[r])
            final_probs = probs
        if step == cfg.steps:
            break
        rows, mask = next_rows()
        drawn = None
        if cfg.method == "fgpo" and 0 < cfg.fgpo.subsets_per_update < space.n_subsets:
            drawn = torch.stack([draw_subset_mask(batch, space.n_subsets, cfg.fgpo.subsets_per_update, g) for g in gens])
            for r in range(R):
                valid = mask[r] > 0
                seen[r, rows[r][valid]] |= drawn[r][valid]
                calls[r] += int(drawn[r][valid].sum())
        if cfg.method == "dpo":  # one rejected subset per question, drawn as train() draws it
            pairs = [draw_rejected(scores[rows[r]], best[rows[r]], gens[r]) for r in range(R)]
            drawn = (torch.stack([p[0] for p in pairs]), torch.stack([p[1] for p in pairs]))
        if grpo_family:
            with torch.no_grad():
                logp_all = torch.log_softmax(logits(params[0], params[1], rows) / cfg.grpo.temperature, -1)
                samples = torch.stack([torch.multinomial(logp_all[r].exp(), cfg.group_size, replacement=True, generator=gens[r]) for r in range(R)])
            rewards = reward[rows[..., None], samples]  # (R, B, G), the table's cells standing in for live calls
            for r in range(R):
                valid = mask[r] > 0
                seen[r, rows[r][valid][:, None], samples[r][valid]] = True
                calls[r] += int(valid.sum()) * cfg.group_size
                if differential:  # the no-tool answer of each question: one call per question, then cached (RewardOracle)
                    q = rows[r][valid]
                    calls[r] += int((~asked_empty[r, q]).sum())
                    asked_empty[r, q] = True
                    seen[r, q, space.index_of([])] = True
            drawn = (samples, logp_all.gather(2, samples), advantage(rewards, logp_all))
        iterations = cfg.grpo.num_iterations if grpo_family else 1
        for _ in range(iterations):
            w, b = (p.clone().requires_grad_(True) for p in params)
            grads = torch.autograd.grad(loss_of(w, b, rows, mask, drawn), (w, b))
            optimizer_steps += 1
            with torch.no_grad():
                adam_step(grads, optimizer_steps)

    test_of = lambda r: np.asarray(runs[r].splits.get("test", []), np.int64)  # noqa: E731
    for r, rec in enumerate(records):
        last = rec["curves"][-1]
        rec["final"] = {k: last.get(k) for k in ("train", "test", "reasoner_calls", "unique_reasoner_calls")} | {"optimizer_steps": optimizer_steps}
        rec["per_question"] = {"test": _per_question(final_probs[r], table, test_of(r), keep_probs=True)} if len(test_of(r)) else {}
        rec["selected"] = None
        if best_dev[r] is not None:
            point, p = best_dev[r]
            rec["selected"] = {"step": point["step"], **{k: point.get(k) for k in ("train", "dev", "test", "reasoner_calls", "unique_reasoner_calls")}}
            rec["selected"]["per_question"] = {"test": _per_question(p, table, test_of(r), keep_probs=True)} if len(test_of(r)) else {}
    return records


def runs_grid(folds: list[dict], seeds: list[int], lrs: list[float]) -> list[RunSpec]:
    """Every (seed, fold, learning rate): the run list of one arm under cross-fitting."""
    return [RunSpec(seed, lr, fold, f"seed {seed}, fold {i}, lr {lr:g}", i) for seed in seeds for i, fold in enumerate(folds) for lr in lrs]


__all__ = ["BATCHED_METHODS", "GRPOConfig", "RunSpec", "runs_grid", "train_batched"]
