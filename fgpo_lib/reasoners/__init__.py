"""Frozen reasoners: :class:`Reasoner` and the built-in ones, by name (:func:`make_reasoner`)."""

from __future__ import annotations

from .base import PromptTemplate, Reasoner, ReasonerError, answer_kind
from .readers import READERS

#: name -> (module, class) of every built-in reasoner; generative ones are imported only when asked for.
BUILTIN = {
    "bm25": ("fgpo_lib.reasoners.readers", "BM25Reader"),
    "minilm": ("fgpo_lib.reasoners.readers", "MiniLMReader"),
    "records": ("fgpo_lib.reasoners.readers", "RecordsReader"),
}


def make_reasoner(name: str, **kwargs) -> Reasoner:
    """A built-in reasoner by name, e.g. ``make_reasoner("bm25")``."""
    if name not in BUILTIN:
        raise ValueError(f"unknown reasoner {name!r}; built-in: {', '.join(sorted(BUILTIN))}")
    import importlib

    module, cls = BUILTIN[name]
    return getattr(importlib.import_module(module), cls)(**kwargs)


__all__ = ["BUILTIN", "READERS", "PromptTemplate", "Reasoner", "ReasonerError", "answer_kind", "make_reasoner"]
