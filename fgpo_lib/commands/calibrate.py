"""``fgpo calibrate``: the threshold below which a saved selector takes its fallback, picked on held-out questions of a
reward table for a target average of tools or a target accuracy, and what it gives on other questions
(:mod:`fgpo_lib.calibrate`). ``fgpo select DIR --threshold P --fallback ...`` then applies it."""

from __future__ import annotations

import argparse

from ..validation import accuracy_fraction, nonneg_float, nonneg_int, seed_int
from .select import tool_list


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("selector", help="a selector folder (fgpo train / lm-train --save-selector DIR)")
    p.add_argument("--table", required=True, help="a reward table of the selector's tools, with question texts; its test questions are split in two halves")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--target-tools", type=nonneg_float, metavar="T", help="at most this average of tools per question on the calibration half")
    target.add_argument("--target-accuracy", type=accuracy_fraction, metavar="A", help="at least this accuracy (0 to 1) on the calibration half")
    p.add_argument("--fallback", type=tool_list, metavar="A,B", help="the subset an unsure selector calls (default: All-Tools, or the largest within --max-tools)")
    p.add_argument("--max-tools", type=nonneg_int, metavar="B", help="choose only among subsets of at most B tools")
    p.add_argument("--seed", type=seed_int, default=0, help="the split of the test questions into the two halves (default 0)")
    p.add_argument("--out", help="write the result and both curves (JSON) here")


def run(args: argparse.Namespace) -> int:
    from ..calibrate import calibrate
    from ..outputs import write_record
    from ..selector import Selector
    from ..table import RewardTable

    table = RewardTable.load(args.table)
    selector = Selector.load(args.selector, tools=list(table.tool_names))
    res = calibrate(selector, table, args.target_tools, args.target_accuracy, args.fallback, args.max_tools, args.seed)
    c, e = res["calibration"], res["evaluation"]
    fallback = ",".join(args.fallback) if args.fallback is not None else "the largest allowed subset"
    print(f"threshold {res['threshold']:.6f} (fallback: {fallback})")
    print(f"  calibration ({res['questions']['calibration']} questions): {c['tools']:.2f} tools per question, accuracy {100 * c['accuracy']:.1f}, "
          f"{100 * c['fallback_share']:.0f}% fall back")
    print(f"  evaluation  ({res['questions']['evaluation']} questions): {e['tools']:.2f} tools per question, accuracy {100 * e['accuracy']:.1f}, "
          f"{100 * e['fallback_share']:.0f}% fall back; the realised average moved {e['tools'] - c['tools']:+.2f} tools")
    print(f"use it: fgpo select {args.selector} --threshold {res['threshold']:.6f}" + (f" --fallback {','.join(args.fallback) or 'none'}" if args.fallback is not None else ""))
    if args.out:
        write_record(args.out, res, "calibrate")
        print(f"wrote {args.out}")
    return 0
