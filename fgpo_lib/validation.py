"""Range checks for numeric settings, shared by the configs (a Python caller's error) and the command line's flags.

A config dataclass lists its ranges in a class attribute ``RANGES = {field: (lo, hi)}`` (``None``: unbounded) and
calls :func:`check_ranges` in ``__post_init__``; the command line builds its flags from those fields, so a bad flag
and a bad argument in Python give the same message. Flags outside any config use the ``argparse`` types below.
"""

from __future__ import annotations

import argparse
import math
import os
from numbers import Real


#: documented upper bounds of counts, checked before anything is allocated (a typo such as --steps 10000000000000
#: would otherwise end in a memory error or an overflow deep inside numpy, torch or tqdm)
MAX_SEED = 2**32 - 1
MAX_STEPS = 1_000_000
MAX_GROUP = 4096
MAX_HIDDEN = 65_536
MAX_QUESTIONS = 10_000_000


def check_range(name: str, value, lo: float | None = None, hi: float | None = None) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is a finite number in ``[lo, hi]``."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if lo is not None and value < lo:
        raise ValueError(f"{name} must be >= {lo}, got {value!r}")
    if hi is not None and value > hi:
        raise ValueError(f"{name} must be <= {hi}, got {value!r}")


def check_ranges(obj) -> None:
    """:func:`check_range` for every field named in ``type(obj).RANGES``; messages name the field as the command
    line does, with the class's ``FLAG_PREFIX`` if it has one (``dpo_beta``, not GRPO's ``beta``)."""
    prefix = getattr(type(obj), "FLAG_PREFIX", "")
    for name, (lo, hi) in type(obj).RANGES.items():
        check_range(prefix + name, getattr(obj, name), lo, hi)


def check_choice(name: str, value, choices) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is one of ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(str, choices))}, got {value!r}")


def check_int_fields(obj, names) -> None:
    """Raise ``ValueError`` naming the field unless each of ``names`` holds a whole number (``10.5`` and ``True`` are not)."""
    for name in names:
        value = getattr(obj, name)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{name} must be a whole number, got {value!r}")


def check_bool_fields(obj, names) -> None:
    """Raise ``ValueError`` naming the field unless each of ``names`` holds ``True`` or ``False``."""
    for name in names:
        if not isinstance(getattr(obj, name), bool):
            raise ValueError(f"{name} must be true or false, got {getattr(obj, name)!r}")


class Ranged:
    """Base of a config dataclass whose numeric fields have ranges: ``RANGES = {field: (lo, hi)}`` is checked after
    ``__init__`` (a subclass that checks more calls ``super().__post_init__()``)."""

    RANGES: dict = {}

    def __post_init__(self) -> None:
        check_ranges(self)


def _ranged(kind, lo: float | None, hi: float | None = None, what: str = ""):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what or kind.__name__}, got {text!r}") from None
        try:
            check_range("value", value, lo, hi)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc).replace("value ", "")) from None
        return value

    parse.__name__ = what or kind.__name__
    return parse


#: argparse types
positive_int = _ranged(int, 1, what="an integer >= 1")
positive_float = _ranged(float, 1e-12, what="a number > 0")
nonneg_int = _ranged(int, 0, what="an integer >= 0")
nonneg_float = _ranged(float, 0, what="a number >= 0")
seed_int = _ranged(int, 0, MAX_SEED, what=f"a seed, an integer from 0 to {MAX_SEED}")
question_count = _ranged(int, 1, MAX_QUESTIONS, what=f"a number of questions from 1 to {MAX_QUESTIONS:,}")
accuracy_fraction = _ranged(float, 0, 1, what="an accuracy from 0 to 1")


def int_list(text: str) -> list[int]:
    """argparse type: a comma-separated list of distinct seeds (integers from 0 to ``MAX_SEED``), at least one."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of integers >= 0, got {text!r}")
    values = [seed_int(t) for t in items]
    dup = next((v for i, v in enumerate(values) if v in values[:i]), None)
    if dup is not None:
        raise argparse.ArgumentTypeError(f"seed {dup} appears twice in {text!r}; each seed counts once")
    return values


def workers_count(text: str) -> int:
    """argparse type: local worker processes, 1 to the machine's CPU count (each runs a whole reasoner; more only
    contend for the same cores, and thousands of forks exhaust a process limit)."""
    n = positive_int(text)
    cpus = os.cpu_count() or 1
    if n > cpus:
        raise argparse.ArgumentTypeError(f"at most {cpus} local processes on this machine (its CPU count), got {n}")
    return n


def plain(text: str) -> str:
    """Docstring text as ``--help`` shows it: Sphinx roles become their target's last name (``:class:`a.b.C``` ->
    ``C``), double backticks go, and "(module doc)" pointers are dropped."""
    import re

    text = re.sub(r":\w+:`~?([^`<]*?)(?:\s*<[^>]*>)?`", lambda m: m.group(1).rsplit(".", 1)[-1], text)
    text = text.replace("``", "").replace("`", "")
    text = re.sub(r"\s*\((?:see )?(?:the )?module doc\)", "", text)
    return " ".join(text.split())


def field_docs(cls) -> dict[str, str]:
    """The docstring under each field of a dataclass (a string literal right after its annotation), read from its
    source with :mod:`ast`, in plain text (:func:`plain`): the command line's ``--help`` of a config field is its
    docstring, written once."""
    import ast
    import inspect
    import textwrap

    body = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0].body
    docs = {}
    for node, after in zip(body, body[1:]):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str):
            docs[node.target.id] = plain(after.value.value)
    return docs
