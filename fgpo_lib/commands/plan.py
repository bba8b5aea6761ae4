"""``fgpo plan``: what a tool library costs before computing it: subsets, table memory, precompute time, and the GRPO
budget in reasoner calls."""

from __future__ import annotations

import argparse

from ..validation import nonneg_int, positive_float, positive_int


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tools", type=positive_int, required=True, help="number of tools N")
    p.add_argument("--max-size", type=nonneg_int, required=True, help="largest subset k")
    p.add_argument("--questions", type=positive_int, required=True, help="questions in the table")
    p.add_argument("--seconds-per-call", type=positive_float, required=True, help="reasoner seconds per (question, subset) cell")
    p.add_argument("--group-size", type=positive_int, default=8, help="GRPO's G (default 8)")
    p.add_argument("--steps", type=positive_int, default=200, help="GRPO's full-batch updates (default 200)")


def run(args: argparse.Namespace) -> int:
    from ..plan import Plan

    plan = Plan(args.tools, args.max_size, args.questions, args.seconds_per_call, args.group_size, args.steps)
    plan.check_fits()
    print(plan.report())
    return 0
