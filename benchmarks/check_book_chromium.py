"""Open the built book in headless Chromium and check it as a reader meets it (:mod:`fgpo_lib.study.book_check`):
no request leaves the machine, every formula typesets, every image renders and link resolves, no page shows progress
output or a machine path, and no two pages share a title. Screenshots the method chapter, the results page and one
setting page.

    apt-get install chromium            # Debian's Chromium; playwright drives it, nothing is downloaded
    .venv/bin/python benchmarks/check_book_chromium.py [--html book/_build/html] [--out-dir .]

Prints one line per problem and a summary; exits 1 if there is any problem.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fgpo_lib.study.book_check import check_book

SHOTS = {"method.html": "book_method.png", "_generated/results.html": "book_results.png", "_generated/settings/geneturing__smollm2-135m.html": "book_setting.png"}


def main() -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    ap.add_argument("--html", default="book/_build/html")
    ap.add_argument("--out-dir", default=".", help="where the screenshots go")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    args = ap.parse_args()
    shots = {page: str(Path(args.out_dir) / png) for page, png in SHOTS.items()}
    problems, counts = check_book(args.html, args.chromium, shots)
    for line in problems:
        print(line)
    taken = [s for s in shots.values() if Path(s).exists()]
    print(
        f"{counts.get('pages', 0)} pages, {counts.get('images', 0)} images, {counts.get('links', 0)} internal links, "
        f"{counts.get('requests', 0)} requests checked in headless Chromium; {len(problems)} problems; screenshots: {', '.join(taken)}"
    )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
