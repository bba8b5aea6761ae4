"""The offline genomics environment: replay indexes, tools, benchmarks, scoring, coverage."""

import socket

import pytest
from Bio.Seq import Seq

from fgpo_lib.cli import main
from fgpo_lib.genomics.benchmarks import GENESEQ_TASKS, load_benchmark, source_sequences
from fgpo_lib.genomics.coverage import coverage_table
from fgpo_lib.genomics.ncbi_replay import load_replay, parse_blast_text
from fgpo_lib.genomics.scoring import extract_answer, score
from fgpo_lib.genomics.tools import NO_BLAST_HIT, NO_HIT, NO_SEQUENCE, TOKEN_CAP, TOOL_ORDER, count_tokens, make_tools, run_subset


@pytest.fixture(scope="module")
def tools():
    return make_tools()


def test_network_is_blocked_in_tests():
    with pytest.raises(OSError, match="network access blocked"):
        socket.create_connection(("93.184.216.34", 80), timeout=1)


# --- replay indexes: facts checked against the raw recorded responses -------------------------------------------------
def test_replay_parses_real_records():
    rp = load_replay()
    psmb10 = rp.genes["5699"]  # esummary/efetch for Entrez ID 5699
    assert psmb10.symbol == "PSMB10" and "LMP10" in psmb10.aliases and psmb10.map_location == "16q22.1"
    assert "5699" in rp.genes_by_name("LMP10")  # recorded esearch db=gene term=LMP10
    assert rp.snps["rs1217074595"].genes == (("LINC01270", "284751"),)
    assert rp.omim["171860"].title.endswith("PFKL") and rp.omim["171860"].locus == "21q22.3"
    assert rp.ensembl["ENSG00000215251"] == "60493"
    assert len(rp.genes) > 500 and len(rp.snps) >= 100 and len(rp.blast) >= 90


def test_blast_text_parser_reads_hits_and_coordinates():
    report = """ALIGNMENTS
>CP034493.1 Eukaryotic synthetic construct chromosome 15
Length=82521392

 Score = 237 bits (128),  Expect = 3e-58
 Identities = 128/128 (100%), Gaps = 0/128 (0%)
 Strand=Plus/Plus

Query  1         ATTCTGCCTT  10
Sbjct  72494035  ATTCTGCCTT  72494044

Query  11        TTAGTAATTT  20
Sbjct  72494045  TTAGTAATTT  72494054

>CP068263.2 Homo sapiens isolate CHM13 chromosome 15
Length=99753195

 Score = 237 bits"""
    hits = parse_blast_text(report)
    assert len(hits) == 1  # the second hit is cut off mid-record and dropped
    h = hits[0]
    assert (h.accession, h.subject_start, h.subject_end, h.score_bits, h.evalue) == ("CP034493.1", 72494035, 72494054, 237.0, "3e-58")


# --- tools ------------------------------------------------------------------------------------------------------------
def _first(task, bench="geneturing"):
    return next(q for q in load_benchmark(bench) if q.task == task)


def test_multi_hop_snp_to_gene_record(tools):
    q = _first("SNP gene function", "genehop")
    outs = run_subset(tools, ("snp_lookup", "gene_record"), q.text)
    assert "LINC01270" in outs[0].text and outs[0].entities["gene_ids"] == ("284751",)
    assert outs[1].text.startswith("[gene_record] Gene 284751: LINC01270")
    # without the SNP tool, gene_record has no IDs: it answers like efetch with nothing to fetch
    assert run_subset(tools, ("gene_record",), q.text)[0].text == f"[gene_record] {NO_HIT}"


def test_tools_are_deterministic_and_capped(tools):
    for bench in ("geneturing", "genehop", "geneseq"):
        for q in load_benchmark(bench)[::37]:
            a = run_subset(tools, TOOL_ORDER, q.text)
            b = run_subset(make_tools(), TOOL_ORDER, q.text)
            assert [o.text for o in a] == [o.text for o in b]
            assert all(count_tokens(o.text) <= TOKEN_CAP for o in a)


BAD_QUESTIONS = {
    "no sequence": "Which organism does the DNA sequence come from?",
    "unknown rsID": "Which gene is SNP rs999999999999 associated with?",
    "non-ACGT characters": "Align the DNA sequence to the human genome:ATGCRYKMSWBDHVNNXQZATGC",
    "empty question": "",
    "10 kb sequence": "Align the DNA sequence to the human genome:" + ("ACGTTGCAAGGCTTAACCGA" * 500),
}


@pytest.mark.parametrize("case", list(BAD_QUESTIONS))
def test_bad_input_gives_the_real_empty_result(tools, case):
    question = BAD_QUESTIONS[case]
    outs = {o.text.split("]")[0][1:]: o.text for o in run_subset(tools, TOOL_ORDER, question)}
    assert set(outs) == set(TOOL_ORDER)
    for name in ("gene_search", "snp_lookup", "disease_genes", "gene_record"):
        assert outs[name] == f"[{name}] {NO_HIT}"
    if case == "10 kb sequence":
        assert outs["blast"] == f"[blast] {NO_BLAST_HIT}"  # never recorded: NCBI's no-hit answer, no invented hit
        assert "length 10000 nt; GC 50.0%" in outs["seq_stats"]
        assert outs["seq_stats"].endswith(" ...")  # capped
    else:
        for name in ("blast", "translate", "seq_stats", "restriction_map"):
            assert outs[name] == f"[{name}] {NO_SEQUENCE}"


def test_sequence_tools_compute_with_biopython(tools):
    seq = "ATGGAATTCAAAGGATCCTAA"  # EcoRI GAATTC at 4, BamHI GGATCC at 13
    q = f"What is this DNA sequence: {seq}"
    outs = {o.text.split("]")[0][1:]: o.text for o in run_subset(tools, ("translate", "seq_stats", "restriction_map"), q)}
    assert "frame 1 protein: MEFKGS*" in outs["translate"] and "longest ORF (forward, ATG to stop): 6 codons" in outs["translate"]
    assert f"reverse complement: {Seq(seq).reverse_complement()}" in outs["seq_stats"]
    assert "GC 33.3%; A=9 C=3 G=4 T=5" in outs["seq_stats"]  # 7 of 21 are G or C
    assert "EcoRI at 5" in outs["restriction_map"] and "BamHI at 14" in outs["restriction_map"]


# --- benchmarks -------------------------------------------------------------------------------------------------------
def test_benchmark_sizes_tasks_and_splits():
    gt, gh, gs = (load_benchmark(b) for b in ("geneturing", "genehop", "geneseq"))
    assert len(gt) == 450 and len({q.task for q in gt}) == 9
    assert len(gh) == 100 and {q.task for q in gh} == {"Disease gene location", "SNP gene function"}
    assert len(gs) >= 300 and {q.task for q in gs} == set(GENESEQ_TASKS)
    for qs in (gt, gh, gs):
        for task in {q.task for q in qs}:
            tq = [q for q in qs if q.task == task]
            assert sum(q.split == "test" for q in tq) == round(0.3 * len(tq))
        assert len({q.qid for q in qs}) == len(qs)
    assert [q.split for q in load_benchmark("geneturing")] == [q.split for q in gt]  # fixed


def test_geneseq_golds_match_independent_computation():
    seqs = dict(source_sequences())
    assert len(seqs) == 150
    for q in load_benchmark("geneseq"):
        seq = q.text.rsplit(": ", 1)[1]
        if q.task == "GC content":
            assert q.answer == f"{100 * (seq.count('G') + seq.count('C')) / len(seq.replace('N', '')):.1f}"
        elif q.task == "Sequence length":
            assert q.answer == str(len(seq))
        elif q.task == "Reverse complement":
            assert q.answer == seq[:12][::-1].translate(str.maketrans("ACGT", "TGCA"))


# --- scoring ----------------------------------------------------------------------------------------------------------
def test_scoring_real_examples_every_geneturing_task():
    free_text = {
        "symbol": "The official gene symbol of {q} is {a}.",
        "chromosome": "It is located on chromosome {n}.",
    }
    for q in [next(x for x in load_benchmark("geneturing") if x.task == t) for t in {x.task for x in load_benchmark("geneturing")}]:
        assert score(q.task, str(q.answer), q.answer) == 1.0, q.task
        assert score(q.task, "Answer: something else entirely", q.answer) == 0.0, q.task
    alias = _first("Gene alias")  # What is the official gene symbol of LMP10? -> PSMB10
    assert extract_answer(free_text["symbol"].format(q="LMP10", a="PSMB10"), alias.task) == "PSMB10"
    assert score(alias.task, "The official gene symbol of LMP10 is PSMB10.", alias.answer) == 1.0
    loc = _first("Gene location")  # FAM66D -> chr8
    assert score(loc.task, free_text["chromosome"].format(n=8), loc.answer) == 1.0
    species = _first("Multi-species DNA aligment")  # worm
    assert score(species.task, "Answer: Caenorhabditis elegans", species.answer) == 1.0
    assert extract_answer("Answer: Homo sapiens", species.task) == "human"
    coding = _first("Protein-coding genes")  # ATP5F1EP2 -> NA
    assert score(coding.task, "No, ATP5F1EP2 is a pseudogene.", coding.answer) == 1.0
    assert score(coding.task, "Yes.", coding.answer) == 0.0


def test_alignment_scores_one_half_and_zero():
    q = _first("Human genome DNA aligment")  # chr15:91950805-91950932
    assert score(q.task, "chr15:91950805-91950932", q.answer) == 1.0
    assert score(q.task, "The sequence aligns to chr15:91,950,000-91,950,932.", q.answer) == 0.5
    assert score(q.task, "Answer: chromosome 15", q.answer) == 0.5
    assert score(q.task, "chr8:7081648-7081782", q.answer) == 0.0


def test_genehop_list_and_free_text_answers():
    dgl = _first("Disease gene location", "genehop")  # ['21q22.3']
    assert score(dgl.task, "The genes are located at 21q22.3 and 12q13.11.", dgl.answer) == 1.0
    gda = _first("Gene disease association")  # SLC4A1, ATP6V0A4 is the second question; the first is PFKL
    two = next(q for q in load_benchmark("geneturing") if q.task == "Gene disease association" and "," in str(q.answer))
    first, second = [x.strip() for x in str(two.answer).split(",")][:2]
    assert score(two.task, f"{first}", two.answer) == pytest.approx(1 / len(str(two.answer).split(",")))
    assert score(gda.task, "PFKL and AK1", gda.answer) == 1.0
    fn = next(q for q in load_benchmark("genehop") if q.task == "SNP gene function" and len(str(q.answer)) > 60)
    assert score(fn.task, str(fn.answer), fn.answer) == pytest.approx(1.0)
    assert 0.0 < score(fn.task, " ".join(str(fn.answer).split()[:6]), fn.answer) < 1.0


def test_score_cli(tmp_path, capsys):
    qs = load_benchmark("geneturing")
    path = tmp_path / "p.jsonl"
    import json

    lines = [json.dumps({"question": q.text, "prediction": f"Answer: {q.answer}"}) for q in qs if q.task == "Gene alias"]
    path.write_text("\n".join(lines) + "\n")
    assert main(["score", "--benchmark", "geneturing", "--predictions", str(path)]) == 0
    out = capsys.readouterr().out
    assert "Gene alias" in out and "1.0000" in out and "all" in out
    path.write_text('{"question": "not a GeneTuring question", "prediction": "x"}\n')
    assert main(["score", "--benchmark", "geneturing", "--predictions", str(path)]) == 2
    assert "line 1: question 'not a GeneTuring question' is not in benchmark 'geneturing'" in capsys.readouterr().err


# --- coverage ---------------------------------------------------------------------------------------------------------
def test_coverage_table_and_command(capsys):
    table = coverage_table("geneturing").set_index("task")
    assert len(table) == 10 and table.loc["all", "questions"] == 450
    assert table.loc["all", "reachable_%"] >= 80.0
    assert table.loc["SNP location", "best_single_tool"] == "snp_lookup"
    assert (table["reachable_%"] >= table["fully_reachable_%"]).all()
    assert main(["coverage", "--benchmark", "genehop"]) == 0
    assert "Disease gene location" in capsys.readouterr().out
