"""``fgpo example-table``: the book's illustrative 4-tool protein-structure table (synthetic rewards)."""

from __future__ import annotations

import argparse

from ..validation import _ranged, seed_int

example_questions = _ranged(int, 1, 1_000_000, what="a number of questions from 1 to 1,000,000")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", required=True, help="the table file to write (.npz)")
    p.add_argument("--questions", type=example_questions, default=200, help="questions in the table (default 200, at most 1,000,000)")
    p.add_argument("--seed", type=seed_int, default=0, help="fixes the synthetic rewards and the split (default 0: the book's table)")


def run(args: argparse.Namespace) -> int:
    from ..examples import protein_structure_table
    table = protein_structure_table(n_questions=args.questions, seed=args.seed)
    table.save(args.out)
    print(f"{table!r}\nwrote {args.out}")
    return 0
