"""``fgpo precompute``: every (question, subset) cell of a benchmark evaluated by a frozen reasoner into a table.

``--benchmark`` and ``--reasoner`` take a built-in name or your own as an import path (:mod:`fgpo_lib.agent`,
:mod:`fgpo_lib.reasoners.callable`). The output is written atomically, never over an input, never over a table that
holds more (answers, extras, provenance fields) or that is another table (benchmark, reasoner, model, prompt,
library), unless ``--force``; checkpoints obey the same rules.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from ..validation import nonneg_float, nonneg_int, positive_int, workers_count


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..genomics.benchmarks import BENCHMARKS
    from ..reasoners.registry import REASONERS

    p.add_argument("--benchmark", required=True, help=f"a built-in benchmark ({', '.join(BENCHMARKS)}) or yours as module:attribute (an fgpo_lib.agent.AgentBenchmark)")
    p.add_argument("--reasoner", required=True, help=f"a built-in reasoner ({', '.join(REASONERS)}) or your function (question, tool_outputs) -> answer as module:function")
    p.add_argument("--reasoner-kwargs", help="JSON object of reasoner settings, e.g. '{\"base_url\": \"http://127.0.0.1:8000\"}' for openai-http")
    p.add_argument("--questions", type=positive_int, help="sample about this many questions, stratified by task: an equal share of every task, rounded up, so at least one per task (GeneTuring's 9 tasks make --questions 1 a sample of 9; the count is printed); default: all")
    p.add_argument("--sample-seed", type=nonneg_int, default=0, help="seed of the task-stratified sample's hash order (default 0: the committed tables' samples)")
    p.add_argument("--max-size", type=nonneg_int, default=4, help="largest subset size in the table (default 4; a library of 4 tools gives 16 subsets)")
    p.add_argument("--tools", help="the tool library: comma-separated tool names of the benchmark, 'four' for its 4-tool library, or 12, 16 or 20 for the scaling chapter's larger libraries (default: the benchmark's whole library)")
    p.add_argument("--resume-from", action="append", default=[], metavar="T.npz", help="seed the cell cache from a committed table (repeatable); only missing cells are computed")
    p.add_argument("--extras", action="store_true", help="also the All-Tools cell and the reasoner's own tool selection of every question")
    p.add_argument("--dry-run", action="store_true", help="print cells, prompt tokens and estimated CPU time from a short pilot, then stop")
    p.add_argument("--pilot", type=positive_int, default=2, help="questions in the --dry-run pilot")
    p.add_argument("--checkpoint-every", type=nonneg_int, default=0, metavar="N", help="write the table of the questions done so far to --out every N questions (0: only at the end)")
    p.add_argument("--workers", type=workers_count, default=1, help=f"local processes (or Dask workers with --dask local), at most this machine's CPU count ({os.cpu_count()})")
    p.add_argument("--cell-timeout", type=nonneg_float, default=0.0, metavar="SECONDS", help="a reasoner call that takes longer fails its cell, named "
                   "(a reasoner that blocks never hangs the command; default 0: no limit; not with --dask)")
    p.add_argument("--dask", help="'local' for a local Dask cluster, or a scheduler address")
    p.add_argument("--cache", help="SQLite cell cache (default ~/.cache/fgpo/cells.sqlite)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--out", required=True, help="the reward table to write (.npz); an existing table is only replaced by the same table holding at least as much")
    p.add_argument("--force", action="store_true", help="replace --out even when it holds another table, or more answers, extras or provenance fields")


def reasoner_kwargs_flag(text: str | None) -> dict | None:
    """``--reasoner-kwargs``: a JSON object, or None when the flag is not given."""
    if text is None:
        return None
    try:
        kwargs = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"--reasoner-kwargs: not valid JSON ({exc}); give an object such as '{{\"n_threads\": 1}}'") from None
    if not isinstance(kwargs, dict):
        raise ValueError(f"--reasoner-kwargs must be a JSON object such as '{{\"n_threads\": 1}}', got {text!r}")
    return kwargs


def library_from_flag(benchmark: str, text: str | None) -> tuple[str, ...] | None:
    """``--tools`` of a benchmark (built in or a user's): None (its whole library), 'four' (its 4-tool library), a
    size of the scaling chapter's libraries, or comma-separated tool names, each a tool of the benchmark."""
    from ..agent import resolve_benchmark
    from ..genomics.libraries import LARGE_LIBRARIES

    if text is None:
        return None
    bench = resolve_benchmark(benchmark)
    if text == "four":
        return tuple(bench.library4)
    if text.strip().isdigit():
        if int(text) not in LARGE_LIBRARIES:
            raise ValueError(f"--tools {text}: the libraries by size are {', '.join(map(str, LARGE_LIBRARIES))}")
        return bench.library(LARGE_LIBRARIES[int(text)])
    tools = tuple(t.strip() for t in text.split(",") if t.strip())
    if not tools:
        raise ValueError(f"--tools {text!r} names no tool; give comma-separated tool names, 'four', or {', '.join(map(str, LARGE_LIBRARIES))}")
    try:
        return bench.library(tools)
    except ValueError as exc:
        raise ValueError(f"--tools: {exc}") from None


def save_without_loss(table, out: Path, force: bool) -> None:
    """Write ``table`` to ``out`` (atomically), unless ``out`` holds another table (:func:`~.holdings.identity_changes`)
    or a table with more (:func:`~.holdings.lost_holdings`). ``force`` overwrites anyway."""
    from ..errors import PrecomputeError
    from ..table import RewardTable, RewardTableError
    from .holdings import identity_changes, lost_holdings

    if out.exists() and not force:
        try:
            old = RewardTable.load(out)
        except RewardTableError:
            raise PrecomputeError(f"--out {out}: exists and is not a reward table; pass --force to overwrite it, or choose another --out") from None
        other = identity_changes(old, table)
        if other:
            raise PrecomputeError(f"--out {out}: holds another table ({'; '.join(other)}); refusing to replace it. Choose another --out, "
                                  "or pass --force to replace it")
        lost = lost_holdings(old, table)
        if lost:
            raise PrecomputeError(f"--out {out}: refusing to overwrite it with a table that holds less ({'; '.join(lost)}); "
                                  "every computed cell is in the cache, so pass --force to overwrite, or choose another --out")
    table.save(out)


def run(args: argparse.Namespace) -> int:
    from ..files import refuse_inputs_as_outputs
    from ..reasoners import check_reasoner_kwargs
    from ..table import RewardTable
    from ..table_info import cost_info
    from .cache import DEFAULT_CACHE
    from .cells import PrecomputeSpec
    from .engine import PrecomputeEngine
    from ..errors import PrecomputeError

    out = Path(args.out)  # checked before the command ran (fgpo_lib.outputs); the table rules are save_without_loss's
    refuse_inputs_as_outputs({"--cache": args.cache}, {"--out": args.out, "--resume-from": args.resume_from})
    kwargs = reasoner_kwargs_flag(args.reasoner_kwargs)
    sources = [(path, RewardTable.load(path)) for path in args.resume_from]
    if kwargs is None:  # a resume keeps the settings its tables were made with (n_threads, ...), unless given anew
        kwargs = next((t.provenance.get("reasoner_kwargs") for _, t in sources if t.provenance.get("reasoner") == args.reasoner), None) or {}
        if not isinstance(kwargs, dict):
            raise PrecomputeError(f"--resume-from: its provenance's reasoner_kwargs is a {type(kwargs).__name__}, not an object; give --reasoner-kwargs")
        kwargs = dict(kwargs)
    check_reasoner_kwargs(args.reasoner, kwargs)
    spec = PrecomputeSpec(args.benchmark, args.reasoner, kwargs, args.max_size, args.questions, args.sample_seed, library_from_flag(args.benchmark, args.tools),
                          extras=args.extras)
    engine = PrecomputeEngine(spec, cache=args.cache or DEFAULT_CACHE)
    print(f"{spec.benchmark} x {spec.reasoner}: {len(engine.questions)} questions x {engine.space.n_subsets} subsets of {', '.join(engine.space.tool_names)}; cache {engine.cache.path}")
    for path, source in sources:
        added = engine.seed_from_table(source, source=path)
        print(f"seeded {added:,} cells from {path}")
    cells, questions = engine.remaining()
    print(f"{cells:,} cells of {questions:,} questions remain")
    if args.dry_run:
        plan = engine.plan(pilot_questions=args.pilot)
        if plan["pilot_failed"]:
            raise PrecomputeError(f"--dry-run: {plan['pilot_failed']} of {plan['pilot_cells']} pilot cells failed (first: {plan['pilot_error']}), so no estimate; fix the reasoner and rerun")
        print(
            f"prompt tokens: {plan['prompt_tokens']:,} in all, {plan['evaluated_tokens']:,} past shared prefixes; "
            f"pilot: {plan['pilot_cells']:,} cells of {plan['pilot_questions']} questions in {plan['pilot_seconds']:.1f} s; "
            f"estimated CPU time for all {plan['cells']:,} cells: {plan['estimated_seconds'] / 3600:.2f} h"
        )
        return 0
    executor = None
    if args.dask:
        from distributed import Client, LocalCluster

        client = Client(LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True)) if args.dask == "local" else Client(args.dask)
        executor = client.get_executor()

    def checkpoint() -> None:
        partial = engine.build_table(partial=True)
        save_without_loss(partial, out, args.force)
        left, _ = engine.remaining()
        cost = cost_info(partial)
        eta = f", about {left / cost['cells_per_second'] / 3600:.2f} h at the {cost['cells_per_second']:.2f} cells/s of its timed cells" if cost else ""
        print(f"checkpoint: {partial.n_questions} of {len(engine.questions)} questions written to {out}; {left:,} cells remain{eta}", flush=True)

    counts = engine.run(workers=args.workers, executor=executor, progress=not args.quiet, checkpoint=checkpoint, checkpoint_every=args.checkpoint_every,
                        cell_timeout=args.cell_timeout)
    print(f"computed {counts['computed']:,} cells ({counts['failed']:,} failed) in {counts['seconds']:.1f} s")
    if args.extras:
        if args.checkpoint_every:
            checkpoint()  # every question's cells, before the extras' long single pass
        extra = engine.run_extras(progress=not args.quiet, checkpoint=checkpoint, checkpoint_every=args.checkpoint_every)
        print(f"extras: the All-Tools cell of every question; {extra['selections']:,} selection calls, {extra['unparseable']:,} unparseable")
    save_without_loss(engine.build_table(), out, args.force)
    print(f"wrote {out}")
    return 0
