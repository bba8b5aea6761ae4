"""The reward-table precomputation engine: every (question, subset) cell evaluated once by a frozen reasoner.

* **Once per cell, cached on disk.** Cells live in an SQLite file (WAL journal), keyed by the sha256 of
  (question id, subset, reasoner fingerprint = name + model file hash + prompt template hash + version, tools
  version). A question's cells are written in one transaction, so ``kill -9`` loses at most the question in flight
  and a rerun resumes with no lost or duplicated cell.
* **Order.** Within a question, subsets are evaluated in trie order (:meth:`SubsetSpace.trie_order`), so consecutive
  LLM prompts share the longest prefix.
* **Failures are recorded, never zero.** A reasoner error (timeout, HTTP error, malformed answer) marks the cell
  ``failed`` with its message; :meth:`PrecomputeEngine.build_table` refuses to build a table with failed or missing
  cells, and a rerun retries failed cells.
* **Parallel.** Questions are spread over any ``concurrent.futures.Executor``: local processes by default, or a Dask
  cluster through ``distributed.Client(...).get_executor()``. Workers only compute; the parent process writes.
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
import subprocess
import time
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Callable

import numpy as np
from tqdm import tqdm

from ._version import __version__
from .genomics.benchmarks import BENCHMARKS, Question, load_benchmark
from .genomics.libraries import library_tools
from .genomics.region_tools import REGION_TOOL_ORDER
from .genomics.scoring import score
from .genomics.tools import TOKEN_CAP, TOOL_ORDER, make_tools, render_outputs, run_subset
from .genomics.tools_extra import EXTRA_TOOL_ORDER, make_all_tools
from .reasoners import REASONERS, Reasoner, make_reasoner
from .reasoners.selection import parse_selection, selection_sha256
from .subsets import SubsetSpace
from .table import RewardTable

DEFAULT_CACHE = Path.home() / ".cache" / "fgpo" / "cells.sqlite"


class PrecomputeError(RuntimeError):
    """Cells failed or are missing; the message lists them."""


def _sha256_files(paths) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(Path(p).read_bytes())
    return h.hexdigest()


@lru_cache(maxsize=1)
def tools_version() -> str:
    """A behavioural fingerprint of the tools: sha256 of what every tool outputs on every built-in question.

    Each single tool, and ``gene_record`` after each of the three tools that feed it, run on all GeneTuring, GeneHop
    and GeneSeq questions. A refactor that leaves every output unchanged keeps the version; any change to an output
    (code, data or token cap) changes it, and with it every cache key.
    """
    probes = [(t,) for t in TOOL_ORDER] + [(t, "gene_record") for t in ("gene_search", "snp_lookup", "disease_genes")]
    return _outputs_hash(make_tools(), probes)[:16] + f"-cap{TOKEN_CAP}"


def _outputs_hash(tools: list, probes: list[tuple[str, ...]]) -> str:
    """sha256 (hex) of what each probe (a subset of tool names) outputs on every built-in question."""
    h = hashlib.sha256()
    for name in ("geneturing", "genehop", "geneseq"):
        for q in load_benchmark(name):
            cache: dict = {}
            for probe in probes:
                h.update(render_outputs(run_subset(tools, probe, q.text, cache)).encode())
    return h.hexdigest()


@lru_cache(maxsize=1)
def extra_tools_version() -> str:
    """:func:`tools_version` of the 12 extra tools (each alone, and each after ``gene_search``), appended to the 8's.
    A cell whose subset holds an extra tool is keyed with it; a cell of the 8 tools keeps the 8's version, so larger
    libraries share the 8-tool library's cached cells."""
    probes = [(t,) for t in EXTRA_TOOL_ORDER] + [("gene_search", t) for t in EXTRA_TOOL_ORDER]
    return f"{tools_version()}+x{_outputs_hash(make_all_tools(), probes)[:12]}"


@lru_cache(maxsize=1)
def region_tools_version() -> str:
    """The version of GeneRegion's 4 tools: sha256 of what each outputs alone on every 5th GeneRegion question
    (100 questions: the motif scan is the costly one), with the token cap. Its own, so adding these tools changed no
    key of the other libraries' cells."""
    h = hashlib.sha256()
    tools = [t for t in make_all_tools() if t.name in _REGION_TOOLS]
    for q in load_benchmark("generegion")[::5]:
        for t in tools:
            h.update(render_outputs(run_subset(tools, (t.name,), q.text)).encode())
    return f"region-{h.hexdigest()[:16]}-cap{TOKEN_CAP}"


_EXTRA_TOOLS = frozenset(EXTRA_TOOL_ORDER)
_REGION_TOOLS = frozenset(REGION_TOOL_ORDER)


def library_tools_version(tools) -> str:
    """The tools version of a library or subset (tool names): GeneRegion's when it holds one of its tools, else the
    8's, or with the extra tools' when it holds one. Called for every cache key, so it builds no set of its own."""
    if not _REGION_TOOLS.isdisjoint(tools):
        return region_tools_version()
    return tools_version() if _EXTRA_TOOLS.isdisjoint(tools) else extra_tools_version()


def data_sha256(benchmark: str = "geneturing") -> str:
    """sha256 of the data files a benchmark's questions and tools read (its registry entry's ``data``)."""
    return _sha256_files(BENCHMARKS[benchmark].data())


def code_version() -> str:
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=Path(__file__).parent, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        rev = ""
    return f"fgpo {__version__}" + (f" ({rev})" if rev else "")


def _rank_in_task(questions: list[Question], seed: int) -> dict[str, int]:
    """Each question's rank within its task, by a seeded hash of its id."""
    rank = {}
    for t in dict.fromkeys(q.task for q in questions):
        tq = sorted((q for q in questions if q.task == t), key=lambda q: hashlib.sha256(f"{seed}:{q.qid}".encode()).hexdigest())
        rank.update({q.qid: i for i, q in enumerate(tq)})
    return rank


def sample_order(questions: list[Question], seed: int = 0) -> list[Question]:
    """``questions`` interleaved by task in sample order: the first ``k * n_tasks`` are exactly
    ``sample_questions(questions, k * n_tasks, seed)`` (for tasks with at least ``k`` questions), so a run stopped
    anywhere has computed a task-stratified sample, and a larger sample extends a smaller one."""
    rank = _rank_in_task(questions, seed)
    tasks = {t: i for i, t in enumerate(dict.fromkeys(q.task for q in questions))}
    return sorted(questions, key=lambda q: (rank[q.qid], tasks[q.task]))


def sample_questions(questions: list[Question], n: int | None, seed: int = 0) -> list[Question]:
    """``n`` questions stratified by task (an equal share per task, by a seeded hash order); all if ``n`` is None."""
    if n is None or n >= len(questions):
        return list(questions)
    per_task = math.ceil(n / len({q.task for q in questions}))
    rank = _rank_in_task(questions, seed)
    return [q for q in questions if rank[q.qid] < per_task]


class CellCache:
    """SQLite store of evaluated cells: ``key -> (qid, subset, reasoner, answer, reward, status, error, seconds)``;
    ``seconds`` is the wall time spent on the cell, NULL where not known (a cell seeded from a table that had none)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._open()
        except (sqlite3.Error, OSError) as exc:
            raise PrecomputeError(f"cell cache {self.path} (--cache): cannot be used as an SQLite cell cache: {exc}. "
                                  "Give --cache a writable file path (a new file is created); a damaged cache file can be deleted, "
                                  "and a rerun with --resume-from refills it from committed tables") from None

    def _open(self) -> None:
        if self.path.is_dir():
            raise OSError("it is a directory")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(self.path), timeout=60)
        # several processes may open a new cache at once; switching it to WAL takes a lock that sqlite's busy timeout
        # does not wait for, so it is retried here
        for attempt in range(100):
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == 99:
                    raise
                time.sleep(0.1)
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS cells (key TEXT PRIMARY KEY, qid TEXT, subset TEXT, reasoner TEXT, "
            "answer TEXT, reward REAL, status TEXT, error TEXT, seconds REAL)"
        )
        self.db.commit()
        check = self.db.execute("PRAGMA quick_check(1)").fetchone()[0]  # a truncated file opens, then fails on read
        if check != "ok":
            raise sqlite3.DatabaseError(f"integrity check: {check}")

    def get(self, keys: list[str]) -> dict[str, tuple]:
        """``key -> (answer, reward, status, error, seconds)`` of the keys found."""
        out = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            rows = self.db.execute(f"SELECT key, answer, reward, status, error, seconds FROM cells WHERE key IN ({','.join('?' * len(chunk))})", chunk)
            out.update({r[0]: r[1:] for r in rows})
        return out

    def ok(self, keys: list[str]) -> set[str]:
        """The keys among ``keys`` whose cell is evaluated without failure."""
        return {k for k, hit in self.get(keys).items() if hit[2] == "ok"}

    def put(self, rows: list[tuple]) -> None:
        """Rows ``(key, qid, subset, reasoner, answer, reward, status, error, seconds)``, in one transaction."""
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO cells VALUES (?,?,?,?,?,?,?,?,?)", rows)

    def count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM cells").fetchone()[0]

    def close(self) -> None:
        self.db.close()


@dataclass
class PrecomputeSpec:
    """What to precompute. Everything a worker process needs to rebuild the reasoner and the prompts."""

    benchmark: str
    reasoner: str
    reasoner_kwargs: dict = field(default_factory=dict)
    max_size: int = 4
    questions: int | None = None
    """Sample size, stratified by task; None for every question."""
    sample_seed: int = 0
    tools: tuple[str, ...] | None = None
    """The tool library (any order; kept in canonical order); None for all 8 tools. A subset's cell is the same in
    every library that holds its tools, so libraries share cached cells."""
    extras: bool = False
    """The run also asks for the extra cells (All-Tools, and the selection call where the reasoner has one); a
    table then counts as ``complete`` only once every question has them."""

    def __post_init__(self) -> None:
        bench = BENCHMARKS.get(self.benchmark)
        entry = REASONERS.get(self.reasoner)
        if bench and entry and entry.kind in ("llm", "http") and bench.prompt != "genomics":  # its own prompt
            self.reasoner_kwargs = {**self.reasoner_kwargs, "prompt": self.reasoner_kwargs.get("prompt", bench.prompt)}

    def library(self) -> tuple[str, ...]:
        """The tool library: ``tools`` in canonical order, or the benchmark's whole library."""
        return library_tools(self.tools) if self.tools else BENCHMARKS[self.benchmark].tools

    def space(self) -> SubsetSpace:
        names = self.library()
        return SubsetSpace(len(names), max_size=min(self.max_size, len(names)), tool_names=names)


# --- the per-question work, run in workers ----------------------------------------------------------------------------
_WORKER: dict = {}


def _worker_reasoner(spec: PrecomputeSpec) -> Reasoner:
    key = (spec.reasoner, json.dumps(spec.reasoner_kwargs, sort_keys=True))
    if _WORKER.get("key") != key:
        _WORKER.update(key=key, reasoner=make_reasoner(spec.reasoner, **spec.reasoner_kwargs), tools=make_all_tools())
    return _WORKER["reasoner"]


def subset_prompts(spec: PrecomputeSpec, q: Question, subsets: list) -> list[tuple[str, list[str]]]:
    """The reasoner's inputs ``(question text, tool output texts)`` for ``subsets`` of ``q``: canonical indices of the
    spec's space, or tuples of tool names (a subset outside the space, e.g. all 8 tools); each tool runs once."""
    tools = _WORKER.get("tools") or make_all_tools()
    space = spec.space()
    cache: dict = {}
    names = [tuple(s) if isinstance(s, tuple) else space.names_of(s) for s in subsets]
    return [(q.text, [o.text for o in run_subset(tools, n, q.text, cache)]) for n in names]


def evaluate_question(spec: PrecomputeSpec, q: Question, subsets: list[int], reasoner: Reasoner | None = None) -> list[tuple[int, str | None, float | None, str, str]]:
    """Evaluate ``subsets`` (canonical indices, in the order given) of one question.

    Returns ``(subset, answer, reward, status, error)`` per subset; ``status`` is ``'ok'`` or ``'failed'``.
    """
    reasoner = reasoner or _worker_reasoner(spec)
    items = subset_prompts(spec, q, subsets)
    try:
        answers = reasoner.answer_batch(items)
        if len(answers) != len(items):
            raise ValueError(f"answer_batch returned {len(answers)} answers for {len(items)} prompts")
    except Exception:  # isolate the failing cells one by one
        answers = []
        for item in items:
            try:
                answers.append(reasoner.answer(*item))
            except Exception as exc:  # noqa: BLE001 - recorded per cell, never a silent zero
                answers.append(exc)
    out = []
    for s, ans in zip(subsets, answers):
        if isinstance(ans, Exception):
            out.append((s, None, None, "failed", f"{type(ans).__name__}: {ans}"))
        elif not isinstance(ans, str):
            out.append((s, None, None, "failed", f"malformed answer: expected text, got {type(ans).__name__}"))
        else:
            out.append((s, ans, float(score(q.task, ans, q.answer)), "ok", ""))
    return out


def selection_menu(tools) -> list[tuple[str, str]]:
    """``(name, one-line description)`` of each tool of a library, in canonical order: what a selection call shows."""
    names = set(tools)
    return [(t.name, t.description) for t in make_all_tools() if t.name in names]


def _evaluate_remote(spec_dict: dict, q_dict: dict, subsets: list[int]) -> tuple[str, list, float]:
    spec = PrecomputeSpec(**spec_dict)
    q = Question(**{**q_dict, "answer": tuple(q_dict["answer"]) if isinstance(q_dict["answer"], list) else q_dict["answer"]})
    t0 = time.perf_counter()
    rows = evaluate_question(spec, q, subsets)
    return q.qid, rows, time.perf_counter() - t0


class PrecomputeEngine:
    """Fills the cell cache for a benchmark and a reasoner, and builds reward tables from it.

    Args:
        spec: :class:`PrecomputeSpec`.
        cache: path of the SQLite cell cache.
        reasoner: an already-built reasoner (in-process evaluation); default: built from ``spec`` on first use.
    """

    def __init__(self, spec: PrecomputeSpec, cache: str | Path = DEFAULT_CACHE, reasoner: Reasoner | None = None) -> None:
        self.spec = spec
        self.space = spec.space()
        self.cache = CellCache(cache)
        self._reasoner = reasoner
        self.questions = sample_questions(load_benchmark(spec.benchmark), spec.questions, spec.sample_seed)
        self._tools_version = library_tools_version(self.space.tool_names)  # the table's (provenance)
        self.seeded_from: list[dict] = []  # tables whose cells seeded the cache (their build may differ: provenance)
        self.computed = 0  # cells this engine evaluated (a resume that computed none keeps its source's backend)

    @property
    def reasoner(self) -> Reasoner:
        if self._reasoner is None:
            self._reasoner = make_reasoner(self.spec.reasoner, **self.spec.reasoner_kwargs)
        return self._reasoner

    @cached_property
    def reasoner_key(self) -> str:
        """The reasoner's fingerprint, computed once (it may hash a model file)."""
        return json.dumps(self.reasoner.fingerprint(), sort_keys=True)

    def key(self, qid: str, subset: int | str | tuple) -> str:
        """Cache key of a cell: ``subset`` as :meth:`_label` takes it (the label is what libraries share)."""
        label = self._label(subset)
        return hashlib.sha256(json.dumps([qid, label, self.reasoner_key, library_tools_version(label.split("+"))]).encode()).hexdigest()

    def _label(self, subset: int | str | tuple) -> str:
        """A subset's ``'+'``-joined label from an index of this space, a tuple of tool names, or a label."""
        if isinstance(subset, str):
            return subset
        return "+".join(subset) if isinstance(subset, tuple) else self.space.label(subset)

    def _rows(self, q: Question, results: list, seconds: float) -> list[tuple]:
        """Cache rows of freshly evaluated cells (every cell this engine computes passes here)."""
        self.computed += len(results)
        per = seconds / max(len(results), 1)
        return [(self.key(q.qid, self._label(s)), q.qid, self._label(s), self.spec.reasoner, a, r, st, err, per) for s, a, r, st, err in results]

    def pending(self, q: Question) -> list[int]:
        """Subsets of ``q`` without an ``ok`` cell, in trie order."""
        order = self.space.trie_order().tolist()
        done = self.cache.ok([self.key(q.qid, s) for s in order])
        return [s for s in order if self.key(q.qid, s) not in done]

    def check_cells_provenance(self, prov: dict, tools, source: str) -> None:
        """Refuse, naming the field, cells whose provenance is not this engine's reasoner and prompt, or whose tools
        (``tools``: their library) were made by other code."""
        mine = {**self.provenance(), "tools_version": library_tools_version(tools)}
        for k in ("benchmark", "reasoner", "model_sha256", "prompt_sha256", "reasoner_version", "tools_version"):
            if prov.get(k) != mine[k]:
                raise PrecomputeError(f"{source}: its {k} is {prov.get(k)!r} but this engine's is {mine[k]!r}, so its cells are not this engine's cells")

    def seed_from_table(self, table: RewardTable, source: str = "table") -> int:
        """Fill the cell cache from a table made by ``fgpo precompute`` (partial or complete, any library or sample).

        The table must come from this reasoner and prompt, and its tools from this code (its library may be smaller
        than this engine's: a cell is keyed by its own tools): its provenance is checked field by field, and a
        mismatch is refused with the field named. Cells already ``ok`` in the cache are kept. Returns the cells added.
        The source's name, backend and code version go into the new table's ``seeded_from`` provenance: its
        ``code_version`` is the code that assembled it, while its cells may come from older code of the same cell key.
        """
        prov = table.provenance
        self.check_cells_provenance(prov, table.space.tool_names, source)
        rows: dict[str, tuple] = {}  # one row per cell: a cell can be a grid cell, All-Tools and the selection's pick

        def add(qid: str, label: str, answer, reward, secs) -> None:
            key = self.key(qid, label)
            old = rows.get(key)
            if old is not None:  # the same cell again (e.g. the selection's pick): keep what either row knows
                answer, reward, secs = (o if o is not None else n for o, n in ((old[4], answer), (old[5], reward), (old[8], secs)))
            rows[key] = (key, qid, label, self.spec.reasoner, answer, reward, "ok", f"seeded from {source}", secs)

        labels = table.space.labels()
        for i, qid in enumerate(table.question_ids):
            for s, label in enumerate(labels):
                answer = None if table.answers is None else str(table.answers[i, s])
                secs = None if table.seconds is None or np.isnan(table.seconds[i, s]) else float(table.seconds[i, s])
                add(qid, label, answer, float(table.rewards[i, s]), secs)
            for extra in table.extras.values():  # extra cells: All-Tools, the selection call and the cell it picked
                if extra.get("kind") == "selection" and extra["answers"][i] is not None:  # null: not asked yet (a partial extra)
                    add(qid, extra["key_label"], extra["answers"][i], None, None)
                if extra.get("kind") in ("cell", "selection") and extra["rewards"][i] is not None:
                    answer = extra["answers"][i] if extra["kind"] == "cell" else None  # a selection's answer is its reply
                    add(qid, extra["subsets"][i], answer, float(extra["rewards"][i]), None)
        added = self.seed_rows(list(rows.values()))
        self.seeded_from.append({"source": Path(source).name, "cells": added, "backend": prov.get("backend"), "code_version": prov.get("code_version")})
        return added

    def seed_rows(self, rows: list[tuple]) -> int:
        """Put cache rows (as :meth:`CellCache.put` takes them) whose cell is not ``ok`` yet, or is ``ok`` without a
        known answer where the row knows it (never the other way: a seed never erases an answer); returns how many
        cells were added (an answer filled in does not count)."""
        hits = self.cache.get([r[0] for r in rows])
        done = {k for k, hit in hits.items() if hit[2] == "ok"}
        new = [r for r in rows if r[0] not in done]
        filled = [(*r[:4], r[4], hits[r[0]][1], "ok", hits[r[0]][3], hits[r[0]][4] if hits[r[0]][4] is not None else r[8])
                  for r in rows if r[0] in done and hits[r[0]][0] is None and r[4] is not None]
        self.cache.put(new + filled)
        return len(new)

    def remaining(self) -> tuple[int, int]:
        """``(pending cells, questions with a pending cell)`` of this engine's sample."""
        pend = [len(self.pending(q)) for q in self.questions]
        return sum(pend), sum(p > 0 for p in pend)

    def plan(self, pilot_questions: int = 2) -> dict:
        """Cost before compute: pending cells, their prompt tokens, and CPU time estimated from a measured pilot.

        The pilot evaluates every pending cell of the first ``pilot_questions`` questions that have any (one per task
        first), caches them (they are real cells), and times them. Prompt tokens come from the reasoner's own
        tokenizer where it has one (:meth:`Reasoner.token_counts`): ``prompt_tokens`` is what naive prompting
        evaluates, ``evaluated_tokens`` what prefix reuse evaluates. The estimate scales the pilot's seconds per
        evaluated token to the remaining cells; it is only as good as the pilot is typical. A pilot with failed cells
        gives no estimate (``estimated_seconds`` None; ``pilot_failed`` counts them, ``pilot_error`` names the first):
        the time of a failing call says nothing of a working one.
        """
        todo = [(q, self.pending(q)) for q in self.questions]
        todo = [(q, p) for q, p in todo if p]
        prompt_tokens = evaluated_tokens = 0
        per_q_tokens = {}
        for q, pend in todo:
            total, evaluated = self.reasoner.token_counts(subset_prompts(self.spec, q, pend))
            prompt_tokens, evaluated_tokens = prompt_tokens + total, evaluated_tokens + evaluated
            per_q_tokens[q.qid] = evaluated
        by_task: dict[str, list] = {}
        for q, pend in todo:
            by_task.setdefault(q.task, []).append((q, pend))
        pilot = [items[0] for items in by_task.values()][:pilot_questions]
        t0, pilot_tokens, pilot_cells, failed = time.perf_counter(), 0, 0, []
        for q, pend in pilot:
            t = time.perf_counter()
            res = evaluate_question(self.spec, q, pend, self.reasoner)
            self.cache.put(self._rows(q, res, time.perf_counter() - t))
            pilot_tokens += per_q_tokens[q.qid]
            pilot_cells += len(pend)
            failed += [f"{q.qid} / {self.space.label(r[0])!r}: {r[4]}" for r in res if r[3] != "ok"]
        pilot_seconds = time.perf_counter() - t0
        cells = sum(len(p) for _, p in todo)
        rest_tokens = evaluated_tokens - pilot_tokens
        per_token = pilot_seconds / max(pilot_tokens, 1)
        return {
            "questions": len(todo),
            "cells": cells,
            "prompt_tokens": prompt_tokens,
            "evaluated_tokens": evaluated_tokens,
            "pilot_questions": len(pilot),
            "pilot_cells": pilot_cells,
            "pilot_seconds": pilot_seconds,
            "pilot_failed": len(failed),
            "pilot_error": failed[0] if failed else "",
            "estimated_seconds": None if failed else pilot_seconds + per_token * rest_tokens,
        }

    def run(self, workers: int = 1, executor: Executor | None = None, progress: bool = True, checkpoint: Callable[[], None] | None = None, checkpoint_every: int = 0) -> dict:
        """Evaluate every pending cell. ``workers > 1`` uses local processes; ``executor`` overrides (e.g. Dask).

        Questions go in :func:`sample_order`, so a run stopped early leaves a task-stratified sample done.
        ``checkpoint()`` is called after every ``checkpoint_every`` questions (e.g. to write a partial table).
        Returns counts: ``cells`` (all), ``computed`` now, ``failed`` now, ``seconds``.
        """
        todo = [(q, self.pending(q)) for q in sample_order(self.questions, self.spec.sample_seed)]
        todo = [(q, p) for q, p in todo if p]
        n_cells = len(self.questions) * self.space.n_subsets
        computed = failed = done = 0
        t0 = time.perf_counter()
        bar = tqdm(total=sum(len(p) for _, p in todo), desc=f"{self.spec.benchmark}/{self.spec.reasoner}", unit="cell", disable=not progress)
        own = None
        if executor is None and workers > 1:
            executor = own = ProcessPoolExecutor(max_workers=workers)
        def evaluated():  # (question, results, seconds), in todo order, here or on the executor's workers
            if executor is None:
                for q, pend in todo:
                    t = time.perf_counter()
                    yield q, evaluate_question(self.spec, q, pend, self.reasoner), time.perf_counter() - t
                return
            spec_dict = asdict(self.spec)
            futures = [executor.submit(_evaluate_remote, spec_dict, asdict(q), pend) for q, pend in todo]
            for (q, _), fut in zip(todo, futures):  # written in submission order: deterministic cache contents
                _, res, secs = fut.result()
                yield q, res, secs

        try:
            for q, res, secs in evaluated():
                self.cache.put(self._rows(q, res, secs))
                computed += len(res)
                failed += sum(r[3] == "failed" for r in res)
                bar.update(len(res))
                done += 1
                if checkpoint and checkpoint_every and done % checkpoint_every == 0:
                    checkpoint()
        except (BrokenProcessPool, OSError) as exc:  # a fork refused (process limit, memory): stop, never hang
            if own is not None:
                own.shutdown(wait=False, cancel_futures=True)
                own = None
            raise PrecomputeError(f"worker processes failed ({type(exc).__name__}: {exc}) after {done} questions; every finished "
                                  "question is cached, so rerun with fewer --workers to continue") from None
        finally:
            bar.close()
            if own is not None:
                own.shutdown()
        return {"cells": n_cells, "computed": computed, "failed": failed, "seconds": time.perf_counter() - t0}

    # --- extra cells: All-Tools and the selection call ------------------------------------------------------------
    @property
    def all_tools(self) -> tuple[str, ...]:
        return self.space.tool_names

    @cached_property
    def selection_label(self) -> str:
        """The cache label of a question's selection call: the selection prompt's hash and the library."""
        return f"select:{selection_sha256(self.spec.reasoner_kwargs.get('prompt', 'genomics'))[:16]}:{'+'.join(self.all_tools)}"

    def can_select(self) -> bool:
        return type(self.reasoner).select_tools is not Reasoner.select_tools

    def _ensure_cells(self, q: Question, subsets: list[tuple[str, ...]]) -> None:
        done = self.cache.ok([self.key(q.qid, s) for s in subsets])
        missing = [s for s in subsets if self.key(q.qid, s) not in done]
        if missing:
            t = time.perf_counter()
            self.cache.put(self._rows(q, evaluate_question(self.spec, q, missing, self.reasoner), time.perf_counter() - t))

    def run_extras(self, progress: bool = True, checkpoint: Callable[[], None] | None = None, checkpoint_every: int = 0) -> dict:
        """Per question: the **All-Tools** cell (every tool of the library in one call, whatever ``max_size``) and,
        for reasoners that have one, the **selection call** (:mod:`fgpo_lib.reasoners.selection`) and the cell of the
        subset it picked. Cached like every cell; ``checkpoint()`` is called after every ``checkpoint_every``
        questions. Returns counts ``selections``, ``unparseable``."""
        descriptions = selection_menu(self.all_tools)
        selections = unparseable = 0
        for done, q in enumerate(tqdm(self.questions, desc=f"{self.spec.benchmark}/{self.spec.reasoner} extras", unit="question", disable=not progress), start=1):
            if checkpoint and checkpoint_every and done % checkpoint_every == 0:
                checkpoint()  # the extras of the questions before this one
            self._ensure_cells(q, [self.all_tools])
            if not self.can_select():
                continue
            key = self.key(q.qid, self.selection_label)
            hit = self.cache.get([key]).get(key)
            if hit is None or hit[2] != "ok":
                t = time.perf_counter()
                try:
                    text, status, err = self.reasoner.select_tools(q.text, descriptions), "ok", ""
                except Exception as exc:  # noqa: BLE001 - recorded, retried on a rerun
                    text, status, err = None, "failed", f"{type(exc).__name__}: {exc}"
                self.cache.put([(key, q.qid, self.selection_label, self.spec.reasoner, text, None, status, err, time.perf_counter() - t)])
                if status != "ok":
                    continue
            else:
                text = hit[0]
            chosen = parse_selection(text, self.all_tools)
            selections += 1
            if chosen is None:
                unparseable += 1
            else:
                self._ensure_cells(q, [chosen])
        return {"selections": selections, "unparseable": unparseable}

    def extra_names(self) -> tuple[str, ...]:
        """The extras this run asked for (``spec.extras``): ``all_tools``, and ``selection`` where the reasoner can select."""
        if not self.spec.extras:
            return ()
        return ("all_tools", "selection") if self.can_select() else ("all_tools",)

    def extras(self, questions: list[Question]) -> dict:
        """The extra cells of ``questions`` found in the cache, as a table's ``extras`` (see :mod:`fgpo_lib.table`).

        An extra that every question has goes under its name (``all_tools``, ``selection``), which is what readers
        use. One that only some questions have so far goes under ``partial_<name>`` (:data:`PARTIAL_EXTRA`), its
        entries null for the questions not done yet, so that a checkpoint written during the extras pass keeps the
        answers already paid for, and a resume seeds them back."""
        out = {}
        label = "+".join(self.all_tools)
        got = self.cache.get([self.key(q.qid, label) for q in questions])
        rows = [_ok(got.get(self.key(q.qid, label))) for q in questions]
        _put_extra(out, "all_tools", rows, {"kind": "cell", "subsets": [label] * len(questions),
                                            "answers": [r and r[0] for r in rows], "rewards": [r and r[1] for r in rows]})
        sel = self.cache.get([self.key(q.qid, self.selection_label) for q in questions])
        sel_rows = [_ok(sel.get(self.key(q.qid, self.selection_label))) for q in questions]
        picks = [None if r is None else parse_selection(r[0], self.all_tools) for r in sel_rows]
        labels = [None if p is None else "+".join(p) for p in picks]
        cells = self.cache.get([self.key(q.qid, lb) for q, lb in zip(questions, labels) if lb is not None])
        rewards = [None if lb is None else _ok(cells.get(self.key(q.qid, lb))) for q, lb in zip(questions, labels)]
        done = [r if lb is None or rw is not None else None for r, lb, rw in zip(sel_rows, labels, rewards)]  # a pick's cell must be done too
        _put_extra(out, "selection", done, {"kind": "selection", "key_label": self.selection_label,
                                            "answers": [r and d and r[0] for r, d in zip(sel_rows, done)],
                                            "subsets": [lb if d else None for lb, d in zip(labels, done)],
                                            "rewards": [rw[1] if d and rw else None for rw, d in zip(rewards, done)]})
        return out

    def extras_complete(self, extras: dict) -> bool:
        """Whether ``extras`` (:meth:`extras`) holds every extra this run asked for, for every question."""
        return all(name in extras for name in self.extra_names())

    def cell(self, q: Question, subset: int) -> float:
        """Reward of one cell: from the cache, or evaluated now and cached (GRPO's on-demand path)."""
        return float(self.cells(q, [subset])[0])

    def cells(self, q: Question, subsets) -> np.ndarray:
        """Rewards ``(len(subsets),)`` of some cells of one question: the cached ones read, the others evaluated now
        as one batch in trie order (so the reasoner reuses the prompt prefixes they share) and cached. A failed cell
        raises :class:`PrecomputeError` naming it, after the batch's other cells are cached."""
        subsets = [int(s) for s in subsets]
        key_of = {s: self.key(q.qid, s) for s in subsets}
        keys = [key_of[s] for s in subsets]
        got = {k: float(hit[1]) for k, hit in self.cache.get(keys).items() if hit[2] == "ok"}
        missing = sorted((s for s, k in key_of.items() if k not in got), key=self._trie_rank.__getitem__)
        if missing:
            t = time.perf_counter()
            res = evaluate_question(self.spec, q, missing, self.reasoner)
            self.cache.put(self._rows(q, res, time.perf_counter() - t))
            for s, _, r, status, err in res:
                if status != "ok":
                    raise PrecomputeError(f"cell {q.qid} / {self.space.label(s)!r} failed: {err}")
                got[key_of[s]] = float(r)
        return np.array([got[k] for k in keys], dtype=np.float64)

    @cached_property
    def _trie_rank(self) -> dict[int, int]:
        return {s: i for i, s in enumerate(self.space.trie_order().tolist())}

    def backend(self) -> dict:
        """The build behind the table's cells: this machine's reasoner backend, or, when this engine computed no cell
        and every seed came from one build, that build (a resume on another machine must not relabel its cells)."""
        seeded = {json.dumps(s["backend"], sort_keys=True) for s in self.seeded_from}
        if self.computed == 0 and len(seeded) == 1:
            return self.seeded_from[0]["backend"]
        return self.reasoner.backend()

    def provenance(self) -> dict:
        fp = json.loads(self.reasoner_key)
        return {
            "benchmark": self.spec.benchmark,
            "reasoner": fp["reasoner"],
            "reasoner_kwargs": self.spec.reasoner_kwargs,
            "model_sha256": fp["model_sha256"],
            "prompt_sha256": fp["prompt_sha256"],
            "reasoner_version": fp["reasoner_version"],
            "backend": self.backend(),
            "seeded_from": self.seeded_from,
            "tools_version": self._tools_version,
            "data_sha256": data_sha256(self.spec.benchmark),
            "code_version": code_version(),
            "max_size": self.space.max_size,
            "library": list(self.space.tool_names),
            "questions": self.spec.questions,
            "sample_seed": self.spec.sample_seed,
            "extras": list(self.extra_names()),
        }

    def build_table(self, partial: bool = False) -> RewardTable:
        """The reward table of the sampled questions; raises :class:`PrecomputeError` on failed or missing cells.

        ``partial=True`` keeps only the questions whose every cell is done (a table to commit while a run goes on);
        its provenance says ``complete: false`` and how many questions of the sample it holds.
        """
        questions = [q for q in self.questions if not self.pending(q)] if partial else self.questions
        if not questions:
            raise PrecomputeError("no question has all its cells done yet")
        rewards = np.full((len(questions), self.space.n_subsets), np.nan, dtype=np.float32)
        seconds = np.full(rewards.shape, np.nan, dtype=np.float32)  # unknown: seeded without a time (older tables)
        answers = np.full(rewards.shape, None, dtype=object)  # None: seeded from a table that kept no answers
        problems = []
        for i, q in enumerate(questions):
            keys = [self.key(q.qid, s) for s in range(self.space.n_subsets)]
            got = self.cache.get(keys)
            for s, k in enumerate(keys):
                hit = got.get(k)
                if hit is None:
                    problems.append(f"{q.qid} / {self.space.label(s)!r}: missing")
                elif hit[2] != "ok":
                    problems.append(f"{q.qid} / {self.space.label(s)!r}: failed ({hit[3]})")
                else:
                    rewards[i, s] = hit[1]
                    answers[i, s] = hit[0]
                    if hit[4] is not None and hit[4] > 0:  # caches made before tables kept times seeded 0.0
                        seconds[i, s] = hit[4]
        if problems:
            raise PrecomputeError(f"{len(problems)} cells are failed or missing; rerun precompute to retry them. First: " + "; ".join(problems[:5]))
        extras = self.extras(questions)
        return RewardTable(
            rewards=rewards,
            question_ids=[q.qid for q in questions],
            space=self.space,
            questions=[q.text for q in questions],
            tasks=[q.task for q in questions],
            split=[q.split for q in questions],
            provenance={**self.provenance(), "complete": len(questions) == len(self.questions) and self.extras_complete(extras),
                        "sample_size": len(self.questions)},
            answers=_known_answers(answers),
            seconds=seconds,
            extras=extras,
        )


#: the name of an extra that only some questions have so far (:meth:`PrecomputeEngine.extras`); readers never see it
PARTIAL_EXTRA = "partial_{}"


def _ok(hit):
    """A cache hit if its status is ``ok``, else None."""
    return hit if hit is not None and hit[2] == "ok" else None


def _put_extra(out: dict, name: str, done: list, extra: dict) -> None:
    """``extra`` into ``out`` under ``name`` when every question is ``done``, under ``partial_<name>`` when some are."""
    if done and all(d is not None for d in done):
        out[name] = extra
    elif any(d is not None for d in done):
        out[PARTIAL_EXTRA.format(name)] = extra


def _known_answers(answers: np.ndarray) -> np.ndarray | None:
    """A table's ``answers`` from an object array with ``None`` where a cell's answer is not known: ``None`` if no
    answer is known (the cells came from tables made before tables kept answers), else strings, ``''`` where unknown."""
    known = np.array([a is not None for a in answers.ravel()]).reshape(answers.shape)
    if not known.any():
        return None
    return np.where(known, answers, "").astype(str)


def _provenance_fields(prov: dict, prefix: str = "") -> set[str]:
    """The dotted names of a provenance dict's fields, nested dicts flattened (an empty dict has none). A field whose
    value is null is still a field: ``questions: null`` (every question) is a value, not a loss."""
    out = set()
    for k, v in prov.items():
        out |= _provenance_fields(v, f"{prefix}{k}.") if isinstance(v, dict) else {prefix + k}
    return out


def table_holdings(table: RewardTable) -> dict:
    """What a table holds beyond its rewards, for the no-loss check of :func:`lost_holdings`: the number of
    non-empty cell answers, of known answers and rewards of each extra, and its provenance fields."""
    held = {"cells": table.rewards.size, "answers": 0 if table.answers is None else int((table.answers != "").sum())}
    for name, extra in table.extras.items():
        name = name.removeprefix(PARTIAL_EXTRA.format(""))  # a partial extra that becomes whole holds more, not less
        for f in ("answers", "rewards"):
            if isinstance(extra.get(f), list):
                held[f"extra {name} {f}"] = sum(v is not None for v in extra[f])
    held["provenance"] = _provenance_fields(table.provenance)
    return held


def lost_holdings(old: RewardTable, new: RewardTable) -> list[str]:
    """What ``new`` holds less of than ``old`` (empty when nothing is lost): each a phrase naming the count or the
    provenance fields lost. A resume or a rerun must never write a table that holds less than the file it replaces."""
    a, b = table_holdings(old), table_holdings(new)
    lost = [f"{k} {a[k]:,} -> {b.get(k, 0):,}" for k in a if k != "provenance" and b.get(k, 0) < a[k]]
    if a["provenance"] - b["provenance"]:
        lost.append(f"provenance fields {sorted(a['provenance'] - b['provenance'])} missing")
    return lost


class EngineOracle:
    """GRPO's on-demand reward oracle through the precompute engine and its cell cache.

    ``rows`` index ``engine.questions``; each requested cell is read from the cache or evaluated live and cached,
    so GRPO pays for exactly the cells it samples. Counts ``calls`` (all requests) and ``unique_calls``
    (distinct cells), like :class:`fgpo_lib.oracle.TableOracle`.
    """

    def __init__(self, engine: PrecomputeEngine) -> None:
        self.engine = engine
        self.calls = 0
        self._memo: dict[tuple[int, int], float] = {}

    @property
    def unique_calls(self) -> int:
        return len(self._memo)

    @property
    def touched(self) -> set[tuple[int, int]]:
        """The distinct cells asked for, ``(row, subset)``."""
        return set(self._memo)

    def __call__(self, rows: np.ndarray, subsets: np.ndarray) -> np.ndarray:
        rows, subsets = np.asarray(rows, dtype=np.int64), np.asarray(subsets, dtype=np.int64)
        self.calls += subsets.size
        for row, subs in zip(rows.tolist(), subsets.tolist()):  # a question's new cells go to the reasoner as one batch
            new = [s for s in dict.fromkeys(subs) if (row, s) not in self._memo]
            if new:
                self._memo.update(zip(((row, s) for s in new), self.engine.cells(self.engine.questions[row], new).tolist()))
        return np.array([[self._memo[(r, s)] for s in subs] for r, subs in zip(rows.tolist(), subsets.tolist())], dtype=np.float32).reshape(subsets.shape)
