"""``fgpo frontier``: FGPO over a sweep of Eq. 1's parsimony weight lambda, test accuracy against tools per question,
with the references (:mod:`fgpo_lib.frontier`); ``--plot`` draws it, and ``--save-selector`` with ``--max-tools`` or
``--target-accuracy`` keeps the selector of the chosen point."""

from __future__ import annotations

import argparse

from ..validation import accuracy_fraction, positive_float, seed_int
from .train_flags import add_train_args, build_config, load_table


def _lambdas(text: str) -> tuple[float, ...]:
    try:
        values = tuple(float(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers >= 0, got {text!r}") from None
    if not values or any(not v >= 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers >= 0, got {text!r}")
    return values


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..frontier import LAMBDAS

    add_train_args(p)
    p.add_argument("--lambdas", type=_lambdas, default=LAMBDAS, help=f"Eq. 1's parsimony weights to sweep (default {','.join(f'{v:g}' for v in LAMBDAS)})")
    p.add_argument("--seed", type=seed_int, default=0, help="the seed of every run (default 0)")
    p.add_argument("--plot", help="draw the frontier into this image file (.png or .svg)")
    p.add_argument("--save-selector", metavar="DIR", help="keep the selector of the point chosen by --max-tools or --target-accuracy")
    p.add_argument("--max-tools", type=positive_float, help="with --save-selector: the most accurate point calling at most this many tools per question")
    p.add_argument("--target-accuracy", type=accuracy_fraction, help="with --save-selector: the point calling the fewest tools with at least this test accuracy (0 to 1)")


def run(args: argparse.Namespace) -> int:
    from ..frontier import choose_point, frontier, gap_column, plot_frontier
    from ..outputs import write_figure

    if args.save_selector is not None:
        if (args.max_tools is None) == (args.target_accuracy is None):
            raise ValueError("--save-selector needs --max-tools or --target-accuracy to choose the point (one of them)")
    elif args.max_tools is not None or args.target_accuracy is not None:
        raise ValueError("--max-tools and --target-accuracy choose the point whose selector --save-selector keeps; give --save-selector DIR")
    table = load_table(args)
    base = build_config(args, "fgpo", args.seed)
    points, refs, kept = frontier(table, base, args.lambdas, progress=args.progress)
    print(f"{table!r}\ntest questions: {len(table.split_index('test'))}; accuracy is the raw score; gap recovered = (accuracy - best fixed) / (Oracle - best fixed)")
    gaps, note = gap_column(points)
    show = points.assign(accuracy=100 * points.accuracy, gap_recovered=gaps)
    print(show.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    if note:
        print(note)
    print(refs.assign(accuracy=100 * refs.accuracy).to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    lam = choose_point(points, args.max_tools, args.target_accuracy) if args.save_selector is not None else None
    if args.plot:
        fig = plot_frontier(points, refs, chosen=lam)
        write_figure(args.plot, fig, "frontier")
        print(f"wrote {args.plot}")
    if args.save_selector is not None:
        from ..selector import Selector

        cfg, keep, rec = kept[lam]
        Selector.from_training(table, cfg, keep, rec).save(args.save_selector)
        row = points[points["lambda"] == lam].iloc[0]
        print(f"saved the selector of lambda {lam:g} ({100 * row.accuracy:.2f} accuracy, {row.tools_per_question:.2f} tools per question) in {args.save_selector}")
    return 0
