"""Notebooks run (nbval-lax, and papermill with tiny parameters), and a small study builds a complete book."""

import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from fgpo_lib.study.book import ROOT, notebook_source

TINY_WORKED = {"n_questions": 45, "seeds": [0, 1], "steps": 6, "batch_questions": 4}


def test_a_page_that_prints_a_warning_is_a_named_error(tmp_path, monkeypatch):
    """A chapter whose code warns (a log on a published page, and often the kernel's temporary path) stops the study
    with an error naming the page and the warning's first line; a quiet page executes."""
    import nbformat

    from fgpo_lib.study import book

    def source(code):
        return lambda name: nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})

    monkeypatch.setattr(book, "notebook_source", source("import warnings\nwarnings.warn('Tight layout not applied')"))
    with pytest.raises(RuntimeError, match=r"noisy\.ipynb: the page prints 1 log or warning stream.*Tight layout not applied"):
        book.execute_notebook("noisy", tmp_path, {})
    monkeypatch.setattr(book, "notebook_source", source("x = 1"))
    assert book.page_logs(book.execute_notebook("quiet", tmp_path, {})) == []


def test_notebooks_pass_nbval_lax(tmp_path):
    """The text notebooks, as jupytext makes them into notebooks, run top to bottom under nbval, with tiny
    parameters injected as papermill injects them (at their defaults the worked example trains 5 seeds x 100 steps
    and the environment chapter runs every subset of up to 4 tools of every benchmark).

    Not the setting notebook: its defaults are the full book's protocol (every arm, 3 seeds, every library of a
    headline reasoner; `benchmarks/bench_book.py` prints what each setting took in the last build), and the small book
    below runs it through papermill with small parameters."""
    import nbformat
    from papermill.iorw import load_notebook_node
    from papermill.parameterize import parameterize_notebook

    nbs = []
    for n, params in (("worked_example", TINY_WORKED), ("environment", {"max_size": 1})):
        path = tmp_path / f"{n}.ipynb"
        nbformat.write(notebook_source(n), path)
        nbformat.write(parameterize_notebook(load_notebook_node(str(path)), params), path)  # papermill's loader, then its injection
        nbs.append(str(path))
    res = subprocess.run([sys.executable, "-m", "pytest", "-o", "addopts=", "-q", "-p", "no:cacheprovider", "--nbval-lax", *nbs], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stdout[-3000:]
    assert re.search(r"\b\d+ passed", res.stdout)


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.images, self.links = [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img" and a.get("src"):
            self.images.append(a["src"])
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])


def broken_references(html_dir: Path) -> list[str]:
    """Missing images and internal links in a built book (external links and anchors-only are not followed)."""
    bad = []
    for page in html_dir.rglob("*.html"):
        p = _Links()
        p.feed(page.read_text(errors="replace"))
        for ref in p.images + p.links:
            target = ref.split("#")[0].split("?")[0]
            if not target or re.match(r"^[a-z]+:", target) or target.startswith("//"):
                continue
            if not (page.parent / target).resolve().exists():
                bad.append(f"{page.relative_to(html_dir)} -> {ref}")
    return bad


@pytest.fixture(scope="session")
def small_book(tmp_path_factory, worker_id):
    """The small study's book, built once per test run: under pytest-xdist the workers share one build in the run's
    common temporary folder, behind a file lock (the first worker to ask builds it, the others wait and read it)."""
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp() if worker_id == "master" else tmp_path_factory.getbasetemp().parent
    book, html = shared / "small_book", shared / "small_book" / "_build" / "html"
    with FileLock(str(shared / "small_book.lock")):
        if not (html / "index.html").exists():
            shutil.rmtree(book, ignore_errors=True)
            book.mkdir()
            for f in ("_config.yml", "method.md", "settings.md", "limitations.md", "references.md", "references.bib"):
                shutil.copy(ROOT / "book" / f, book / f)
            shutil.copytree(ROOT / "book" / "_static", book / "_static")
            subprocess.run([sys.executable, "-m", "fgpo_lib.cli", "study", "--book-dir", str(book), "--small"], check=True, capture_output=True)
    return html


def test_small_study_book_has_the_results_table_and_every_figure(small_book):
    results = (small_book / "_generated" / "results.html").read_text()
    assert "FGPO against GRPO" in results and "FGPO-GRPO" in results and "{glue" not in results
    assert "genehop" in results and "geneseq" in results
    for page in ("method.html", "limitations.html", "_generated/environment.html", "_generated/settings/genehop__records.html"):
        assert (small_book / page).exists(), page
    worked = (small_book.parents[1] / "_generated" / "worked_example.ipynb").read_text()  # its glued accuracy and figure
    assert "we_fgpo_acc" in worked and "image/png" in worked
    imgs = re.findall(r'<img[^>]+src="([^"]+)"', results)
    assert len(imgs) >= 5  # tools, evaluation ratio, learning curves, entropy, paired differences
    assert broken_references(small_book) == []


def test_notebooks_are_text_and_the_toc_derives_from_the_chapter_list():
    """Only MyST text notebooks are committed (no generator, no .ipynb), each chapter notebook exists, and the
    table of contents lists the chapters in order."""
    from fgpo_lib.study.book import CHAPTERS, toc

    assert not list((ROOT / "notebooks").glob("*.ipynb")) and not (ROOT / "tools" / "make_notebooks.py").exists()
    for name, kind in CHAPTERS:
        path = ROOT / ("notebooks" if kind == "notebook" else "book") / f"{name}.md"
        assert path.exists(), path
    text = toc(["genehop__records"])
    files = re.findall(r"file: (\S+)", text)
    assert files[0] == "method" and files[-1] == "references" and "_generated/settings/genehop__records" in files
    assert "root: _generated/intro" in text
    assert "settings" not in re.findall(r"file: (\S+)", toc([]))


def test_small_book_passes_the_chromium_check(small_book):
    """Formulas typeset offline, nothing is requested from outside, no progress output or machine path, unique titles."""
    from test_book_check import CHROMIUM  # noqa: F401  (skips the module where Chromium is missing, as there)

    from fgpo_lib.study.book_check import check_book

    problems, counts = check_book(small_book)
    assert problems == [] and counts["pages"] >= 10


def test_published_pages_fold_the_injected_parameters(small_book):
    for page in ("_generated/scaling.html", "_generated/settings/genehop__records.html"):  # the pages papermill passes parameters to
        classes = re.findall(r'class="cell (tag_[^"]*)"', (small_book / page).read_text())
        injected = [c for c in classes if "tag_injected-parameters" in c]
        assert injected and all("tag_hide-input" in c for c in injected), (page, classes)
