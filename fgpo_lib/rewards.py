"""What an optimizer trains on: a reward derived from a table's raw scores, without recomputing any cell.

Array convention: ``scores: (n_questions, n_subsets)`` raw scores in [0, 1] (a :class:`~fgpo_lib.table.RewardTable`'s
``rewards``), columns in the canonical subset order of its space; the derived reward has the same shape.

Three rewards (:data:`KINDS`), by the paper's definitions:

* ``score``: the raw score itself (partial credit: 0.5 for the right chromosome, token F1 for free text).
* ``eq1``, the paper's Eq. 1: ``r(q, S) = (2 score - 1) + lam (1 - 2 |S| / n)`` with ``n`` the library size.
  The paper writes ``2 correct - 1``; with partial scores we use ``2 score - 1``, which is +-1 when the score is 1
  or 0. Correctness dominates (a step of 2 against at most ``2 lam``); among subsets that agree on it, fewer tools
  score higher.
* ``differential``, the paper's GRPO reward: ``0.95 (c(S) - c(empty)) + 0.05 format``: +0.95 (+0.05) when tools
  rescue a wrong no-tool answer, -0.95 when they break a right one, 0 otherwise. ``c`` is the raw score. The format
  term rewards a well-formed tool call; every subset of a table is a well-formed call, so ``format = 1`` and the
  term is a constant 0.05, which moves no advantage. It needs the empty subset in the space.

Accuracy is always reported on the raw score, whatever reward trained the policy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from .subsets import SubsetSpace

KINDS = ("score", "eq1", "differential")
DIFFERENTIAL_WEIGHT, FORMAT_WEIGHT = 0.95, 0.05


@dataclass(frozen=True)
class RewardSpec:
    """A reward derived from raw scores (module doc).

    Attributes:
        kind: ``"score"``, ``"eq1"`` or ``"differential"``.
        lam: Eq. 1's parsimony weight lambda (``eq1`` only); the paper's is 0.10.
    """

    kind: str = "score"
    lam: float = 0.10

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown reward {self.kind!r}; use one of {', '.join(KINDS)}")
        if not np.isfinite(self.lam) or self.lam < 0:
            raise ValueError(f"lam must be a finite number >= 0, got {self.lam!r}")

    @classmethod
    def parse(cls, text: str) -> "RewardSpec":
        """``"score"``, ``"differential"``, ``"eq1"`` (lambda 0.10) or ``"eq1(0.05)"``."""
        m = re.fullmatch(r"\s*(\w+)\s*(?:\(\s*([-+0-9.eE]+)\s*\))?\s*", text or "")
        if not m or (m.group(2) is not None and m.group(1) != "eq1"):
            raise ValueError(f"cannot read reward {text!r}; use score, differential, eq1 or eq1(LAMBDA)")
        return cls(m.group(1), float(m.group(2))) if m.group(2) is not None else cls(m.group(1))

    @property
    def label(self) -> str:
        return f"eq1({self.lam:g})" if self.kind == "eq1" else self.kind

    def range(self) -> tuple[float, float]:
        """Bounds of the derived reward when scores lie in [0, 1]."""
        if self.kind == "eq1":
            return (-1.0 - self.lam, 1.0 + self.lam)
        if self.kind == "differential":
            return (-DIFFERENTIAL_WEIGHT + FORMAT_WEIGHT, DIFFERENTIAL_WEIGHT + FORMAT_WEIGHT)
        return (0.0, 1.0)

    def from_scores(self, scores: np.ndarray, sizes: np.ndarray, n_tools: int, empty_scores: np.ndarray | None = None) -> np.ndarray:
        """The derived reward of cells, elementwise: ``scores`` and ``sizes`` (subset sizes) broadcast together;
        ``empty_scores``, broadcastable to them, is each cell's question's no-tool score (``differential`` only)."""
        scores = np.asarray(scores, dtype=np.float64)
        if self.kind == "score":
            out = scores
        elif self.kind == "eq1":
            out = (2 * scores - 1) + self.lam * (1 - 2 * np.asarray(sizes) / n_tools)
        else:
            if empty_scores is None:
                raise ValueError("the differential reward needs each question's no-tool score")
            out = DIFFERENTIAL_WEIGHT * (scores - np.asarray(empty_scores, np.float64)) + FORMAT_WEIGHT
        return out.astype(np.float32)

    def apply(self, scores: np.ndarray, space: SubsetSpace) -> np.ndarray:
        """``scores: (n_questions, n_subsets)`` -> the derived reward, same shape, float32."""
        scores = np.asarray(scores, dtype=np.float64)
        if scores.ndim != 2 or scores.shape[1] != space.n_subsets:
            raise ValueError(f"scores have shape {scores.shape}, expected (n_questions, {space.n_subsets})")
        empty = None
        if self.kind == "differential":
            if not space.has_empty:
                raise ValueError("the differential reward compares with the empty subset, which this space leaves out")
            i = space.index_of([])
            empty = scores[:, i : i + 1]
        return self.from_scores(scores, space.sizes[None, :], space.n_tools, empty)
