"""``fgpo coverage``: per task, the share of a built-in benchmark's questions that some tool subset's outputs can
answer (a gold answer found in them)."""

from __future__ import annotations

import argparse

from ..validation import nonneg_int


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..genomics.benchmarks import BENCHMARKS

    p.add_argument("--benchmark", required=True, choices=list(BENCHMARKS), help="the built-in benchmark")
    p.add_argument("--max-size", type=nonneg_int, default=4, help="largest subset size (default 4)")
    p.add_argument("--markdown", help="also write the table as Markdown here")
    p.add_argument("--progress", action="store_true", help="show a progress bar")


def run(args: argparse.Namespace) -> int:
    from ..outputs import write_text
    from ..genomics.benchmarks import BENCHMARKS
    from ..genomics.coverage import coverage_table

    table = coverage_table(args.benchmark, max_size=args.max_size, progress=args.progress)
    print(f"{args.benchmark}: subsets of at most {args.max_size} of its {len(BENCHMARKS[args.benchmark].tools)} tools")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.1f}"))
    if args.markdown:
        write_text(args.markdown, table.to_markdown(index=False, floatfmt=".1f") + "\n", "coverage", "markdown")
        print(f"wrote {args.markdown}")
    return 0
