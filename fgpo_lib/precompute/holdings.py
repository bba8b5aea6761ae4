"""What a table file holds, so that nothing replaces it with less, or with another table: the no-loss guard.

* :func:`lost_holdings`: what a new table holds less of than the file it would replace (answers, extras, provenance
  fields); a smaller sample or a resume that lost something is refused.
* :func:`identity_changes`: whether it is the same table at all (benchmark, reasoner, model, prompt, library): a
  table of another reasoner with the same counts is refused too.
"""

from __future__ import annotations

import numpy as np

from ..table import RewardTable

#: the name of an extra that only some questions have so far (:meth:`PrecomputeEngine.extras`); readers never see it
PARTIAL_EXTRA = "partial_{}"
#: the provenance fields that say which table a file is: a file of other values is another table, never replaced
IDENTITY = ("benchmark", "reasoner", "model_sha256", "prompt_sha256", "library", "max_size")


def known_answers(answers: np.ndarray) -> np.ndarray | None:
    """A table's ``answers`` from an object array with ``None`` where a cell's answer is not known: ``None`` if no
    answer is known (the cells came from tables made before tables kept answers), else strings, ``''`` where unknown."""
    known = np.array([a is not None for a in answers.ravel()]).reshape(answers.shape)
    if not known.any():
        return None
    return np.where(known, answers, "").astype(str)


def _provenance_fields(prov: dict, prefix: str = "") -> set[str]:
    """The dotted names of a provenance dict's fields, nested dicts flattened (an empty dict has none). A field whose
    value is null is still a field: ``questions: null`` (every question) is a value, not a loss."""
    out = set()
    for k, v in prov.items():
        out |= _provenance_fields(v, f"{prefix}{k}.") if isinstance(v, dict) else {prefix + k}
    return out


def table_holdings(table: RewardTable) -> dict:
    """What a table holds beyond its rewards, for the no-loss check of :func:`lost_holdings`: the number of
    non-empty cell answers, of known answers and rewards of each extra, and its provenance fields."""
    held = {"cells": table.rewards.size, "answers": 0 if table.answers is None else int((table.answers != "").sum())}
    for name, extra in table.extras.items():
        name = name.removeprefix(PARTIAL_EXTRA.format(""))  # a partial extra that becomes whole holds more, not less
        for f in ("answers", "rewards"):
            if isinstance(extra.get(f), list):
                held[f"extra {name} {f}"] = sum(v is not None for v in extra[f])
    held["provenance"] = _provenance_fields(table.provenance)
    return held


def lost_holdings(old: RewardTable, new: RewardTable) -> list[str]:
    """What ``new`` holds less of than ``old`` (empty when nothing is lost): each a phrase naming the count or the
    provenance fields lost. A resume or a rerun must never write a table that holds less than the file it replaces."""
    a, b = table_holdings(old), table_holdings(new)
    lost = [f"{k} {a[k]:,} -> {b.get(k, 0):,}" for k in a if k != "provenance" and b.get(k, 0) < a[k]]
    if a["provenance"] - b["provenance"]:
        lost.append(f"provenance fields {sorted(a['provenance'] - b['provenance'])} missing")
    return lost


def identity_changes(old: RewardTable, new: RewardTable) -> list[str]:
    """The :data:`IDENTITY` fields whose values differ between two tables' provenance (``"reasoner 'bm25' -> 'records'"``):
    non-empty means ``new`` is another table than the one in the file, whatever it holds."""
    a, b = old.provenance, new.provenance
    return [f"{k} {a.get(k)!r} -> {b.get(k)!r}" for k in IDENTITY if a.get(k) != b.get(k)]
