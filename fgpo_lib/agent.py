"""Your own agent through the same engine: a benchmark of your questions, tools and scorer, named by import path.

A built-in benchmark is an entry of :data:`fgpo_lib.genomics.benchmarks.BENCHMARKS`; yours is an
:class:`AgentBenchmark` that your module defines, and every command that takes ``--benchmark`` takes its import
path, ``mypkg.agent:BENCHMARK``::

    from fgpo_lib.agent import AgentBenchmark, AgentQuestion, AgentTool

    BENCHMARK = AgentBenchmark(
        name="travel-desk",
        questions=[AgentQuestion("q1", "Is it raining in Oslo now?", "yes", task="weather"), ...],
        tools=[AgentTool("weather", "current weather of a city", weather_of), ...],   # question text -> output text
        score=lambda answer, gold: float(answer.strip().lower() == gold.lower()),       # -> a reward in [0, 1]
        instructions="Answer the traveller's question using only the tool outputs. Reply with the answer alone.",
    )

The precompute engine then evaluates every (question, tool subset) cell with any reasoner (a built-in one,
``openai-http`` with your instructions as its system prompt, or a Python callable, ``--reasoner mypkg.agent:answer``),
with the same cache, resume, checkpoints, Dask, ``verify-table`` and ``table-info``.

**A reasoner of yours** is a function ``answer(question: str, tool_outputs: list[str]) -> str``: the question's text,
and the outputs of the subset's tools as texts in the order of ``tools`` (each prefixed ``[tool name]``; an empty
list when the subset calls no tool); it returns the answer as text, which ``score`` compares with the gold answer.
It must be deterministic, since its answers are cached.

**A cell's cache key** (:meth:`fgpo_lib.precompute.PrecomputeEngine.key`) is the sha256 of four things: the question
id; the subset's label (``"weather+maps"``); the reasoner's fingerprint (for a function of yours: its import path and
the sha256 of its source code; for an LLM: its model file's sha256, its prompt's and its version; for
``openai-http``: what the server says it serves); and the fingerprint of the subset's tools
(:meth:`AgentBenchmark.tools_version`: the sha256 of what each tool outputs alone on every question). So editing a
tool's code or data invalidates exactly the cells it made, and editing the reasoner invalidates all of its cells.

**A tool that fails** (raises, ``sys.exit()`` included, or returns no text) on a question fails that question's
cells that call it, each named with the tool, the question and the exception; the others go on. A scorer or a
``questions()`` that fails stops the command with the same names (:mod:`fgpo_lib.user_code`).

:func:`resolve_benchmark` turns a ``--benchmark`` value into an entry: a built-in name, or ``module:attribute``. A
module that cannot be imported, an attribute that is not an :class:`AgentBenchmark`, or an entry missing a part is a
:class:`BenchmarkError` naming it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Sequence

from .splits import Question, stratified_split
from .user_code import BenchmarkError, UserCodeError, call_user, describe, import_object  # noqa: F401  (part of this module's interface)


class ToolFailed(UserCodeError):
    """A tool of the user's raised (or returned something that is not text) on one question: that question's cells
    that call it fail, named (the precompute engine records them), and the rest go on."""


@dataclass(frozen=True)
class AgentQuestion:
    """One question of your agent: a unique id, the text the tools and the reasoner read, the gold answer your
    scorer compares with, and optionally a task (the split is stratified by it) and a split (``train``/``test``;
    empty: the deterministic stratified split, 30% test)."""

    id: str
    text: str
    answer: str
    task: str = ""
    split: str = ""


@dataclass(frozen=True)
class AgentTool:
    """One tool: its name (no ``+``), a one-line description (what a selection call shows), and ``run``, a function
    of the question text that returns the tool's output as text. It must be deterministic: its output is cached."""

    name: str
    description: str
    run: Callable[[str], str]


class _ToolOutput:
    """The shape :func:`fgpo_lib.genomics.tools.run_subset` hands on: the rendered text and no entities."""

    def __init__(self, text: str) -> None:
        self.text, self.entities = text, {}


class _ToolAdapter:
    """An :class:`AgentTool` behind the engine's tool interface (``name``, ``description``, ``run(question, ctx)``)."""

    def __init__(self, tool: AgentTool) -> None:
        self.tool, self.name, self.description = tool, tool.name, tool.description

    def run(self, question: str, context) -> _ToolOutput:
        try:
            out = self.tool.run(question)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's tool, named
            raise ToolFailed(f"tool {self.name!r} ({_origin(self.tool.run)}) failed on question {question[:80]!r}: {describe(exc)}") from None
        if not isinstance(out, str):
            raise ToolFailed(f"tool {self.name!r} ({_origin(self.tool.run)}) returned {type(out).__name__}, not text, on question {question[:80]!r}")
        return _ToolOutput(f"[{self.name}] {out}")


def _origin(fn) -> str:
    from .user_code import origin

    return origin(fn)


@dataclass
class AgentBenchmark:
    """A user's benchmark (module doc). ``questions``: a sequence of :class:`AgentQuestion` or a function returning
    one; ``tools``: a sequence of :class:`AgentTool`, in the order the reasoner sees their outputs; ``score``:
    ``(answer text, gold answer) -> reward in [0, 1]``; ``instructions``: the system prompt of a generative reasoner;
    ``examples``: worked examples ``(question, tool outputs text, answer)`` shown before every question."""

    name: str
    questions: Sequence[AgentQuestion] | Callable[[], Sequence[AgentQuestion]]
    tools: Sequence[AgentTool]
    score: Callable[[str, str], float]
    instructions: str = "Answer the question using only the tool outputs given. Reply with the answer alone."
    examples: Sequence[tuple[str, str, str]] = ()
    title: str = ""
    source: str = field(default="", repr=False)
    """The import path it was loaded from (set by :func:`resolve_benchmark`); the engine names it in provenance."""

    def __post_init__(self) -> None:
        problems = []
        if not isinstance(self.name, str) or not self.name.strip():
            problems.append("a name (non-empty text)")
        tools = list(self.tools) if isinstance(self.tools, (list, tuple)) else None
        if not tools or not all(isinstance(t, AgentTool) for t in tools):
            problems.append("tools (a non-empty list of AgentTool)")
        if not callable(self.score):
            problems.append("score (a function (answer, gold) -> reward in [0, 1])")
        if not (callable(self.questions) or isinstance(self.questions, (list, tuple))):
            problems.append("questions (a list of AgentQuestion, or a function returning one)")
        if problems:
            raise BenchmarkError(f"benchmark {self.name!r} needs {'; '.join(problems)}")
        names = [t.name for t in tools]
        bad = [n for n in names if not isinstance(n, str) or not n or "+" in n or n != n.strip()]
        if bad or len(set(names)) != len(names):
            raise BenchmarkError(f"benchmark {self.name!r}: tool names must be distinct, non-empty and without '+', got {names}")
        self.title = self.title or self.name

    # --- the entry interface the engine reads (as fgpo_lib.genomics.benchmarks.Benchmark's) ------------------------
    @property
    def prompt(self) -> str:
        """The name under which its prompt is registered for generative reasoners (:func:`register_prompt`)."""
        return self.source or self.name

    @property
    def library4(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.tools)[:4]

    @cached_property
    def _questions(self) -> list[Question]:
        raw = call_user(self.questions, f"questions() of benchmark {self.name!r}") if callable(self.questions) else self.questions
        try:
            items = list(raw)
        except TypeError:
            raise BenchmarkError(f"benchmark {self.name!r}: questions() returned {type(raw).__name__}, not a list of AgentQuestion") from None
        if not items:
            raise BenchmarkError(f"benchmark {self.name!r} has no questions")
        for i, q in enumerate(items):
            if not isinstance(q, AgentQuestion):
                raise BenchmarkError(f"benchmark {self.name!r}: question {i} is a {type(q).__name__}, not an AgentQuestion")
            if not isinstance(q.id, str) or not q.id or not isinstance(q.text, str) or not isinstance(q.answer, str):
                raise BenchmarkError(f"benchmark {self.name!r}: question {i} needs a text id, text and answer, got {q!r}")
            if q.split not in ("", "train", "test"):
                raise BenchmarkError(f"benchmark {self.name!r}: question {q.id!r} has split {q.split!r}; use 'train', 'test' or leave it empty")
        ids = [q.id for q in items]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise BenchmarkError(f"benchmark {self.name!r}: question id {dup!r} appears twice")
        default = stratified_split(ids, [q.task for q in items])
        return [Question(q.id, self.name, q.task, q.text, q.answer, q.split or str(s)) for q, s in zip(items, default)]

    def questions_list(self) -> list[Question]:
        return list(self._questions)

    def make_tools(self) -> list:
        return [_ToolAdapter(t) for t in self.tools]

    @cached_property
    def _tool_hashes(self) -> dict[str, str]:
        """Each tool's fingerprint: sha256 of what it outputs alone on every question."""
        out = {}
        for tool in self.make_tools():
            h = hashlib.sha256(tool.name.encode())
            for q in self._questions:
                try:
                    h.update(tool.run(q.text, None).text.encode())
                except ToolFailed as exc:  # a deterministic failure is part of what the tool does: its cells fail, named
                    h.update(f"failed: {exc}".encode())
            out[tool.name] = h.hexdigest()[:16]
        return out

    def tools_version(self, tools) -> str:
        """The fingerprint of the tools in ``tools`` (names): their outputs on every question (module doc)."""
        hashes = self._tool_hashes
        return "agent-" + hashlib.sha256(json.dumps([hashes[t] for t in sorted(t for t in tools if t in hashes)]).encode()).hexdigest()[:16]

    def score_answer(self, question: Question, answer: str) -> float:
        value = call_user(self.score, f"the scorer of benchmark {self.name!r}", answer, question.answer, question=question.qid)
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise BenchmarkError(f"benchmark {self.name!r}: its score returned {value!r}, not a number") from None
        if not 0.0 <= value <= 1.0:
            raise BenchmarkError(f"benchmark {self.name!r}: its score returned {value}, outside [0, 1]")
        return value

    def data_sha256(self) -> str:
        """sha256 of the questions (ids, texts, answers, tasks, splits): a table records what it was built over."""
        return hashlib.sha256(json.dumps([[q.qid, q.text, str(q.answer), q.task, q.split] for q in self._questions]).encode()).hexdigest()

    def library(self, tools=None) -> tuple[str, ...]:
        own = [t.name for t in self.tools]
        if tools is None:
            return tuple(own)
        unknown = [t for t in tools if t not in own]
        if unknown:
            raise ValueError(f"{', '.join(map(repr, unknown))}: not a tool of benchmark {self.name!r}; its tools are {', '.join(own)}")
        if len(set(tools)) != len(tuple(tools)):
            raise ValueError(f"a tool appears twice in the library {list(tools)}")
        return tuple(t for t in own if t in set(tools))


class _AgentEntry:
    """An :class:`AgentBenchmark` seen through the engine's entry interface (the method names of
    :class:`fgpo_lib.genomics.benchmarks.Benchmark`: ``questions()``, ``score(question, answer)``, ``tools``)."""

    def __init__(self, bench: AgentBenchmark) -> None:
        self.bench = bench
        self.name, self.title, self.prompt, self.library4 = bench.source or bench.name, bench.title, bench.prompt, bench.library4
        self.tools = tuple(t.name for t in bench.tools)
        self.extra_tools: tuple[str, ...] = ()

    def questions(self) -> list[Question]:
        return self.bench.questions_list()

    def make_tools(self) -> list:
        return self.bench.make_tools()

    def tools_version(self, tools) -> str:
        return self.bench.tools_version(tools)

    def score(self, question: Question, answer: str) -> float:
        return self.bench.score_answer(question, answer)

    def data_sha256(self) -> str:
        return self.bench.data_sha256()

    def library(self, tools=None) -> tuple[str, ...]:
        return self.bench.library(tools)


_RESOLVED: dict[str, object] = {}


def resolve_benchmark(name: str):
    """A ``--benchmark`` value -> its entry: a built-in benchmark's registry entry, or the :class:`AgentBenchmark`
    at an import path (its prompt registered for generative reasoners). Resolved once per process."""
    if name in _RESOLVED:
        return _RESOLVED[name]
    from .genomics.benchmarks import BENCHMARKS

    if name in BENCHMARKS:
        return BENCHMARKS[name]
    if ":" not in str(name):
        raise BenchmarkError(f"unknown benchmark {name!r}; built-in: {', '.join(BENCHMARKS)}, or your own as an import path module:attribute "
                             "holding an fgpo_lib.agent.AgentBenchmark")
    bench = import_object(name, "--benchmark")
    if not isinstance(bench, AgentBenchmark):
        raise BenchmarkError(f"--benchmark {name!r} is a {type(bench).__name__}, not an fgpo_lib.agent.AgentBenchmark")
    bench.source = name
    from .reasoners.prompts import register_prompt

    register_prompt(name, bench.instructions, tuple(tuple(e) for e in bench.examples))
    entry = _AgentEntry(bench)
    _RESOLVED[name] = entry
    return entry


def benchmark_questions(name: str) -> list[Question]:
    """The questions of a ``--benchmark`` value (built-in or an import path), with their split."""
    return resolve_benchmark(name).questions()
