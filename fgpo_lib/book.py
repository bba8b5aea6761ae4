"""Notebook execution (papermill) and the book build (``jupyter-book build -W``), used by :mod:`fgpo_lib.study`.

Executed notebooks go to ``<book-dir>/_generated/``, which the table of contents points at; the book itself is built
with ``execute_notebooks: off``, so every number in it comes from these executions (through ``glue``).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import papermill

ROOT = Path(__file__).resolve().parents[1]
#: the book's fixed notebooks, executed after the settings, in this order
BOOK_NOTEBOOKS = ("worked_example", "environment", "results")


def execute_notebook(name: str, out_dir: Path, parameters: dict, out_name: str | None = None) -> Path:
    """Run ``notebooks/<name>.ipynb`` with ``parameters`` into ``out_dir/<out_name or name>.ipynb``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{out_name or name}.ipynb"
    papermill.execute_notebook(str(ROOT / "notebooks" / f"{name}.ipynb"), str(out), parameters=parameters, kernel_name="python3", cwd=str(out_dir), progress_bar=False)
    return out


def build_book(book_dir: Path) -> Path:
    """``jupyter-book build`` with warnings as errors and nitpicky references; returns the HTML folder."""
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb) if jb.exists() else "jupyter-book", "build", str(book_dir), "-W", "-n", "--keep-going"]
    subprocess.run(cmd, check=True)
    return Path(book_dir) / "_build" / "html"
