"""GeneRegion's four independent sequence tools, the paper's kinds (T1 composition, T2 motif scan, T3 splice-site
scoring, T4 nearest-neighbour vote). Each reads only the question's sequence and prints a short, deterministic line.

* ``composition``: GC percent, CpG observed/expected, 3-mer entropy, the longest homopolymer.
* ``motif_scan``: the top 3 JASPAR CORE vertebrate matrices (JASPAR2024, the SQLite file that ``pyjaspar`` ships)
  by relative PSSM score on either strand, scanned with ``Bio.motifs`` (pseudocount 0.5, uniform background).
* ``splice_scan``: every GT (donor) and AG (acceptor) candidate scored by a position-weight log-odds matrix
  (``Bio.motifs``): MaxEntScan's windows (9 nt around a donor's GT, 23 nt around an acceptor's AG), with weights
  counted on the UCI splice-junction set, a different source from the questions. **A stated substitute**: MaxEntScan
  itself (maximum-entropy models) is not on PyPI, so these are first-order PWMs in its windows.
* ``knn``: the labels of the k = 15 nearest references (cosine over 4-mer count spectra) in the labelled pool of
  :func:`fgpo_lib.genomics.generegion.reference_pool` (the ``dev`` split, disjoint from the questions).

The tools are independent: none reads another's output (unlike the 8 NCBI tools, which chain entities).
"""

from __future__ import annotations

import csv
import gzip
import itertools
import math
from collections import Counter
from functools import lru_cache

import numpy as np
from Bio import motifs
from Bio.Seq import Seq

from .generegion import DATA, LETTERS, OPTIONS, reference_pool
from .tools import SequenceTool

JASPAR_RELEASE = "JASPAR2024"
KNN_K = 15
KMER = 4
DONOR_WINDOW = (3, 6)  # exon bases before the GT, intron bases from the G on: 9 nt (MaxEntScan's 5' window)
ACCEPTOR_WINDOW = (18, 5)  # intron bases before the AG's A, bases from the A on: 23 nt (MaxEntScan's 3' window)


class Composition(SequenceTool):
    name = "composition"
    description = "Base composition of the sequence: GC percent, CpG observed/expected, 3-mer entropy and the longest homopolymer."

    def lines(self, seq: str) -> list[str]:
        n = len(seq)
        c, g = seq.count("C"), seq.count("G")
        cpg = seq.count("CG")
        oe = cpg * n / (c * g) if c and g else 0.0
        kmers = Counter(seq[i : i + 3] for i in range(n - 2))
        total = sum(kmers.values())
        entropy = -sum(v / total * math.log2(v / total) for v in kmers.values()) if total else 0.0
        run_base, run = max(((b, len(list(grp))) for b, grp in itertools.groupby(seq)), key=lambda x: x[1])
        return [f"GC {100 * (c + g) / n:.1f}%, CpG observed/expected {oe:.2f}, 3-mer entropy {entropy:.2f} of 6 bits, longest homopolymer {run} ({run_base})"]


@lru_cache(maxsize=1)
def jaspar_pssms() -> tuple:
    """``(matrix id, name, forward PSSM, reverse-complement PSSM, min, max)`` of every JASPAR2024 CORE vertebrate
    matrix, in matrix-id order."""
    from pyjaspar import jaspardb

    db = jaspardb(release=JASPAR_RELEASE)
    out = []
    for m in sorted(db.fetch_motifs(collection="CORE", tax_group=["vertebrates"], all_versions=False), key=lambda m: m.matrix_id):
        pssm = m.counts.normalize(pseudocounts=0.5).log_odds()
        out.append((m.matrix_id, m.name, pssm, pssm.reverse_complement(), float(pssm.min), float(pssm.max)))
    return tuple(out)


@lru_cache(maxsize=1)
def jaspar_banks() -> tuple:
    """:func:`jaspar_pssms` stacked by motif length, for scanning every matrix of a length at once:
    ``(length, positions in jaspar_pssms order, forward log-odds, reverse log-odds, min, max)``, the log-odds as
    ``(n_matrices, length, 5)`` float64 arrays over A, C, G, T and a fifth letter for anything else (scored 0, the
    window then masked as Biopython masks it)."""
    entries = jaspar_pssms()
    by_len: dict[int, list[int]] = {}
    for i, entry in enumerate(entries):
        by_len.setdefault(entry[2].length, []).append(i)
    banks = []
    for m, idx in sorted(by_len.items()):
        stack = [np.zeros((len(idx), m, 5)) for _ in range(2)]
        for k, i in enumerate(idx):
            for s, pssm in enumerate(entries[i][2:4]):
                stack[s][k, :, :4] = np.array([[pssm[letter][j] for letter in "ACGT"] for j in range(m)])
        lo = np.array([entries[i][4] for i in idx])
        hi = np.array([entries[i][5] for i in idx])
        banks.append((m, np.array(idx), stack[0], stack[1], lo, hi))
    return tuple(banks)


_CODE = np.full(256, 4, dtype=np.intp)
for _k, _c in enumerate("ACGT"):
    _CODE[ord(_c)] = _CODE[ord(_c.lower())] = _k


def letter_codes(seq: str) -> np.ndarray:
    """``(len(seq),)`` codes for :func:`pssm_scores`: 0-3 for A, C, G, T in either case, 4 for any other letter."""
    return _CODE[np.frombuffer(seq.encode("ascii", "replace"), dtype=np.uint8)]


def pssm_scores(codes: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Every window's log-odds under every matrix of one length, as Biopython's ``PSSM.calculate`` computes each:
    a float64 sum over the motif's columns in order, rounded to float32, NaN where a window holds a letter other than
    A, C, G, T. ``codes``: (sequence length,) letter codes 0-4; ``weights``: (n_matrices, m, 5); returns
    (n_matrices, sequence length - m + 1). Bitwise equal to calling Biopython matrix by matrix (tested), at a
    fraction of its per-call Python cost."""
    n, m, _ = weights.shape
    windows = len(codes) - m + 1
    acc = np.zeros((n, windows))
    bad = np.zeros(windows, dtype=bool)
    for j in range(m):
        col = codes[j : j + windows]
        acc += weights[:, j, :][:, col]
        bad |= col == 4
    out = acc.astype(np.float32)
    out[:, bad] = np.nan
    return out


class MotifScan(SequenceTool):
    name = "motif_scan"
    description = "Scan the sequence with every JASPAR CORE vertebrate motif; returns the top 3 matrices by relative score (0-1) with position and strand."

    def lines(self, seq: str) -> list[str]:
        codes = letter_codes(seq)
        entries, hits = jaspar_pssms(), []
        for m, idx, fwd, rev, lo, hi in jaspar_banks():
            if m > len(seq):
                continue
            best = []
            for weights in (fwd, rev):
                scores = pssm_scores(codes, weights).astype(np.float64)
                scores = np.where(np.isnan(scores), lo[:, None], scores)
                pos = np.argmax(scores, axis=1)
                best.append((scores[np.arange(len(idx)), pos], pos))
            minus = best[1][0] > best[0][0]  # the reverse strand only where strictly better, as a scan of + then -
            top = np.where(minus, best[1][0], best[0][0])
            at = np.where(minus, best[1][1], best[0][1])
            for k, i in enumerate(idx):
                hits.append((float((top[k] - lo[k]) / (hi[k] - lo[k])), entries[i][0], entries[i][1], int(at[k]), "-" if minus[k] else "+"))
        hits.sort(key=lambda h: (-round(h[0], 6), h[1]))
        return [f"{name} ({mid}) at {pos} ({strand}), relative score {rel:.2f}" for rel, mid, name, pos, strand in hits[:3]]


@lru_cache(maxsize=1)
def splice_pssms() -> tuple:
    """``(donor PSSM, acceptor PSSM)`` counted on the UCI splice-junction set (rows with A/C/G/T only)."""
    donors, acceptors = [], []
    with gzip.open(DATA / "splice.csv.gz", "rt") as f:
        for rec in csv.DictReader(f):
            seq = "".join(rec[f"attribute_{i}"] for i in range(1, 61))
            if set(seq) - set("ACGT"):
                continue
            if rec["Class"] == "EI" and seq[30:32] == "GT":  # exon 1-30, intron from 31: GT at 0-based 30
                donors.append(Seq(seq[30 - DONOR_WINDOW[0] : 30 + DONOR_WINDOW[1]]))
            elif rec["Class"] == "IE" and seq[28:30] == "AG":  # intron 1-30, exon from 31: AG at 0-based 28
                acceptors.append(Seq(seq[28 - ACCEPTOR_WINDOW[0] : 28 + ACCEPTOR_WINDOW[1]]))
    return tuple(motifs.create(x).counts.normalize(pseudocounts=0.5).log_odds() for x in (donors, acceptors))


def _best_site(seq: str, dinucleotide: str, pssm, before: int, after: int) -> tuple[int, int, float | None]:
    """``(candidates, position of the best, its log-odds)`` of a dinucleotide with room for its window."""
    scores = np.asarray(pssm.calculate(Seq(seq)), dtype=np.float64)
    cands = [(float(scores[p - before]), p) for p in range(before, len(seq) - after + 1) if seq[p : p + 2] == dinucleotide]
    if not cands:
        return 0, -1, None
    score, pos = max(cands, key=lambda c: (c[0], -c[1]))
    return len(cands), pos, score


class SpliceScan(SequenceTool):
    name = "splice_scan"
    description = "Score every GT (donor) and AG (acceptor) in the sequence with splice-site weight matrices; returns the best of each with its log-odds."

    def lines(self, seq: str) -> list[str]:
        donor, acceptor = splice_pssms()
        out = []
        for kind, dinuc, pssm, (before, after) in (("donor", "GT", donor, DONOR_WINDOW), ("acceptor", "AG", acceptor, ACCEPTOR_WINDOW)):
            n, pos, score = _best_site(seq, dinuc, pssm, before, after)
            out.append(f"{dinuc} ({kind}) candidates {n}" + (f", best at {pos} log-odds {score:.1f}" if n else ""))
        return out


def kmer_spectrum(seq: str, k: int = KMER) -> np.ndarray:
    """``(4**k,)`` counts of the sequence's k-mers (A/C/G/T only), in lexicographic k-mer order."""
    index = {"".join(p): i for i, p in enumerate(itertools.product("ACGT", repeat=k))}
    v = np.zeros(4**k)
    for i in range(len(seq) - k + 1):
        j = index.get(seq[i : i + k])
        if j is not None:
            v[j] += 1
    return v


@lru_cache(maxsize=1)
def _pool_matrix() -> tuple[np.ndarray, np.ndarray]:
    """``(unit spectra (n_refs, 4**k), options (n_refs,))`` of the reference pool."""
    pool = reference_pool()
    x = np.stack([kmer_spectrum(w.seq) for w in pool])
    return x / np.linalg.norm(x, axis=1, keepdims=True), np.array([w.option for w in pool])


class KNN(SequenceTool):
    name = "knn"
    description = f"Vote of the {KNN_K} most similar labelled reference sequences (4-mer spectra, cosine); returns how many carry each label."

    def lines(self, seq: str) -> list[str]:
        x, options = _pool_matrix()
        q = kmer_spectrum(seq)
        sims = x @ (q / (np.linalg.norm(q) or 1.0))
        nearest = np.lexsort((np.arange(len(sims)), -np.round(sims, 9)))[:KNN_K]  # ties: the earlier reference
        votes = Counter(options[nearest].tolist())
        ranked = sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))
        return [f"{KNN_K} nearest labelled references: " + ", ".join(f"{n} ({LETTERS[o]}) {OPTIONS[o]}" for o, n in ranked)]


REGION_TOOL_CLASSES = (Composition, MotifScan, SpliceScan, KNN)
#: GeneRegion's library, in canonical order (cheap tools first; knn, the strongest, last)
REGION_TOOL_ORDER = tuple(c.name for c in REGION_TOOL_CLASSES)
