"""What one cell is and how it is evaluated: the spec every worker rebuilds its reasoner from, the reasoner's inputs
for a subset of a question, and the evaluation of a question's subsets (a failure is recorded, never a zero).

The benchmark is read only through its entry (:func:`fgpo_lib.agent.resolve_benchmark`: a built-in registry entry
or a user's :class:`~fgpo_lib.agent.AgentBenchmark`): its questions, tools, scorer and prompt.
"""

from __future__ import annotations

import json
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..agent import ToolFailed, resolve_benchmark
from ..genomics.tools import run_subset
from ..reasoners import REASONERS, Reasoner, make_reasoner
from ..splits import Question
from ..user_code import describe
from ..subsets import SubsetSpace


@dataclass
class PrecomputeSpec:
    """What to precompute. Everything a worker process needs to rebuild the reasoner and the prompts."""

    benchmark: str
    """A built-in benchmark's name, or a user's as an import path ``module:attribute`` (:mod:`fgpo_lib.agent`)."""
    reasoner: str
    """A built-in reasoner's name, or a user's function as ``module:function``."""
    reasoner_kwargs: dict = field(default_factory=dict)
    max_size: int = 4
    questions: int | None = None
    """Sample size, stratified by task; None for every question."""
    sample_seed: int = 0
    tools: tuple[str, ...] | None = None
    """The tool library (any order; kept in canonical order); None for the benchmark's whole library. A subset's
    cell is the same in every library that holds its tools, so libraries share cached cells."""
    extras: bool = False
    """The run also asks for the extra cells (All-Tools, and the selection call where the reasoner has one); a
    table then counts as ``complete`` only once every question has them."""

    def __post_init__(self) -> None:
        bench = resolve_benchmark(self.benchmark)
        entry = REASONERS.get(self.reasoner)
        if entry and entry.kind in ("llm", "http") and bench.prompt != "genomics":  # its own prompt
            self.reasoner_kwargs = {**self.reasoner_kwargs, "prompt": self.reasoner_kwargs.get("prompt", bench.prompt)}
        if self.tools is not None:
            self.tools = bench.library(tuple(self.tools))  # a tool of another benchmark is a named error here

    @property
    def bench(self):
        """The benchmark's entry."""
        return resolve_benchmark(self.benchmark)

    def library(self) -> tuple[str, ...]:
        """The tool library: ``tools`` in canonical order, or the benchmark's whole library."""
        return self.tools if self.tools else self.bench.library()

    def space(self) -> SubsetSpace:
        names = self.library()
        return SubsetSpace(len(names), max_size=min(self.max_size, len(names)), tool_names=names)


# --- the per-question work, run in workers ----------------------------------------------------------------------------
_WORKER: dict = {}


def _worker_reasoner(spec: PrecomputeSpec) -> Reasoner:
    key = (spec.benchmark, spec.reasoner, json.dumps(spec.reasoner_kwargs, sort_keys=True))
    if _WORKER.get("key") != key:
        _WORKER.update(key=key, reasoner=make_reasoner(spec.reasoner, **spec.reasoner_kwargs), tools=spec.bench.make_tools())
    return _WORKER["reasoner"]


def _tools(spec: PrecomputeSpec) -> list:
    if _WORKER.get("key", ("",))[0] == spec.benchmark and "tools" in _WORKER:
        return _WORKER["tools"]
    return spec.bench.make_tools()


def subset_inputs(spec: PrecomputeSpec, q: Question, subsets: list) -> list:
    """The reasoner's input ``(question text, tool output texts)`` for each of ``subsets`` of ``q`` (canonical
    indices of the spec's space, or tuples of tool names: a subset outside the space, e.g. all 8 tools), or, where a
    tool of the subset failed on the question, that failure (a :class:`~fgpo_lib.agent.ToolFailed`, naming the tool,
    the question and the exception): those cells fail, the others go on. Each tool runs once."""
    tools = _tools(spec)
    space = spec.space()
    cache: dict = {}
    names = [tuple(s) if isinstance(s, tuple) else space.names_of(s) for s in subsets]
    out = []
    for n in names:
        try:
            out.append((q.text, [o.text for o in run_subset(tools, n, q.text, cache)]))
        except ToolFailed as exc:
            out.append(exc)
    return out


def subset_prompts(spec: PrecomputeSpec, q: Question, subsets: list) -> list[tuple[str, list[str]]]:
    """:func:`subset_inputs` where every tool ran; a tool's failure is raised (a dry run's token count needs them all)."""
    items = subset_inputs(spec, q, subsets)
    failed = next((item for item in items if isinstance(item, Exception)), None)
    if failed is not None:
        raise failed
    return items


class CellTimeout(Exception):
    """A reasoner call that ran past the per-cell time limit (``fgpo precompute --cell-timeout``)."""


@contextmanager
def time_limit(seconds: float):
    """Raise :class:`CellTimeout` in the block after ``seconds`` (0: no limit). A SIGALRM timer, so only in a
    process's main thread (a local worker's, or the command's own); elsewhere (Dask's threads) there is no limit."""
    if not seconds or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise CellTimeout(f"the reasoner took longer than {seconds:g} s (--cell-timeout)")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def evaluate_question(spec: PrecomputeSpec, q: Question, subsets: list[int], reasoner: Reasoner | None = None, cell_timeout: float = 0.0) -> list[tuple[int, str | None, float | None, str, str]]:
    """Evaluate ``subsets`` (canonical indices, in the order given) of one question.

    Returns ``(subset, answer, reward, status, error)`` per subset; ``status`` is ``'ok'`` or ``'failed'``. A cell
    fails, named, where a tool of its subset failed, where the reasoner raised (``SystemExit`` too) or returned no
    text, and where it ran past ``cell_timeout`` seconds (0: no limit).
    """
    reasoner = reasoner or _worker_reasoner(spec)
    inputs = subset_inputs(spec, q, subsets)
    live = [i for i, item in enumerate(inputs) if not isinstance(item, BaseException)]
    items = [inputs[i] for i in live]
    answers: list = list(inputs)
    if items:
        try:
            with time_limit(cell_timeout * len(items)):
                batch = reasoner.answer_batch(items)
            if len(batch) != len(items):
                raise ValueError(f"answer_batch returned {len(batch)} answers for {len(items)} prompts")
        except (Exception, SystemExit):  # isolate the failing cells one by one
            batch = []
            for item in items:
                try:
                    with time_limit(cell_timeout):
                        batch.append(reasoner.answer(*item))
                except (Exception, SystemExit) as exc:  # noqa: BLE001 - recorded per cell, never a silent zero
                    batch.append(exc)
        for i, ans in zip(live, batch):
            answers[i] = ans
    bench = spec.bench
    out = []
    for s, ans in zip(subsets, answers):
        if isinstance(ans, BaseException):
            out.append((s, None, None, "failed", describe(ans)))
        elif not isinstance(ans, str):
            out.append((s, None, None, "failed", f"malformed answer: expected text, got {type(ans).__name__}"))
        else:
            out.append((s, ans, float(bench.score(q, ans)), "ok", ""))
    return out


def selection_menu(tools, benchmark: str = "geneturing") -> list[tuple[str, str]]:
    """``(name, one-line description)`` of each tool of a library, in canonical order: what a selection call shows."""
    names = set(tools)
    return [(t.name, t.description) for t in resolve_benchmark(benchmark).make_tools() if t.name in names]


def evaluate_remote(spec_dict: dict, q_dict: dict, subsets: list[int], cell_timeout: float = 0.0) -> tuple[str, list, float]:
    """:func:`evaluate_question` in a worker process (a local pool's or Dask's): ``(qid, results, seconds)``."""
    spec = PrecomputeSpec(**spec_dict)
    q = Question(**{**q_dict, "answer": tuple(q_dict["answer"]) if isinstance(q_dict["answer"], list) else q_dict["answer"]})
    t0 = time.perf_counter()
    rows = evaluate_question(spec, q, subsets, cell_timeout=cell_timeout)
    return q.qid, rows, time.perf_counter() - t0
