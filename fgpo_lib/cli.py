"""The ``fgpo`` command line.

    fgpo train   --table T --method M --seed S --steps N [...] --out run.json
    fgpo compare --table T --methods M1,M2,... --seeds 0,1,2,3,4 [...] [--out compare.json]
    fgpo example-table --out protein.npz      # the book's illustrative 4-tool table
    fgpo precompute | table-info | verify-table | cross-build | score | questions | coverage | plan
    fgpo scaling | ondemand | study | pipeline                      (see fgpo --help)

Methods are the names of the method registry (:data:`fgpo_lib.algos.registry.METHODS`; ``fgpo train --help`` lists
them). Every training flag maps one-to-one onto a field of :class:`fgpo_lib.train.TrainConfig` (``--entropy-coef``,
``--kl-coef`` and ``--subsets-per-update`` onto its ``fgpo``, the GRPO flags onto its ``grpo``, ``--dpo-*`` onto its
``dpo``), or, for a method whose settings have no field there, onto ``settings`` (``--tpo-eta``, ``--rl-zvp-alpha``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import fields
from pathlib import Path

from .compare import compare_runs, summarize
from .genomics.benchmarks import BENCHMARKS
from .genomics.scoring import RULES
from .reasoners.registry import REASONERS
from .study.runner import add_arguments as study_arguments
from .study.runner import run as study_run
from .table import RewardTable, RewardTableError
from .algos.registry import METHODS as METHOD_REGISTRY
from .train import METHODS, TrainConfig, train
from .validation import _ranged, check_output_path, field_docs, int_list, seed_int, workers_count, nonneg_int, positive_float, positive_int

example_questions = _ranged(int, 1, 1_000_000, what="a number of questions from 1 to 1,000,000")
#: TrainConfig's per-method fields (the method registry's ``field``) -> their settings class
_GROUPS = {m.field: m.settings for m in METHOD_REGISTRY.values() if m.field}
#: methods whose settings live in ``TrainConfig.settings``: their flags are prefixed with the method's name
_OWN = {name: m.settings for name, m in METHOD_REGISTRY.items() if m.settings and not m.field}
_TOP = [f for f in fields(TrainConfig) if f.name not in ("method", "seed", "settings", *_GROUPS)]
_SUB = [(g, f) for g, cls in _GROUPS.items() for f in fields(cls)]
_OWN_FLAGS = [(m, f) for m, cls in _OWN.items() for f in fields(cls)]


class _Parser(argparse.ArgumentParser):
    """argparse, except that ``--flag=--`` is an error (Python 3.11's argparse drops the ``--`` and hands the flag an
    empty list, which no numeric check ever sees), and that no flag is abbreviated: ``--subsets`` must never be taken
    for ``--subsets-per-update``. Subcommands' parsers are of this class too."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

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


def _help(doc: str, field: str) -> str:
    """A config field's ``--help``: its docstring (``%`` escaped for argparse), its field and its default."""
    return f"{doc.replace('%', '%%')} [{field}; default %(default)s]".lstrip()


def _add_subsets_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--subsets", choices=("observed",), help="a long .csv/.parquet table whose rows cover only some subsets: 'observed' makes its "
                   "subset space exactly the subsets in the file, a candidate set (every question needs each of them); default: every subset of the sizes found")


def _add_train_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--table", required=True, help="reward table: .npz (RewardTable.save) or long .csv/.parquet")
    _add_subsets_arg(p)
    defaults = TrainConfig()
    docs = {cls: field_docs(cls) for cls in (TrainConfig, *_GROUPS.values())}
    for f in _TOP:
        default = getattr(defaults, f.name)
        kind = json.loads if default is None else type(default)  # None-default fields (prior) take JSON
        p.add_argument(_flag(f.name), type=kind, default=default, help=_help(docs[TrainConfig].get(f.name, ""), f"TrainConfig.{f.name}"))
    for group, f in _SUB:
        default = getattr(getattr(defaults, group), f.name)
        cls = _GROUPS[group]
        p.add_argument(_flag(_dest(group, f.name)), type=type(default), default=default, help=_help(docs[cls].get(f.name, ""), f"{cls.__name__}.{f.name}"))
    for method, f in _OWN_FLAGS:
        cls = _OWN[method]
        default = getattr(cls(), f.name)
        kind = _float_tuple if isinstance(default, tuple) else type(default)
        p.add_argument(_flag(f"{method}_{f.name}"), type=kind, default=default, help=_help(field_docs(cls).get(f.name, ""), f"{cls.__name__}.{f.name}, method {method}"))
    p.add_argument("--progress", action="store_true", help="show a progress bar")


def _float_tuple(text: str) -> tuple[float, ...]:
    """argparse type of a tuple setting: comma-separated numbers (``0.1,1,10``)."""
    try:
        return tuple(float(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def _config(args: argparse.Namespace, method: str, seed: int) -> TrainConfig:
    """The run's config from the flags; a value out of its range is reported with the flag's name."""
    try:
        return _build_config(args, method, seed)
    except ValueError as exc:
        field = str(exc).split(" ", 1)[0]
        flags = {f.name: _flag(f.name) for f in _TOP} | {_dest(g, f.name): _flag(_dest(g, f.name)) for g, f in _SUB} | {f.name: _flag(f"{m}_{f.name}") for m, f in _OWN_FLAGS}
        raise ValueError(f"{flags[field]}: {exc}" if field in flags else str(exc)) from None


def _build_config(args: argparse.Namespace, method: str, seed: int) -> TrainConfig:
    return TrainConfig(
        method=method,
        seed=seed,
        **{f.name: getattr(args, f.name) for f in _TOP},
        **{g: cls(**{f.name: getattr(args, _dest(g, f.name)) for g2, f in _SUB if g2 == g}) for g, cls in _GROUPS.items()},
        settings={f.name: getattr(args, _flag(f"{m}_{f.name}")[2:].replace("-", "_")) for m, f in _OWN_FLAGS if m == method},
    )


def _write_json(obj: dict, path: str) -> None:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(obj, indent=1, sort_keys=True) + "\n")


def _calls_meaning(method: str) -> str:
    """What a run's reasoner-call count counts, by method."""
    from .train import SAMPLED

    if method in ("grpo", *SAMPLED):
        return "the cells its sampled groups asked for"
    if method == "uniform":
        return "none: it reads no reward"
    return "every cell of the table, which it reads whole, however many steps it trains"


def cmd_train(args: argparse.Namespace) -> int:
    if args.out is not None:
        check_output_path("--out", args.out)  # before training: an unwritable path must not cost the run
    table = RewardTable.load(args.table, subsets=args.subsets)
    run = train(table, _config(args, args.method, args.seed), progress=args.progress)
    f = run["final"]
    split = "test" if f["test"] is not None else "train"
    m = f[split]
    print(f"{args.method} seed {args.seed}, {split} questions: greedy reward {m['greedy_reward']:.4f} (the policy's top subset), "
          f"expected reward {m['expected_reward']:.4f} (over its distribution), tools/question {m['greedy_size']:.2f}")
    print(f"  dead-group probability at G={args.group_size}: {m['failure_rate_closed_form']:.3f} (the chance that {args.group_size} subsets "
          "sampled from this policy all get one reward, so that GRPO learns nothing from the question; FGPO does not sample)")
    print(f"  reasoner calls: {f['reasoner_calls']:,} ({f['unique_reasoner_calls']:,} distinct): {_calls_meaning(args.method)}")
    if args.out:
        _write_json(run, args.out)
        print(f"wrote {args.out}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    if args.out is not None:
        check_output_path("--out", args.out)
    table = RewardTable.load(args.table, subsets=args.subsets)
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

    check_output_path("--out", args.out)
    table = protein_structure_table(n_questions=args.questions, seed=args.seed)
    table.save(args.out)
    print(f"{table!r}\nwrote {args.out}")
    return 0


def read_predictions(path: Path, questions, benchmark: str = "the benchmark") -> dict[str, str]:
    """``fgpo score``'s input: JSONL, one ``{"question" (or "qid"): text, "prediction": text}`` object per line, a
    question at most once. Returns ``{question text or qid: prediction}``; raises ``ValueError`` naming the file and
    line of the first bad record (and both lines of a repeated question)."""
    known = {q.text for q in questions} | {q.qid for q in questions}
    if not path.is_file():
        raise ValueError(f"{path}: no such file" if not path.exists() else f"{path}: not a file")
    try:
        lines = path.read_text().splitlines()
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    predictions, line_of = {}, {}
    want = 'a JSON object {"question": text (or "qid": id), "prediction": text}'
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{path}: line {n}: not valid JSON ({exc}); expected {want}") from None
        if not isinstance(rec, dict):
            raise ValueError(f"{path}: line {n}: expected {want}, got {type(rec).__name__}")
        field = "qid" if rec.get("qid") is not None else "question"
        key, pred = rec.get(field), rec.get("prediction")
        if not isinstance(key, str):
            raise ValueError(f"{path}: line {n}: {field!r} must be a text, got {type(key).__name__ if key is not None else 'nothing'}; expected {want}")
        if not isinstance(pred, str):
            raise ValueError(f"{path}: line {n}: 'prediction' must be a text, got {'null' if pred is None else type(pred).__name__}; "
                             "leave a question out instead (it scores 0, counted as missing)")
        if key not in known:
            raise ValueError(f"{path}: line {n}: question {key[:80]!r} is not in benchmark {benchmark!r}; `fgpo questions --benchmark {benchmark}` prints the exact texts and ids")
        if key in line_of:
            raise ValueError(f"{path}: line {n}: question {key[:80]!r} was already given on line {line_of[key]}; give each question once")
        predictions[key], line_of[key] = pred, n
    if not predictions:
        raise ValueError(f"{path}: no predictions (the file has no JSON lines); expected, one per line, {want}")
    return predictions


def cmd_score(args: argparse.Namespace) -> int:
    from .genomics.benchmarks import load_benchmark
    from .genomics.scoring import score_predictions

    questions = load_benchmark(args.benchmark)
    predictions = read_predictions(Path(args.predictions), questions, args.benchmark)
    table = score_predictions(questions, predictions, args.rules)
    print(f"{args.benchmark}, {args.rules} rules")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    return 0


def cmd_questions(args: argparse.Namespace) -> int:
    from .genomics.benchmarks import load_benchmark

    for q in load_benchmark(args.benchmark):
        if args.split in ("all", q.split):
            print(json.dumps({"qid": q.qid, "task": q.task, "split": q.split, "question": q.text}))
    return 0


def cmd_coverage(args: argparse.Namespace) -> int:
    from .genomics.coverage import coverage_table

    table = coverage_table(args.benchmark, max_size=args.max_size, progress=args.progress)
    print(f"{args.benchmark}: subsets of at most {args.max_size} of its {len(BENCHMARKS[args.benchmark].tools)} tools")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.1f}"))
    if args.markdown:
        Path(args.markdown).parent.mkdir(parents=True, exist_ok=True)
        Path(args.markdown).write_text(table.to_markdown(index=False, floatfmt=".1f") + "\n")
        print(f"wrote {args.markdown}")
    return 0


def _reasoner_kwargs(text: str | None) -> dict | None:
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


def _library(benchmark: str, text: str | None) -> tuple[str, ...] | None:
    """``--tools``: None (the 8 tools), 'four', a size of the scaling chapter's libraries, or tool names."""
    from .genomics.libraries import LARGE_LIBRARIES, LIBRARIES

    if text is None:
        return None
    if text == "four":
        return LIBRARIES[benchmark]
    if text.strip().isdigit():
        if int(text) not in LARGE_LIBRARIES:
            raise ValueError(f"--tools {text}: the libraries by size are {', '.join(map(str, LARGE_LIBRARIES))}")
        return LARGE_LIBRARIES[int(text)]
    tools = tuple(t.strip() for t in text.split(",") if t.strip())
    if not tools:
        raise ValueError(f"--tools {text!r} names no tool; give comma-separated tool names, 'four', or {', '.join(map(str, LARGE_LIBRARIES))}")
    return tools


def _save_without_loss(table: RewardTable, out: Path, force: bool) -> None:
    """Write ``table`` to ``out``, unless ``out`` holds a table with more (answers, extras, provenance fields):
    :func:`fgpo_lib.precompute.lost_holdings`. ``force`` overwrites anyway."""
    from .precompute import PrecomputeError, lost_holdings

    if out.exists() and not force:
        try:
            old = RewardTable.load(out)
        except RewardTableError:
            raise PrecomputeError(f"--out {out}: exists and is not a reward table; pass --force to overwrite it, or choose another --out") from None
        lost = lost_holdings(old, table)
        if lost:
            raise PrecomputeError(f"--out {out}: refusing to overwrite it with a table that holds less ({'; '.join(lost)}); "
                                  "every computed cell is in the cache, so pass --force to overwrite, or choose another --out")
    table.save(out)


def cmd_precompute(args: argparse.Namespace) -> int:
    from .precompute import DEFAULT_CACHE, PrecomputeEngine, PrecomputeError, PrecomputeSpec
    from .reasoners import check_reasoner_kwargs
    from .table_info import cost_info

    out = check_output_path("--out", args.out)
    kwargs = _reasoner_kwargs(args.reasoner_kwargs)
    sources = [(path, RewardTable.load(path)) for path in args.resume_from]
    if kwargs is None:  # a resume keeps the settings its tables were made with (n_threads, ...), unless given anew
        kwargs = next((dict(t.provenance.get("reasoner_kwargs") or {}) for _, t in sources if t.provenance.get("reasoner") == args.reasoner), {})
    check_reasoner_kwargs(args.reasoner, kwargs)
    spec = PrecomputeSpec(args.benchmark, args.reasoner, kwargs, args.max_size, args.questions, args.sample_seed, _library(args.benchmark, args.tools),
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
        _save_without_loss(partial, out, args.force)
        left, _ = engine.remaining()
        cost = cost_info(partial)
        eta = f", about {left / cost['cells_per_second'] / 3600:.2f} h at the {cost['cells_per_second']:.2f} cells/s of its timed cells" if cost else ""
        print(f"checkpoint: {partial.n_questions} of {len(engine.questions)} questions written to {out}; {left:,} cells remain{eta}", flush=True)

    counts = engine.run(workers=args.workers, executor=executor, progress=not args.quiet, checkpoint=checkpoint, checkpoint_every=args.checkpoint_every)
    print(f"computed {counts['computed']:,} cells ({counts['failed']:,} failed) in {counts['seconds']:.1f} s")
    if args.extras:
        if args.checkpoint_every:
            checkpoint()  # every question's cells, before the extras' long single pass
        extra = engine.run_extras(progress=not args.quiet, checkpoint=checkpoint, checkpoint_every=args.checkpoint_every)
        print(f"extras: the All-Tools cell of every question; {extra['selections']:,} selection calls, {extra['unparseable']:,} unparseable")
    _save_without_loss(engine.build_table(), out, args.force)
    print(f"wrote {out}")
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
        frame = summary_frame({Path(p).stem: RewardTable.load(p, subsets=args.subsets) for p in args.table})
        print(frame.astype(object).where(frame.notna(), "").to_markdown(index=False))  # blank: cost not recorded
        return 0
    table = RewardTable.load(args.table[0], subsets=args.subsets)
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


def cmd_cross_build(args: argparse.Namespace) -> int:
    from .crossbuild import CONTROLS, file_sha256, load_records, measure, negative_control
    from .reasoners.llm import llama_backend

    out_dir = Path(args.out_dir)
    done = load_records(out_dir) if out_dir.is_dir() else {}
    live = llama_backend()
    if args.controls:
        for path in map(Path, args.table):
            for control in CONTROLS:
                rec = negative_control(path, control, args.controls, args.seed, done)
                _write_json(rec, str(out_dir / "controls" / f"{path.stem}__{control}.json"))
                print(f"{path.stem}, control {control}: {rec['agree']}/{rec['checked']} agree; the rule asks {rec['rule_k']}: {'PASSES (cell agreement is blind to it)' if rec['passes'] else 'fails, as it must'}", flush=True)
        return 0
    for path in map(Path, args.table):
        old = done.get(path.stem)
        if old and old["table_sha256"] == file_sha256(path) and old["live_backend"] == live and old["cells"]["checked"] >= args.cells:
            print(f"{path.stem}: measured already ({old['cells']['agree']}/{old['cells']['checked']} cells)")
            continue
        rec = measure(path, args.cells, args.extras, args.seed)
        _write_json(rec, str(out_dir / f"{path.stem}.json"))
        c, e = rec["cells"], rec["extras"]
        print(f"{path.stem} ({rec['table_build']} -> {rec['live_build']}): cells {c['agree']}/{c['checked']} [{c['interval'][0]:.3f}, {c['interval'][1]:.3f}], "
              f"extras {e['agree']}/{e['checked']}, {rec['seconds']:.0f} s", flush=True)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="fgpo", description="fgpo: exact tool-subset policy optimization (FGPO) against GRPO over reward tables, and the study that compares them.")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("train", help="train one method on one seed")
    _add_train_args(p)
    p.add_argument("--method", choices=METHODS, default="fgpo")
    p.add_argument("--seed", type=seed_int, default=0)
    p.add_argument("--out", help="write the run record (JSON) here")
    p.set_defaults(func=cmd_train)
    p = sub.add_parser("compare", help="several methods x seeds, with confidence intervals")
    _add_train_args(p)
    p.add_argument("--methods", default=",".join(METHODS), help=f"comma-separated methods to compare, each run on every seed (default: all of {', '.join(METHODS)})")
    p.add_argument("--seeds", type=int_list, default=[0, 1, 2, 3, 4], help="comma-separated seeds (default 0,1,2,3,4)")
    p.add_argument("--out", help="write the summary (JSON) here")
    p.set_defaults(func=cmd_compare)
    p = sub.add_parser("example-table", help="write the illustrative 4-tool protein-structure table")
    p.add_argument("--out", required=True, help="the table file to write (.npz)")
    p.add_argument("--questions", type=example_questions, default=200, help="questions in the table (default 200, at most 1,000,000)")
    p.add_argument("--seed", type=seed_int, default=0, help="fixes the synthetic rewards and the split (default 0: the book's table)")
    p.set_defaults(func=cmd_example_table)
    p = sub.add_parser("score", help="score free-text predictions on a built-in benchmark, per task")
    p.add_argument("--benchmark", required=True, choices=list(BENCHMARKS))
    p.add_argument("--predictions", required=True, help='JSONL, one {"question": text (or "qid": id), "prediction": text} per line, each question once; '
                   "`fgpo questions --benchmark NAME` prints every question's exact text and id")
    p.add_argument("--rules", choices=RULES, default="lenient", help="lenient: our answer extractor; official: GeneGPT's evaluate.py (case-sensitive, exact)")
    p.set_defaults(func=cmd_score)
    p = sub.add_parser("questions", help="print a built-in benchmark's questions as JSONL (qid, task, split, exact text): the keys `fgpo score` takes")
    p.add_argument("--benchmark", required=True, choices=list(BENCHMARKS))
    p.add_argument("--split", choices=("all", "train", "test"), default="all")
    p.set_defaults(func=cmd_questions)
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
    p.add_argument("--questions", type=positive_int, help="sample about this many questions, stratified by task: an equal share of every task, rounded up, so at least one per task (GeneTuring's 9 tasks make --questions 1 a sample of 9; the count is printed); default: all")
    p.add_argument("--sample-seed", type=nonneg_int, default=0, help="seed of the task-stratified sample's hash order (default 0: the committed tables' samples)")
    p.add_argument("--max-size", type=nonneg_int, default=4, help="largest subset size in the table (default 4; a library of 4 tools gives 16 subsets)")
    p.add_argument("--tools", help="the tool library: comma-separated tool names, 'four' for the benchmark's 4-tool library, or 12, 16 or 20 for the scaling chapter's larger libraries (default: the 8 tools)")
    p.add_argument("--resume-from", action="append", default=[], metavar="T.npz", help="seed the cell cache from a committed table (repeatable); only missing cells are computed")
    p.add_argument("--extras", action="store_true", help="also the All-Tools cell and the reasoner's own tool selection of every question")
    p.add_argument("--dry-run", action="store_true", help="print cells, prompt tokens and estimated CPU time from a short pilot, then stop")
    p.add_argument("--pilot", type=positive_int, default=2, help="questions in the --dry-run pilot")
    p.add_argument("--checkpoint-every", type=nonneg_int, default=0, metavar="N", help="write the table of the questions done so far to --out every N questions (0: only at the end)")
    p.add_argument("--workers", type=workers_count, default=1, help=f"local processes (or Dask workers with --dask local), at most this machine's CPU count ({os.cpu_count()})")
    p.add_argument("--dask", help="'local' for a local Dask cluster, or a scheduler address")
    p.add_argument("--cache", help="SQLite cell cache (default ~/.cache/fgpo/cells.sqlite)")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--out", required=True, help="the reward table to write (.npz); an existing table is only replaced by one that holds at least as much")
    p.add_argument("--force", action="store_true", help="replace --out even when the new table holds fewer answers, extras or provenance fields")
    p.set_defaults(func=cmd_precompute)
    p = sub.add_parser("table-info", help="summary statistics of a reward table; of several, one markdown row each")
    p.add_argument("table", nargs="+")
    _add_subsets_arg(p)
    p.set_defaults(func=cmd_table_info)
    p = sub.add_parser("verify-table", help="re-evaluate random cells of a precomputed table live")
    p.add_argument("table")
    p.add_argument("--sample", type=positive_int, default=20, help="cells to re-evaluate")
    p.add_argument("--extras", type=nonneg_int, default=5, help="questions whose extra cells (All-Tools, selection call) to re-evaluate; 0: none")
    p.add_argument("--seed", type=seed_int, default=0)
    p.add_argument("--strict", action="store_true", help="exit 1 unless every cell agrees")
    p.set_defaults(func=cmd_verify_table)
    p = sub.add_parser("cross-build", help="measure how a committed LLM table's cells re-derive under this machine's llama.cpp build (one record per table)")
    p.add_argument("table", nargs="+", help="reward tables (.npz) made by fgpo precompute")
    p.add_argument("--cells", type=positive_int, default=100, help="random cells re-derived per table (default 100: a 95%% interval of about +-4 points at 95%% agreement)")
    p.add_argument("--extras", type=nonneg_int, default=20, help="questions whose extra cells (All-Tools, selection call) are re-derived (default 20)")
    p.add_argument("--seed", type=nonneg_int, default=1, help="sample seed (default 1; the live test uses 0)")
    p.add_argument("--out-dir", default="records/crossbuild", help="where the records go (default records/crossbuild); a table already measured with this build is skipped")
    p.add_argument("--controls", type=nonneg_int, default=0, metavar="N", help="instead: the negative controls, N cells of each table re-derived with a wrong model and with a wrong prompt, judged by the live test's rule (records in OUT_DIR/controls/)")
    p.set_defaults(func=cmd_cross_build)
    p = sub.add_parser("plan", help="what a tool library costs: subsets, table memory, precompute time, the GRPO budget")
    p.add_argument("--tools", type=positive_int, required=True, help="number of tools N")
    p.add_argument("--max-size", type=nonneg_int, required=True, help="largest subset k")
    p.add_argument("--questions", type=positive_int, required=True)
    p.add_argument("--seconds-per-call", type=positive_float, required=True, help="reasoner seconds per (question, subset) cell")
    p.add_argument("--group-size", type=positive_int, default=8, help="GRPO's G")
    p.add_argument("--steps", type=positive_int, default=200, help="GRPO's full-batch updates")
    p.set_defaults(func=cmd_plan)
    from . import ondemand, pipeline, scaling

    p = sub.add_parser("scaling", help="the scaling chapter's runs: tables of 8 to 20 tools from a reader, every estimator on each (records/scaling/)")
    scaling.add_arguments(p)
    p.set_defaults(func=scaling.run)
    p = sub.add_parser("ondemand", help="the sampled estimators with every cell an on-demand LLM call, on 12-20 tools (records/scaling_llm/)")
    ondemand.add_arguments(p)
    p.set_defaults(func=ondemand.run)
    p = sub.add_parser("pipeline", help="every stage in order: precompute (resuming committed tables), scaling, on-demand, study; --dry-run prints the plan")
    pipeline.add_arguments(p)
    p.set_defaults(func=pipeline.run)
    from .lm_policy import commands as lm

    p = sub.add_parser("lm-train", help="train the language-model policy (LoRA) with one arm on a 4-tool table; writes a run record")
    lm.add_train_arguments(p)
    p.set_defaults(func=lm.run_train)
    p = sub.add_parser("lm-eval", help="score a language-model run record's test choices on other reasoners' tables (the transfer design)")
    lm.add_eval_arguments(p)
    p.set_defaults(func=lm.run_eval)
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
    except KeyboardInterrupt:
        print(f"fgpo {args.command}: interrupted; every finished cell or run written so far is kept", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug, not bad input: one line, and the traceback only when asked for
        if os.environ.get("FGPO_DEBUG"):
            raise
        print(f"fgpo {args.command}: internal error: {type(exc).__name__}: {exc} (please report it; FGPO_DEBUG=1 shows the traceback)", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
