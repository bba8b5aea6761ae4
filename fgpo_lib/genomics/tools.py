"""The 8-tool genomics library: NCBI tools answering from the recorded responses, sequence tools computing with
Biopython.

A tool is a small class with ``name``, a one-line ``description`` and ``run(question, context) -> ToolOutput``.
Tools run in the fixed canonical order :data:`TOOL_ORDER`; each adds the entities it found to ``context``, and a later
tool may use them (SNP -> gene ID -> gene record is how GeneHop's multi-hop questions are answered).

Rendering: compact, deterministic, one line per item, and capped at :data:`TOKEN_CAP` tokens per tool, where a token
is up to 4 word characters or one punctuation mark (``re.findall(r"\\w{1,4}|[^\\w\\s]")``): close to what LLM
tokenizers make of DNA and protein strings, and an over-count for English words, so the cap is conservative. A
capped output ends in ``" ..."``. Where NCBI has no record, a tool says what NCBI says for no hit (``esearch``: "No items found.", BLAST:
"No significant similarity found.") and never invents a fact. Bad input (no sequence, an unknown rsID, an empty
question) gives that empty result; tools never raise on a question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from Bio.Restriction import RestrictionBatch
from Bio.Seq import Seq
from Bio.SeqUtils import gc_fraction

from .ncbi_replay import NcbiReplay, load_replay, norm_term

TOKEN_CAP = 128
NO_HIT = "No items found."
NO_BLAST_HIT = "No significant similarity found."
NO_SEQUENCE = "No DNA sequence in the question."
#: Enzymes the restriction map reports, in this order.
ENZYMES = ("EcoRI", "BamHI", "HindIII", "NotI", "XhoI", "PstI", "SmaI", "KpnI", "SacI", "XbaI", "NcoI", "NdeI")
_TOKEN = re.compile(r"\w{1,4}|[^\w\s]")
_SEQ = re.compile(r"(?<![A-Za-z])[ACGTNacgtn]{15,}(?![A-Za-z])")
_RSID = re.compile(r"\brs\d+\b", re.I)
_STOP = {
    "what", "which", "is", "the", "of", "a", "an", "gene", "genes", "official", "symbol", "chromosome", "located", "on", "human",
    "genome", "does", "snp", "locate", "convert", "to", "protein", "coding", "protein-coding", "are", "related", "list", "locations",
    "function", "associated", "with", "and", "step", "by", "solve", "them", "sub", "questions", "decompose", "let", "s", "question",
    "dna", "sequence", "align", "organism", "come", "from", "in", "this", "that", "contains", "aliases", "sequnece", "for",
}


def count_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))


def cap_tokens(text: str, cap: int = TOKEN_CAP) -> str:
    """At most ``cap`` tokens (module doc): a longer text is cut and ends in ``' ...'`` (3 tokens, counted)."""
    starts = [m.start() for m in _TOKEN.finditer(text)]
    if len(starts) <= cap:
        return text
    return text[: starts[cap - 3]].rstrip() + " ..."


@dataclass(frozen=True)
class ToolOutput:
    text: str
    entities: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass
class Context:
    """Entities found so far in one (question, subset) run, keyed by kind: ``gene_ids``, ``genes``, ``loci``."""

    entities: dict[str, list[str]] = field(default_factory=dict)

    def add(self, out: ToolOutput) -> None:
        for kind, values in out.entities.items():
            bucket = self.entities.setdefault(kind, [])
            bucket.extend(v for v in values if v not in bucket)

    def get(self, kind: str) -> list[str]:
        return self.entities.get(kind, [])


def extract_sequence(question: str) -> str:
    """The longest DNA run (>= 15 letters of ACGTN, bounded by non-letters) in ``question``, upper-cased; '' if none."""
    runs = _SEQ.findall(question or "")
    return max(runs, key=len).upper() if runs else ""


def candidate_names(question: str) -> list[str]:
    """Gene-name-like words of a question (symbols, aliases, Ensembl IDs), in order, without the question's words."""
    text = _SEQ.sub(" ", question or "")
    words = re.findall(r"[A-Za-z0-9][A-Za-z0-9\-\.@]*[A-Za-z0-9]|[A-Za-z0-9]", text)
    out = []
    for w in words:
        if w.lower() in _STOP or _RSID.fullmatch(w) or w.isdigit():
            continue
        if any(c.isupper() or c.isdigit() for c in w) and w not in out:
            out.append(w)
    return out


def disease_term(question: str) -> str:
    """The disease named by "genes related to X" in a question, or ''."""
    m = re.search(r"genes related to (.+?)(?:[?.](?:\s|$)|\?|$)", question or "", re.I)
    return m.group(1).strip() if m else ""


class Tool:
    name = ""
    description = ""

    def __init__(self, replay: NcbiReplay | None = None) -> None:
        self._replay = replay

    @property
    def replay(self) -> NcbiReplay:
        if self._replay is None:
            self._replay = load_replay()
        return self._replay

    def run(self, question: str, context: Context) -> ToolOutput:  # pragma: no cover - interface
        raise NotImplementedError

    def _out(self, lines: list[str], **entities: list[str]) -> ToolOutput:
        text = cap_tokens(f"[{self.name}] " + " | ".join(lines))
        return ToolOutput(text, {k: tuple(v) for k, v in entities.items() if v})


class GeneSearch(Tool):
    name = "gene_search"
    description = "Search NCBI Gene for the gene names, aliases or Ensembl IDs in the question; returns Entrez Gene IDs, human first."

    def run(self, question: str, context: Context) -> ToolOutput:
        lines, ids = [], []
        for name in candidate_names(question):
            # the recorded esearch hits in NCBI's relevance order, human genes first (as with "AND human[orgn]")
            hits = sorted(self.replay.genes_by_name(name), key=lambda g: getattr(self.replay.genes.get(g), "organism", "") != "Homo sapiens")
            if hits:
                lines.append(f"{name}: Gene IDs {', '.join(hits[:5])}")
                ids.extend(h for h in hits[:5] if h not in ids)
        return self._out(lines or [NO_HIT], gene_ids=ids)


class SnpLookup(Tool):
    name = "snp_lookup"
    description = "Look up the dbSNP summary of each rsID in the question: genes, chromosome, position, function class."

    def run(self, question: str, context: Context) -> ToolOutput:
        lines, ids, genes = [], [], []
        for rsid in dict.fromkeys(m.lower() for m in _RSID.findall(question or "")):
            rec = self.replay.snps.get(rsid)
            if rec is None:
                continue
            gene_txt = ", ".join(f"{s} (Gene ID {g})" for s, g in rec.genes) or "none"
            lines.append(f"{rec.rsid}: genes {gene_txt}; chromosome {rec.chromosome}; {rec.position}; {rec.function_class}")
            ids.extend(g for _, g in rec.genes if g)
            genes.extend(s for s, _ in rec.genes if s)
        return self._out(lines or [NO_HIT], gene_ids=ids, genes=genes)


class DiseaseGenes(Tool):
    name = "disease_genes"
    description = "Search OMIM for the disease in the question; returns entries with their titles, genes and loci."

    def run(self, question: str, context: Context) -> ToolOutput:
        term = disease_term(question)
        mims = self.replay.omim_search.get(norm_term(term), []) if term else []
        lines, genes, loci = [], [], []
        for mim in mims:
            e = self.replay.omim.get(mim)
            if e is None:
                continue
            lines.append(f"{e.oid} {e.title}; locus {e.locus or 'unknown'}")
            if e.oid.startswith(("*", "+")) and ";" in e.title:
                genes.append(e.title.rsplit(";", 1)[1].strip())
            if e.locus:
                loci.append(e.locus)
        return self._out(lines or [NO_HIT], genes=genes, loci=loci)


class GeneRecordTool(Tool):
    name = "gene_record"
    description = "Fetch the NCBI Gene records of gene IDs found by earlier tools: symbol, name, aliases, location, summary."

    def run(self, question: str, context: Context) -> ToolOutput:
        ids = list(context.get("gene_ids"))
        for symbol in context.get("genes"):  # symbols from OMIM/dbSNP, resolved through the recorded gene search
            ids.extend(i for i in self.replay.genes_by_name(symbol)[:1] if i not in ids)
        lines, symbols = [], []
        for gid in ids[:3]:
            r = self.replay.genes.get(gid)
            if r is None:
                continue
            # the summary's first sentence, for the first record only: it is long, and the first ID ranks highest
            summary = r.summary.split(". ")[0].rstrip(".") if r.summary and not lines else ""
            lines.append(
                f"Gene {r.gene_id}: {r.symbol}, {r.name} [{r.organism}]; aliases {', '.join(r.aliases) or 'none'}; "
                f"chromosome {r.chromosome or '?'} ({r.map_location or '?'}); {r.genomic or 'no genomic location'}"
                + (f"; summary: {summary}" if summary else "")
            )
            symbols.append(r.symbol)
        return self._out(lines or [NO_HIT], genes=symbols)


class SequenceTool(Tool):
    """A tool on the question's DNA sequence: no sequence gives :data:`NO_SEQUENCE`, else :meth:`lines`."""

    def run(self, question: str, context: Context) -> ToolOutput:
        seq = extract_sequence(question)
        return self._out(self.lines(seq) if seq else [NO_SEQUENCE])

    def lines(self, seq: str) -> list[str]:  # pragma: no cover - interface
        raise NotImplementedError


class Blast(SequenceTool):
    name = "blast"
    description = "BLAST the question's DNA sequence against NCBI nt (megablast); returns the top hits with coordinates."

    def lines(self, seq: str) -> list[str]:
        hits = self.replay.blast.get(seq, [])
        return [
            f"{h.accession} {h.description}: {min(h.subject_start, h.subject_end)}-{max(h.subject_start, h.subject_end)} ({h.identities.split()[-1].strip('()')}, {h.score_bits:g} bits)"
            for h in hits[:4]
        ] or [NO_BLAST_HIT]


class Translate(SequenceTool):
    name = "translate"
    description = "Translate the question's DNA sequence (frame 1, standard code) and report the longest ORF."

    def lines(self, seq: str) -> list[str]:
        protein = Seq(seq[: len(seq) - len(seq) % 3]).translate()
        return [f"frame 1 protein: {protein}", f"longest ORF (forward, ATG to stop): {longest_orf(seq)} codons"]


class SeqStats(SequenceTool):
    name = "seq_stats"
    description = "Length, GC content, base counts and reverse complement of the question's DNA sequence."

    def lines(self, seq: str) -> list[str]:
        counts = " ".join(f"{b}={seq.count(b)}" for b in "ACGT")
        return [f"length {len(seq)} nt; GC {gc_percent(seq)}%; {counts}", f"reverse complement: {Seq(seq).reverse_complement()}"]


class RestrictionMap(SequenceTool):
    name = "restriction_map"
    description = "Cut positions of 12 common restriction enzymes in the question's DNA sequence (Biopython)."

    def lines(self, seq: str) -> list[str]:
        sites = restriction_sites(seq)
        cut = [f"{e} at {', '.join(map(str, p))}" for e, p in sites.items() if p]
        return [("cuts: " + "; ".join(cut)) if cut else "no cuts", "no site: " + ", ".join(e for e, p in sites.items() if not p)]


# --- sequence facts shared by the tools and by GeneSeq's gold answers -----------------------------------------------
def gc_percent(seq: str) -> str:
    """GC content in percent with one decimal, as Biopython's ``gc_fraction`` (ambiguous bases ignored)."""
    return f"{100 * gc_fraction(seq, ambiguous='ignore'):.1f}"


def longest_orf(seq: str) -> int:
    """Codons (stop excluded) of the longest forward-strand ATG...stop ORF in any of the 3 frames; 0 if none."""
    best = 0
    for frame in range(3):
        sub = seq[frame:]
        prot = str(Seq(sub[: len(sub) - len(sub) % 3]).translate())
        for m in re.finditer(r"M[^*]*\*", prot):
            best = max(best, len(m.group(0)) - 1)
    return best


def restriction_sites(seq: str) -> dict[str, list[int]]:
    """1-based cut positions of each of :data:`ENZYMES` on a linear sequence, in :data:`ENZYMES` order."""
    found = RestrictionBatch(list(ENZYMES)).search(Seq(seq), linear=True)
    by_name = {str(e): sorted(p) for e, p in found.items()}
    return {e: by_name.get(e, []) for e in ENZYMES}


TOOL_CLASSES = (GeneSearch, SnpLookup, DiseaseGenes, GeneRecordTool, Blast, Translate, SeqStats, RestrictionMap)
#: Canonical tool order: producers of gene IDs come before gene_record, which uses them.
TOOL_ORDER = tuple(c.name for c in TOOL_CLASSES)


def make_tools(replay: NcbiReplay | None = None) -> list[Tool]:
    """The 8 tools in canonical order, sharing one replay index."""
    return [cls(replay) for cls in TOOL_CLASSES]


def run_subset(tools: list[Tool], names: tuple[str, ...], question: str, cache: dict | None = None) -> list[ToolOutput]:
    """Run the named tools (any order given; executed in canonical order) on one question.

    ``cache``: an optional dict reused across calls; a tool's output is stored under (tool, question, entities seen
    so far), which is everything it depends on, so evaluating many subsets of one question runs each tool once per
    distinct context.
    """
    unknown = set(names) - {t.name for t in tools}
    if unknown:
        raise KeyError(f"unknown tool(s) {sorted(unknown)}; known: {[t.name for t in tools]}")
    ctx, outs = Context(), []
    for tool in tools:
        if tool.name in names:
            if cache is None:
                out = tool.run(question, ctx)
            else:
                key = (tool.name, question, tuple((k, tuple(v)) for k, v in sorted(ctx.entities.items())))
                if key not in cache:
                    cache[key] = tool.run(question, ctx)
                out = cache[key]
            ctx.add(out)
            outs.append(out)
    return outs


def render_outputs(outputs: list[ToolOutput]) -> str:
    """The tool outputs as the reasoner sees them: one per line, in canonical order."""
    return "\n".join(o.text for o in outputs)
