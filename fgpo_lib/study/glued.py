"""The numbers a built book glues into its text, read back from its executed notebooks, and two books compared.

myst-nb's ``glue(name, value)`` leaves an output whose metadata is ``{"scrapbook": {"name": name}}``; its
``text/plain`` is what the page prints. A refactor that leaves the book unchanged in content leaves every one of
them unchanged, to the last digit, for the same tables::

    python -m fgpo_lib.study.glued BOOK_BEFORE BOOK_AFTER

prints the values that differ, those only one book has, and exits 1 when a shared value differs. It also prints,
per page, the rows of the first book's tables (every ``text/html`` table of an output) that the second book no longer
shows: a row that reappears with columns added (a new arm), under the same label with every value kept, counts as
kept. Numbers are compared as numbers (pandas prints one value as ``100.0`` or ``100.00`` by its column's other rows).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path


def _notebooks(book_dir: Path):
    """``(path relative to book_dir, cells)`` of every executed notebook under ``book_dir``, ``_build`` left out."""
    book_dir = Path(book_dir)
    for nb in sorted(book_dir.rglob("*.ipynb")):
        rel = nb.relative_to(book_dir)
        if "_build" not in rel.parts and ".ipynb_checkpoints" not in rel.parts:
            yield rel, json.loads(nb.read_text()).get("cells", [])


def glued_values(book_dir: Path) -> dict[str, str]:
    """``{"<notebook path>:<name>": text}`` of every glued value of the executed notebooks under ``book_dir``
    (``_build`` left out); a figure's value is its PNG's length, not its bytes."""
    out: dict[str, str] = {}
    for rel, cells in _notebooks(book_dir):
        for cell in cells:
            for o in cell.get("outputs", []):
                name = (o.get("metadata") or {}).get("scrapbook", {}).get("name")
                if name:
                    # myst-nb stores a value glued with display=False under "application/papermill.record/<mime>"
                    data = {k.rsplit("/", 2)[-2] + "/" + k.rsplit("/", 1)[-1]: v for k, v in o.get("data", {}).items()}
                    text = data.get("text/plain")
                    out[f"{rel.with_suffix('')}:{name}"] = "".join(text) if isinstance(text, list) else str(text if text is not None else f"<{len(data.get('image/png', ''))} png chars>")
    return out


def _cell_value(text: str):
    try:
        x = float(text.replace(",", ""))
    except ValueError:
        return text
    return "nan" if x != x else x  # NaN != NaN would make equal rows differ


def table_rows(book_dir: Path) -> dict[str, set[tuple]]:
    """``{"<notebook path>": {row, ...}}``: every row of every HTML table the executed notebooks show, as a tuple of
    its cells' texts (numbers parsed, :func:`_cell_value`)."""
    out: dict[str, set[tuple]] = {}
    for rel, cells in _notebooks(book_dir):
        rows = out.setdefault(str(rel.with_suffix("")), set())
        for cell in cells:
            for o in cell.get("outputs", []):
                html = o.get("data", {}).get("text/html")
                html = "".join(html) if isinstance(html, list) else html or ""
                for tr in re.findall(r"<tr[^>]*>(.*?)</tr>", html.replace("\n", " "), flags=re.S):
                    rows.add(tuple(_cell_value(c.strip()) for c in re.findall(r"<t[dh][^>]*>(.*?)</t[dh]>", tr, flags=re.S)))
    return out


def lost_rows(before: dict[str, set[tuple]], after: dict[str, set[tuple]]) -> dict[str, list[tuple]]:
    """Per page of both books, the rows of ``before`` that ``after`` does not show, neither as they were nor with
    columns added (a row of ``after`` with the same first cell holding every value of the row)."""
    lost = {}
    for page in sorted(set(before) & set(after)):
        gone = [r for r in before[page] - after[page]
                if not any(len(b) > len(r) and b[:1] == r[:1] and set(r) <= set(b) for b in after[page])]
        if gone:
            lost[page] = sorted(gone, key=str)
    return lost


def compare(before: dict[str, str], after: dict[str, str]) -> dict:
    """``{"same", "changed": {key: (before, after)}, "only_before", "only_after"}`` of two :func:`glued_values`."""
    shared = sorted(set(before) & set(after))
    return {
        "same": sum(before[k] == after[k] for k in shared),
        "changed": {k: (before[k], after[k]) for k in shared if before[k] != after[k] and not before[k].startswith("<")},
        "only_before": sorted(set(before) - set(after)),
        "only_after": sorted(set(after) - set(before)),
    }


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m fgpo_lib.study.glued BOOK_BEFORE BOOK_AFTER", file=sys.stderr)
        return 2
    before, after = (glued_values(Path(a)) for a in args)
    rows_before, rows_after = (table_rows(Path(a)) for a in args)
    for path, values, rows in ((args[0], before, rows_before), (args[1], after, rows_after)):
        if not values and not any(rows.values()):
            print(f"no glued values or tables under {path}: is it a built book directory?", file=sys.stderr)
            return 2
    c = compare(before, after)
    print(f"{c['same']} of {len(set(before) & set(after))} shared glued values identical; {len(c['changed'])} differ; "
          f"{len(c['only_before'])} only before, {len(c['only_after'])} only after")
    for k, (a, b) in c["changed"].items():
        print(f"  changed {k}: {a} -> {b}")
    for label in ("only_before", "only_after"):
        for k in c[label]:
            print(f"  {label.replace('_', ' ')}: {k}")
    lost = lost_rows(rows_before, rows_after)
    shared = set(rows_before) & set(rows_after)
    n = sum(len(rows_before[p]) for p in shared)
    print(f"table rows: {n - sum(map(len, lost.values()))} of {n} rows of the pages both books have are still shown")
    for page, rows in lost.items():
        for r in rows:
            print(f"  lost row of {page}: {r}")
    return 1 if c["changed"] or lost else 0


if __name__ == "__main__":
    raise SystemExit(main())
