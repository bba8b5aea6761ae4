"""The precompute engine: fills the cell cache for a benchmark and a reasoner, and builds reward tables from it.

* **Once per cell.** A cell's cache key is the sha256 of (question id, subset, reasoner fingerprint = name + model
  file hash + prompt template hash + version, the fingerprint of the subset's tools as the benchmark entry gives it).
* **Order.** Within a question, subsets are evaluated in trie order (:meth:`SubsetSpace.trie_order`), so
  consecutive LLM prompts share the longest prefix; questions go in :func:`~.sampling.sample_order`.
* **Failures are recorded, never zero.** :meth:`PrecomputeEngine.build_table` refuses failed or missing cells, and
  a rerun retries them.
* **Parallel.** Questions are spread over any ``concurrent.futures.Executor``: local processes, or a Dask cluster
  through ``distributed.Client(...).get_executor()``. Workers only compute; this process writes.
* **Resume.** :meth:`PrecomputeEngine.seed_from_table` fills the cache from a committed table; a table rebuilt from
  seeded cells alone equals its source, array for array and dtype for dtype.
"""

from __future__ import annotations

import hashlib
import json
import time
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict
from functools import cached_property
from pathlib import Path
from typing import Callable

import numpy as np
from tqdm import tqdm

from .._version import code_version
from ..errors import PrecomputeError
from ..reasoners import Reasoner, make_reasoner
from ..reasoners.selection import parse_selection, selection_sha256
from ..splits import Question
from ..table import RewardTable
from .cache import DEFAULT_CACHE, CellCache
from .cells import PrecomputeSpec, evaluate_question, evaluate_remote, selection_menu, subset_prompts
from .holdings import PARTIAL_EXTRA, known_answers
from .sampling import sample_order, sample_questions


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
        self.bench = spec.bench  # the benchmark's entry: questions, tools, their fingerprint, scorer
        self.questions = sample_questions(self.bench.questions(), spec.questions, spec.sample_seed)
        self._tools_version = self.bench.tools_version(self.space.tool_names)  # the table's (provenance)
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
        return hashlib.sha256(json.dumps([qid, label, self.reasoner_key, self.bench.tools_version(label.split("+"))]).encode()).hexdigest()

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
        mine = {**self.provenance(), "tools_version": self.bench.tools_version(tools)}
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

        check_extras(table, source)
        labels = table.space.labels()
        for i, qid in enumerate(table.question_ids):
            # the extras first: their rewards are exact (JSON) where the grid's are float32, and a null answer there
            # is unknown, as '' is in the grid's answers (known_answers), so a rebuilt table equals its source
            for extra in table.extras.values():  # extra cells: All-Tools, the selection call and the cell it picked
                if extra.get("kind") == "selection" and extra["answers"][i] is not None:  # null: not asked yet (a partial extra)
                    add(qid, extra["key_label"], extra["answers"][i], None, None)
                if extra.get("kind") in ("cell", "selection") and extra["rewards"][i] is not None:
                    answer = extra["answers"][i] if extra["kind"] == "cell" else None  # a selection's answer is its reply
                    add(qid, extra["subsets"][i], answer, float(extra["rewards"][i]), None)
            for s, label in enumerate(labels):
                answer = None if table.answers is None or table.answers[i, s] == "" else str(table.answers[i, s])
                secs = None if table.seconds is None or np.isnan(table.seconds[i, s]) else float(table.seconds[i, s])
                add(qid, label, answer, float(table.rewards[i, s]), secs)
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

    def run(self, workers: int = 1, executor: Executor | None = None, progress: bool = True, checkpoint: Callable[[], None] | None = None, checkpoint_every: int = 0,
            cell_timeout: float = 0.0) -> dict:
        """Evaluate every pending cell. ``workers > 1`` uses local processes; ``executor`` overrides (e.g. Dask).

        Questions go in :func:`sample_order`, so a run stopped early leaves a task-stratified sample done.
        ``checkpoint()`` is called after every ``checkpoint_every`` questions (e.g. to write a partial table).
        ``cell_timeout``: seconds a reasoner call may take before its cell fails (0: no limit; not on Dask).
        Returns counts: ``cells`` (all), ``computed`` now, ``failed`` now, ``seconds``.

        Stopped (Ctrl-C, or SIGTERM as :class:`~fgpo_lib.errors.Terminated`), it caches the questions its workers
        have finished, cancels the rest, ends its own worker processes at once (they ignore Ctrl-C, and die with this
        process), and raises the interrupt again with ``kept``: what it kept, counted.
        """
        todo = [(q, self.pending(q)) for q in sample_order(self.questions, self.spec.sample_seed)]
        todo = [(q, p) for q, p in todo if p]
        n_cells = len(self.questions) * self.space.n_subsets
        kept: dict[str, tuple[int, int]] = {}  # qid -> (cells, failed cells) cached in this run: writing one is idempotent

        def counts() -> dict[str, int]:
            return {"computed": sum(c for c, _ in kept.values()), "failed": sum(f for _, f in kept.values()), "done": len(kept)}

        t0 = time.perf_counter()
        bar = tqdm(total=sum(len(p) for _, p in todo), desc=f"{self.spec.benchmark}/{self.spec.reasoner}", unit="cell", disable=not progress)
        own = None
        if executor is None and workers > 1:
            executor = own = ProcessPoolExecutor(max_workers=workers, initializer=worker_init)
        futures: list = []

        staged: list = []  # the question being kept: a stop between its cache write and its count is settled below

        def keep(q: Question, res: list, secs: float) -> None:
            staged[:] = [(q, res, secs)]
            self.cache.put(self._rows(q, res, secs))  # INSERT OR REPLACE: the same rows may be written again
            kept[q.qid] = (len(res), sum(r[3] == "failed" for r in res))  # one store: counted once, however often kept
            staged.clear()
            bar.update(len(res))
            if len(kept) == 1:
                from ..markers import mark as _mark_ready

                _mark_ready("first question cached")

        def workers_failed(exc: BaseException) -> PrecomputeError:  # a fork refused (process limit, memory): stop, never hang
            return PrecomputeError(f"worker processes failed ({type(exc).__name__}: {exc}) after {len(kept)} questions; every finished "
                                   "question is cached, so rerun with fewer --workers to continue")

        def evaluated():  # (question, results, seconds), in todo order, here or on the executor's workers
            if executor is None:
                for q, pend in todo:
                    t = time.perf_counter()
                    yield q, evaluate_question(self.spec, q, pend, self.reasoner, cell_timeout), time.perf_counter() - t
                return
            spec_dict = asdict(self.spec)
            try:
                futures.extend(executor.submit(evaluate_remote, spec_dict, asdict(q), pend, cell_timeout) for q, pend in todo)
            except (BrokenProcessPool, OSError) as exc:
                raise workers_failed(exc) from None
            for (q, _), fut in zip(todo, futures):  # written in submission order: deterministic cache contents
                try:
                    _, res, secs = fut.result()
                except (BrokenProcessPool, OSError) as exc:
                    raise workers_failed(exc) from None
                fut.fgpo_kept = True
                yield q, res, secs

        try:
            for q, res, secs in evaluated():
                keep(q, res, secs)
                if checkpoint and checkpoint_every and len(kept) % checkpoint_every == 0:
                    checkpoint()  # its own errors are its own (an output path), never a worker's
        except KeyboardInterrupt as exc:
            if own is not None:
                stop_workers(own)
            if staged:  # stopped inside keep(): written or not, write it (again) and count it once
                keep(*staged.pop())
            for (q, _), fut in zip(todo, futures):  # finished on a worker, not yet written: kept too
                if not getattr(fut, "fgpo_kept", False) and fut.done() and not fut.cancelled() and fut.exception() is None:
                    keep(q, *fut.result()[1:])
            n = counts()
            unfinished = len(todo) - n["done"]
            exc.kept = (f"{n['computed']:,} cells of {n['done']:,} questions computed in this run are cached, with every cell before it; "
                        f"{unfinished:,} questions were not finished (their cells are computed again when the same command runs)")
            raise
        except BaseException:
            if own is not None:
                stop_workers(own)
            raise
        finally:
            bar.close()
            if own is not None:
                own.shutdown(wait=True, cancel_futures=True)
        n = counts()
        return {"cells": n_cells, "computed": n["computed"], "failed": n["failed"], "seconds": time.perf_counter() - t0}

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
        descriptions = selection_menu(self.all_tools, self.spec.benchmark)
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
            "data_sha256": self.bench.data_sha256(),
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
            answers=known_answers(answers),
            seconds=seconds,
            extras=extras,
        )


def _ok(hit):
    """A cache hit if its status is ``ok``, else None."""
    return hit if hit is not None and hit[2] == "ok" else None


def _put_extra(out: dict, name: str, done: list, extra: dict) -> None:
    """``extra`` into ``out`` under ``name`` when every question is ``done``, under ``partial_<name>`` when some are."""
    if done and all(d is not None for d in done):
        out[name] = extra
    elif any(d is not None for d in done):
        out[PARTIAL_EXTRA.format(name)] = extra

def check_extras(table: RewardTable, source: str) -> None:
    """The extras a resume seeds from, checked before any cell is read: a ``selection`` extra needs its
    ``key_label`` and lists of texts or nulls; every extra's ``subsets`` are labels or nulls and its ``rewards``
    numbers or nulls. A malformed one is a :class:`PrecomputeError` naming the file, the extra and the field."""
    for name, extra in table.extras.items():
        kind = extra.get("kind")
        if kind not in ("cell", "selection"):
            continue
        def bad(field: str, want: str) -> PrecomputeError:
            return PrecomputeError(f"{source}: extra {name!r} field {field!r} must be {want}; the table was not written by fgpo precompute, or was edited")
        if kind == "selection" and not isinstance(extra.get("key_label"), str):
            raise bad("key_label", "the selection call's cache label (text)")
        for field, kinds, want in (("answers", (str,), "a list of texts or nulls"), ("subsets", (str,), "a list of subset labels or nulls"),
                                   ("rewards", (int, float), "a list of numbers or nulls")):
            values = extra.get(field)
            if not isinstance(values, list) or not all(v is None or (isinstance(v, kinds) and not isinstance(v, bool)) for v in values):
                raise bad(field, want)


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


def worker_init() -> None:
    """A local worker process ignores Ctrl-C (the command stops it, having kept what it finished) and, on Linux, dies
    with the command (``prctl(PR_SET_PDEATHSIG)``), so that no worker outlives it, even a killed one."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the command's handler, inherited at fork: a SIGTERM ends the worker
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def stop_workers(pool: ProcessPoolExecutor) -> None:
    """End a local pool's workers now: pending questions are cancelled, running ones killed (their cells are lost,
    and say so), without waiting for them."""
    procs = list((getattr(pool, "_processes", None) or {}).values())  # before shutdown, which forgets them
    manager = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        try:
            proc.kill()
        except (OSError, ValueError, AttributeError):
            pass
    # The pool's manager thread closes its wake-up pipe once it sees the killed workers. Python 3.11's exit hook
    # writes to that pipe without a lock, so a command that exits while the thread is still closing it prints an
    # OSError traceback (fixed in CPython 3.12): wait for the thread, briefly, before the command goes on to exit.
    if manager is not None:
        manager.join(timeout=10)
