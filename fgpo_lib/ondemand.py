"""On-demand scaling runs: the sampled estimators on a library too large to tabulate, every reward an LLM call.

The reader runs of :mod:`fgpo_lib.scaling` tabulate every cell of every library, since a reader answers in
milliseconds. An LLM does not: the 20-tool table of 60 questions is 371,760 cells, weeks of this machine's CPU. Here
every estimator that samples (GRPO, the peers' fixes for dead groups, sum-and-sample, the unordered-set estimator)
trains through an :class:`~fgpo_lib.precompute.EngineOracle`, so it pays for exactly the cells it draws. The cell
cache is shared by every estimator and seed; a cell already made (by another run, or a committed table) is not made
again. Evaluation asks only for the greedy subset of each test question, on demand too, and those calls are counted
apart from training's.

How it departs from the reader runs:

* **A shorter schedule** (cost): :data:`SCHEDULE`, fewer updates of smaller batches. The same schedule runs at 8
  tools from the committed 163-subset table, with full FGPO as the reference there.
* **No exact variants at 20 tools** (full FGPO, the k-subset dial, candidate sets): they read whole rows of the table,
  or k drawn subsets per question per update (k = 32 is four times GRPO's G = 8), which is what this library cannot
  afford.
* **The cells are committed** (``cells.parquet`` beside the run records: question, subset, answer, score), and seed the
  cache of a rerun, so a new machine redoes nothing and a test can re-derive some of them live.

Array convention: the frames are long, as in :mod:`fgpo_lib.scaling` (one row per evaluation point; one row per test
question of a run); ``eval calls`` counts the evaluation's distinct cells.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd

from .genomics.libraries import LARGE_LIBRARIES, sub_table
from ._version import code_version
from .precompute import EngineOracle, PrecomputeEngine, PrecomputeSpec
from .scaling import run_rows, run_scaling, scaling_config
from .scaling_estimators import ESTIMATORS, ON_DEMAND, REFERENCE  # noqa: F401  (part of this module's interface)
from .table import RewardTable
from .train import train

#: the estimators of :data:`fgpo_lib.scaling.ESTIMATORS` that sample through an oracle (so can run on demand)
#: the on-demand schedule: seeds, updates, questions per update, evaluation interval, learning rate (4x the reader
#: runs', for a schedule 5x shorter), reward
SCHEDULE = dict(seeds=(0, 1), steps=12, batch=8, eval_every=4, lr=0.2, reward="eq1")
#: where ``fgpo ondemand`` writes, and the book reads, the runs
from .paths import ONDEMAND_RECORDS as RUNS_DIR  # noqa: E402


class OnDemandTable:
    """What :func:`fgpo_lib.train.train` needs of a table besides its rewards: the engine's questions, their split
    and the library's subset space. Asking it for ``rewards`` is an error: they come through oracles."""

    def __init__(self, engine: PrecomputeEngine) -> None:
        self.engine = engine
        self.space = engine.space
        self.question_ids = [q.qid for q in engine.questions]
        self.questions = [q.text for q in engine.questions]
        self.tasks = [q.task for q in engine.questions]
        self.split = np.array([q.split for q in engine.questions]).astype(str)
        self.provenance = {**engine.provenance(), "on_demand": True}

    @property
    def rewards(self):
        raise AttributeError("an on-demand table has no reward matrix: its cells come through an EngineOracle")

    n_questions = property(lambda self: len(self.question_ids))
    n_subsets = property(lambda self: self.space.n_subsets)
    tool_names = property(lambda self: self.space.tool_names)
    split_index = RewardTable.split_index

    def content_hash(self) -> str:
        """sha256 of the questions, split, library and reasoner: equal hashes mean the same on-demand cells."""
        return hashlib.sha256(json.dumps([self.question_ids, list(self.tool_names), self.split.tolist(), self.space.to_dict(), self.engine.reasoner_key]).encode()).hexdigest()


def run_on_demand(engine: PrecomputeEngine, n_tools: int, estimators, schedule: dict, done=(), on_run=None, progress: bool = False) -> None:
    """Train each of ``estimators`` (names in :data:`ON_DEMAND`) for each seed on ``engine``'s library, every cell
    on demand. ``done``: ``(estimator, seed)`` pairs to skip. After each run, ``on_run(curves, finals, cells)`` gets
    its rows (with ``eval calls`` and ``seconds``) and the cells it touched, ``{(question row, subset)}``."""
    from tqdm import tqdm

    table = OnDemandTable(engine)
    todo = [(n, s) for n in estimators for s in schedule["seeds"] if (n, s) not in set(done)]
    for name, seed in tqdm(todo, desc=f"on demand, {n_tools} tools", unit="run", disable=not progress):
        t0 = time.perf_counter()
        train_oracle, eval_oracle = EngineOracle(engine), EngineOracle(engine)
        cfg = scaling_config(name, seed, **{k: schedule[k] for k in ("steps", "batch", "eval_every", "lr", "reward")})
        curves, finals = run_rows(n_tools, name, seed, train(table, cfg, oracle=train_oracle, eval_oracle=eval_oracle))
        for row in curves:
            row["eval calls"], row["seconds"] = eval_oracle.unique_calls, round(time.perf_counter() - t0, 1)
        on_run(curves, finals, train_oracle.touched | eval_oracle.touched)


# --- committed records ----------------------------------------------------------------------------------------------
def _records(out: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    read = lambda name: pd.read_parquet(out / name) if (out / name).exists() else pd.DataFrame()  # noqa: E731
    return read("curves.parquet"), read("finals.parquet"), read("cells.parquet")


def seed_from_cells(engine: PrecomputeEngine, cells: pd.DataFrame, prov: dict, source: str) -> int:
    """Fill ``engine``'s cache from committed cells (columns ``question_id``, ``subset``, ``answer``, ``score``)
    whose provenance ``prov`` (per library size) must be this engine's. Returns the cells added."""
    for tp in prov.values():
        engine.check_cells_provenance(tp, tp["library"], source)
    return engine.seed_rows([(engine.key(q, label), q, label, engine.spec.reasoner, a, float(r), "ok", f"seeded from {source}", 0.0) for q, label, a, r in zip(cells.question_id, cells.subset, cells.answer, cells.score)])


def load_on_demand(runs_dir: Path = RUNS_DIR) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Every committed on-demand setting under ``runs_dir``: ``(curves, finals, {setting: provenance})`` with a
    ``setting`` column (``<benchmark>__<reasoner>``)."""
    curves, finals, prov = [], [], {}
    for d in sorted(p for p in Path(runs_dir).iterdir() if (p / "provenance.json").exists()):
        c, f, _ = _records(d)
        curves.append(c.assign(setting=d.name))
        finals.append(f.assign(setting=d.name))
        prov[d.name] = json.loads((d / "provenance.json").read_text())
    if not prov:
        raise FileNotFoundError(f"no on-demand runs under {runs_dir}; make them with fgpo ondemand")
    return pd.concat(curves, ignore_index=True), pd.concat(finals, ignore_index=True), prov


def run(args) -> int:
    """``fgpo ondemand --benchmark B --reasoner R --table T.npz``: the estimators that sample, on the 20-tool library
    with every cell on demand and at 8 tools from the committed table ``T`` (the same questions), with full FGPO as
    the 8-tool reference. Writes ``records/scaling_llm/<B>__<R>/`` after every run; a rerun resumes."""
    try:
        kwargs = json.loads(args.reasoner_kwargs)
    except ValueError as exc:
        raise ValueError(f"--reasoner-kwargs: not valid JSON ({exc})") from None
    if not isinstance(kwargs, dict):
        raise ValueError(f"--reasoner-kwargs must be a JSON object such as '{{\"n_threads\": 1}}', got {args.reasoner_kwargs!r}")
    base = RewardTable.load(args.table)
    prov_kwargs = base.provenance.get("reasoner_kwargs")
    if prov_kwargs is not None and not isinstance(prov_kwargs, dict):
        raise ValueError(f"--table {args.table}: its provenance field 'reasoner_kwargs' must be an object of reasoner settings, got {type(prov_kwargs).__name__}")
    out = Path(args.out_dir) / f"{args.benchmark}__{args.reasoner}"
    spec = PrecomputeSpec(args.benchmark, args.reasoner, questions=base.n_questions, tools=LARGE_LIBRARIES[args.tools], reasoner_kwargs=kwargs)
    engine = PrecomputeEngine(spec, cache=args.cache)
    if [q.qid for q in engine.questions] != base.question_ids:
        raise ValueError(f"--table {args.table} holds other questions than the {base.n_questions}-question sample of {args.benchmark}")
    out.mkdir(parents=True, exist_ok=True)
    engine.seed_from_table(base, source=Path(args.table).name)  # a PrecomputeError names what does not match
    curves, finals, cells = _records(out)
    if len(cells):
        seed_from_cells(engine, cells, json.loads((out / "provenance.json").read_text())["tables"], source=str(out / "cells.parquet"))
    schedule = SCHEDULE
    prov = {"benchmark": args.benchmark, "reasoner": args.reasoner, "questions": base.n_questions, "code_version": code_version(),
            "schedule": {k: list(v) if isinstance(v, tuple) else v for k, v in schedule.items()}, "estimators": {n: ESTIMATORS[n] for n in [REFERENCE, *ON_DEMAND]},
            "tables": {"8": {**base.provenance, "content_hash": base.content_hash(), "library": list(base.tool_names)},
                       str(args.tools): {**engine.provenance(), "library": list(engine.space.tool_names)}}}

    def save(new_curves, new_finals, touched) -> None:
        nonlocal curves, finals, cells
        curves = pd.DataFrame(curves.to_dict("records") + list(new_curves))  # rows, not a concat: some columns are all-NA
        finals = pd.concat([d for d in (finals, new_finals) if len(d)], ignore_index=True)
        keys = {(engine.questions[r].qid, engine.space.label(s)) for r, s in touched}
        have = set(zip(cells.question_id, cells.subset)) if len(cells) else set()
        new = sorted(keys - have)
        got = engine.cache.get([engine.key(q, label) for q, label in new])
        add = pd.DataFrame([(q, label, got[engine.key(q, label)][0], got[engine.key(q, label)][1]) for q, label in new], columns=["question_id", "subset", "answer", "score"])
        cells = pd.concat([d for d in (cells, add) if len(d)], ignore_index=True) if len(add) or len(cells) else add
        for name, frame in (("curves", curves), ("finals", finals), ("cells", cells)):  # whole files, written then renamed
            frame.to_parquet(out / f"{name}.parquet.tmp", index=False)
            (out / f"{name}.parquet.tmp").rename(out / f"{name}.parquet")
        (out / "provenance.json").write_text(json.dumps(prov, indent=1))

    def done(n_tools: int) -> set:
        return set(zip(curves[curves.tools == n_tools].estimator, curves[curves.tools == n_tools].seed)) if len(curves) else set()

    for seed in schedule["seeds"]:  # 8 tools: from the committed table, full FGPO included (no new cell)
        todo8 = [e for e in [REFERENCE, *args.estimators] if (e, seed) not in done(8)]
        if todo8:
            c8, f8 = run_scaling({8: sub_table(base, LARGE_LIBRARIES[8])}, todo8, seeds=(seed,), **{k: schedule[k] for k in ("steps", "batch", "eval_every", "lr", "reward")})
            save(c8.to_dict("records"), f8, set())
    run_on_demand(engine, args.tools, args.estimators, schedule, done=done(args.tools), on_run=save, progress=True)
    print(f"wrote {out}: {len(curves)} curve points, {len(cells)} cells")
    return 0
