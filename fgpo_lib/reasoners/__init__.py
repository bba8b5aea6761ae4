"""Frozen reasoners: :class:`Reasoner` and the built-in ones, by name (:func:`make_reasoner`)."""

from __future__ import annotations

from .base import PromptTemplate, Reasoner, ReasonerError, answer_kind
from .readers import READERS

#: name -> (module, class) of every built-in reasoner; generative ones are imported only when asked for.
BUILTIN = {
    "bm25": ("fgpo_lib.reasoners.readers", "BM25Reader"),
    "minilm": ("fgpo_lib.reasoners.readers", "MiniLMReader"),
    "records": ("fgpo_lib.reasoners.readers", "RecordsReader"),
    "smollm2-135m": ("fgpo_lib.reasoners.llm", "LlamaCppReasoner"),
    "gemma3-270m": ("fgpo_lib.reasoners.llm", "LlamaCppReasoner"),
    "qwen2.5-coder-0.5b": ("fgpo_lib.reasoners.llm", "LlamaCppReasoner"),
    "qwen2.5-coder-1.5b": ("fgpo_lib.reasoners.llm", "LlamaCppReasoner"),
    "openai-http": ("fgpo_lib.reasoners.http", "OpenAIHTTPReasoner"),
}


def make_reasoner(name: str, **kwargs) -> Reasoner:
    """A built-in reasoner by name, e.g. ``make_reasoner("bm25")``."""
    if name not in BUILTIN:
        raise ValueError(f"unknown reasoner {name!r}; built-in: {', '.join(sorted(BUILTIN))}")
    import importlib

    module, cls = BUILTIN[name]
    if cls == "LlamaCppReasoner":
        kwargs = {"model": name, **kwargs}
    return getattr(importlib.import_module(module), cls)(**kwargs)


__all__ = ["BUILTIN", "READERS", "PromptTemplate", "Reasoner", "ReasonerError", "answer_kind", "make_reasoner"]
