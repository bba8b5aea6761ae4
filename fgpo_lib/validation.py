"""Range checks for numeric settings, shared by the configs (a Python caller's error) and the command line's flags.

A config dataclass lists its ranges in a class attribute ``RANGES = {field: (lo, hi)}`` (``None``: unbounded) and
calls :func:`check_ranges` in ``__post_init__``; the command line builds its flags from those fields, so a bad flag
and a bad argument in Python give the same message. Flags outside any config use the ``argparse`` types below.
"""

from __future__ import annotations

import argparse
import math
from numbers import Real


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


def int_list(text: str) -> list[int]:
    """argparse type: a comma-separated list of integers >= 0, at least one."""
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of integers >= 0, got {text!r}")
    return [nonneg_int(t) for t in items]
