"""GeneRegion: multiple-choice questions about a DNA sequence window, the form of the paper's benchmarks.

Every question asks one thing with the same five options in the prompt::

    Which kind of region is this 70-nt human DNA sequence? Options: (A) promoter core (B) splice donor
    (C) splice acceptor (D) transcription-factor binding site (E) none of these. Sequence: ACGT...

and its gold answer is one letter. **Why one pooled question rather than one per family** (the paper asks per
family): with five options in every prompt, "none of these" is a real answer for every family's negatives, a
guess is worth 20% everywhere, and one policy learns one question form; the three families stay the tasks
(stratification, per-task reports).

**The data** (``fgpo_lib/data/generegion/README.md``): GUE's ``prom_prom_core_all`` (promoter core or not),
``splice_reconstructed`` (donor, acceptor or neither) and ``tf_0`` ... ``tf_4`` (bound by a transcription factor or
not). Questions come from the ``test`` split, the ``knn`` tool's labelled reference pool from ``dev``; a pool window
identical to a question window is dropped.

**No shortcut.** Every window is cropped to :data:`WINDOW` nt with its feature at :data:`CENTRE` (the TSS region of a
promoter core, the GT of a donor, the AG of an acceptor, the middle of a TF peak). Classes are balanced
(:data:`PER_OPTION` per option: chance is 20%, and so is always answering one letter); "none of these" is drawn
equally from the three families' negatives and a family's positives equally from its files. Rows are drawn by a
seeded hash, questions are ordered by another, and a question id numbers it within its task in that order: neither
ids nor order carry a source row (the TF files are sorted by label). GC content alone is informative, as biology
makes it (promoters are GC-rich): ``tests/test_generegion.py`` measures it.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "generegion"
OPTIONS = ("promoter core", "splice donor", "splice acceptor", "transcription-factor binding site", "none of these")
LETTERS = "ABCDE"
NONE = len(OPTIONS) - 1
WINDOW = 70
CENTRE = 35
PER_OPTION = 100
POOL_PER_OPTION = 400
SEED = 2609


@dataclass(frozen=True)
class Family:
    """One source family: its task name, files, label -> option index, and the 0-based start of its window."""

    task: str
    files: tuple[str, ...]
    options: dict
    start: int


FAMILIES = (
    Family("Promoter or not", ("prom_prom_core_all",), {"1": 0, "0": NONE}, 0),  # 70 nt already, TSS at the middle
    Family("Splice site type", ("splice_reconstructed",), {"1": 1, "0": 2, "2": NONE}, 165),  # GT at 200, AG at 198
    Family("TF binding or not", tuple(f"tf_{i}" for i in range(5)), {"1": 3, "0": NONE}, 15),  # 101 nt, peak at 50
)


@dataclass(frozen=True)
class Window:
    """A labelled sequence window: its source (file, split, 0-based data row), family, option index and bases."""

    file: str
    split: str
    row: int
    family: str
    option: int
    seq: str


def _rank(seed: int, w: Window) -> str:
    return hashlib.sha256(f"{seed}:{w.file}:{w.split}:{w.row}".encode()).hexdigest()


@lru_cache(maxsize=None)
def windows(split: str) -> tuple[Window, ...]:
    """Every usable window of ``split`` (``'test'`` or ``'dev'``): cropped, A/C/G/T only, first of identical windows."""
    out, seen = [], set()
    for fam in FAMILIES:
        for name in fam.files:
            with gzip.open(DATA / f"{name}__{split}.csv.gz", "rt") as f:
                for row, rec in enumerate(csv.DictReader(f)):
                    seq = rec["sequence"][fam.start : fam.start + WINDOW]
                    if len(seq) == WINDOW and set(seq) <= set("ACGT") and seq not in seen:
                        seen.add(seq)
                        out.append(Window(name, split, row, fam.task, fam.options[rec["label"]], seq))
    return tuple(out)


def _draw(pool: list[Window], n: int, seed: int) -> list[Window]:
    """``n`` windows of ``pool``, spread evenly over its families and files, by a seeded hash order."""
    groups: dict[tuple, list[Window]] = {}
    for w in sorted(pool, key=lambda w: _rank(seed, w)):
        groups.setdefault((w.family, w.file), []).append(w)
    keys = list(groups)
    out, i = [], 0
    while len(out) < n:  # round-robin over (family, file) groups
        g = groups[keys[i % len(keys)]]
        if g:
            out.append(g.pop(0))
        elif not any(groups.values()):
            raise ValueError(f"only {len(out)} windows to draw {n} from")
        i += 1
    return out


def _balanced(split: str, per_option: int, seed: int, exclude: frozenset = frozenset()) -> list[Window]:
    """``per_option`` windows per option of ``split``; "none of these" spread over the families' negatives."""
    ws = [w for w in windows(split) if w.seq not in exclude]
    out = []
    for option in range(len(OPTIONS)):
        pool = [w for w in ws if w.option == option]
        if option == NONE:  # an equal share of each family's negatives (families first, then their files)
            by_family = {f.task: [w for w in pool if w.family == f.task] for f in FAMILIES}
            shares = [per_option // len(FAMILIES) + (i < per_option % len(FAMILIES)) for i in range(len(FAMILIES))]
            for (_, fam_pool), k in zip(by_family.items(), shares):
                out += _draw(fam_pool, k, seed)
        else:
            out += _draw(pool, per_option, seed)
    return out


def question_text(seq: str) -> str:
    options = " ".join(f"({letter}) {text}" for letter, text in zip(LETTERS, OPTIONS))
    return f"Which kind of region is this {len(seq)}-nt human DNA sequence? Options: {options}. Sequence: {seq}"


@lru_cache(maxsize=1)
def question_windows() -> tuple[Window, ...]:
    """The benchmark's windows in question order (a seeded hash order, unrelated to source rows)."""
    return tuple(sorted(_balanced("test", PER_OPTION, SEED), key=lambda w: _rank(SEED + 1, w)))


@lru_cache(maxsize=1)
def reference_pool() -> tuple[Window, ...]:
    """The ``knn`` tool's labelled references: :data:`POOL_PER_OPTION` per option from the ``dev`` split, none
    identical to a question window."""
    return tuple(_balanced("dev", POOL_PER_OPTION, SEED, frozenset(w.seq for w in question_windows())))


def letter(option: int) -> str:
    return LETTERS[option]


@lru_cache(maxsize=1)
def free_windows() -> tuple[Window, ...]:
    """``dev`` windows that are neither questions nor references, in a seeded hash order: where the prompt's worked
    examples come from (:mod:`fgpo_lib.reasoners.prompts`)."""
    used = {w.seq for w in question_windows()} | {w.seq for w in reference_pool()}
    return tuple(sorted((w for w in windows("dev") if w.seq not in used), key=lambda w: _rank(SEED + 2, w)))


def named_options(text: str) -> list[str]:
    """The letters of the options whose text ``text`` names, in order of appearance (``knn`` names its plurality
    label first)."""
    low = text.lower()
    return [letter for _, letter in sorted((low.find(o), letter) for letter, o in zip(LETTERS, OPTIONS) if o in low)]
