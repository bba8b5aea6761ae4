"""Open the built book in headless Chromium: every page loads, every image renders, every internal link resolves;
then screenshot the results page.

    apt-get install chromium            # Debian's Chromium; playwright drives it, nothing is downloaded
    .venv/bin/python benchmarks/check_book_chromium.py [--html book/_build/html] [--out book_results.png]

Prints one line per problem and a summary; exits 1 if anything is missing.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
IMAGES_OK = "() => Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute('src'))"
LINKS = "() => Array.from(document.querySelectorAll('a[href]')).map(a => a.href).filter(h => h.startsWith('file:'))"
#: jupyter-book's index.html is a stub that redirects (meta refresh) to the root page; the page is gone before it can
#: be inspected, so its target is checked instead
REFRESH = re.compile(r'<meta[^>]+http-equiv="refresh"[^>]+url=([^"]+)"', re.IGNORECASE)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--html", default="book/_build/html")
    ap.add_argument("--out", default="book_results.png")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    html = Path(args.html).resolve()
    pages = sorted(p for p in html.rglob("*.html") if "_static" not in p.parts and "_sources" not in p.parts)
    problems, n_images, n_links = [], 0, 0
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=args.chromium, headless=True, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        for p in pages:
            redirect = REFRESH.search(p.read_text(errors="replace"))
            if redirect:
                n_links += 1
                if not (p.parent / redirect.group(1).split("#")[0]).exists():
                    problems.append(f"{p.relative_to(html)}: broken redirect: {redirect.group(1)}")
                continue
            page.goto(p.as_uri(), wait_until="load")
            bad = page.evaluate(IMAGES_OK)
            n_images += page.evaluate("() => document.images.length")
            problems += [f"{p.relative_to(html)}: image does not render: {src}" for src in bad]
            for href in page.evaluate(LINKS):
                n_links += 1
                target = Path(href.split("#")[0].split("?")[0].removeprefix("file://"))
                if not target.exists():
                    problems.append(f"{p.relative_to(html)}: broken link: {href}")
        results = html / "_generated" / "results.html"
        page.goto(results.as_uri(), wait_until="load")
        page.screenshot(path=args.out, full_page=True)
        browser.close()
    for line in problems:
        print(line)
    print(f"{len(pages)} pages, {n_images} images, {n_links} internal links checked in headless Chromium; {len(problems)} problems; screenshot {args.out}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
