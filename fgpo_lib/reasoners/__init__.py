"""Frozen reasoners: :class:`Reasoner`, the registry of built-in ones (:data:`REASONERS`), :func:`make_reasoner`."""

from __future__ import annotations

import importlib
import inspect

from .base import PromptTemplate, Reasoner, ReasonerError, answer_kind
from .registry import REASONERS, ReasonerEntry


#: JSON values a constructor annotation admits, by the annotation's names (``str | Path | None`` -> str or null)
_JSON_KINDS = {"str": (str,), "Path": (str,), "int": (int,), "float": (int, float), "bool": (bool,), "None": (type(None),), "dict": (dict,), "list": (list,)}


def reasoner_class(name: str) -> type:
    """The class behind a built-in reasoner (imported only now)."""
    if name not in REASONERS:
        raise ValueError(f"unknown reasoner {name!r}; built-in: {', '.join(REASONERS)}, or a Python function of yours as module:function")
    module, cls = REASONERS[name].target.split(":")
    return getattr(importlib.import_module(module), cls)


def is_callable_reasoner(name: str) -> bool:
    """Whether ``name`` is a user's function (``module:function``) rather than a built-in reasoner."""
    return name not in REASONERS and ":" in str(name)


def check_reasoner_kwargs(name: str, kwargs: dict) -> None:
    """Raise ``ValueError`` naming the setting unless ``kwargs`` fit reasoner ``name``'s constructor: every key a
    parameter, every required parameter given, every value of a JSON kind its annotation admits. The message lists
    the accepted settings with their defaults. A user's function takes no settings."""
    if not isinstance(kwargs, dict):
        raise ValueError(f"reasoner {name!r}: its settings must be a JSON object, got {type(kwargs).__name__} {kwargs!r}")
    if is_callable_reasoner(name):
        if kwargs:
            raise ValueError(f"reasoner {name!r} is a Python function and takes no settings, got {sorted(kwargs)}")
        return
    entry = REASONERS.get(name) or reasoner_class(name)
    fixed = {"model"} if entry.kind == "llm" else set()  # the registry sets it
    params = {p.name: p for p in list(inspect.signature(reasoner_class(name).__init__).parameters.values())[1:]
              if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in fixed}
    accepted = ", ".join(p.name + ("" if p.default is p.empty else f"={p.default!r}") + f" ({p.annotation})" for p in params.values()) or "no settings"
    for key in kwargs:
        if key not in params:
            raise ValueError(f"reasoner {name!r} has no setting {key!r}; it accepts: {accepted}")
    for p in params.values():
        if p.default is p.empty and p.name not in {**entry.kwargs, **kwargs}:
            raise ValueError(f"reasoner {name!r} needs the setting {p.name!r} (for example --reasoner-kwargs '{{\"{p.name}\": ...}}'); it accepts: {accepted}")
        if p.name in kwargs and isinstance(p.annotation, str):
            kinds = tuple(k for part in p.annotation.split("|") for k in _JSON_KINDS.get(part.strip(), (object,)))
            value = kwargs[p.name]
            if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
                raise ValueError(f"reasoner {name!r}: setting {p.name!r} must be {p.annotation}, got {value!r}; it accepts: {accepted}")


def make_reasoner(name: str, **kwargs) -> Reasoner:
    """A built-in reasoner by name (a key of :data:`REASONERS`), e.g. ``make_reasoner("bm25")``; ``kwargs`` are
    checked by :func:`check_reasoner_kwargs` first."""
    check_reasoner_kwargs(name, kwargs)
    if is_callable_reasoner(name):
        from .callable import CallableReasoner

        return CallableReasoner(name)
    entry = REASONERS[name]
    if entry.kind == "llm":
        kwargs = {"model": name, **kwargs}
    return reasoner_class(name)(**{**entry.kwargs, **kwargs})


__all__ = ["REASONERS", "check_reasoner_kwargs", "is_callable_reasoner", "PromptTemplate", "Reasoner", "ReasonerEntry", "ReasonerError", "answer_kind", "make_reasoner"]
