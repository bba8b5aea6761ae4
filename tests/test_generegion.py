"""GeneRegion, the multiple-choice sequence benchmark: its four tools on hand-made sequences (hand-computed values),
no shortcut in its questions, questions disjoint from the knn tool's references, and the commands a new user runs."""

import collections
import math

import numpy as np
import pytest
from Bio.Seq import Seq
from scipy import stats

from fgpo_lib import RewardTable
from fgpo_lib.cli import main
from fgpo_lib.genomics.benchmarks import load_benchmark
from fgpo_lib.genomics.generegion import (CENTRE, LETTERS, OPTIONS, PER_OPTION, WINDOW, question_windows,
                                          reference_pool)
from fgpo_lib.genomics.region_tools import KNN, Composition, MotifScan, SpliceScan, jaspar_pssms, kmer_spectrum
from fgpo_lib.genomics.scoring import extract_choice, score
from fgpo_lib.genomics.tools import Context, extract_sequence
from fgpo_lib.reasoners.prompts import demonstrations


def run_tool(tool, seq):
    return tool().run(f"Which kind of region is this sequence? Sequence: {seq}", Context()).text


# --- the four tools, on hand-made sequences ---------------------------------------------------------------------------
def test_composition_by_hand():
    # ACGT x4: GC 8/16; CG occurs 4 times with C = G = 4, so o/e = 4 * 16 / (4 * 4) = 4; 3-mers ACG 4, CGT 4, GTA 3,
    # TAC 3 of 14: entropy -(2 * 4/14 log2 4/14 + 2 * 3/14 log2 3/14) = 1.985; no base repeats.
    h = -(2 * 4 / 14 * math.log2(4 / 14) + 2 * 3 / 14 * math.log2(3 / 14))
    assert f"{h:.2f}" == "1.99"
    assert run_tool(Composition, "ACGT" * 4) == "[composition] GC 50.0%, CpG observed/expected 4.00, 3-mer entropy 1.99 of 6 bits, longest homopolymer 1 (A)"
    assert run_tool(Composition, "GGGGGGCCCCATATAT").endswith("longest homopolymer 6 (G)")


def test_splice_scan_by_hand():
    # A consensus donor CAG|GTAAGT at 10..18: GT at 13, and AAGT gives a second GT at 17; the two AGs (11, 16) have
    # fewer than 18 bases before them, so no acceptor window fits.
    seq = "A" * 10 + "CAGGTAAGT" + "A" * 23
    assert [i for i in range(len(seq) - 1) if seq[i : i + 2] == "GT"] == [13, 17]
    out = run_tool(SpliceScan, seq)
    assert out.startswith("[splice_scan] GT (donor) candidates 2, best at 13 log-odds ") and out.endswith("| AG (acceptor) candidates 0")
    # a pyrimidine tract ending in CAG before the donor: AGs at 18 (the acceptor) and 23 (the donor's AAG), both
    # with room for the 23-nt window (18 before, 5 from the A); the acceptor scores best
    seq2 = "CTTTCTCTTCCTTTTCCCAGGTAAGT" + "A" * 10
    assert [i for i in range(len(seq2) - 1) if seq2[i : i + 2] == "AG"] == [18, 23]
    assert "AG (acceptor) candidates 2, best at 18" in run_tool(SpliceScan, seq2)


def test_kmer_spectrum_by_hand():
    v = kmer_spectrum("ACGTA")  # ACGT = 0*64 + 1*16 + 2*4 + 3 = 27; CGTA = 1*64 + 2*16 + 3*4 + 0 = 108
    assert v.sum() == 2 and v[27] == 1 and v[108] == 1


def test_knn_votes_15_references_and_finds_a_copy_of_one():
    ref = reference_pool()[0]
    out = run_tool(KNN, ref.seq)
    counts = [int(n) for n in __import__("re").findall(r"(\d+) \([A-E]\) (?:promoter|splice|transcription|none)", out)]
    assert out.startswith("[knn] 15 nearest labelled references: ") and sum(counts) == 15
    assert f"({LETTERS[ref.option]}) {OPTIONS[ref.option]}" in out  # the reference is its own nearest neighbour; the vote names the option's letter


def test_motif_scan_finds_a_planted_consensus():
    mid, name, fwd, *_ = next(p for p in jaspar_pssms() if p[0].startswith("MA0139"))  # CTCF, 19 nt
    consensus = "".join(max("ACGT", key=lambda b, j=j: fwd[b][j]) for j in range(fwd.length))
    out = run_tool(MotifScan, "A" * 20 + consensus + "A" * 20)
    first = out.removeprefix("[motif_scan] ").split(" | ")[0]
    assert first == f"{name} ({mid}) at 20 (+), relative score 1.00"
    assert len(out.split(" | ")) == 3


def test_the_tools_are_deterministic_and_short():
    q = load_benchmark("generegion")[0]
    for tool in (Composition, MotifScan, SpliceScan, KNN):
        a = tool().run(q.text, Context()).text
        assert a == tool().run(q.text, Context()).text and len(a) < 400


# --- the questions: form, balance, no shortcut, disjoint pool ---------------------------------------------------------
def test_questions_are_balanced_multiple_choice():
    qs = load_benchmark("generegion")
    assert len(qs) == 5 * PER_OPTION and len({q.task for q in qs}) == 3
    assert collections.Counter(q.answer for q in qs) == {letter: PER_OPTION for letter in LETTERS}
    assert all("(A) promoter core" in q.text and "(E) none of these" in q.text for q in qs)


def test_no_shortcut_in_length_order_or_ids():
    ws = question_windows()
    assert {len(w.seq) for w in ws} == {WINDOW} and {len(w.seq) for w in reference_pool()} == {WINDOW}
    # the gold letter is independent of a question's position (and so of its id, which numbers it in that order)
    letters = [LETTERS[w.option] for w in ws]
    bins = np.array_split(np.arange(len(ws)), 5)
    counts = np.array([[sum(letters[i] == L for i in b) for L in LETTERS] for b in bins])
    assert stats.chi2_contingency(counts).pvalue > 0.001
    # within each source file, question order is unrelated to the source row (the TF files are sorted by label)
    for name in {w.file for w in ws}:
        pos = [i for i, w in enumerate(ws) if w.file == name]
        rows = [ws[i].row for i in pos]
        assert abs(stats.spearmanr(pos, rows).statistic) < 0.35, name
    # the feature sits at the centre: a donor's GT and an acceptor's AG
    assert sum(w.seq[CENTRE : CENTRE + 2] == "GT" for w in ws if w.option == 1) >= 0.95 * PER_OPTION
    assert sum(w.seq[CENTRE - 2 : CENTRE] == "AG" for w in ws if w.option == 2) >= 0.95 * PER_OPTION


def test_gc_content_alone_is_informative_but_far_from_enough():
    """Nearest class-mean GC (means from the reference pool, the other split): legitimate biology, measured."""
    gc = lambda s: (s.count("G") + s.count("C")) / len(s)  # noqa: E731
    pool = reference_pool()
    means = np.array([np.mean([gc(w.seq) for w in pool if w.option == o]) for o in range(len(OPTIONS))])
    ws = question_windows()
    pred = [int(np.argmin(np.abs(means - gc(w.seq)))) for w in ws]
    acc = np.mean([p == w.option for p, w in zip(pred, ws)])
    print(f"GC-only accuracy {acc:.3f} (chance 0.200)")
    assert 0.2 < acc < 0.5


def test_questions_references_and_demonstrations_never_share_a_window():
    q = {w.seq for w in question_windows()}
    pool = {w.seq for w in reference_pool()}
    demos = {extract_sequence(q) for q, _, _ in demonstrations("generegion")}
    assert len(demos) == 2
    assert not q & pool and not demos & (q | pool)
    assert {w.split for w in question_windows()} == {"test"} and {w.split for w in reference_pool()} == {"dev"}


@pytest.mark.parametrize("reply,letter", [("B", "B"), ("(C) splice acceptor", "C"), ("A splice donor", "B"), ("Answer: E.", "E"),
                                          ("Option D: it is bound", "D"), ("none of these", "E"), ("ACGTTGCA", ""), ("promoter core or splice donor", ""), ("", "")])
def test_choice_extraction(reply, letter):
    assert extract_choice(reply) == letter
    assert score("Promoter or not", reply, "B") == float(letter == "B")


# --- what a new user runs ---------------------------------------------------------------------------------------------
def test_coverage_and_a_reader_table_from_the_command_line(tmp_path, capsys):
    assert main(["coverage", "--benchmark", "generegion"]) == 0
    assert "knn" in capsys.readouterr().out
    out = tmp_path / "t.npz"
    assert main(["precompute", "--benchmark", "generegion", "--reasoner", "bm25", "--questions", "6", "--quiet", "--cache", str(tmp_path / "c.sqlite"), "--out", str(out)]) == 0
    table = RewardTable.load(out)
    assert table.tool_names == ("composition", "motif_scan", "splice_scan", "knn") and table.n_subsets == 16
    assert table.provenance["tools_version"].startswith("region-")


def test_the_stacked_motif_scan_equals_biopython_bitwise():
    """pssm_scores (every matrix of a length at once) against Biopython's PSSM.calculate, matrix by matrix, on
    sequences with lower case and N: the first and last matrix of every JASPAR length, on both strands."""
    from fgpo_lib.genomics.region_tools import jaspar_banks, letter_codes, pssm_scores

    rng = np.random.default_rng(0)
    seqs = ["".join(rng.choice(list("ACGTacgtN"), size=n)) for n in (40, 71, 101)]
    for seq in seqs:
        codes = letter_codes(seq)
        for m, idx, fwd, rev, lo, hi in jaspar_banks():
            if m >= len(seq):
                continue
            for strand, weights in ((2, fwd), (3, rev)):
                ours = pssm_scores(codes, weights)
                for k in (0, len(idx) - 1):
                    theirs = np.asarray(jaspar_pssms()[idx[k]][strand].calculate(Seq(seq)), dtype=np.float32)
                    assert np.array_equal(ours[k], theirs, equal_nan=True), (seq, m, strand)
