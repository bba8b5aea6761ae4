"""The frozen-reasoner interface, the versioned prompt template, and answer candidates shared by the readers.

A reasoner maps ``(question, tool_outputs)`` to a free-text answer, which :mod:`fgpo_lib.genomics.scoring` scores.
``tool_outputs: list[str]``, one rendered output per tool of the subset, in canonical tool order.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from ..errors import ReasonerError  # noqa: F401  (part of this module's interface)
from ..genomics.generegion import named_options
from ..genomics.scoring import SPECIES

PROMPT_VERSION = "genomics-v1"


@dataclass(frozen=True)
class PromptTemplate:
    """The text a generative reasoner sees. ``render`` is deterministic; ``sha256`` identifies the template."""

    version: str = PROMPT_VERSION
    system: str = (
        "You answer genomics questions using only the tool outputs given. "
        "Reply with the answer alone: a gene symbol, a chromosome such as chr8, a locus, a species, a number or a short phrase."
    )
    example_block: str = ""  # few-shot demonstrations, already rendered, shared by every prompt

    def render_user(self, question: str, tool_outputs: list[str]) -> str:
        """Question first, then the outputs: prompts of subsets in trie order share the longest prefix."""
        outputs = "\n".join(tool_outputs) if tool_outputs else "(no tools called)"
        return f"Question: {question}\nTool outputs:\n{outputs}\nAnswer:"

    @property
    def sha256(self) -> str:
        probe = self.render_user("{question}", ["{tool_outputs}"])
        return hashlib.sha256("\x00".join([self.version, self.system, self.example_block, probe]).encode()).hexdigest()


class Reasoner:
    """Base class: subclasses implement :meth:`answer`; :meth:`answer_batch` loops unless a backend batches."""

    name = "reasoner"

    def answer(self, question: str, tool_outputs: list[str]) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def answer_batch(self, items: list[tuple[str, list[str]]]) -> list[str]:
        """``items``: ``(question, tool_outputs)`` pairs -> answers, in order."""
        return [self.answer(q, outs) for q, outs in items]

    def select_tools(self, question: str, tools: list[tuple[str, str]]) -> str:
        """The reasoner's own pick of tools for ``question`` from ``(name, description)`` pairs, as free text
        (:mod:`fgpo_lib.reasoners.selection` parses it). Generative reasoners implement it; readers cannot."""
        raise NotImplementedError(f"reasoner {self.name!r} has no selection call")

    def token_counts(self, items: list[tuple[str, list[str]]]) -> tuple[int, int]:
        """``(prompt tokens, tokens past the prefix shared with the previous prompt)`` over ``items`` in order.

        The default counts :func:`~fgpo_lib.genomics.tools.count_tokens` of question and outputs, with no prefix
        sharing; LLM reasoners override it with their own tokenizer and prompt.
        """
        from ..genomics.tools import count_tokens

        total = sum(count_tokens(q) + sum(count_tokens(o) for o in outs) for q, outs in items)
        return total, total

    def backend(self) -> dict:
        """The runtime behind the answers, for provenance (e.g. llama.cpp's build); empty for pure-Python readers."""
        return {}

    def fingerprint(self) -> dict:
        """What identifies this reasoner's answers: name, model file hash, prompt template hash, version."""
        return {"reasoner": self.name, "model_sha256": "none", "prompt_sha256": "none", "reasoner_version": "1"}


# --- what the question asks for ---------------------------------------------------------------------------------------
_KIND_PATTERNS = (
    (r"which kind of region is this", "choice"),
    (r"official gene symbol|convert .* to official", "symbol"),
    (r"which gene is snp", "symbol"),
    (r"aliases of the gene", "gene_list"),
    (r"which chromosome", "chromosome"),
    (r"protein-coding gene", "yesno"),
    (r"which organism", "species"),
    (r"align the dna sequence to the human genome", "alignment"),
    (r"chromosome locations of the genes", "locus_list"),
    (r"genes related to", "gene_list"),
    (r"function of the gene", "text"),
    (r"gc content", "gc"),
    (r"how many nucleotides long", "length"),
    (r"longest .*orf", "orf"),
    (r"translate the first (\d+) nucleotides", "protein"),
    (r"which of these enzymes cut", "enzymes"),
    (r"reverse complement of the first (\d+) nucleotides", "dna"),
)


def answer_kind(question: str) -> str:
    """The kind of answer a question asks for, from its wording (no task label needed)."""
    low = (question or "").lower()
    for pattern, kind in _KIND_PATTERNS:
        if re.search(pattern, low):
            return kind
    return "text"


def segments(tool_outputs: list[str]) -> list[tuple[str, str]]:
    """``(tool name, item text)`` for every ``' | '``-separated item of every output, in order."""
    out = []
    for text in tool_outputs:
        m = re.match(r"\[(\w+)\]\s*(.*)", text, re.S)
        tool, body = (m.group(1), m.group(2)) if m else ("", text)
        out.extend((tool, item.strip()) for item in body.split(" | ") if item.strip())
    return out


_GENE = re.compile(r"(?<![\w-])([A-Z][A-Z0-9orf\-\.]{1,14}[A-Z0-9])(?![\w-])")
_NO_ANSWER = ("No items found.", "No significant similarity found.", "No DNA sequence in the question.")


def candidates(kind: str, segment: str, question: str) -> list[str]:
    """Answers of ``kind`` found in one segment of tool output, in order of appearance."""
    if segment in _NO_ANSWER:
        return []
    omim = re.match(r"([#%\*\+^]?)\d{6} (.*); locus ", segment)
    if omim and kind in ("symbol", "gene_list"):  # an OMIM entry: only gene entries (*, +) name a gene, last field
        return [omim.group(2).rsplit("; ", 1)[-1]] if omim.group(1) in ("*", "+") and "; " in omim.group(2) else []
    if kind in ("symbol", "gene_list"):
        qwords = set(re.findall(r"[\w\-\.]+", question.upper()))
        return [g for g in dict.fromkeys(_GENE.findall(segment)) if g not in qwords and not g.startswith(("NC_", "NM_", "GRCH", "RS")) and not re.fullmatch(r"[ACGT]+|\d+", g)]
    if kind == "choice":  # the options a tool output names, as letters (knn: most votes first)
        return named_options(segment)
    if kind == "chromosome":
        return [f"chr{c}" for c in dict.fromkeys(re.findall(r"\bchromosome (\d{1,2}|X|Y|MT)\b", segment))]
    if kind == "species":
        low = segment.lower()
        return [w for w, names in SPECIES.items() if any(re.search(rf"\b{re.escape(n)}\b", low) for n in names)]
    if kind == "alignment":
        m = re.search(r"\bchromosome (\d{1,2}|X|Y)\b.*?: (\d+)-(\d+) \(", segment)
        return [f"chr{m.group(1)}:{m.group(2)}-{m.group(3)}"] if m else []
    if kind == "locus_list":
        return list(dict.fromkeys(re.findall(r"\blocus ((?:\d{1,2}|X|Y)[pq][\d\.\-pq]*)", segment)))
    if kind == "text":
        m = re.search(r"summary: (.*)", segment)
        return [m.group(1)] if m else []
    if kind == "gc":
        return re.findall(r"\bGC (\d+\.\d)%", segment)
    if kind == "length":
        return re.findall(r"\blength (\d+) nt", segment)
    if kind == "orf":
        return re.findall(r"longest ORF \(forward, ATG to stop\): (\d+) codons", segment)
    if kind == "protein":
        return re.findall(r"frame 1 protein: ([A-Z\*]+)", segment)
    if kind == "dna":
        return re.findall(r"reverse complement: ([ACGTN]+)", segment)
    if kind == "enzymes":
        if segment.startswith("no cuts"):
            return ["none"]
        if segment.startswith("cuts: "):
            return [", ".join(re.findall(r"(\w+) at \d", segment))]
        return []
    if kind == "yesno":
        m = re.match(r"Gene \d+: [^,]+, (.*?) \[", segment)
        if not m:
            return []
        return ["NA" if re.search(r"pseudogene|non-protein coding|RNA|uncharacterized", m.group(1), re.I) else "TRUE"]
    return []


def question_numbers(question: str, kind: str) -> int | None:
    """The 'first N nucleotides' of a translation or reverse-complement question, if any."""
    m = re.search(r"first (\d+) nucleotides", question or "")
    return int(m.group(1)) if m and kind in ("protein", "dna") else None
