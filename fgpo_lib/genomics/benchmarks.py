"""The four built-in benchmarks, each a list of :class:`Question` with a fixed, versioned train/test split.

* **GeneTuring**: the 450 questions of ``geneturing.json``, 9 tasks x 50.
* **GeneHop**: the 100 questions of ``genehop.json`` whose calls were recorded: "Disease gene location" and "SNP gene
  function". "sequence gene alias" is left out because its recorded GeneGPT log (``sequence gene alias.json``,
  4 MiB or more) could not be obtained, so none of its NCBI responses are in the replay data: no tool could answer
  it from the record.
* **GeneSeq** (derived here, not from GeneGPT): 300 questions over the 150 real DNA sequences in GeneTuring's two
  alignment tasks and GeneHop's "sequence gene alias" task. Each sequence gets two of six question types in turn
  (GC content, length, frame-1 translation of the first 10 codons, longest ORF, restriction cut sites, reverse
  complement of the first 12 nt); every gold answer is computed by Biopython.
* **GeneRegion** (the paper's form): 500 multiple-choice questions "which kind of region is this sequence?" over
  real labelled GUE sequences, answered with four independent sequence tools of its own
  (:mod:`fgpo_lib.genomics.generegion`, :mod:`fgpo_lib.genomics.region_tools`).

Question ids are ``<benchmark>/<task slug>/<index>``; the split is :func:`fgpo_lib.table.stratified_split` by task
with ``SPLIT_SEED`` and 30% test, and ``SPLIT_VERSION`` names it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

from Bio.Seq import Seq

from ..table import stratified_split
from .generegion import DATA as REGION_DATA
from .ncbi_replay import DATA_DIR, RESPONSES
from .region_tools import REGION_TOOL_ORDER
from .tools import ENZYMES, TOOL_ORDER, extract_sequence, gc_percent, longest_orf, restriction_sites

SPLIT_VERSION = "v1"
SPLIT_SEED = 20231
TEST_FRACTION = 0.3
GENEHOP_TASKS = ("Disease gene location", "SNP gene function")


@dataclass(frozen=True)
class Question:
    qid: str
    benchmark: str
    task: str
    text: str
    answer: str | tuple[str, ...]
    split: str = "train"


def slug(task: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", task.lower()).strip("-")


def _with_split(questions: list[Question]) -> list[Question]:
    split = stratified_split([q.qid for q in questions], [q.task for q in questions], TEST_FRACTION, SPLIT_SEED)
    return [Question(q.qid, q.benchmark, q.task, q.text, q.answer, str(s)) for q, s in zip(questions, split)]


def _load_json(name: str) -> dict:
    return json.loads((DATA_DIR / name).read_text())


def _from_tasks(benchmark: str, data: dict, tasks) -> list[Question]:
    out = []
    for task in tasks:
        for i, (text, gold) in enumerate(data[task].items()):
            answer = tuple(gold) if isinstance(gold, list) else str(gold)
            out.append(Question(f"{benchmark}/{slug(task)}/{i:03d}", benchmark, task, text, answer))
    return out


def geneturing() -> list[Question]:
    data = _load_json("geneturing.json")
    return _with_split(_from_tasks("geneturing", data, list(data)))


def genehop() -> list[Question]:
    return _with_split(_from_tasks("genehop", _load_json("genehop.json"), GENEHOP_TASKS))


def source_sequences() -> list[tuple[str, str]]:
    """``(source qid, sequence)`` for every real DNA sequence in GeneTuring and GeneHop questions, in file order."""
    out = []
    for bench, name, tasks in (("geneturing", "geneturing.json", ("Human genome DNA aligment", "Multi-species DNA aligment")), ("genehop", "genehop.json", ("sequence gene alias",))):
        data = _load_json(name)
        for task in tasks:
            for i, text in enumerate(data[task]):
                seq = extract_sequence(text)
                if seq:
                    out.append((f"{bench}/{slug(task)}/{i:03d}", seq))
    return out


def _geneseq_item(kind: str, seq: str) -> tuple[str, str]:
    """(question text, gold answer) of one GeneSeq question type for one sequence."""
    if kind == "GC content":
        return f"What is the GC content (percent, one decimal) of this DNA sequence: {seq}", gc_percent(seq)
    if kind == "Sequence length":
        return f"How many nucleotides long is this DNA sequence: {seq}", str(len(seq))
    if kind == "Translation":
        return f"Translate the first 30 nucleotides (frame 1, standard code) of this DNA sequence into protein: {seq}", str(Seq(seq[:30]).translate())
    if kind == "Longest ORF":
        return f"How many codons (stop excluded) long is the longest forward-strand ORF starting with ATG in this DNA sequence: {seq}", str(longest_orf(seq))
    if kind == "Restriction sites":
        sites = restriction_sites(seq)
        cutting = [e for e in ENZYMES if sites[e]]
        return f"Which of these enzymes cut this DNA sequence ({', '.join(ENZYMES)}): {seq}", ", ".join(cutting) if cutting else "none"
    if kind == "Reverse complement":
        return f"What is the reverse complement of the first 12 nucleotides of this DNA sequence: {seq}", str(Seq(seq[:12]).reverse_complement())
    raise ValueError(kind)


GENESEQ_TASKS = ("GC content", "Sequence length", "Translation", "Longest ORF", "Restriction sites", "Reverse complement")


def geneseq() -> list[Question]:
    """Two question types per source sequence, cycling through :data:`GENESEQ_TASKS`."""
    out = []
    for i, (_, seq) in enumerate(source_sequences()):
        for j in range(2):
            kind = GENESEQ_TASKS[(2 * i + j) % len(GENESEQ_TASKS)]
            text, gold = _geneseq_item(kind, seq)
            out.append(Question(f"geneseq/{slug(kind)}/{i:03d}", "geneseq", kind, text, gold))
    return _with_split(out)


def generegion() -> list[Question]:
    """The multiple-choice sequence benchmark of :mod:`fgpo_lib.genomics.generegion`, 500 questions, 3 tasks."""
    from .generegion import FAMILIES, letter, question_text, question_windows

    out, counts = [], dict.fromkeys((f.task for f in FAMILIES), 0)
    for w in question_windows():  # a question's id numbers it within its task in question order, never its source row
        out.append(Question(f"generegion/{slug(w.family)}/{counts[w.family]:03d}", "generegion", w.family, question_text(w.seq), letter(w.option)))
        counts[w.family] += 1
    return _with_split(out)


@dataclass(frozen=True)
class Benchmark:
    """One entry of the benchmark registry, :data:`BENCHMARKS`. Adding a benchmark means adding one entry.

    Attributes:
        name: the id used on the command line, in table file names and in the study.
        title: as the book writes it.
        load: returns the questions, with their split.
        library4: the benchmark's 4-tool library, chosen by the rule of :mod:`fgpo_lib.genomics.libraries` (a test
            re-derives it), or, for a benchmark built with exactly four tools, those four.
        tools: the benchmark's whole library (the default of ``fgpo precompute``): the 8 NCBI and sequence tools, or
            its own.
        prompt: the prompt of generative reasoners (:data:`fgpo_lib.reasoners.prompts.PROMPTS`): its instructions
            and worked examples.
        data: the data files its questions and tools read (hashed into a table's provenance).
    """

    name: str
    title: str
    load: Callable[[], list[Question]]
    library4: tuple[str, ...]
    tools: tuple[str, ...] = TOOL_ORDER
    prompt: str = "genomics"
    data: Callable[[], list[Path]] = lambda: [DATA_DIR / "geneturing.json", DATA_DIR / "genehop.json", RESPONSES]


#: the benchmark registry: name -> entry. Lists, CLI choices and the study's settings derive from it.
BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in (
        Benchmark("geneturing", "GeneTuring", geneturing, ("gene_search", "snp_lookup", "gene_record", "blast")),
        Benchmark("genehop", "GeneHop", genehop, ("gene_search", "snp_lookup", "disease_genes", "gene_record")),
        Benchmark("geneseq", "GeneSeq", geneseq, ("gene_search", "translate", "seq_stats", "restriction_map")),
        Benchmark("generegion", "GeneRegion (multiple choice)", generegion, REGION_TOOL_ORDER, REGION_TOOL_ORDER, prompt="generegion",
                  data=lambda: sorted(REGION_DATA.glob("*.csv.gz"))),
    )
}


@lru_cache(maxsize=None)
def _load(name: str) -> tuple[Question, ...]:
    return tuple(BENCHMARKS[name].load())


def load_benchmark(name: str) -> list[Question]:
    """The questions of ``name`` (one of :data:`BENCHMARKS`), with their split."""
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; built-in: {', '.join(BENCHMARKS)}")
    return list(_load(name))
