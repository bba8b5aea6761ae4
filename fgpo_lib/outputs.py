"""Every file a command writes goes through here: one owner check before the work, one atomic writer after it.

A command declares its outputs in the subcommand table (:data:`fgpo_lib.cli.COMMANDS`, ``Output(dest, kind)``), and
:func:`claim_outputs` checks them all before the command runs. An existing path is replaced only when this command
wrote it (:func:`written_by`): a run record of ``fgpo train`` by ``fgpo train``, a figure of ``fgpo frontier`` by
``fgpo frontier``. Anything else, a reward table, a selector's file, another command's record, a file the library did
not write, is refused with a named error unless ``--force``; a folder that is not a selector is never written into.
Two outputs of one command never overlap (``--out sel/weights.safetensors --save-selector sel``), and no output is
one of the command's inputs.

How a file says who wrote it (its *stamp*):

* a JSON record: its top-level ``"written_by": "fgpo <command>"``;
* a figure: ``fgpo <command>`` in its metadata (PNG ``Software``, SVG and PDF ``Creator``);
* Markdown: a first line ``<!-- written by fgpo <command> -->``;
* JSON lines of ``fgpo select``: every line an object with ``question`` and ``tools``;
* a reward table: ``fgpo precompute`` when its provenance names a benchmark and a reasoner, ``fgpo example-table``
  when it is an illustrative or synthetic table (:mod:`fgpo_lib.examples`);
* a selector folder: its ``selector.json`` of the library's format (:mod:`fgpo_lib.selector`).

The writers (:func:`write_record`, :func:`write_text`, :func:`write_figure`) stamp and write atomically
(:func:`fgpo_lib.files.atomic_write`: a temporary file removed on any error or signal the command line turns into an
exception, then a rename).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from .files import OutputError, atomic_write, atomic_write_text, check_new_file_path, refuse_inputs_as_outputs

#: what each kind of output is, for messages, and the suffixes a file of it may end in (``None``: a folder)
KINDS: dict[str, tuple[str, tuple[str, ...] | None]] = {
    "record": ("a run record (JSON)", (".json",)),
    "table": ("a reward table", (".npz",)),
    "figure": ("a figure", (".png", ".svg", ".pdf")),
    "markdown": ("a Markdown table", ()),
    "jsonl": ("JSON lines", ()),
    "selector": ("a selector folder", None),
    "folder": ("a folder of records", None),
}
#: JSON files larger than this are not read to find their stamp (no command writes one): they are someone else's
MAX_STAMPED_JSON = 64 * 1024 * 1024


@dataclass(frozen=True)
class Output:
    """One output of a subcommand: the argparse destination of its flag and the kind of file it writes."""

    dest: str
    kind: str

    @property
    def flag(self) -> str:
        return "--" + self.dest.replace("_", "-")


def stamp(command: str) -> str:
    """What a file written by ``command`` says wrote it."""
    return f"fgpo {command}"


def _selector_folder_of(path: Path) -> Path | None:
    """The selector folder ``path`` lies in (or is), if any: a folder with the library's ``selector.json``."""
    from .selector_folder import is_selector_folder

    for folder in (path, *path.parents):
        if folder.is_dir() and is_selector_folder(folder):
            return folder
    return None


def written_by(path: str | os.PathLike) -> str:
    """Who wrote the existing ``path``, as a message fragment: ``"fgpo <command>"`` for a stamped file (module doc),
    else what it is (``"a file of the selector in sel"``, ``"a file fgpo did not write"``...)."""
    path = Path(path)
    selector = _selector_folder_of(path if path.is_dir() else path.parent)
    if path.is_dir():
        if selector == path:
            return "a selector"
        return "a folder" if any(path.iterdir()) else "an empty folder"
    if selector is not None:
        return f"a file of the selector in {selector}"
    head = _head(path)
    if head.startswith(b"PK"):
        return _table_writer(path)
    if head.startswith(b"\x89PNG") or head.startswith(b"%PDF") or b"<svg" in head:
        import re

        found = re.search(rb"fgpo ([a-z][a-z-]*)", path.read_bytes())  # the metadata stamp (write_figure)
        return stamp(found.group(1).decode()) if found else "a figure fgpo did not write"
    text = _text(path)
    if text is None:
        return "a binary file fgpo did not write"
    first = text.split("\n", 1)[0]
    if first.startswith("<!-- written by fgpo ") and first.endswith(" -->"):
        return first[len("<!-- written by "):-len(" -->")]
    lines = [ln for ln in text.split("\n") if ln.strip()]
    if lines and all(_is_selection_line(ln) for ln in lines):
        return stamp("select")
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if isinstance(doc, dict):
        by = doc.get("written_by")
        return by if isinstance(by, str) and by.startswith("fgpo ") else "a JSON file fgpo did not write"
    return "a file fgpo did not write"


def _head(path: Path, n: int = 4096) -> bytes:
    with open(path, "rb") as fh:
        return fh.read(n)


def _text(path: Path) -> str | None:
    if path.stat().st_size > MAX_STAMPED_JSON:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError):
        return None


def _is_selection_line(line: str) -> bool:
    try:
        obj = json.loads(line)
    except ValueError:
        return False
    return isinstance(obj, dict) and "question" in obj and "tools" in obj


def _table_writer(path: Path) -> str:
    """Who wrote a ``.npz`` reward table, from its provenance (module doc)."""
    import numpy as np

    try:
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
        prov = meta["provenance"] if meta.get("format") == "fgpo-reward-table" and isinstance(meta.get("provenance"), dict) else None
    except Exception:  # noqa: BLE001 - zipfile's, NumPy's and JSON's errors alike: not a table
        prov = None
    if prov is None:
        return "a zip or .npz file that is not a reward table"
    if prov.get("kind") in ("illustrative", "synthetic"):
        return stamp("example-table")
    if prov.get("benchmark") and prov.get("reasoner"):
        return stamp("precompute")
    return "a reward table fgpo did not compute"


def check_output(command: str, flag: str, path, kind: str, force: bool = False) -> Path:
    """``path`` as ``command``'s output ``flag`` of ``kind``, checked before the work: a usable path (not empty, its
    folder creatable, the right suffix) and, if it exists, one this command wrote (module doc) or ``force``. A folder
    output takes a new or empty folder or, for a selector, a selector folder; a file output never lies in a selector's
    folder. Raises :class:`~fgpo_lib.files.OutputError` naming the flag and what the path holds."""
    what, suffixes = KINDS[kind]
    text = str(path)
    if not text.strip():
        raise OutputError(f"{flag}: the output path is empty; give {what}'s path")
    path = Path(text)
    if suffixes is None:  # a folder
        if path.exists() and not path.is_dir():
            raise OutputError(f"{flag} {text}: is a file ({written_by(path)}); give a folder (it is created)")
        if kind == "selector":
            from .selector_folder import SelectorError, check_selector_dir

            try:
                check_selector_dir(path, flag)
            except SelectorError as exc:
                raise OutputError(str(exc)) from None
        check_new_file_path(flag, path / "_")  # its parents: no file in the way
        return path
    check_new_file_path(flag, path, suffixes)
    if path.exists():
        owner = written_by(path)
        if owner != stamp(command) and not force:
            raise OutputError(f"{flag} {text}: holds {owner}, not {what} of {stamp(command)}; refusing to replace it. "
                              "Choose another path, or pass --force to replace it")
    return path


def claim_outputs(command: str, args, outputs: tuple[Output, ...], inputs: tuple[str, ...] = ()) -> None:
    """Check every output of ``command`` that ``args`` sets (:func:`check_output`), that no two overlap, and that none
    is one of its ``inputs`` (spelled as on the command line: ``"--table"``, or a positional's name), before the
    command runs."""
    force = bool(getattr(args, "force", False))
    given = [(o, getattr(args, o.dest, None)) for o in outputs]
    given = [(o, v) for o, v in given if v is not None]
    refuse_inputs_as_outputs({o.flag: v for o, v in given}, {name: getattr(args, name.lstrip("-").replace("-", "_"), None) for name in inputs})
    paths = {}
    for out, value in given:
        paths[out.flag] = check_output(command, out.flag, value, out.kind, force)
    folders = {flag: p for (o, _), (flag, p) in zip(given, paths.items()) if KINDS[o.kind][1] is None}
    for flag, p in paths.items():
        for other, folder in folders.items():
            if other != flag and _inside(p, folder):
                raise OutputError(f"{flag} {p} lies in {other} {folder}: one output would replace the other; give paths apart")


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve() == folder.resolve() or folder.resolve() in path.resolve().parents
    except OSError:
        return False


def write_record(path, obj: dict, command: str, sort_keys: bool = True) -> Path:
    """Write ``obj`` (a JSON object) with ``written_by`` set to ``command``'s stamp, atomically."""
    return atomic_write_text(path, json.dumps({**obj, "written_by": stamp(command)}, indent=1, sort_keys=sort_keys) + "\n")


def write_text(path, text: str, command: str, kind: str) -> Path:
    """Write a text output of ``kind`` (``markdown`` gets its stamp line; ``jsonl`` is stamped by its shape), atomically."""
    if kind == "markdown":
        text = f"<!-- written by {stamp(command)} -->\n{text}"
    return atomic_write_text(path, text)


def write_figure(path, fig, command: str, dpi: int = 150) -> Path:
    """Save a matplotlib figure with ``command``'s stamp in its metadata, atomically."""
    fmt = str(path).rsplit(".", 1)[-1].lower()
    key = "Software" if fmt == "png" else "Creator"
    return atomic_write(path, lambda tmp: fig.savefig(tmp, format=fmt, dpi=dpi, metadata={key: stamp(command)}))


__all__ = ["KINDS", "Output", "OutputError", "check_output", "claim_outputs", "stamp", "write_figure", "write_record", "write_text", "written_by"]
