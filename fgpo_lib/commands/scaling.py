"""``fgpo scaling``: the scaling chapter's runs (:mod:`fgpo_lib.scaling`): tables of 8 to 20 tools from a reader, every
estimator on each, written to ``records/scaling/``."""

from __future__ import annotations

from pathlib import Path


def add_arguments(ap) -> None:
    """The flags of ``fgpo scaling``."""
    from ..genomics.benchmarks import BENCHMARKS
    from ..paths import CELL_CACHE, SCALING_RECORDS
    from ..reasoners.registry import REASONERS
    from ..validation import positive_int

    ap.add_argument("--benchmark", required=True, choices=list(BENCHMARKS), help="the built-in benchmark whose tables of 8 to 20 tools are built")
    readers = [name for name, e in REASONERS.items() if e.kind == "reader"]
    ap.add_argument("--reasoner", required=True, choices=readers, help=f"the reader whose tables are built ({', '.join(readers)}); an LLM's 20-tool "
                    "tables are fgpo ondemand's")
    ap.add_argument("--questions", type=positive_int, default=None, help="a task-stratified sample (default: all); it must leave training and test questions")
    ap.add_argument("--cache", default=str(CELL_CACHE), help="the SQLite cell cache (default ~/.cache/fgpo/cells.sqlite)")
    ap.add_argument("--out-dir", default=str(SCALING_RECORDS), help="where the run records go (default records/scaling)")


def run(args) -> int:
    """``fgpo scaling --benchmark B --reasoner R [--questions Q]``: build the tables (cached cells), run every
    estimator on every library size, and write the run records to ``records/scaling/<B>__<R>/``."""
    import time

    from ..scaling import SCHEDULE, run_scaling, scaling_tables, write_runs

    t0 = time.perf_counter()
    tables = scaling_tables(args.benchmark, args.reasoner, args.questions, args.cache, progress=True)
    t1 = time.perf_counter()
    first = next(iter(tables.values()))
    if not len(first.split_index("test")) or not len(first.split_index("train")):
        raise ValueError(f"--questions {args.questions}: the sample of {first.n_questions} questions has no "
                         f"{'test' if not len(first.split_index('test')) else 'training'} question; give a larger sample")
    curves, finals = run_scaling(tables, seeds=SCHEDULE["seeds"], steps=SCHEDULE["steps"], batch=SCHEDULE["batch"], eval_every=SCHEDULE["eval_every"], lr=SCHEDULE["lr"], reward=SCHEDULE["reward"], progress=True)
    t2 = time.perf_counter()
    out = Path(args.out_dir) / f"{args.benchmark}__{args.reasoner}"
    write_runs(out, args.benchmark, args.reasoner, args.questions, tables, curves, finals, {"tables": round(t1 - t0, 1), "training": round(t2 - t1, 1)})
    print(f"wrote {out}: {len(curves)} curve points, tables {t1 - t0:.0f} s, training {t2 - t1:.0f} s")
    return 0
