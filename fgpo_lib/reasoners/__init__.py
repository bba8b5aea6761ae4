"""Frozen reasoners: :class:`Reasoner`, the registry of built-in ones (:data:`REASONERS`), :func:`make_reasoner`."""

from __future__ import annotations

import importlib

from .base import PromptTemplate, Reasoner, ReasonerError, answer_kind
from .registry import REASONERS, ReasonerEntry


def make_reasoner(name: str, **kwargs) -> Reasoner:
    """A built-in reasoner by name (a key of :data:`REASONERS`), e.g. ``make_reasoner("bm25")``."""
    if name not in REASONERS:
        raise ValueError(f"unknown reasoner {name!r}; built-in: {', '.join(REASONERS)}")
    entry = REASONERS[name]
    module, cls = entry.target.split(":")
    if entry.kind == "llm":
        kwargs = {"model": name, **kwargs}
    return getattr(importlib.import_module(module), cls)(**{**entry.kwargs, **kwargs})


__all__ = ["REASONERS", "PromptTemplate", "Reasoner", "ReasonerEntry", "ReasonerError", "answer_kind", "make_reasoner"]
