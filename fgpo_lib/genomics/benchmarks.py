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

import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

from Bio.Seq import Seq

from ..splits import Question, stratified_split
from .generegion import DATA as REGION_DATA
from .ncbi_replay import DATA_DIR, RESPONSES
from .region_tools import REGION_TOOL_ORDER
from .tools import ENZYMES, TOKEN_CAP, TOOL_ORDER, extract_sequence, gc_percent, longest_orf, make_tools, render_outputs, restriction_sites, run_subset
from .tools_extra import EXTRA_TOOL_ORDER, make_all_tools

SPLIT_VERSION = "v1"
SPLIT_SEED = 20231
TEST_FRACTION = 0.3
GENEHOP_TASKS = ("Disease gene location", "SNP gene function")


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

    The precompute engine reads a benchmark only through this entry's interface (:meth:`questions`,
    :meth:`make_tools`, :meth:`tools_version`, :meth:`score`, :meth:`data_sha256`, :meth:`library`, ``prompt``),
    which a user's benchmark (:class:`fgpo_lib.agent.AgentBenchmark`) shares.

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
        extra_tools: tools beyond ``tools`` that a library of this benchmark may hold (the scaling chapter's 12).
    """

    name: str
    title: str
    load: Callable[[], list[Question]]
    library4: tuple[str, ...]
    tools: tuple[str, ...] = TOOL_ORDER
    prompt: str = "genomics"
    data: Callable[[], list[Path]] = lambda: [DATA_DIR / "geneturing.json", DATA_DIR / "genehop.json", RESPONSES]
    extra_tools: tuple[str, ...] = EXTRA_TOOL_ORDER

    def questions(self) -> list[Question]:
        """Every question, with its split."""
        return load_benchmark(self.name)

    def make_tools(self) -> list:
        """An instance of every genomics tool (they run in canonical order; a library picks some)."""
        return make_all_tools()

    def tools_version(self, tools) -> str:
        """The fingerprint of the tools in ``tools`` (names): :func:`library_tools_version`."""
        return library_tools_version(tools)

    def score(self, question: Question, answer: str) -> float:
        """The reward of ``answer`` to ``question``, in [0, 1] (:func:`fgpo_lib.genomics.scoring.score`, lenient)."""
        from .scoring import score

        return float(score(question.task, answer, question.answer))

    def data_sha256(self) -> str:
        """sha256 of the data files the questions and tools read."""
        import hashlib

        h = hashlib.sha256()
        for path in self.data():
            h.update(Path(path).read_bytes())
        return h.hexdigest()

    def library(self, tools=None) -> tuple[str, ...]:
        """``tools`` (names, any order; ``None``: :attr:`tools`) as a library in canonical order. A tool that is not
        this benchmark's (another benchmark's, or unknown) is a named ``ValueError``."""
        from .tool_order import library_tools

        if tools is None:
            return self.tools
        own = set(self.tools) | set(self.extra_tools)
        foreign = [t for t in tools if t not in own]
        if foreign:
            raise ValueError(f"{', '.join(map(repr, foreign))} {'is not a tool' if len(foreign) == 1 else 'are not tools'} of benchmark {self.name!r}; "
                             f"its tools are {', '.join(self.tools)}" + (f" (and, for larger libraries, {', '.join(self.extra_tools)})" if self.extra_tools else ""))
        return library_tools(tools)


#: the benchmark registry: name -> entry. Lists, CLI choices and the study's settings derive from it.
BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in (
        Benchmark("geneturing", "GeneTuring", geneturing, ("gene_search", "snp_lookup", "gene_record", "blast")),
        Benchmark("genehop", "GeneHop", genehop, ("gene_search", "snp_lookup", "disease_genes", "gene_record")),
        Benchmark("geneseq", "GeneSeq", geneseq, ("gene_search", "translate", "seq_stats", "restriction_map")),
        Benchmark("generegion", "GeneRegion (multiple choice)", generegion, REGION_TOOL_ORDER, REGION_TOOL_ORDER, prompt="generegion",
                  data=lambda: sorted(REGION_DATA.glob("*.csv.gz")), extra_tools=()),
    )
}


# --- the tools' fingerprints: what a cell's cache key says about the tools that made it ------------------------------
# A fingerprint is the sha256 of what the tools output on the built-in questions, so a refactor that leaves every
# output unchanged keeps it, and any change to an output (code, data or token cap) changes it, and with it every
# cache key of the cells those tools made. Each library has its own (library_tools_version), so adding tools never
# changed the key of another library's cells. The entries above hand it to the precompute engine; a user's benchmark
# brings its own (fgpo_lib.agent).
#: the built-in benchmarks whose questions the 8 tools' and the extra tools' fingerprints run on
_PROBE_BENCHMARKS = ("geneturing", "genehop", "geneseq")


def _outputs_hash(tools: list, probes: list[tuple[str, ...]]) -> str:
    """sha256 (hex) of what each probe (a subset of tool names) outputs on every built-in question."""
    h = hashlib.sha256()
    for name in _PROBE_BENCHMARKS:
        for q in load_benchmark(name):
            cache: dict = {}
            for probe in probes:
                h.update(render_outputs(run_subset(tools, probe, q.text, cache)).encode())
    return h.hexdigest()


@lru_cache(maxsize=1)
def tools_version() -> str:
    """The 8 tools' fingerprint: each single tool, and ``gene_record`` after each of the three tools that feed it,
    on all GeneTuring, GeneHop and GeneSeq questions, with the token cap."""
    probes = [(t,) for t in TOOL_ORDER] + [(t, "gene_record") for t in ("gene_search", "snp_lookup", "disease_genes")]
    return _outputs_hash(make_tools(), probes)[:16] + f"-cap{TOKEN_CAP}"


@lru_cache(maxsize=1)
def extra_tools_version() -> str:
    """:func:`tools_version` of the 12 extra tools (each alone, and each after ``gene_search``), appended to the 8's.
    A cell whose subset holds an extra tool is keyed with it; a cell of the 8 tools keeps the 8's version, so larger
    libraries share the 8-tool library's cached cells."""
    probes = [(t,) for t in EXTRA_TOOL_ORDER] + [("gene_search", t) for t in EXTRA_TOOL_ORDER]
    return f"{tools_version()}+x{_outputs_hash(make_all_tools(), probes)[:12]}"


@lru_cache(maxsize=1)
def region_tools_version() -> str:
    """GeneRegion's 4 tools: sha256 of what each outputs alone on every 5th GeneRegion question (100 questions: the
    motif scan is the costly one), with the token cap."""
    h = hashlib.sha256()
    tools = [t for t in make_all_tools() if t.name in _REGION_TOOLS]
    for q in load_benchmark("generegion")[::5]:
        for t in tools:
            h.update(render_outputs(run_subset(tools, (t.name,), q.text)).encode())
    return f"region-{h.hexdigest()[:16]}-cap{TOKEN_CAP}"


_EXTRA_TOOLS = frozenset(EXTRA_TOOL_ORDER)
_REGION_TOOLS = frozenset(REGION_TOOL_ORDER)


def library_tools_version(tools) -> str:
    """The tools version of a library or subset (tool names): GeneRegion's when it holds one of its tools, else the
    8's, or with the extra tools' when it holds one. Called for every cache key, so it builds no set of its own."""
    if not _REGION_TOOLS.isdisjoint(tools):
        return region_tools_version()
    return tools_version() if _EXTRA_TOOLS.isdisjoint(tools) else extra_tools_version()


@lru_cache(maxsize=None)
def _load(name: str) -> tuple[Question, ...]:
    return tuple(BENCHMARKS[name].load())


def load_benchmark(name: str) -> list[Question]:
    """The questions of ``name`` (one of :data:`BENCHMARKS`), with their split."""
    if name not in BENCHMARKS:
        raise ValueError(f"unknown benchmark {name!r}; built-in: {', '.join(BENCHMARKS)}")
    return list(_load(name))
