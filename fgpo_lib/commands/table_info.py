"""``fgpo table-info``: a reward table's shape, cost and signal; of several tables, one markdown row each."""

from __future__ import annotations

import argparse
from pathlib import Path

from .train_flags import add_subsets_arg


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("table", nargs="+", help="reward tables (.npz, or long .csv/.parquet)")
    add_subsets_arg(p)


def run(args: argparse.Namespace) -> int:
    from ..table_info import format_table_info, summary_frame, table_info
    from .train_flags import load_table

    def load(path):
        return load_table(argparse.Namespace(table=path, subsets=args.subsets, tool_names=args.tool_names))

    if len(args.table) > 1:  # one markdown row per table
        frame = summary_frame({Path(p).stem: load(p) for p in args.table})
        print(frame.astype(object).where(frame.notna(), "").to_markdown(index=False))  # blank: cost not recorded
        return 0
    table = load(args.table[0])
    print(f"{args.table[0]}: {table!r}")
    print(format_table_info(table_info(table)))
    return 0
