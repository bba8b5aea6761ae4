"""The book's notebooks run with tiny parameters, and a small book builds with every glued number and figure."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fgpo_lib.book import ROOT, execute_notebook

TINY = {"n_questions": 45, "seeds": [0, 1], "steps": 6, "batch_questions": 4}


def test_worked_example_notebook_runs_with_tiny_parameters(tmp_path):
    out = execute_notebook("worked_example", tmp_path, TINY)
    text = out.read_text()
    assert "we_fgpo_acc" in text and "image/png" in text


def test_small_book_builds_with_figures_and_no_unresolved_glue(tmp_path):
    book = tmp_path / "book"
    shutil.copytree(ROOT / "book", book, ignore=shutil.ignore_patterns("_build", "_generated"))
    cmd = [sys.executable, "-m", "fgpo_lib.book", "--book-dir", str(book)] + [f"--param=worked_example.{k}={v!r}" for k, v in TINY.items()]
    subprocess.run(cmd, check=True, capture_output=True)
    html = (book / "_build" / "html" / "_generated" / "worked_example.html").read_text()
    assert "What happened" in html and "{glue" not in html
    images = re.findall(r'<img[^>]+src="([^"]+)"', html)
    assert len(images) >= 2
    for src in images:
        assert (book / "_build" / "html" / "_generated" / src).resolve().exists(), src
    assert (book / "_build" / "html" / "method.html").exists()
    env = (book / "_build" / "html" / "_generated" / "environment.html").read_text()
    assert "Coverage" in env and "{glue" not in env and "Gene alias" in env
