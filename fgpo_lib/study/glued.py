"""The numbers a built book glues into its text, read back from its executed notebooks, and two books compared.

myst-nb's ``glue(name, value)`` leaves an output whose metadata is ``{"scrapbook": {"name": name}}``; its
``text/plain`` is what the page prints. A refactor that leaves the book unchanged in content leaves every one of
them unchanged, to the last digit, for the same tables::

    python -m fgpo_lib.study.glued BOOK_BEFORE BOOK_AFTER

prints the values that differ, those only one book has, and exits 1 when a shared value differs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def glued_values(book_dir: Path) -> dict[str, str]:
    """``{"<notebook path>:<name>": text}`` of every glued value of the executed notebooks under ``book_dir``
    (``_build`` left out); a figure's value is its PNG's length, not its bytes."""
    book_dir = Path(book_dir)
    out: dict[str, str] = {}
    for nb in sorted(book_dir.rglob("*.ipynb")):
        rel = nb.relative_to(book_dir)
        if "_build" in rel.parts or ".ipynb_checkpoints" in rel.parts:
            continue
        for cell in json.loads(nb.read_text()).get("cells", []):
            for o in cell.get("outputs", []):
                name = (o.get("metadata") or {}).get("scrapbook", {}).get("name")
                if name:
                    # myst-nb stores a value glued with display=False under "application/papermill.record/<mime>"
                    data = {k.rsplit("/", 2)[-2] + "/" + k.rsplit("/", 1)[-1]: v for k, v in o.get("data", {}).items()}
                    text = data.get("text/plain")
                    out[f"{rel.with_suffix('')}:{name}"] = "".join(text) if isinstance(text, list) else str(text if text is not None else f"<{len(data.get('image/png', ''))} png chars>")
    return out


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
    if not before or not after:
        print(f"no glued values under {args[0] if not before else args[1]}: is it a built book directory?", file=sys.stderr)
        return 2
    c = compare(before, after)
    print(f"{c['same']} of {len(set(before) & set(after))} shared glued values identical; {len(c['changed'])} differ; "
          f"{len(c['only_before'])} only before, {len(c['only_after'])} only after")
    for k, (a, b) in c["changed"].items():
        print(f"  changed {k}: {a} -> {b}")
    for label in ("only_before", "only_after"):
        for k in c[label]:
            print(f"  {label.replace('_', ' ')}: {k}")
    return 1 if c["changed"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
