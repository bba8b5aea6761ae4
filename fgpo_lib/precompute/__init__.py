"""The reward-table precomputation engine: every (question, subset) cell evaluated once by a frozen reasoner.

* :mod:`.cells`: :class:`PrecomputeSpec` (what to compute) and the evaluation of a question's subsets, run in workers;
* :mod:`.cache`: :class:`CellCache`, the SQLite file every cell lives in once;
* :mod:`.sampling`: the task-stratified sample and the order every prefix of which is one;
* :mod:`.engine`: :class:`PrecomputeEngine` (fill the cache, seed it from tables, build tables) and
  :class:`EngineOracle` (cells on demand, for GRPO);
* :mod:`.holdings`: the no-loss guard (what a table file holds, and which table it is);
* :mod:`.command`: ``fgpo precompute``.

A benchmark is read only through its entry (:func:`fgpo_lib.agent.resolve_benchmark`), built in or a user's, so the
same engine computes a user's own agent's table.
"""

from ..errors import PrecomputeError
from .cache import DEFAULT_CACHE, CellCache
from .cells import PrecomputeSpec, evaluate_question, selection_menu, subset_prompts
from .engine import EngineOracle, PrecomputeEngine
from .holdings import PARTIAL_EXTRA, identity_changes, lost_holdings, table_holdings
from .sampling import sample_order, sample_questions

__all__ = ["DEFAULT_CACHE", "CellCache", "EngineOracle", "PARTIAL_EXTRA", "PrecomputeEngine", "PrecomputeError", "PrecomputeSpec", "evaluate_question",
           "identity_changes", "lost_holdings", "sample_order", "sample_questions", "selection_menu", "subset_prompts", "table_holdings"]
