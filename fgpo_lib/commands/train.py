"""``fgpo train``: one method, one seed, on one reward table; prints the test result, writes the run record and,
with ``--save-selector``, the trained selector (:class:`fgpo_lib.selector.Selector`)."""

from __future__ import annotations

import argparse

from ..validation import seed_int
from .train_flags import METHOD_NAMES, add_train_args, build_config, calls_meaning, load_table, method_help


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.description = method_help()
    add_train_args(p)
    p.add_argument("--method", choices=METHOD_NAMES, default="fgpo", metavar="METHOD", help="the method to train (listed above); default fgpo")
    p.add_argument("--seed", type=seed_int, default=0, help="fixes initialisation, minibatches and samples (default 0)")
    p.add_argument("--out", help="write the run record (JSON) here")
    p.add_argument("--save-selector", metavar="DIR", help="save the trained selector in this folder (Selector.load reads it; fgpo select uses it)")


def run(args: argparse.Namespace) -> int:
    from ..outputs import write_record
    from ..train import train

    if args.save_selector is not None:  # the outputs themselves were checked before the command ran (fgpo_lib.outputs)
        from ..algos.registry import METHODS as REGISTRY
        from ..selector import SelectorError

        if REGISTRY[args.method].family == "baseline":
            raise SelectorError(f"--save-selector: method {args.method!r} is an untrained reference policy; it trains no policy to save as a selector")
    table = load_table(args)
    config = build_config(args, args.method, args.seed)
    keep = {} if args.save_selector is not None else None
    run = train(table, config, progress=args.progress, keep=keep)
    f = run["final"]
    split = "test" if f["test"] is not None else "train"
    m = f[split]
    print(f"{args.method} seed {args.seed}, {split} questions: greedy reward {m['greedy_reward']:.4f} (the policy's top subset), "
          f"expected reward {m['expected_reward']:.4f} (over its distribution), tools/question {m['greedy_size']:.2f}")
    print(f"  dead-group probability at G={args.group_size}: {m['failure_rate_closed_form']:.3f} (the chance that {args.group_size} subsets "
          "sampled from this policy all get one reward, so that GRPO learns nothing from the question; FGPO does not sample)")
    print(f"  reasoner calls: {f['reasoner_calls']:,} ({f['unique_reasoner_calls']:,} distinct): {calls_meaning(args.method)}")
    if args.out:
        write_record(args.out, run, "train")
        print(f"wrote {args.out}")
    if args.save_selector is not None:
        from ..selector import Selector

        Selector.from_training(table, config, keep, run).save(args.save_selector)
        print(f"saved the selector in {args.save_selector} (fgpo select {args.save_selector} --question TEXT)")
    return 0
