"""Build the book: execute the notebooks with papermill, then ``jupyter-book build -W`` (warnings are errors).

    python -m fgpo_lib.book --book-dir book [--param worked_example.steps=20 ...]

Executed notebooks go to ``<book-dir>/_generated/``, which the table of contents points at; the book itself is built
with ``execute_notebooks: off``, so every number in it comes from these executions (through ``glue``).
"""

from __future__ import annotations

import argparse
import ast
import shutil
import subprocess
import sys
from pathlib import Path

import papermill

ROOT = Path(__file__).resolve().parents[1]
#: notebook stem -> default parameter overrides (none: the notebook's own defaults are the study's)
BOOK_NOTEBOOKS: dict[str, dict] = {"worked_example": {}, "environment": {}}


def execute_notebook(name: str, out_dir: Path, parameters: dict) -> Path:
    """Run ``notebooks/<name>.ipynb`` with ``parameters`` into ``out_dir/<name>.ipynb``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{name}.ipynb"
    papermill.execute_notebook(str(ROOT / "notebooks" / f"{name}.ipynb"), str(out), parameters=parameters, kernel_name="python3", cwd=str(out_dir), progress_bar=False)
    return out


def build_book(book_dir: Path) -> Path:
    """``jupyter-book build`` with warnings as errors and nitpicky references; returns the HTML folder."""
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb) if jb.exists() else "jupyter-book", "build", str(book_dir), "-W", "-n", "--keep-going"]
    subprocess.run(cmd, check=True)
    return book_dir / "_build" / "html"


def _parse_params(items: list[str]) -> dict[str, dict]:
    params: dict[str, dict] = {}
    for item in items:
        key, _, value = item.partition("=")
        name, _, param = key.partition(".")
        if name not in BOOK_NOTEBOOKS or not param or not value:
            raise SystemExit(f"--param must be NOTEBOOK.NAME=VALUE with NOTEBOOK in {sorted(BOOK_NOTEBOOKS)}, got {item!r}")
        try:
            params.setdefault(name, {})[param] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params.setdefault(name, {})[param] = value
    return params


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--book-dir", default=str(ROOT / "book"))
    parser.add_argument("--param", action="append", default=[], help="NOTEBOOK.NAME=VALUE parameter override (repeatable)")
    args = parser.parse_args(argv)
    book_dir = Path(args.book_dir)
    overrides = _parse_params(args.param)
    shutil.rmtree(book_dir / "_build", ignore_errors=True)
    for name, defaults in BOOK_NOTEBOOKS.items():
        print(f"executing notebooks/{name}.ipynb", flush=True)
        execute_notebook(name, book_dir / "_generated", {**defaults, **overrides.get(name, {})})
    html = build_book(book_dir)
    print(f"book: {html / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
