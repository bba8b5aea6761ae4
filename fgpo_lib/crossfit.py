"""K-fold cross-fitting over questions: every question is tested exactly once per seed, by a policy that never saw it.

Questions are dealt to ``k`` folds within each task (stratified), in an order fixed by a seeded hash of their ids, so
fold ``f`` holds about ``1/k`` of every task. For fold ``f``: its questions are the **test** split; of the other
folds' questions, a task-stratified ``dev_fraction`` is the **dev** split (checkpoint and learning-rate selection),
and the rest is **train**. Splits are arrays of row indices into the table, ``(n,) int64``, sorted.

How it departs from the paper: the paper has one fixed train/dev/test split of thousands of questions; ours has
hundreds, so a fixed split would leave a test set too small to see a 3-point difference. Cross-fitting tests every
question once per seed at the cost of ``k`` trainings.
"""

from __future__ import annotations

import hashlib

import numpy as np


def _hash_order(ids: list[str], seed: int) -> list[int]:
    return sorted(range(len(ids)), key=lambda i: hashlib.sha256(f"{seed}:{ids[i]}".encode()).hexdigest())


def crossfit_folds(question_ids: list[str], tasks: list[str] | None, k: int = 5, seed: int = 0, dev_fraction: float = 0.2) -> list[dict[str, np.ndarray]]:
    """``k`` dicts ``{"train", "dev", "test"}`` of row indices (module doc). The test splits partition the rows."""
    n = len(question_ids)
    if not 2 <= k <= n:
        raise ValueError(f"k must be between 2 and the number of questions ({n}), got {k}")
    if not 0 <= dev_fraction < 1:
        raise ValueError(f"dev_fraction must be in [0, 1), got {dev_fraction}")
    tasks = list(tasks) if tasks is not None else [""] * n
    fold = np.empty(n, dtype=np.int64)
    by_task: dict[str, list[int]] = {}
    for i, t in enumerate(tasks):
        by_task.setdefault(t, []).append(i)
    offset = 0
    for rows in by_task.values():  # deal each task's questions round-robin, continuing where the last task ended
        for j, pos in enumerate(_hash_order([question_ids[r] for r in rows], seed)):
            fold[rows[pos]] = (offset + j) % k
        offset += len(rows)
    out = []
    for f in range(k):
        rest = np.flatnonzero(fold != f)
        dev = []
        for t in by_task:
            rows = [r for r in rest if tasks[r] == t]
            ordered = [rows[p] for p in _hash_order([question_ids[r] for r in rows], seed + 1)]
            dev += ordered[: int(round(dev_fraction * len(rows)))]
        dev = np.array(sorted(dev), dtype=np.int64)
        out.append({"train": np.setdiff1d(rest, dev), "dev": dev, "test": np.flatnonzero(fold == f)})
    return out


def subsample_training(folds: list[dict[str, np.ndarray]], fraction: float, tasks: list[str] | None, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """``folds`` with each training split cut to ``fraction`` of its rows (the paper's data-scale study): within each
    task, a seeded draw of ``ceil(fraction x rows)`` (at least one per task), rows kept in order; dev and test
    unchanged, so every fraction is tested on the same questions."""
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    if fraction == 1:
        return folds
    out = []
    for i, fold in enumerate(folds):
        train = np.asarray(fold["train"])
        labels = np.array(["" if tasks is None else tasks[r] for r in train])
        rng = np.random.default_rng([seed, i])
        keep = np.concatenate([rng.choice(train[labels == t], int(np.ceil(fraction * (labels == t).sum())), replace=False) for t in sorted(set(labels))])
        out.append({**fold, "train": np.sort(keep)})
    return out
