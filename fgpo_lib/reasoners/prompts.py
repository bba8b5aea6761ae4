"""The prompts of generative reasoners, by name: instructions, two worked examples, and what the selection call
shows. A benchmark names its prompt (:attr:`fgpo_lib.genomics.benchmarks.Benchmark.prompt`); the precompute engine
passes it to an LLM or HTTP reasoner as its ``prompt`` setting, and the template's hash enters the reasoner's
fingerprint, so cells of different prompts never share a cache key.

* ``genomics`` (GeneTuring, GeneHop, GeneSeq): two GeneTuring *training* questions with real tool outputs.
* ``generegion`` (multiple choice): a promoter core and a splice acceptor from the ``dev`` windows that are neither
  questions nor references of the ``knn`` tool (:func:`fgpo_lib.genomics.generegion.free_windows`), each the first
  in their seeded order whose tools' evidence (``knn``'s plurality) names its answer, so that a worked example
  shows how to read the tools; real outputs of two tools each.

This module sits below :mod:`~fgpo_lib.reasoners.llm`, :mod:`~fgpo_lib.reasoners.selection` and
:mod:`~fgpo_lib.reasoners.http`, which all read it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .base import PromptTemplate


@dataclass(frozen=True)
class Prompt:
    """One prompt: its template's version and instructions, the selection call's instructions, and for each of
    the two worked examples the tools whose outputs it shows (also its reply to the selection call)."""

    version: str
    system: str
    selection_system: str
    demo_tools: tuple[tuple[str, ...], tuple[str, ...]]


PROMPTS: dict[str, Prompt] = {
    "genomics": Prompt(
        "genomics-v1-fewshot2",
        PromptTemplate.system,
        "You choose which tools an agent should call to answer a genomics question. Reply with the names of the tools to call, separated by commas, or none.",
        (("gene_search", "gene_record"), ("snp_lookup",)),
    ),
    "generegion": Prompt(
        "generegion-v2-fewshot2",
        "You answer multiple-choice questions about a DNA sequence using only the tool outputs given. Reply with the letter of one option.",
        "You choose which tools an agent should call to answer a multiple-choice question about a DNA sequence. Reply with the names of the tools to call, separated by commas, or none.",
        (("composition", "knn"), ("splice_scan", "knn")),
    ),
}


#: the worked examples ``(question, tool outputs, answer)`` of prompts registered at run time (a user's benchmark)
_REGISTERED_DEMOS: dict[str, tuple[tuple[str, str, str], ...]] = {}


def register_prompt(name: str, instructions: str, examples: tuple = ()) -> None:
    """Add a user's prompt under ``name`` (a benchmark's import path, :mod:`fgpo_lib.agent`): its instructions as the
    system prompt, its worked examples ``(question, tool outputs text, answer)``, and a generic selection call. Its
    version hashes all of them, so cells of another prompt never share a cache key."""
    import hashlib
    import json

    examples = tuple((str(q), str(o), str(a)) for q, o, a in examples)
    digest = hashlib.sha256(json.dumps([instructions, examples]).encode()).hexdigest()[:16]
    PROMPTS[name] = Prompt(f"agent-{digest}", instructions,
                           "You choose which tools an agent should call to answer a question. Reply with the names of the tools to call, separated by commas, or none.",
                           tuple(() for _ in examples))
    _REGISTERED_DEMOS[name] = examples
    demonstrations.cache_clear()
    template.cache_clear()


def check_prompt(name: str) -> Prompt:
    if name not in PROMPTS:
        raise ValueError(f"unknown prompt {name!r}; use one of {', '.join(PROMPTS)}")
    return PROMPTS[name]


@lru_cache(maxsize=None)
def demonstrations(prompt: str = "genomics") -> tuple[tuple[str, str, str], ...]:
    """The two worked examples ``(question, tool outputs, answer)`` of ``prompt``, with real tool outputs (a
    registered prompt's: its own, :func:`register_prompt`)."""
    if prompt in _REGISTERED_DEMOS:
        return _REGISTERED_DEMOS[prompt]
    from ..genomics.tools import render_outputs, run_subset
    from ..genomics.tools_extra import make_all_tools

    tools = make_all_tools()
    if check_prompt(prompt) is PROMPTS["genomics"]:
        from ..genomics.benchmarks import load_benchmark

        items = [(next(q for q in load_benchmark("geneturing") if q.task == task and q.split == "train"), subset)
                 for task, subset in zip(("Gene alias", "SNP location"), PROMPTS["genomics"].demo_tools)]
        return tuple((q.text, render_outputs(run_subset(tools, subset, q.text)), str(q.answer)) for q, subset in items)
    from ..genomics.generegion import free_windows, letter, named_options, question_text

    out = []
    for option, subset in zip((0, 2), PROMPTS[prompt].demo_tools):  # a promoter core, a splice acceptor
        for w in (w for w in free_windows() if w.option == option):  # the first whose evidence points to its answer
            text = question_text(w.seq)
            outputs = render_outputs(run_subset(tools, subset, text))
            if named_options(outputs)[:1] == [letter(option)]:
                out.append((text, outputs, letter(option)))
                break
    return tuple(out)


@lru_cache(maxsize=None)
def template(prompt: str = "genomics") -> PromptTemplate:
    """The answer template of ``prompt``: its instructions and its worked examples, rendered once."""
    p = check_prompt(prompt)
    demos = "\n\n".join(f"Question: {q}\nTool outputs:\n{o}\nAnswer: {a}" for q, o, a in demonstrations(prompt))
    return PromptTemplate(version=p.version, system=p.system, example_block=demos)
