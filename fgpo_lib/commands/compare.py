"""``fgpo compare``: several methods x seeds on one table, test accuracy with 95% bootstrap intervals.

Columns: ``greedy reward`` is the mean test reward of each question's top subset under the trained policy, with its
95% interval (bootstrap over seeds and questions); ``expected`` the mean reward over the policy's whole distribution;
``fail(cf)`` the closed-form chance that a group of G subsets sampled from the policy all get one reward (a dead
group: GRPO learns nothing from it); ``fail(obs)`` the same, observed in one seeded group per question; ``tools/q``
the top subset's tools per question; ``calls`` and ``unique`` the reasoner calls the method paid for in training
(all, and distinct cells). ``uniform`` is untrained: its greedy reward is its expected reward (every subset equally
likely), not its first subset's.
"""

from __future__ import annotations

import argparse

from ..validation import int_list
from ..validation import plain
from .train_flags import METHOD_NAMES, add_train_args, build_config, load_table, method_help


def plain_paragraphs(text: str) -> str:
    """Docstring paragraphs as --help shows them: plain text (no markup), one paragraph per line."""
    return "\n\n".join(plain(par) for par in text.split("\n\n"))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.description = plain_paragraphs(__doc__.split("\n\n", 1)[1]) + "\n\n" + method_help()
    add_train_args(p)
    p.add_argument("--methods", default=",".join(METHOD_NAMES), help="comma-separated methods to compare, each run on every seed (default: all)")
    p.add_argument("--seeds", type=int_list, default=[0, 1, 2, 3, 4], help="comma-separated seeds (default 0,1,2,3,4)")
    p.add_argument("--out", help="write the summary (JSON) here")


def run(args: argparse.Namespace) -> int:
    from ..compare import compare_runs, summarize
    from ..outputs import write_record
    table = load_table(args)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    for m in methods:
        if m not in METHOD_NAMES:
            raise ValueError(f"unknown method {m!r} in --methods; use {', '.join(METHOD_NAMES)}")
    seeds = args.seeds
    if not seeds or not methods:
        raise ValueError(f"--seeds and --methods each need at least one item, got seeds {seeds!r}, methods {args.methods!r}")
    split = "test" if len(table.split_index("test")) else "train"
    base = build_config(args, methods[0], seeds[0])
    rows = summarize(compare_runs(table, base, methods, seeds, progress=args.progress), split).to_dict("records")
    print(f"{table!r}\n{split} questions, {len(seeds)} seeds; 95% CI: bootstrap over seeds and questions (columns: fgpo compare --help)")
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
        write_record(args.out, {"split": split, "seeds": seeds, "rows": rows}, "compare")
        print(f"wrote {args.out}")
    return 0
