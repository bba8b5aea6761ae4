"""``fgpo study``: run every setting's notebook and the chapters, then build the book (:mod:`fgpo_lib.study.runner`;
what ``make book`` does)."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path


def add_arguments(ap: argparse.ArgumentParser) -> None:
    """The study's flags (``fgpo study``, ``python -m fgpo_lib.study``)."""
    from ..paths import BOOK_DIR
    from ..validation import positive_int

    ap.add_argument("--book-dir", default=str(BOOK_DIR), help="the book's folder (default: the repository's book/)")
    ap.add_argument("--workers", type=positive_int, default=2, help="settings run in parallel (processes)")
    ap.add_argument("--small", action="store_true", help="the CI configuration: 2 settings, 2 seeds, few steps")
    ap.add_argument("--param", action="append", default=[], help="setting-notebook parameter NAME=VALUE (repeatable)")


def run(args: argparse.Namespace) -> int:
    overrides = {}
    for item in args.param:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"--param takes NAME=VALUE, got {item!r}")
        try:
            overrides[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            overrides[key] = value
    from ..study.runner import run_study

    html = run_study(Path(args.book_dir), args.workers, args.small, overrides)
    print(f"book: {html / 'index.html'}")
    return 0
