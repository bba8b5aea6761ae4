"""Twelve more real tools, for the larger libraries of the scaling chapter (12, 16 and 20 tools).

They follow the 8-tool library's rules (:mod:`fgpo_lib.genomics.tools`): deterministic, capped at ``TOKEN_CAP``
tokens, never inventing a fact, never raising on a question. Six compute on the question's DNA sequence with
Biopython; six are further views of the recorded NCBI responses. As in a real tool registry, several are useless for
most questions (a CpG scan for a gene-alias question), and some overlap with the 8 (a reverse complement is also in
``seq_stats``). They come after the 8 in the canonical order, so adding them changes neither ``TOOL_ORDER`` nor the
8-tool library's tools version; a table over a larger library carries its own version
(:func:`fgpo_lib.genomics.benchmarks.tools_version` of its library).
"""

from __future__ import annotations

from Bio.Seq import Seq
from Bio.SeqUtils import MeltingTemp, molecular_weight
from Bio.SeqUtils.ProtParam import ProteinAnalysis

from .tools import _RSID, NO_HIT, Context, SequenceTool, Tool, ToolOutput, candidate_names, disease_term, gc_percent
from .ncbi_replay import norm_term


# --- sequence tools -------------------------------------------------------------------------------------------------
class OrfFinder(SequenceTool):
    name = "orf_finder"
    description = "Find open reading frames (ATG to stop, at least 10 codons) on both strands of the question's DNA."

    def lines(self, seq: str) -> list[str]:
        found = []
        for strand, s in (("+", seq), ("-", str(Seq(seq).reverse_complement()))):
            for frame in range(3):
                sub = s[frame:]
                prot = str(Seq(sub[: len(sub) - len(sub) % 3]).translate())
                start = prot.find("M")
                while start != -1:
                    stop = prot.find("*", start)
                    if stop == -1:
                        break
                    if stop - start >= 10:
                        found.append((stop - start, f"{strand}{frame + 1} codons {start + 1}-{stop} ({stop - start} aa)"))
                    start = prot.find("M", stop)
        found.sort(key=lambda x: -x[0])
        return [t for _, t in found[:4]] or ["no ORF of 10 codons or more"]


class CpgIslands(SequenceTool):
    name = "cpg_islands"
    description = "Scan the question's DNA for CpG-island-like windows (50 nt, GC > 50%, observed/expected CpG > 0.6)."

    def lines(self, seq: str) -> list[str]:
        w, hits = 50, []
        for i in range(0, max(1, len(seq) - w + 1), 10):
            win = seq[i : i + w]
            c, g = win.count("C"), win.count("G")
            cpg = win.count("CG")
            if len(win) == w and (c + g) / w > 0.5 and c and g and cpg * w / (c * g) > 0.6:
                hits.append(f"{i + 1}-{i + w} (GC {100 * (c + g) / w:.0f}%, CpG o/e {cpg * w / (c * g):.2f})")
        return hits[:4] or [f"no CpG-island-like window (overall CpG count {seq.count('CG')})"]


class CodonUsage(SequenceTool):
    name = "codon_usage"
    description = "Codon counts of the question's DNA in frame 1: the most frequent codons and the stop codons."

    def lines(self, seq: str) -> list[str]:
        codons = [seq[i : i + 3] for i in range(0, len(seq) - 2, 3)]
        counts: dict[str, int] = {}
        for c in codons:
            counts[c] = counts.get(c, 0) + 1
        top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:6]
        stops = sum(counts.get(s, 0) for s in ("TAA", "TAG", "TGA"))
        return [f"{len(codons)} codons; top: " + ", ".join(f"{c}={n}" for c, n in top), f"stop codons in frame: {stops}"]


class GcSkew(SequenceTool):
    name = "gc_skew"
    description = "GC skew (G - C) / (G + C) of the question's DNA overall and in windows of 25 nt."

    def lines(self, seq: str) -> list[str]:
        def skew(s: str) -> str:
            g, c = s.count("G"), s.count("C")
            return f"{(g - c) / (g + c):+.2f}" if g + c else "n/a"

        wins = [skew(seq[i : i + 25]) for i in range(0, len(seq), 25)]
        return [f"overall GC skew {skew(seq)}; GC {gc_percent(seq)}%", "windows: " + " ".join(wins[:12])]


class ProteinProperties(SequenceTool):
    name = "protein_properties"
    description = "Molecular weight and isoelectric point of the frame-1 translation of the question's DNA, up to the first stop."

    def lines(self, seq: str) -> list[str]:
        protein = str(Seq(seq[: len(seq) - len(seq) % 3]).translate()).split("*")[0].replace("X", "")
        if not protein:
            return ["frame 1 starts with a stop codon: no protein"]
        pa = ProteinAnalysis(protein)
        return [f"{len(protein)} aa; molecular weight {molecular_weight(protein, seq_type='protein'):.1f} Da; pI {pa.isoelectric_point():.2f}"]


class MeltingTemperature(SequenceTool):
    name = "melting_temp"
    description = "Melting temperature (nearest-neighbour, Biopython defaults) and DNA molecular weight of the question's DNA."

    def lines(self, seq: str) -> list[str]:
        clean = "".join(b for b in seq if b in "ACGT")
        return [f"Tm {MeltingTemperature._tm(clean)} C; length {len(clean)} nt; ssDNA molecular weight {molecular_weight(clean, seq_type='DNA'):.1f} Da"]

    @staticmethod
    def _tm(seq: str) -> str:
        try:
            return f"{MeltingTemp.Tm_NN(seq):.1f}"
        except (ValueError, IndexError, ZeroDivisionError):
            return "n/a"


# --- views of the recorded NCBI responses -----------------------------------------------------------------------------
class _GeneView(Tool):
    """A view of NCBI Gene records: the gene IDs earlier tools found, else the question's names looked up; one
    :meth:`line` per record (``None`` skips it)."""

    def records(self, question: str, context: Context):
        ids = list(context.get("gene_ids"))
        if not ids:
            for name in candidate_names(question):
                ids.extend(i for i in self.replay.genes_by_name(name)[:1] if i not in ids)
        return [r for r in (self.replay.genes.get(g) for g in ids[:3]) if r is not None]

    def run(self, question: str, context: Context) -> ToolOutput:
        lines = [line for line in map(self.line, self.records(question, context)) if line is not None]
        return self._out(lines or [NO_HIT])

    def line(self, r) -> str | None:  # pragma: no cover - interface
        raise NotImplementedError


class GeneSummary(_GeneView):
    name = "gene_summary"
    description = "The full NCBI Gene summary paragraph of the genes in the question (or found by earlier tools)."

    def line(self, r) -> str | None:
        return f"{r.symbol}: {r.summary}" if r.summary else None


class GeneAliases(_GeneView):
    name = "gene_aliases"
    description = "Official symbol, full name and every alias of the genes in the question (NCBI Gene)."

    def line(self, r) -> str | None:
        return f"{r.symbol} ({r.name}): aliases {', '.join(r.aliases) or 'none'}"


class GeneLocation(_GeneView):
    name = "gene_location"
    description = "Chromosome, cytogenetic band and genomic coordinates of the genes in the question (NCBI Gene)."

    def line(self, r) -> str | None:
        return f"{r.symbol}: chromosome {r.chromosome or '?'}, band {r.map_location or '?'}, {r.genomic or 'no genomic location'}"


class SnpClinical(Tool):
    name = "snp_clinical"
    description = "Clinical significance and function class that dbSNP records for each rsID in the question."

    def run(self, question: str, context: Context) -> ToolOutput:
        lines = []
        for rsid in dict.fromkeys(m.lower() for m in _RSID.findall(question or "")):
            rec = self.replay.snps.get(rsid)
            if rec is not None:
                lines.append(f"{rec.rsid}: clinical significance {rec.clinical_significance or 'not reported'}; {rec.function_class or 'no function class'}")
        return self._out(lines or [NO_HIT])


class _OmimView(Tool):
    """The OMIM entries matching the question's disease whose id starts with one of :attr:`prefixes`, one
    :meth:`line` each."""

    prefixes: tuple[str, ...] = ()

    def run(self, question: str, context: Context) -> ToolOutput:
        term = disease_term(question)
        lines = []
        for mim in self.replay.omim_search.get(norm_term(term), []) if term else []:
            e = self.replay.omim.get(mim)
            if e is not None and e.oid.startswith(self.prefixes):
                lines.append(self.line(e))
        return self._out(lines or [NO_HIT])

    def line(self, e) -> str:  # pragma: no cover - interface
        raise NotImplementedError


class OmimPhenotypes(_OmimView):
    name = "omim_phenotypes"
    description = "OMIM phenotype entries (# and %) matching the disease in the question, with their alternative titles."
    prefixes = ("#", "%")

    def line(self, e) -> str:
        return f"{e.oid} {e.title}" + (f" (also: {e.alt_titles})" if e.alt_titles else "")


class OmimGeneEntries(_OmimView):
    name = "omim_gene_entries"
    description = "OMIM gene entries (* and +) matching the disease in the question, with their loci."
    prefixes = ("*", "+")

    def line(self, e) -> str:
        return f"{e.oid} {e.title}; locus {e.locus or 'unknown'}"


#: the twelve, in the order the larger libraries add them (12 tools: the first 4, 16: the first 8, 20: all)
EXTRA_TOOL_CLASSES = (
    GeneSummary, OrfFinder, SnpClinical, CpgIslands,
    GeneAliases, CodonUsage, OmimPhenotypes, GcSkew,
    GeneLocation, ProteinProperties, OmimGeneEntries, MeltingTemperature,
)
EXTRA_TOOL_ORDER = tuple(c.name for c in EXTRA_TOOL_CLASSES)


def all_tool_classes() -> tuple[type[Tool], ...]:
    """Every tool class in canonical order: the 8, the 12, then GeneRegion's 4 (:mod:`fgpo_lib.genomics.region_tools`);
    the registry of every library."""
    from .region_tools import REGION_TOOL_CLASSES
    from .tools import TOOL_CLASSES

    return (*TOOL_CLASSES, *EXTRA_TOOL_CLASSES, *REGION_TOOL_CLASSES)


def make_all_tools(replay=None) -> list[Tool]:
    """An instance of every tool of :func:`all_tool_classes`, sharing one replay index."""
    return [cls(replay) for cls in all_tool_classes()]
