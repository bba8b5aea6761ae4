"""Tools w/ Desc for the readers: a training-free selector that sees only the question and the tools' descriptions.

The paper's "Tools w/ Desc" baseline shows the reasoner each tool's name and one-line description and lets it choose.
A reader cannot choose, so for the reader settings the choice is made by MiniLM (the ``minilm`` reader's own encoder):
each tool is embedded as ``"<name>: <description>"``, each question as its text, and the selector calls

* the tool whose description is most similar to the question (cosine), and
* every other tool within :data:`MARGIN` of that similarity,

at most ``max_size`` tools (the table's size cap). Nothing is fitted, and nothing is read from any reward table: the
rule and its margin were fixed before it was run on a table. The LLM settings use the LLM's own selection call
instead (:mod:`fgpo_lib.reasoners.selection`, precomputed into a table's extras).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .tools_extra import all_tool_classes

#: cosine similarity within which a tool is called along with the most similar one
MARGIN = 0.05


def tool_descriptions(tools) -> list[str]:
    """``"<name>: <description>"`` of each tool named in ``tools``, in that order; any tool of any library."""
    by_name = {c.name: c.description for c in all_tool_classes()}
    unknown = [t for t in tools if t not in by_name]
    if unknown:
        raise ValueError(f"unknown tools {unknown}; the tools are {', '.join(by_name)}")
    return [f"{t.replace('_', ' ')}: {by_name[t]}" for t in tools]


def select_by_similarity(similarity: np.ndarray, max_size: int, margin: float = MARGIN) -> list[tuple[int, ...]]:
    """``similarity: (n_questions, n_tools)`` cosine similarities -> per question, the tool indices called (module
    doc), most similar first, at most ``max_size``."""
    if max_size < 1:
        raise ValueError(f"max_size must be >= 1, got {max_size}")
    out = []
    for row in np.asarray(similarity, np.float64):
        order = np.argsort(-row, kind="stable")
        keep = [int(i) for i in order if row[i] >= row[order[0]] - margin]
        out.append(tuple(keep[:max_size]))
    return out


@lru_cache(maxsize=1)
def _minilm():
    from ..weights import minilm_model

    return minilm_model()


def minilm_selection(questions: list[str], tools, max_size: int, model=None) -> list[tuple[str, ...]]:
    """Per question, the tool names MiniLM's description selector calls (module doc), in ``tools``' order."""
    model = model or _minilm()
    tools = list(tools)
    q = model.encode(list(questions), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    d = model.encode(tool_descriptions(tools), normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    picks = select_by_similarity(q @ d.T, max_size)
    return [tuple(t for i, t in enumerate(tools) if i in p) for p in map(set, picks)]
