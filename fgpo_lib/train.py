"""Train one method on one reward table and return a JSON-ready run record.

The loop is shared by every method; what differs is the update (:mod:`fgpo_lib.algos`). Evaluation is exact:
metrics are computed from the full table rows of the train and test questions (:func:`fgpo_lib.metrics.evaluate`),
never from samples, except the observed failure rate, which draws one seeded group per question.

Run record (what ``fgpo train --out run.json`` writes)::

    {"fgpo_version", "created" (ISO timestamp: the only field that differs between reruns),
     "config": TrainConfig as a dict, "table": {content_hash, sizes, tools, provenance},
     "curves": [{"step", "optimizer_steps", "reasoner_calls", "unique_reasoner_calls",
                 "group_zero_variance" (GRPO: share of training groups with equal rewards since the last point),
                 "train": metrics, "test": metrics}, ...],
     "final": {"train": metrics, "test": metrics, "reasoner_calls", "unique_reasoner_calls", "optimizer_steps"},
     "per_question": {"train"|"test": {"question_ids", "greedy_subset", "greedy_reward", "expected_reward",
                                      "greedy_size"[, "probs" with splits: pi(S|q) of each test question]}},
     "subset_probs": {"train"|"test": (n_subsets,) mean over questions of pi(S|q), canonical order},
     "selected": null, or with a dev split {"step", "train"|"dev"|"test": metrics, "per_question": {"test": ...}}:
                 the evaluation point with the best dev greedy reward (ties: the earliest), as the paper reports;
                 the untrained step 0 is no candidate (the paper picks among steps 25, 50, ...), so a tie on
                 dev never reports the initial policy as a trained one}

With ``splits={"train": rows, "dev": rows, "test": rows}`` (row indices, e.g. from :mod:`fgpo_lib.crossfit`) the
table's own train/test split is overridden, curves also record ``dev`` metrics, and ``selected`` is filled.
"""

from __future__ import annotations

import copy
import datetime as _dt
from dataclasses import asdict

import numpy as np
import torch
from tqdm import tqdm

from ._version import __version__
from .algos import BASELINES
from .algos.registry import METHODS as REGISTRY
from .algos.registry import Setup, make_optimizer, settings_of
from .features import make_featurizer
from .metrics import evaluate, expected_reward, greedy_reward, reward_classes
from .oracle import RewardOracle, TableOracle
from .policy import SubsetPolicy
from .rewards import RewardSpec
from .table import RewardTable
from .train_config import METHOD_NAMES, SAMPLING_METHODS, TrainConfig  # noqa: F401  (TrainConfig is part of this module's interface)

def prior_probs(space, prior: dict[str, float] | None) -> np.ndarray | None:
    """``(n_subsets,)`` probabilities from ``{label: prob}``; the rest of the mass is spread evenly over the others."""
    if not prior:
        return None
    probs = np.full(space.n_subsets, np.nan)
    for label, p in prior.items():
        probs[space.index_of_label(label)] = p
    given = ~np.isnan(probs)
    rest = 1.0 - probs[given].sum()
    if given.all():
        if abs(rest) > 1e-6:
            raise ValueError(f"prior probabilities sum to {1 - rest}, not 1")
    elif rest <= 0:
        raise ValueError(f"prior {prior} must leave positive mass for the other subsets")
    else:
        probs[~given] = rest / (~given).sum()
    return probs


def _metrics(probs: np.ndarray, table: RewardTable, rows: np.ndarray, cfg: TrainConfig, step: int, salt: int, classes=None) -> dict:
    rng = np.random.default_rng([cfg.seed, step, salt])
    return evaluate(probs[rows], table.rewards[rows], table.space, cfg.group_size, rng, None if classes is None else (classes[0], classes[1][rows]))


def _greedy_metrics(probs: np.ndarray, table, rows: np.ndarray, eval_oracle) -> dict:
    """On-demand evaluation: the greedy subset's raw score (read through ``eval_oracle``) and size; no metric that
    needs a whole row of the table."""
    pq = _per_question(probs, table, rows, eval_oracle=eval_oracle)
    return {"greedy_reward": float(np.mean(pq["greedy_reward"])), "greedy_size": float(np.mean(pq["greedy_size"]))}


def _per_question(probs: np.ndarray, table: RewardTable, rows: np.ndarray, keep_probs: bool = False, eval_oracle=None) -> dict:
    """Per question of ``rows``: the greedy subset (canonical index), its reward and size, the expected reward, and
    with ``keep_probs`` the policy itself, ``probs: (len(rows), n_subsets)`` as nested lists. With ``eval_oracle``
    (on-demand evaluation) the greedy subset's reward is read through it and there is no expected reward."""
    if eval_oracle is not None:
        greedy = np.argmax(probs[rows], axis=1)
        return {"question_ids": [table.question_ids[i] for i in rows], "greedy_subset": greedy.tolist(),
                "greedy_reward": eval_oracle(rows, greedy[:, None])[:, 0].astype(float).tolist(), "greedy_size": table.space.sizes[greedy].tolist()}
    p, r = probs[rows], table.rewards[rows]
    out = {
        "question_ids": [table.question_ids[i] for i in rows],
        "greedy_subset": np.argmax(p, axis=1).tolist(),
        "greedy_reward": greedy_reward(p, r).tolist(),
        "expected_reward": expected_reward(p, r).tolist(),
        "greedy_size": table.space.sizes[np.argmax(p, axis=1)].tolist(),
    }
    if keep_probs:
        out["probs"] = p.tolist()
    return out


def train(table: RewardTable, config: TrainConfig, features: np.ndarray | None = None, progress: bool = False, oracle=None, splits: dict | None = None, eval_oracle=None,
          keep: dict | None = None) -> dict:
    """Train ``config.method`` on ``table``'s training questions; evaluate on train and test. Returns the run record.

    Args:
        features: ``(n_questions, d) float32`` question features in table row order; built with
            ``config.featurizer`` from ``table.questions`` when ``None``.
        progress: show a tqdm progress bar.
        oracle: GRPO's reward oracle (``(rows, subsets) -> rewards``, counting ``calls``/``unique_calls``); default
            a :class:`~fgpo_lib.oracle.TableOracle` on ``table``. Evaluation metrics always read ``table``.
        splits: ``{"train", "test"[, "dev"]}`` row indices overriding the table's split (module doc).
        eval_oracle: on-demand evaluation, for a library too large to tabulate: an oracle like ``oracle`` (its own
            call counts) that gives the raw score of the greedy subsets. ``table`` then need hold no rewards (an
            :class:`~fgpo_lib.ondemand.OnDemandTable`), the method must sample through ``oracle`` (GRPO or one of
            :data:`~fgpo_lib.train_config.SAMPLING_METHODS`), and each evaluation point has only the test questions' ``greedy_reward`` and
            ``greedy_size``.
        keep: a dict this call fills with the trained policy, for a :class:`~fgpo_lib.selector.Selector`:
            ``"policy"`` (the :class:`~fgpo_lib.policy.SubsetPolicy`, holding the dev-selected checkpoint's weights
            where there is a dev split, else the final ones: the policy whose choices the record reports) and
            ``"checkpoint"`` (``"selected"`` or ``"final"``).
    """
    cfg = config
    if eval_oracle is not None and (oracle is None or cfg.method not in SAMPLING_METHODS):
        raise ValueError(f"on-demand evaluation needs a sampling method and its training oracle; got method {cfg.method!r}")
    if splits is None:
        train_rows, test_rows, dev_rows = table.split_index("train"), table.split_index("test"), np.array([], np.int64)
    else:
        train_rows, test_rows = np.asarray(splits["train"], np.int64), np.asarray(splits["test"], np.int64)
        dev_rows = np.asarray(splits.get("dev", []), np.int64)
    if len(train_rows) == 0:
        raise ValueError("the table has no training questions")
    torch.manual_seed(cfg.seed)
    generator = torch.Generator().manual_seed(cfg.seed)
    if features is None:
        features = make_featurizer(cfg.featurizer)(table.questions)
    features = np.asarray(features, dtype=np.float32)
    if features.shape[0] != table.n_questions:
        raise ValueError(f"features have {features.shape[0]} rows for {table.n_questions} questions")
    x = torch.from_numpy(features)
    family = REGISTRY[cfg.method].family
    if family == "reference" and cfg.hidden:
        raise ValueError(f"method {cfg.method!r} fits a linear head: hidden must be 0, got {cfg.hidden}")
    policy = SubsetPolicy(x.shape[1], table.space, "flat" if family == "reference" else cfg.parameterization, cfg.hidden, prior_probs(table.space, cfg.prior))
    ref_policy = copy.deepcopy(policy).requires_grad_(False)

    steps = cfg.steps
    reward = RewardSpec.parse(cfg.reward)
    algo = None
    if family == "baseline":
        steps = 0
        evaluations = {"reasoner_calls": 0 if REGISTRY[cfg.method].reads == "nothing" else table.n_questions * table.n_subsets}
        evaluations["unique_reasoner_calls"] = evaluations["reasoner_calls"]
    else:
        reads_table = cfg.method not in SAMPLING_METHODS  # an on-demand table has no rewards to read
        setup = Setup(cfg, settings_of(cfg), table, torch.from_numpy(reward.apply(table.rewards, table.space)) if reads_table else None,
                      reward, ref_policy, len(train_rows), lambda: RewardOracle(oracle if oracle is not None else TableOracle(table), reward, table.space))
        algo = make_optimizer(cfg.method, setup)
        if family == "reference":  # fitted once, before the first evaluation point; no updates
            algo.fit(policy, x, torch.from_numpy(train_rows))
            steps = 0
    optimizer = torch.optim.Adam(policy.parameters(), lr=cfg.lr)

    def current_probs() -> np.ndarray:
        if family == "baseline":
            return BASELINES[cfg.method](table.rewards)
        with torch.no_grad():
            return torch.softmax(policy(x).double(), dim=-1).numpy()

    batch = len(train_rows) if cfg.batch_questions <= 0 else min(cfg.batch_questions, len(train_rows))
    train_rows_t = torch.from_numpy(train_rows)
    order, cursor = train_rows_t, len(train_rows_t)  # first minibatch triggers a seeded shuffle
    curves, optimizer_steps, zero_var = [], 0, []
    selected, selected_probs = None, None
    classes = reward_classes(table.rewards) if eval_oracle is None else None  # sorted once for every evaluation point
    metrics = (lambda probs, rows, step, salt: _metrics(probs, table, rows, cfg, step, salt, classes)) if eval_oracle is None else (lambda probs, rows, step, salt: _greedy_metrics(probs, table, rows, eval_oracle))
    for step in tqdm(range(steps + 1), desc=f"{cfg.method} seed {cfg.seed}", disable=not progress):
        if step % max(cfg.eval_every, 1) == 0 or step == steps:
            probs = current_probs()
            evals = algo.evaluations if algo is not None else evaluations
            point = {
                "step": step,
                "optimizer_steps": optimizer_steps,
                **evals,
                "group_zero_variance": float(np.mean(zero_var)) if zero_var else None,
                "train": metrics(probs, train_rows, step, 0) if eval_oracle is None else None,  # on demand: test only
                "test": metrics(probs, test_rows, step, 1) if len(test_rows) else None,
            }
            if len(dev_rows):
                point["dev"] = metrics(probs, dev_rows, step, 2)
                if (step > 0 or steps == 0) and (selected is None or point["dev"]["greedy_reward"] > selected["dev"]["greedy_reward"]):
                    selected, selected_probs = point, probs
                    if keep is not None:
                        selected_state = copy.deepcopy(policy.state_dict())
            curves.append(point)
            zero_var = []
        if step == steps:
            break
        if batch == len(train_rows):
            rows = train_rows_t
        else:
            if cursor + batch > len(order):
                order, cursor = train_rows_t[torch.randperm(len(train_rows_t), generator=generator)], 0
            rows, cursor = order[cursor : cursor + batch], cursor + batch
        info = algo.update(policy, optimizer, x, rows, generator)
        optimizer_steps += info["optimizer_steps"]
        if "group_zero_variance" in info:
            zero_var.append(info["group_zero_variance"])

    probs = current_probs()
    last = curves[-1]
    if keep is not None:
        if selected is not None:
            policy.load_state_dict(selected_state)
        keep.update(policy=policy, checkpoint="final" if selected is None else "selected")
    return {
        "fgpo_version": __version__,
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "config": asdict(cfg),
        "table": {
            "content_hash": table.content_hash(),
            "n_questions": table.n_questions,
            "n_train": len(train_rows),
            "n_test": len(test_rows),
            "n_subsets": table.n_subsets,
            "tools": list(table.tool_names),
            "provenance": table.provenance,
        },
        "curves": curves,
        "final": {
            "train": last["train"],
            "test": last["test"],
            "reasoner_calls": last["reasoner_calls"],
            "unique_reasoner_calls": last["unique_reasoner_calls"],
            "optimizer_steps": optimizer_steps,
        },
        "per_question": {name: _per_question(probs, table, rows, keep_probs=splits is not None and name == "test", eval_oracle=eval_oracle) for name, rows in (("train", train_rows), ("test", test_rows)) if len(rows) and (eval_oracle is None or name == "test")},
        "subset_probs": {name: probs[rows].mean(axis=0).tolist() for name, rows in (("train", train_rows), ("test", test_rows)) if len(rows)},
        "selected": None
        if selected is None
        else {
            "step": selected["step"],
            **{k: selected[k] for k in ("train", "dev", "test", "reasoner_calls", "unique_reasoner_calls")},
            "per_question": {"test": _per_question(selected_probs, table, test_rows, keep_probs=True, eval_oracle=eval_oracle)} if len(test_rows) else {},
        },
    }
