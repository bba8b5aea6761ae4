"""The ``fgpo`` command line.

    fgpo train   --table T --method fgpo|grpo|sft|dpo|uniform|oracle-best --seed S --steps N [...] --out run.json
    fgpo compare --table T --methods fgpo,grpo,sft,dpo,uniform,oracle-best --seeds 0,1,2,3,4 [...] [--out compare.json]
    fgpo example-table --out protein.npz      # the book's illustrative 4-tool table
    fgpo precompute | table-info | verify-table | score | coverage | study   (see fgpo --help)

Every training flag maps one-to-one onto a field of :class:`fgpo_lib.train.TrainConfig` (``--entropy-coef``,
``--kl-coef`` and ``--subsets-per-update`` onto its ``fgpo``, the GRPO flags onto its ``grpo``, ``--dpo-*`` onto its
``dpo``).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import fields
from pathlib import Path

from .algos import DPOConfig, FGPOConfig, GRPOConfig
from .algos.sum_and_sample import SumAndSampleConfig
from .algos.unordered_set import UnorderedSetConfig
from .compare import compare_runs, summarize
from .genomics.benchmarks import BENCHMARKS
from .genomics.scoring import RULES
from .reasoners.registry import REASONERS
from .study.runner import add_arguments as study_arguments
from .study.runner import run as study_run
from .table import RewardTable, RewardTableError
from .train import METHODS, TrainConfig, train
from .validation import int_list, nonneg_int, positive_float, positive_int

_GROUPS = {"fgpo": FGPOConfig, "grpo": GRPOConfig, "dpo": DPOConfig, "sas": SumAndSampleConfig, "us": UnorderedSetConfig}
_TOP = [f for f in fields(TrainConfig) if f.name not in ("method", "seed", *_GROUPS)]
_SUB = [(g, f) for g, cls in _GROUPS.items() for f in fields(cls)]


class _Parser(argparse.ArgumentParser):
    """argparse, except that ``--flag=--`` is an error: Python 3.11's argparse drops the ``--`` and hands the flag an
    empty list, which no numeric check ever sees."""

    def _get_values(self, action, arg_strings):
        if action.option_strings and action.nargs is None and arg_strings == ["--"]:
            self.error(f"argument {'/'.join(action.option_strings)}: expected one argument")
        return super()._get_values(action, arg_strings)


def _dest(group: str, name: str) -> str:
    """The flag name of a per-method setting: FGPO's and GRPO's keep their own names (``--entropy-coef``,
    ``--beta``); DPO's are prefixed (``--dpo-beta``), since GRPO has a ``beta`` too."""
    return getattr(_GROUPS[group], "FLAG_PREFIX", "") + name


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _add_train_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--table", required=True, help="reward table: .npz (RewardTable.save) or long .csv/.parquet")
    defaults = TrainConfig()
    for f in _TOP:
        default = getattr(defaults, f.name)
        kind = json.loads if default is None else type(default)  # None-default fields (prior) take JSON
        p.add_argument(_flag(f.name), type=kind, default=default, help=f"TrainConfig.{f.name} (default %(default)s)")
    for group, f in _SUB:
        default = getattr(getattr(defaults, group), f.name)
        p.add_argument(_flag(_dest(group, f.name)), type=type(default), default=default, help=f"{_GROUPS[group].__name__}.{f.name} (default %(default)s)")
    p.add_argument("--progress", action="store_true", help="show a progress bar")


def _config(args: argparse.Namespace, method: str, seed: int) -> TrainConfig:
    return TrainConfig(
        method=method,
        seed=seed,
        **{f.name: getattr(args, f.name) for f in _TOP},
        **{g: cls(**{f.name: getattr(args, _dest(g, f.name)) for g2, f in _SUB if g2 == g}) for g, cls in _GROUPS.items()},
    )


def _write_json(obj: dict, path: str) -> None:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(obj, indent=1, sort_keys=True) + "\n")


def cmd_train(args: argparse.Namespace) -> int:
    table = RewardTable.load(args.table)
    run = train(table, _config(args, args.method, args.seed), progress=args.progress)
    f = run["final"]
    split = "test" if f["test"] is not None else "train"
    print(
        f"{args.method} seed {args.seed}: {split} greedy reward {f[split]['greedy_reward']:.4f}, expected {f[split]['expected_reward']:.4f}, "
        f"tools/question {f[split]['greedy_size']:.2f}, failure rate (closed form, G={args.group_size}) {f[split]['failure_rate_closed_form']:.3f}, "
        f"reasoner calls {f['reasoner_calls']:,} ({f['unique_reasoner_calls']:,} unique)"
    )
    if args.out:
        _write_json(run, args.out)
        print(f"wrote {args.out}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    table = RewardTable.load(args.table)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    for m in methods:
        if m not in METHODS:
            raise ValueError(f"unknown method {m!r} in --methods; use {', '.join(METHODS)}")
    seeds = args.seeds
    if not seeds or not methods:
        raise ValueError(f"--seeds and --methods each need at least one item, got seeds {seeds!r}, methods {args.methods!r}")
    split = "test" if len(table.split_index("test")) else "train"
    base = _config(args, methods[0], seeds[0])
    rows = summarize(compare_runs(table, base, methods, seeds, progress=args.progress), split).to_dict("records")
    print(f"{table!r}\n{split} questions, {len(seeds)} seeds; 95% CI: bootstrap over seeds and questions")
    header = f"{'method':<12} {'greedy reward [95% CI]':<26} {'expected':>8} {'fail(cf)':>8} {'fail(obs)':>9} {'tools/q':>7} {'calls':>10} {'unique':>10}"
    print(header)
    print("-" * len(header))
    for r in rows:
        ci = f"{r['greedy_reward']:.4f} [{r['ci_lo']:.4f}, {r['ci_hi']:.4f}]"
        print(
            f"{r['method']:<12} {ci:<26} {r['expected_reward']:>8.4f} {r['failure_rate_closed_form']:>8.3f} {r['failure_rate_observed']:>9.3f} "
            f"{r['greedy_size']:>7.2f} {r['reasoner_calls']:>10,.0f} {r['unique_reasoner_calls']:>10,.0f}"
        )
    if args.out:
        _write_json({"split": split, "seeds": seeds, "rows": rows}, args.out)
        print(f"wrote {args.out}")
    return 0


def cmd_example_table(args: argparse.Namespace) -> int:
    from .examples import protein_structure_table

    table = protein_structure_table(n_questions=args.questions, seed=args.seed)
    table.save(args.out)
    print(f"{table!r}\nwrote {args.out}")
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    from .genomics.benchmarks import load_benchmark
    from .genomics.scoring import score_predictions

    questions = load_benchmark(args.benchmark)
    known = {q.text for q in questions} | {q.qid for q in questions}
    predictions = {}
    path = Path(args.predictions)
    if not path.exists():
        raise ValueError(f"{path}: no such file")
    for n, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            key, pred = rec.get("qid") or rec["question"], rec["prediction"]
        except (ValueError, KeyError, AttributeError) as exc:
            raise ValueError(f"{path}: line {n}: expected a JSON object with 'question' (or 'qid') and 'prediction' ({exc!r})") from None
        if key not in known:
            raise ValueError(f"{path}: line {n}: question {str(key)[:80]!r} is not in benchmark {args.benchmark!r}")
        predictions[key] = str(pred)
    table = score_predictions(questions, predictions, args.rules)
    print(f"{args.benchmark}, {args.rules} rules")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    return 0


def cmd_coverage(args: argparse.Namespace) -> int:
    from .genomics.coverage import coverage_table

    table = coverage_table(args.benchmark, max_size=args.max_size, progress=args.progress)
    print(f"{args.benchmark}: subsets of at most {args.max_size} of the 8 tools")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.1f}"))
    if args.markdown:
        Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
        Path(args.markdown).write_text(table.to_markdown(index=False, floatfmt=".1f") + "\n")
        print(f"wrote {args.markdown}")
    return 0


def cmd_precompute(args: argparse.Namespace) -> int:
    from .genomics.libraries import LARGE_LIBRARIES, LIBRARIES
    from .precompute import DEFAULT_CACHE, PrecomputeEngine, PrecomputeSpec
    from .table_info import cost_info

    kwargs = json.loads(args.reasoner_kwargs) if args.reasoner_kwargs else {}
    if not isinstance(kwargs, dict):
        raise ValueError(f"--reasoner-kwargs must be a JSON object, got {args.reasoner_kwargs!r}")
    tools = None
    if args.tools == "four":
        tools = LIBRARIES[args.benchmark]
    elif args.tools and args.tools.strip().isdigit():
        if int(args.tools) not in LARGE_LIBRARIES:
            raise ValueError(f"--tools {args.tools}: the libraries by size are {', '.join(map(str, LARGE_LIBRARIES))}")
        tools = LARGE_LIBRARIES[int(args.tools)]
    elif args.tools:
        tools = tuple(t.strip() for t in args.tools.split(",") if t.strip())
    spec = PrecomputeSpec(args.benchmark, args.reasoner, kwargs, args.max_size, args.questions, args.sample_seed, tools)
    engine = PrecomputeEngine(spec, cache=args.cache or DEFAULT_CACHE)
    print(f"{spec.benchmark} x {spec.reasoner}: {len(engine.questions)} questions x {engine.space.n_subsets} subsets of {', '.join(engine.space.tool_names)}; cache {engine.cache.path}")
    for path in args.resume_from:
        added = engine.seed_from_table(RewardTable.load(path), source=path)
        print(f"seeded {added:,} cells from {path}")
    cells, questions = engine.remaining()
    print(f"{cells:,} cells of {questions:,} questions remain")
    if args.dry_run:
        plan = engine.plan(pilot_questions=args.pilot)
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
        partial.save(args.out)
        left, _ = engine.remaining()
        cost = cost_info(partial)
        eta = f", about {left / cost['cells_per_second'] / 3600:.2f} h at the {cost['cells_per_second']:.2f} cells/s of its timed cells" if cost else ""
        print(f"checkpoint: {partial.n_questions} of {len(engine.questions)} questions written to {args.out}; {left:,} cells remain{eta}", flush=True)

    counts = engine.run(workers=args.workers, executor=executor, progress=not args.quiet, checkpoint=checkpoint, checkpoint_every=args.checkpoint_every)
    print(f"computed {counts['computed']:,} cells ({counts['failed']:,} failed) in {counts['seconds']:.1f} s")
    if args.extras:
        extra = engine.run_extras(progress=not args.quiet)
        print(f"extras: the All-Tools cell of every question; {extra['selections']:,} selection calls, {extra['unparseable']:,} unparseable")
    table = engine.build_table()
    table.save(args.out)
    print(f"wrote {args.out}")
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    from .plan import Plan

    plan = Plan(args.tools, args.max_size, args.questions, args.seconds_per_call, args.group_size, args.steps)
    plan.check_fits()
    print(plan.report())
    return 0


def cmd_table_info(args: argparse.Namespace) -> int:
    from .table_info import format_table_info, summary_frame, table_info

    if len(args.table) > 1:  # one markdown row per table
        frame = summary_frame({Path(p).stem: RewardTable.load(p) for p in args.table})
        print(frame.astype(object).where(frame.notna(), "").to_markdown(index=False))  # blank: cost not recorded
        return 0
    table = RewardTable.load(args.table[0])
    print(f"{args.table[0]}: {table!r}")
    print(format_table_info(table_info(table)))
    return 0


def cmd_verify_table(args: argparse.Namespace) -> int:
    from .verify import table_reasoner, verify_extras, verify_table

    table = RewardTable.load(args.table)
    reasoner = table_reasoner(table)
    res = verify_table(table, args.sample, args.seed, reasoner)
    print(f"{args.table}: {res['agree']} of {res['checked']} re-evaluated cells agree ({100 * res['agree'] / max(res['checked'], 1):.1f}%)")
    for qid, subset, old, new in res["disagreements"][:20]:
        print(f"  differs: {qid} / {subset!r}: table {old}, live {new}")
    extra = verify_extras(table, args.extras, args.seed, reasoner)
    if extra["checked"]:
        print(f"extra cells (All-Tools, selection call) of {min(args.extras, table.n_questions)} questions: {extra['agree']} of {extra['checked']} agree")
        for qid, name, old, new in extra["disagreements"][:20]:
            print(f"  differs: {qid} / {name}: table {old!r}, live {new!r}")
    elif table.extras and args.extras:
        print("extra cells: none of the kinds this code re-derives")
    everything = res["agree"] == res["checked"] and extra["agree"] == extra["checked"]
    return 0 if everything or not args.strict else 1


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="fgpo", description="fgpo: exact tool-subset policy optimization (FGPO) against GRPO over reward tables, and the study that compares them.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("train", help="train one method on one seed")
    _add_train_args(p)
    p.add_argument("--method", choices=METHODS, default="fgpo")
    p.add_argument("--seed", type=nonneg_int, default=0)
    p.add_argument("--out", help="write the run record (JSON) here")
    p.set_defaults(func=cmd_train)
    p = sub.add_parser("compare", help="several methods x seeds, with confidence intervals")
    _add_train_args(p)
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--seeds", type=int_list, default=[0, 1, 2, 3, 4], help="comma-separated seeds (default 0,1,2,3,4)")
    p.add_argument("--out", help="write the summary (JSON) here")
    p.set_defaults(func=cmd_compare)
    p = sub.add_parser("example-table", help="write the illustrative 4-tool protein-structure table")
    p.add_argument("--out", required=True)
    p.add_argument("--questions", type=positive_int, default=200)
    p.add_argument("--seed", type=nonneg_int, default=0)
    p.set_defaults(func=cmd_example_table)
    p = sub.add_parser("score", help="score free-text predictions on a built-in benchmark, per task")
    p.add_argument("--benchmark", required=True, choices=list(BENCHMARKS))
    p.add_argument("--predictions", required=True, help='JSONL: {"question": ..., "prediction": ...} per line')
    p.add_argument("--rules", choices=RULES, default="lenient", help="lenient: our answer extractor; official: GeneGPT's evaluate.py (case-sensitive, exact)")
    p.set_defaults(func=cmd_score)
    p = sub.add_parser("coverage", help="per task: share of questions answerable from some tool subset's outputs")
    p.add_argument("--benchmark", required=True, choices=list(BENCHMARKS))
    p.add_argument("--max-size", type=nonneg_int, default=4)
    p.add_argument("--markdown", help="also write the table as Markdown here")
    p.add_argument("--progress", action="store_true")
    p.set_defaults(func=cmd_coverage)
    p = sub.add_parser("precompute", help="evaluate every (question, subset) cell with a frozen reasoner into a reward table")
    p.add_argument("--benchmark", required=True, choices=list(BENCHMARKS))
    p.add_argument("--reasoner", required=True, choices=list(REASONERS))
    p.add_argument("--reasoner-kwargs", help="JSON object of reasoner settings")
    p.add_argument("--questions", type=positive_int, help="sample this many questions, stratified by task (default: all)")
    p.add_argument("--sample-seed", type=nonneg_int, default=0)
    p.add_argument("--max-size", type=nonneg_int, default=4)
    p.add_argument("--tools", help="the tool library: comma-separated tool names, 'four' for the benchmark's 4-tool library, or 12, 16 or 20 for the scaling chapter's larger libraries (default: the 8 tools)")
    p.add_argument("--resume-from", action="append", default=[], metavar="T.npz", help="seed the cell cache from a committed table (repeatable); only missing cells are computed")
    p.add_argument("--extras", action="store_true", help="also the All-Tools cell and the reasoner's own tool selection of every question")
    p.add_argument("--dry-run", action="store_true", help="print cells, prompt tokens and estimated CPU time from a short pilot, then stop")
    p.add_argument("--pilot", type=positive_int, default=2, help="questions in the --dry-run pilot")
    p.add_argument("--checkpoint-every", type=nonneg_int, default=0, metavar="N", help="write the table of the questions done so far to --out every N questions (0: only at the end)")
    p.add_argument("--workers", type=positive_int, default=1, help="local processes (or Dask workers with --dask local)")
    p.add_argument("--dask", help="'local' for a local Dask cluster, or a scheduler address")
    p.add_argument("--cache", help="SQLite cell cache (default ~/.cache/fgpo/cells.sqlite)")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_precompute)
    p = sub.add_parser("table-info", help="summary statistics of a reward table; of several, one markdown row each")
    p.add_argument("table", nargs="+")
    p.set_defaults(func=cmd_table_info)
    p = sub.add_parser("verify-table", help="re-evaluate random cells of a precomputed table live")
    p.add_argument("table")
    p.add_argument("--sample", type=positive_int, default=20, help="cells to re-evaluate")
    p.add_argument("--extras", type=nonneg_int, default=5, help="questions whose extra cells (All-Tools, selection call) to re-evaluate; 0: none")
    p.add_argument("--seed", type=nonneg_int, default=0)
    p.add_argument("--strict", action="store_true", help="exit 1 unless every cell agrees")
    p.set_defaults(func=cmd_verify_table)
    p = sub.add_parser("plan", help="what a tool library costs: subsets, table memory, precompute time, the GRPO budget")
    p.add_argument("--tools", type=positive_int, required=True, help="number of tools N")
    p.add_argument("--max-size", type=nonneg_int, required=True, help="largest subset k")
    p.add_argument("--questions", type=positive_int, required=True)
    p.add_argument("--seconds-per-call", type=positive_float, required=True, help="reasoner seconds per (question, subset) cell")
    p.add_argument("--group-size", type=positive_int, default=8, help="GRPO's G")
    p.add_argument("--steps", type=positive_int, default=200, help="GRPO's full-batch updates")
    p.set_defaults(func=cmd_plan)
    p = sub.add_parser("study", help="run every setting's notebook, the summary notebooks, then build the book (what `make book` does)")
    study_arguments(p)
    p.set_defaults(func=study_run)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand. Bad flags end in argparse's usage line; bad input (a malformed table, a broken model file,
    a failed reasoner, an unwritable path) in one ``fgpo <command>: error: ...`` line and exit status 2."""
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (RewardTableError, ValueError, RuntimeError, OSError, KeyError) as exc:
        print(f"fgpo {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
