"""The book check in headless Chromium catches each defect a reader would see, and passes a clean page."""

import os
import shutil
from pathlib import Path

import pytest

from fgpo_lib.study.book import ROOT
from fgpo_lib.study.book_check import check_book

MATHJAX = ROOT / "book" / "_static" / "mathjax" / "tex-svg-full.js"
PAGES = {
    "good.html": ("Good", '<script src="_static/mathjax/tex-svg-full.js"></script><p>Policy \\(\\pi_\\theta(S \\mid q)\\) and $$x^2$$</p>'),
    "raw.html": ("Raw inline", "<p>Policy \\(\\pi_\\theta\\) untypeset</p>"),
    "display.html": ("Raw display", "<p>$$J = \\sum_S \\pi R$$</p>"),
    "cdn.html": ("CDN", '<script src="https://cdn.example.invalid/mathjax.js"></script><p>text</p>'),
    "progress.html": ("Progress", "<pre>100%|##########| 163/163 [00:02&lt;00:00, 70.1it/s]</pre>"),
    "path.html": ("Path", "<p>table_path = '/root/work/tables/x.npz'</p>"),
    "twin_a.html": ("Twin", "<p>a</p>"),
    "twin_b.html": ("Twin", "<p>b</p>"),
    # the reader's test, on chapter pages (_generated/): the answer first, or a named problem
    "_generated/leads.html": ("Leads", "<article><h1>Leads</h1><p>" + "word " * 120 + "</p><table>" + "<tr><td>1</td></tr>" * 5 + "</table><p>" + "more " * 300 + "</p></article>"),
    "_generated/buried.html": ("Buried", "<article><h1>Buried</h1><p>" + "word " * 200 + "</p><img src='data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7'></article>"),
    "_generated/long_table.html": ("Long", "<article><h1>Long</h1><p>intro</p><table>" + "<tr><td>row text</td></tr>" * 40 + "</table></article>"),
    "_generated/figure_first.html": ("Figure", "<article><h1>Figure</h1><p>short</p><svg width='10' height='10'><rect width='10' height='10'/></svg>" + "<p>" + "w " * 500 + "</p></article>"),
}


CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists() and not os.environ.get("CI"):  # CI installs it (.ci/run); a user's machine may not have it
    pytest.skip("Debian's chromium is not installed (make setup installs it when run as root)", allow_module_level=True)


@pytest.fixture(scope="module")
def problems(tmp_path_factory):
    html = tmp_path_factory.mktemp("html")
    (html / "_static" / "mathjax").mkdir(parents=True)
    shutil.copy(MATHJAX, html / "_static" / "mathjax")
    for name, (title, body) in PAGES.items():
        (html / name).parent.mkdir(parents=True, exist_ok=True)
        (html / name).write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head><body>{body}</body></html>")
    found, counts = check_book(html)
    assert counts["pages"] == len(PAGES)
    return found


@pytest.mark.parametrize(
    "page,what",
    [
        ("raw.html", "raw TeX"),
        ("display.html", "raw TeX"),
        ("cdn.html", "requests a non-local URL: https://cdn.example.invalid/mathjax.js"),
        ("progress.html", "progress or loading output"),
        ("path.html", "absolute machine path in the HTML: /root/work"),
    ],
)
def test_each_defect_is_reported(problems, page, what):
    assert any(p.startswith(f"{page}: ") and what in p for p in problems), problems


def test_duplicate_titles_are_reported_and_a_clean_page_passes(problems):
    assert "duplicate page title 'Twin': twin_a.html, twin_b.html" in problems
    assert not [p for p in problems if p.startswith("good.html")]
    assert len(problems) == 8


def test_a_chapter_must_lead_with_its_answer(problems):
    """A short table after 120 words passes, and so does a figure after two words; a figure after 200 words, or a
    page whose only table has 40 rows, is named."""
    assert not [p for p in problems if p.startswith(("_generated/leads.html", "_generated/figure_first.html"))], problems
    assert any(p.startswith("_generated/buried.html: 200 words of text come before its first figure") for p in problems), problems
    assert any(p.startswith("_generated/long_table.html: no figure or short table") for p in problems), problems
