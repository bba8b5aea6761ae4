"""What a selector chooses for a question, and why: the rule with a tools budget and a fallback, and its explanation.

The probability a selector gives a subset is its **policy's** probability ``pi(S | question)``, how strongly the
trained policy prefers ``S`` over the other subsets; it is *not* the chance that the reasoner answers correctly with
``S``. A reference selector (method ``reference``) also predicts each subset's reward, its estimate of that chance.

The rule, per question (:func:`choose`), with ``probs: (n_subsets,)`` in the selector's canonical subset order:

1. ``max_tools = B``: only subsets of at most ``B`` tools may be chosen (the others are not renormalised away: the
   probabilities shown stay the policy's);
2. the chosen subset is the most probable of those;
3. ``threshold = t``: if its probability is below ``t``, the ``fallback`` subset is chosen instead (default: the largest
   allowed subset, All-Tools when no budget binds), so that an unsure selector calls more tools rather than guessing.

``fgpo calibrate`` picks ``t`` on held-out questions for a target average of tools or a target accuracy
(:mod:`fgpo_lib.calibrate`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np


@dataclass(frozen=True)
class Rule:
    """How a subset is chosen from a question's probabilities (module doc)."""

    max_tools: int | None = None
    """At most this many tools (None: no budget)."""
    threshold: float = 0.0
    """Below this top probability the fallback is chosen (0: never)."""
    fallback: tuple[str, ...] | None = None
    """The fallback subset's tool names (None: the largest allowed subset)."""

    def __post_init__(self) -> None:
        if self.max_tools is not None and (isinstance(self.max_tools, bool) or not isinstance(self.max_tools, (int, np.integer)) or self.max_tools < 0):
            raise ValueError(f"max_tools must be a whole number >= 0, got {self.max_tools!r}")
        if not isinstance(self.threshold, (int, float)) or isinstance(self.threshold, bool) or not 0 <= self.threshold <= 1:
            raise ValueError(f"threshold must be a probability from 0 to 1, got {self.threshold!r}")


def allowed(space, rule: Rule) -> np.ndarray:
    """``(n_subsets,) bool``: the subsets the rule's budget allows; none allowed is a ``ValueError``."""
    ok = np.ones(space.n_subsets, bool) if rule.max_tools is None else np.asarray(space.sizes) <= rule.max_tools
    if not ok.any():
        raise ValueError(f"max_tools {rule.max_tools}: no subset of the selector's space has so few tools (the smallest has {int(np.min(space.sizes))})")
    return ok


def fallback_index(space, rule: Rule) -> int:
    """The fallback subset's index: the rule's, checked against the budget, or the largest allowed subset."""
    ok = allowed(space, rule)
    if rule.fallback is None:
        sizes = np.where(ok, np.asarray(space.sizes), -1)
        return int(np.argmax(sizes))
    try:
        index = space.index_of(list(rule.fallback))
    except KeyError as exc:
        raise ValueError(f"fallback {list(rule.fallback)}: {exc.args[0]}") from None
    if not ok[index]:
        raise ValueError(f"fallback {list(rule.fallback)} has {len(rule.fallback)} tools, more than max_tools {rule.max_tools}")
    return index


def choose(probs: np.ndarray, space, rule: Rule = Rule()) -> tuple[np.ndarray, np.ndarray]:
    """``(chosen (n,), fell_back (n,) bool)`` for ``probs: (n, n_subsets)`` under ``rule`` (module doc)."""
    probs = np.atleast_2d(np.asarray(probs, np.float64))
    ok = allowed(space, rule)
    masked = np.where(ok, probs, -np.inf)
    best = masked.argmax(axis=1)
    fell = probs[np.arange(len(probs)), best] < rule.threshold
    chosen = np.where(fell, fallback_index(space, rule), best) if fell.any() else best
    return chosen, fell


def explain(probs: np.ndarray, space, rule: Rule = Rule(), top: int = 3, predicted: np.ndarray | None = None) -> list[dict]:
    """One dict per question: the chosen subset's ``tools``, its policy ``probability``, whether the rule fell back,
    the ``alternatives`` (the ``top`` next most probable allowed subsets, with theirs), each tool's marginal
    probability ``tool_probabilities`` (the policy's mass on subsets holding it), the ``expected_tools`` under the
    policy, and, where ``predicted: (n, n_subsets)`` rewards are given (a reference selector), the
    ``predicted_reward`` of the chosen subset and of each alternative."""
    probs = np.atleast_2d(np.asarray(probs, np.float64))
    chosen, fell = choose(probs, space, rule)
    ok = allowed(space, rule)
    masks = np.asarray(space.masks, np.float64)  # (n_subsets, n_tools)
    sizes = np.asarray(space.sizes, np.float64)
    out = []
    for i, p in enumerate(probs):
        c = int(chosen[i])
        order = [int(s) for s in np.argsort(-p, kind="stable") if ok[s] and s != c][:top]
        row = {"tools": list(space.names_of(c)), "probability": round(float(p[c]), 6), "fell_back": bool(fell[i]),
               "alternatives": [{"tools": list(space.names_of(s)), "probability": round(float(p[s]), 6)} for s in order],
               "tool_probabilities": {name: round(float(v), 6) for name, v in zip(space.tool_names, p @ masks)},
               "expected_tools": round(float(p @ sizes), 6)}
        if predicted is not None:
            row["predicted_reward"] = round(float(predicted[i, c]), 6)
            for alt, s in zip(row["alternatives"], order):
                alt["predicted_reward"] = round(float(predicted[i, s]), 6)
        out.append(row)
    return out


def rule_from(max_tools=None, threshold: float = 0.0, fallback: Sequence[str] | None = None) -> Rule:
    """A :class:`Rule` from plain arguments (a fallback given as names)."""
    if isinstance(fallback, str):
        raise ValueError("fallback must be a list of tool names, not one string")
    return Rule(max_tools, threshold, None if fallback is None else tuple(fallback))
