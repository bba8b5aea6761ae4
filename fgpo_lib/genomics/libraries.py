"""Tool libraries: the full 8-tool library and each benchmark's 4-tool library (the paper's n = 4, 16 subsets).

The rule, fixed before any LLM cell was computed
------------------------------------------------
For each benchmark, score every question with the ``records`` reader (a parser, no LLM) under every subset of at
most 4 of the 8 tools. Among the 70 four-tool sub-libraries, take the one that **reaches the most questions**: a
question is reached when some subset of the library earns it a nonzero records score. Ties go to the higher mean of
the per-question best score inside the library (the library's oracle), then to the earlier library in canonical
tool order. :func:`choose_library` applies the rule to any table; each benchmark's registry entry
(:data:`~fgpo_lib.genomics.benchmarks.BENCHMARKS`) holds its result, and ``tests/test_ladder.py`` re-derives it.

A library keeps the canonical tool order (:data:`~fgpo_lib.genomics.tools.TOOL_ORDER`), so a subset of a 4-tool
library runs the same tools in the same order, and gives an LLM the same prompt, as the same subset of the 8-tool
library. A 4-tool table is therefore an exact sub-table of the 163-subset table on the questions both cover.
"""

from __future__ import annotations

import itertools

import numpy as np

from ..subsets import SubsetSpace
from ..table import RewardTable
from .benchmarks import BENCHMARKS
from .tool_order import ALL_TOOL_ORDER, library_tools  # noqa: F401  (part of this module's interface)
from .tools import TOOL_ORDER
from .tools_extra import EXTRA_TOOL_ORDER

#: benchmark -> its 4-tool library, in canonical tool order (the rule above, applied to the records reader's tables)
LIBRARIES: dict[str, tuple[str, ...]] = {name: b.library4 for name, b in BENCHMARKS.items()}
#: the scaling chapter's libraries by size: the 8 tools, plus the first 4, 8 or 12 of the extra tools
LARGE_LIBRARIES: dict[int, tuple[str, ...]] = {n: TOOL_ORDER + EXTRA_TOOL_ORDER[: n - len(TOOL_ORDER)] for n in (8, 12, 16, 20)}


def sub_table(table: RewardTable, tools) -> RewardTable:
    """The columns of ``table`` whose subsets use only ``tools``: a table over the library's own subset space.

    ``rewards: (n_questions, n_subsets of the library)``; provenance gains ``library``. The extras (the All-Tools
    cell and the selection call) belong to the parent library and are left out.
    """
    tools = tuple(t for t in table.tool_names if t in set(tools))
    space = SubsetSpace(len(tools), min(table.space.max_size, len(tools)), table.space.min_size, tools)
    cols = [table.space.index_of(space.names_of(s)) for s in range(space.n_subsets)]
    return RewardTable(
        rewards=table.rewards[:, cols],
        question_ids=table.question_ids,
        space=space,
        questions=table.questions,
        tasks=table.tasks,
        split=table.split,
        reward_range=table.reward_range,
        provenance={**table.provenance, "library": list(tools)},
        answers=None if table.answers is None else table.answers[:, cols],
        seconds=None if table.seconds is None else table.seconds[:, cols],
    )


def choose_library(table: RewardTable, size: int = 4) -> tuple[str, ...]:
    """The rule of the module doc on ``table`` (normally the records reader's): the ``size``-tool library reaching
    the most questions, ties broken by its mean per-question best reward, then by canonical order."""
    best_key, best = None, None
    for combo in itertools.combinations(table.tool_names, size):
        sub = sub_table(table, combo).rewards  # (n_questions, n_subsets of the library)
        best_per_q = sub.max(axis=1)
        key = (int((best_per_q > 0).sum()), float(np.mean(best_per_q)))
        if best_key is None or key > best_key:  # strict: the earlier library wins a full tie
            best_key, best = key, combo
    return tuple(best)
