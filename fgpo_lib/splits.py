"""Questions and their train/test split: the one :class:`Question` record every benchmark gives (built-in or a
user's, :mod:`fgpo_lib.agent`), and the deterministic, task-stratified split (:func:`stratified_split`). Light on
purpose (NumPy only): the command line imports it before anything heavy."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Sequence

import numpy as np


@dataclass(frozen=True)
class Question:
    """One question of a benchmark: its id, the benchmark's name, its task, its text, its gold answer and its split."""

    qid: str
    benchmark: str
    task: str
    text: str
    answer: str | tuple[str, ...]
    split: str = "train"


def stratified_split(question_ids: Sequence[str], tasks: Sequence[str] | None, test_fraction: float = 0.3, seed: int = 0) -> np.ndarray:
    """Deterministic train/test split, stratified by task: ``(n_questions,)`` array of ``'train'``/``'test'``.

    Within each task, questions are ordered by a seeded hash of their id, and the first
    ``round(test_fraction * n_task)`` go to test. The split of a question does not depend on row order.
    """
    if not 0.0 <= test_fraction < 1.0:
        raise ValueError(f"test_fraction must be in [0, 1), got {test_fraction}")
    tasks = list(tasks) if tasks is not None else [""] * len(question_ids)
    split = np.full(len(question_ids), "train", dtype=object)
    by_task: dict[str, list[int]] = {}
    for i, t in enumerate(tasks):
        by_task.setdefault(t, []).append(i)
    for idx in by_task.values():
        key = lambda i: hashlib.sha256(f"{seed}:{question_ids[i]}".encode()).hexdigest()  # noqa: E731
        ordered = sorted(idx, key=key)
        for i in ordered[: int(round(test_fraction * len(ordered)))]:
            split[i] = "test"
    return split.astype(str)
