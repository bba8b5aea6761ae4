"""The space of tool subsets an agent may call for one question.

Canonical order
---------------
Subsets are ordered **by size, then lexicographically by their sorted tuple of tool indices**.
With tools ``(a, b, c)`` and no size limit the order is::

    index  0: ()            mask 0b000
    index  1: (a,)          mask 0b001
    index  2: (b,)          mask 0b010
    index  3: (c,)          mask 0b100
    index  4: (a, b)        mask 0b011
    index  5: (a, c)        mask 0b101
    index  6: (b, c)        mask 0b110
    index  7: (a, b, c)     mask 0b111

Bit ``i`` of a bitmask is tool ``i``. The empty subset (if ``min_size == 0``) is index 0.
Every array whose last axis runs over subsets (a reward table's ``rewards``, a policy's logits) uses this order.

:meth:`SubsetSpace.trie_order` gives a second order, the preorder walk of the subset trie, in which each subset
follows its longest proper prefix; reward precomputation evaluates subsets in that order so that consecutive
LLM prompts share a prefix. It is a permutation of indices, never a different indexing.
"""

from __future__ import annotations

import itertools
import math
import os
from dataclasses import dataclass
from typing import Iterable

import numpy as np

#: Largest number of subsets a :class:`SubsetSpace` will enumerate (about 75 MB of masks at 16 tools).
MAX_SUBSETS = 5_000_000
#: Bitmasks are int64, so at most 62 tools.
MAX_TOOLS = 62
BYTES_PER_CELL = 4  # float32 reward


class SubsetSpaceError(ValueError):
    """A subset space that is malformed or too large to enumerate."""


def count_subsets(n_tools: int, max_size: int | None = None, min_size: int = 0) -> int:
    """Number of subsets of ``n_tools`` tools with ``min_size <= size <= max_size``, without enumerating them."""
    hi = n_tools if max_size is None else min(max_size, n_tools)
    return sum(math.comb(n_tools, k) for k in range(min_size, hi + 1))


def table_nbytes(n_questions: int, n_tools: int, max_size: int | None = None, min_size: int = 0) -> int:
    """Bytes of a float32 reward table ``(n_questions, n_subsets)`` for this space."""
    return n_questions * count_subsets(n_tools, max_size, min_size) * BYTES_PER_CELL


def available_memory_bytes() -> int:
    """Physical memory available now (Linux ``MemAvailable``), or total physical memory elsewhere."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def format_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.1f} {unit}" if unit != "B" else f"{int(n)} B"
        n /= 1024
    raise AssertionError  # unreachable


@dataclass(frozen=True)
class SubsetSpace:
    """All subsets of ``n_tools`` tools with ``min_size <= |S| <= max_size``, in the canonical order (module doc), or
    an explicit **candidate set** of them (``candidates``), kept in the same canonical order.

    Attributes:
        n_tools: number of tools, 1..62.
        max_size: largest subset size allowed; ``None`` means ``n_tools``. With ``candidates``: their largest size.
        min_size: smallest subset size allowed; 0 includes the empty subset (call no tool). With ``candidates``:
            their smallest size.
        tool_names: one name per tool, in canonical tool order; defaults to ``t0, t1, ...``.
        candidates: ``None`` for every subset of the sizes; else the subsets of the space, each a tuple of tool
            indices (any order given; stored sorted, in canonical order, no repeats). A user who evaluated only some
            configurations, or a coverage-preserving candidate set, has a space of exactly those subsets.

    Derived arrays (built once, read-only):
        bitmasks: ``(n_subsets,) int64``, bit i set when tool i is in the subset.
        masks: ``(n_subsets, n_tools) bool``.
        sizes: ``(n_subsets,) int64``.

    >>> len(SubsetSpace(8, max_size=4)), len(SubsetSpace(4, min_size=1))
    (163, 15)
    """

    n_tools: int
    max_size: int | None = None
    min_size: int = 0
    tool_names: tuple[str, ...] | None = None
    candidates: tuple[tuple[int, ...], ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.n_tools, (int, np.integer)) or self.n_tools < 1:
            raise SubsetSpaceError(f"n_tools must be a positive integer, got {self.n_tools!r}")
        if self.n_tools > MAX_TOOLS:
            raise SubsetSpaceError(f"n_tools={self.n_tools} exceeds the {MAX_TOOLS} tools an int64 bitmask can hold")
        if self.candidates is not None:
            combos = []
            for c in self.candidates:
                c = tuple(sorted(int(i) for i in c))
                if any(not 0 <= i < self.n_tools for i in c) or len(set(c)) != len(c):
                    raise SubsetSpaceError(f"candidate subset {c} repeats a tool or names one outside 0..{self.n_tools - 1}")
                combos.append(c)
            if not combos:
                raise SubsetSpaceError("a candidate set needs at least one subset")
            if len(set(combos)) != len(combos):
                raise SubsetSpaceError("a candidate subset appears twice")
            combos.sort(key=lambda c: (len(c), c))
            object.__setattr__(self, "candidates", tuple(combos))
            object.__setattr__(self, "min_size", len(combos[0]))
            object.__setattr__(self, "max_size", len(combos[-1]))
        max_size = self.n_tools if self.max_size is None else int(self.max_size)
        if not 0 <= self.min_size <= max_size:
            raise SubsetSpaceError(f"need 0 <= min_size <= max_size, got min_size={self.min_size}, max_size={max_size}")
        object.__setattr__(self, "max_size", min(max_size, self.n_tools))
        names = tuple(self.tool_names) if self.tool_names is not None else tuple(f"t{i}" for i in range(self.n_tools))
        if len(names) != self.n_tools:
            raise SubsetSpaceError(f"{len(names)} tool names given for n_tools={self.n_tools}")
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise SubsetSpaceError(f"duplicate tool names: {dup}")
        for n in names:
            if not n or "+" in n:
                raise SubsetSpaceError(f"tool name {n!r} is empty or contains '+', the subset separator")
        object.__setattr__(self, "tool_names", names)
        n = len(self.candidates) if self.candidates is not None else count_subsets(self.n_tools, self.max_size, self.min_size)
        if n > MAX_SUBSETS:
            raise SubsetSpaceError(
                f"{self.n_tools} tools with sizes {self.min_size}..{self.max_size} give {n:,} subsets, more than the "
                f"{MAX_SUBSETS:,} this library enumerates (one question's float32 rewards alone would take "
                f"{format_bytes(n * BYTES_PER_CELL)}); lower max_size or use sampled optimization"
            )
        combos = list(self.candidates) if self.candidates is not None else [c for k in range(self.min_size, self.max_size + 1) for c in itertools.combinations(range(self.n_tools), k)]
        masks = np.zeros((len(combos), self.n_tools), dtype=bool)
        for i, c in enumerate(combos):
            masks[i, list(c)] = True
        bitmasks = (masks.astype(np.int64) << np.arange(self.n_tools, dtype=np.int64)).sum(axis=1)
        masks.setflags(write=False)
        bitmasks.setflags(write=False)
        sizes = masks.sum(axis=1).astype(np.int64)
        sizes.setflags(write=False)
        object.__setattr__(self, "_combos", tuple(combos))
        object.__setattr__(self, "masks", masks)
        object.__setattr__(self, "bitmasks", bitmasks)
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "_index_of_bitmask", {int(b): i for i, b in enumerate(bitmasks)})
        object.__setattr__(self, "_tool_index", {name: i for i, name in enumerate(names)})

    # --- size -----------------------------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._combos)

    @property
    def n_subsets(self) -> int:
        return len(self._combos)

    @property
    def has_empty(self) -> bool:
        """Whether the empty subset (call no tool) is in the space: the No-Tool baseline and the differential
        reward need it."""
        return 0 in self._index_of_bitmask

    @property
    def is_full(self) -> bool:
        """Every subset of the sizes ``min_size..max_size`` (not a candidate set)."""
        return self.candidates is None

    def table_nbytes(self, n_questions: int) -> int:
        """Bytes a float32 reward table of ``n_questions`` rows over this space takes."""
        return n_questions * self.n_subsets * BYTES_PER_CELL

    def describe_table(self, n_questions: int) -> str:
        """One line: the shape and memory of a reward table of ``n_questions`` questions over this space."""
        return (
            f"{n_questions:,} questions x {self.n_subsets:,} subsets = {n_questions * self.n_subsets:,} cells, "
            f"{format_bytes(self.table_nbytes(n_questions))} as float32"
        )

    def check_table_fits(self, n_questions: int, available: int | None = None) -> None:
        """Raise :class:`SubsetSpaceError` if a reward table of ``n_questions`` would not fit in available memory."""
        need = self.table_nbytes(n_questions)
        have = available_memory_bytes() if available is None else available
        if need > have:
            raise SubsetSpaceError(
                f"a reward table of {self.describe_table(n_questions)} does not fit in the {format_bytes(have)} "
                f"of memory available; lower max_size, use fewer questions, or use sampled optimization"
            )

    # --- conversions ----------------------------------------------------------------------------------------------
    def tool_index(self, name: str) -> int:
        try:
            return self._tool_index[name]
        except KeyError:
            raise KeyError(f"unknown tool {name!r}; known tools: {list(self.tool_names)}") from None

    def tools_of(self, index: int) -> tuple[int, ...]:
        """Tool indices of subset ``index``, ascending."""
        return self._combos[index]

    def names_of(self, index: int) -> tuple[str, ...]:
        """Tool names of subset ``index``, in canonical tool order."""
        return tuple(self.tool_names[i] for i in self._combos[index])

    def label(self, index: int) -> str:
        """``'+'``-joined tool names of subset ``index``; ``''`` for the empty subset."""
        return "+".join(self.names_of(index))

    def index_of_bitmask(self, bitmask: int) -> int:
        try:
            return self._index_of_bitmask[int(bitmask)]
        except KeyError:
            raise KeyError(f"bitmask {bitmask:#b} is not a subset of this space (sizes {self.min_size}..{self.max_size})") from None

    def index_of(self, tools: Iterable[str | int]) -> int:
        """Index of the subset holding ``tools`` (names or indices, any order, no repeats)."""
        bitmask = 0
        for t in tools:
            i = self.tool_index(t) if isinstance(t, str) else int(t)
            if not 0 <= i < self.n_tools:
                raise KeyError(f"tool index {i} out of range for {self.n_tools} tools")
            if bitmask >> i & 1:
                raise KeyError(f"tool {self.tool_names[i]!r} appears twice in one subset")
            bitmask |= 1 << i
        return self.index_of_bitmask(bitmask)

    def index_of_label(self, label: str) -> int:
        """Inverse of :meth:`label`: ``'a+b'`` (any order) to an index; ``''`` is the empty subset."""
        return self.index_of([p.strip() for p in label.split("+")] if label.strip() else [])

    def labels(self) -> list[str]:
        return [self.label(i) for i in range(self.n_subsets)]

    # --- orders ---------------------------------------------------------------------------------------------------
    def trie_order(self) -> np.ndarray:
        """``(n_subsets,) int64`` permutation: subsets sorted lexicographically by tool-index tuple (trie preorder).

        Each subset comes right after a subset that is its prefix or shares its longest prefix, which maximises
        shared prompt prefixes when tool outputs are concatenated in canonical tool order.
        """
        return np.array(sorted(range(self.n_subsets), key=lambda i: self._combos[i]), dtype=np.int64)

    def to_dict(self) -> dict:
        """The space as JSON (a table's ``meta.space``); a candidate set adds ``subsets``, its labels."""
        out = {"n_tools": self.n_tools, "max_size": self.max_size, "min_size": self.min_size, "tool_names": list(self.tool_names)}
        if self.candidates is not None:
            out["subsets"] = self.labels()
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "SubsetSpace":
        names = tuple(d["tool_names"])
        if d.get("subsets") is not None:
            return cls.from_labels(names, d["subsets"])
        return cls(int(d["n_tools"]), d.get("max_size"), int(d.get("min_size", 0)), names)

    @classmethod
    def from_labels(cls, tool_names, labels) -> "SubsetSpace":
        """A candidate set from ``'+'``-joined labels (``''``: the empty subset) over ``tool_names``."""
        index = {n: i for i, n in enumerate(tool_names)}
        combos = []
        for lbl in labels:
            parts = [p.strip() for p in str(lbl).split("+")] if str(lbl).strip() else []
            unknown = [p for p in parts if p not in index]
            if unknown:
                raise SubsetSpaceError(f"candidate subset {lbl!r} names unknown tools {unknown}; the tools are {list(tool_names)}")
            combos.append(tuple(index[p] for p in parts))
        return cls(len(tool_names), tool_names=tuple(tool_names), candidates=tuple(combos))

    def __repr__(self) -> str:
        kind = f", candidates of sizes {self.min_size}..{self.max_size}" if self.candidates is not None else f", max_size={self.max_size}, min_size={self.min_size}"
        return f"SubsetSpace(n_tools={self.n_tools}{kind}, n_subsets={self.n_subsets})"

