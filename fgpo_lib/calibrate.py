"""A selector's threshold for a budget, picked on held-out questions, and how the result moves on other questions.

The rule (:mod:`fgpo_lib.selector_rule`) takes the fallback subset where the selector's top probability is below a
threshold ``t``. A larger ``t`` falls back more often: with All-Tools as the fallback, more tools per question and,
where the selector is unsure for a reason, higher accuracy. :func:`calibrate` traces that curve on the **calibration**
half of the table's test questions, picks ``t`` for a target (an average of tools, or an accuracy), and reports what
the same ``t`` gives on the **evaluation** half: a threshold chosen on one set of questions drifts on another (as
RouteLLM's users find for theirs), and the report says by how much.

* target average of tools ``T``: the largest ``t`` whose calibration average is at most ``T`` (the most fallbacks the
  budget allows);
* target accuracy ``A``: the smallest ``t`` whose calibration accuracy is at least ``A`` (the fewest fallbacks that
  reach it).

Accuracy is the table's raw reward of the chosen subset. Array convention: ``probs: (n_questions, n_subsets)`` in the
selector's canonical order; the table's columns are matched to it by subset label.
"""

from __future__ import annotations

import numpy as np

from .selector_rule import choose, rule_from


class CalibrationError(ValueError):
    """A target no threshold reaches, or a table the selector cannot be calibrated on, named."""


def halves(table, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``(calibration rows, evaluation rows)``: the table's test questions split in two at random (``seed``)."""
    rows = np.asarray(table.split_index("test"))
    if len(rows) < 4:
        raise CalibrationError(f"the table has {len(rows)} test questions; calibration needs at least 4 (two halves)")
    rows = np.random.default_rng(seed).permutation(rows)
    cut = len(rows) // 2
    return np.sort(rows[:cut]), np.sort(rows[cut:])


def curve(probs: np.ndarray, rewards: np.ndarray, space, max_tools=None, fallback=None) -> list[dict]:
    """For every threshold at which the choices change (each question's top probability, and 0): the share of
    questions that fall back, the average tools and the accuracy. ``rewards: (n_questions, n_subsets)`` in the
    selector's order."""
    above = np.nextafter(_tops(probs, space, max_tools), 2.0)  # just above a question's top probability: it falls back
    thresholds = np.unique(np.concatenate([[0.0], above[above <= 1.0]]))
    out = []
    for t in thresholds:
        chosen, fell = choose(probs, space, rule_from(max_tools, float(t), fallback))
        out.append({"threshold": float(t), "fallback_share": float(fell.mean()), "tools": float(np.asarray(space.sizes)[chosen].mean()),
                     "accuracy": float(rewards[np.arange(len(chosen)), chosen].mean())})
    return out


def _tops(probs: np.ndarray, space, max_tools) -> np.ndarray:
    """Each question's top probability among the subsets the budget allows."""
    from .selector_rule import allowed

    ok = allowed(space, rule_from(max_tools))
    return np.where(ok, probs, -np.inf).max(axis=1)


def pick(points: list[dict], target_tools: float | None = None, target_accuracy: float | None = None) -> dict:
    """The point of a :func:`curve` for the target (module doc), or a :class:`CalibrationError` naming what is reachable."""
    if (target_tools is None) == (target_accuracy is None):
        raise CalibrationError("give one target: an average of tools or an accuracy")
    if target_tools is not None:
        ok = [p for p in points if p["tools"] <= target_tools + 1e-12]
        if not ok:
            raise CalibrationError(f"no threshold keeps the average at {target_tools:g} tools: the selector alone calls {points[0]['tools']:.2f}")
        return max(ok, key=lambda p: p["threshold"])
    ok = [p for p in points if p["accuracy"] >= target_accuracy - 1e-12]
    if not ok:
        raise CalibrationError(f"no threshold reaches accuracy {target_accuracy:g} on the calibration questions: at most {max(p['accuracy'] for p in points):.3f}")
    return min(ok, key=lambda p: p["threshold"])


def calibrate(selector, table, target_tools: float | None = None, target_accuracy: float | None = None, fallback=None, max_tools=None, seed: int = 0) -> dict:
    """Pick the threshold on the calibration half of ``table``'s test questions and apply it to the evaluation half
    (module doc). Returns ``{"threshold", "target", "calibration": point, "evaluation": point, "curve": {"calibration":
    [...], "evaluation": [...]}, "questions": {"calibration", "evaluation"}}``."""
    from .selector import check_tools

    check_tools(selector.tool_names, table.tool_names, "the selector")
    if table.questions is None:
        raise CalibrationError("the table holds no question texts, so the selector has nothing to read; give a table with a question column")
    column = [table.space.index_of_label(label) for label in selector.subset_names]
    calib, evaluation = halves(table, seed)
    result = {"target": {"tools": target_tools, "accuracy": target_accuracy}, "curve": {}, "questions": {"calibration": len(calib), "evaluation": len(evaluation)}}
    points = {}
    for name, rows in (("calibration", calib), ("evaluation", evaluation)):
        probs = selector.probabilities([table.questions[r] for r in rows])
        points[name] = curve(probs, table.rewards[np.ix_(rows, column)], selector.space, max_tools, fallback)
        result["curve"][name] = points[name]
    chosen = pick(points["calibration"], target_tools, target_accuracy)
    t = chosen["threshold"]
    probs = selector.probabilities([table.questions[r] for r in evaluation])
    picks, fell = choose(probs, selector.space, rule_from(max_tools, t, fallback))
    rewards = table.rewards[np.ix_(evaluation, column)]
    result |= {"threshold": t, "calibration": chosen,
               "evaluation": {"threshold": t, "fallback_share": float(fell.mean()), "tools": float(np.asarray(selector.space.sizes)[picks].mean()),
                              "accuracy": float(rewards[np.arange(len(picks)), picks].mean())}}
    return result
