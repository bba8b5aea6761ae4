"""Which questions a table holds, and in what order they are computed: a task-stratified sample, and an order in
which every prefix is one (so a run stopped anywhere has computed a stratified sample, and a larger sample extends a
smaller one)."""

from __future__ import annotations

import hashlib
import math

from ..splits import Question


def _rank_in_task(questions: list[Question], seed: int) -> dict[str, int]:
    """Each question's rank within its task, by a seeded hash of its id."""
    rank = {}
    for t in dict.fromkeys(q.task for q in questions):
        tq = sorted((q for q in questions if q.task == t), key=lambda q: hashlib.sha256(f"{seed}:{q.qid}".encode()).hexdigest())
        rank.update({q.qid: i for i, q in enumerate(tq)})
    return rank


def sample_order(questions: list[Question], seed: int = 0) -> list[Question]:
    """``questions`` interleaved by task in sample order: the first ``k * n_tasks`` are exactly
    ``sample_questions(questions, k * n_tasks, seed)`` (for tasks with at least ``k`` questions), so a run stopped
    anywhere has computed a task-stratified sample, and a larger sample extends a smaller one."""
    rank = _rank_in_task(questions, seed)
    tasks = {t: i for i, t in enumerate(dict.fromkeys(q.task for q in questions))}
    return sorted(questions, key=lambda q: (rank[q.qid], tasks[q.task]))


def sample_questions(questions: list[Question], n: int | None, seed: int = 0) -> list[Question]:
    """``n`` questions stratified by task (an equal share per task, by a seeded hash order); all if ``n`` is None."""
    if n is None or n >= len(questions):
        return list(questions)
    per_task = math.ceil(n / len({q.task for q in questions}))
    rank = _rank_in_task(questions, seed)
    return [q for q in questions if rank[q.qid] < per_task]
