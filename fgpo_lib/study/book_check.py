"""Check a built book as a reader meets it, in headless Chromium (Debian's ``chromium``, driven by playwright).

Every page is loaded offline from disk, MathJax is given time to typeset, and the page is checked for:

* a request to anything but the book's own files (``file:``, ``data:``, ``blob:``, ``about:``): the HTML must load
  nothing from outside (such a request is aborted before it leaves, and reported);
* raw TeX left in the visible text (``\\(``, ``\\[``, ``$$``): a formula that did not typeset;
* an image that does not render, an internal link or redirect whose target does not exist;
* progress-bar or loading output in a published page (tqdm bars, ``it/s``, ``TqdmWarning``, "Loading weights");
* an absolute path of a machine (``/root/``, ``/home/``, ``/tmp/``, ``/work/``) anywhere in the HTML;
* two pages with the same title;
* a chapter or setting page that does not lead with its answer (:data:`LEAD_PAGES`): its first figure, or its first
  table of at most :data:`SHORT_TABLE_ROWS` rows, must come before :data:`LEAD_WORDS` words of visible text (the
  reader's test: a later chapter cannot slip back to opening with design notes and long tables).

:func:`check_book` returns the problems, one line each; ``fgpo-check-book`` (``benchmarks/check_book_chromium.py``)
prints them and takes screenshots. ``tests/test_book_check.py`` shows that each defect is caught.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LOCAL_SCHEMES = ("file:", "data:", "blob:", "about:")
IMAGES_BROKEN = "() => Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src'))"
LINKS = "() => Array.from(document.querySelectorAll('a[href]')).map(a => a.href).filter(h => h.startsWith('file:'))"
#: waits for MathJax 3 (if the page loads it) to finish typesetting
MATHJAX_DONE = "() => (window.MathJax && MathJax.startup && MathJax.startup.promise) ? MathJax.startup.promise.then(() => true) : true"
#: jupyter-book's index.html is a stub that redirects (meta refresh) to the root page; its target is checked instead
REFRESH = re.compile(r'<meta[^>]+http-equiv="refresh"[^>]+url=([^"]+)"', re.IGNORECASE)
RAW_TEX = re.compile(r"\\\(|\\\[|\$\$")
PROGRESS = re.compile(r"\d+%\|[\u2588\u258f\u258e\u258d\u258c\u258b\u258a\u2589 #]*\||\d+(\.\d+)?\s?(it|s)/(s|it)\]|TqdmWarning|Loading weights|Batches:")
MACHINE_PATH = re.compile(r"(?<![\w.])/(root|home|tmp|work)/[\w.\-]+")


#: the pages that must lead with their answer: the root, every executed chapter and every setting page
LEAD_PAGES = re.compile(r"^_generated/(?!\.).*\.html$")
LEAD_WORDS = 150
SHORT_TABLE_ROWS = 13  # a header row and 12 rows
#: ``{words, found, rows}``: the words of visible prose in the page's article (code cells and code blocks left out) before
#: its first figure (an image or an inline SVG) or its first table of at most SHORT_TABLE_ROWS rows; a longer table
#: counts its words and is passed
LEAD_JS = r"""(maxRows) => {
  const root = document.querySelector('main article') || document.querySelector('article') || document.querySelector('main') || document.body;
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT);
  let words = 0, node;
  while ((node = walker.nextNode())) {
    if (node.nodeType === Node.ELEMENT_NODE) {
      const tag = node.tagName.toUpperCase();
      const visible = !!(node.offsetParent || node.getClientRects().length);
      if (!visible) continue;
      if (tag === 'IMG' || (tag === 'SVG' && !node.closest('mjx-container'))) return {words, found: 'figure', rows: 0};
      if (tag === 'TABLE') { const rows = node.querySelectorAll('tr').length; if (rows <= maxRows) return {words, found: 'table', rows}; }
      continue;
    }
    const el = node.parentElement;
    if (!el || el.closest('h1, script, style, mjx-container, .headerlink, summary, pre, .cell_input, .highlight') || !(el.offsetParent || el.getClientRects().length)) continue;
    words += node.textContent.trim().split(/\s+/).filter(Boolean).length;
  }
  return {words, found: null, rows: 0};
}"""


def lead_problem(rel: str, lead: dict) -> str | None:
    """The reader's test on one page (module doc): a problem line, or ``None``."""
    if lead["found"] is None:
        return f"{rel}: no figure or short table (at most {SHORT_TABLE_ROWS - 1} rows) on the page: a chapter leads with its answer"
    if lead["words"] > LEAD_WORDS:
        return f"{rel}: {lead['words']} words of text come before its first {lead['found']} (at most {LEAD_WORDS}): a chapter leads with its answer"
    return None


def book_pages(html: Path) -> list[Path]:
    return sorted(p for p in html.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts)


def check_book(html: str | Path, chromium: str = "/usr/bin/chromium", screenshots: dict[str, str] | None = None) -> tuple[list[str], dict]:
    """Check every page of the built book at ``html`` (module doc).

    Args:
        screenshots: page (relative to ``html``) -> PNG path, taken after typesetting.

    Returns ``(problems, counts)``; counts has ``pages``, ``images``, ``links``, ``requests``.
    """
    from playwright.sync_api import sync_playwright

    html = Path(html).resolve()
    problems: list[str] = []
    counts = Counter()
    titles: dict[str, list[str]] = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        requests: list[str] = []

        def route(r):  # every request is recorded; a non-local one is aborted before it is sent
            requests.append(r.request.url)
            r.continue_() if r.request.url.startswith(LOCAL_SCHEMES) else r.abort()

        page.route("**/*", route)
        for p in book_pages(html):
            rel = p.relative_to(html).as_posix()
            source = p.read_text(errors="replace")
            counts["pages"] += 1
            paths = sorted({m.group(0) for m in MACHINE_PATH.finditer(source)})
            if paths:
                problems.append(f"{rel}: absolute machine path in the HTML: {', '.join(paths[:3])}")
            redirect = REFRESH.search(source)
            if redirect:
                counts["links"] += 1
                if not (p.parent / redirect.group(1).split("#")[0]).exists():
                    problems.append(f"{rel}: broken redirect: {redirect.group(1)}")
                continue
            requests.clear()
            page.goto(p.as_uri(), wait_until="load")
            page.evaluate(MATHJAX_DONE)
            counts["requests"] += len(requests)
            problems += [f"{rel}: requests a non-local URL: {u}" for u in requests if not u.startswith(LOCAL_SCHEMES)]
            text = page.evaluate("() => document.body.innerText")
            for pattern, what in ((RAW_TEX, "raw TeX in the text (formula not typeset)"), (PROGRESS, "progress or loading output in the page")):
                hits = list(pattern.finditer(text))
                if hits:
                    m = hits[0]
                    problems.append(f"{rel}: {what}, {len(hits)}x, first: {text[max(0, m.start() - 30):m.end() + 30]!r}")
            titles.setdefault(page.title(), []).append(rel)
            if LEAD_PAGES.match(rel) or rel == "index.html":
                problem = lead_problem(rel, page.evaluate(LEAD_JS, SHORT_TABLE_ROWS))
                if problem:
                    problems.append(problem)
            bad = page.evaluate(IMAGES_BROKEN)
            counts["images"] += page.evaluate("() => document.images.length")
            problems += [f"{rel}: image does not render: {src}" for src in bad]
            for href in page.evaluate(LINKS):
                counts["links"] += 1
                target = Path(href.split("#")[0].split("?")[0].removeprefix("file://"))
                if not target.exists():
                    problems.append(f"{rel}: broken link: {href}")
            if screenshots and rel in screenshots:
                page.screenshot(path=screenshots[rel], full_page=True)
        browser.close()
    problems += [f"duplicate page title {t!r}: {', '.join(ps)}" for t, ps in titles.items() if len(ps) > 1]
    return problems, dict(counts)
