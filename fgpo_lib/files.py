"""Writing a user's files without ever losing one: atomic writes, and outputs that must not be inputs.

* :func:`atomic_write` writes through a temporary file in the target's own folder, named for this process
  (``.NAME.PID.tmp``, so two runs on one output never share it), and renames it over the target only once the
  whole file is written and flushed. A kill, a full disk (``ENOSPC``, ``ulimit -f``) or ``/dev/full`` leaves the
  previous file as it was; the temporary file is removed; the error names the path.
* :func:`refuse_inputs_as_outputs` stops a command, before any work, whose output path is one of its own inputs
  (``fgpo train --table T.npz --out T.npz`` would replace the table with a run record).
* :func:`check_new_file_path`: an output path checked before the work: not a directory, its folder creatable.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable


class OutputError(ValueError):
    """An output path that cannot or must not be written, named (the command line exits 2 with it)."""


def temp_path(path: Path, suffix: str = ".tmp") -> Path:
    """The temporary file an atomic write of ``path`` goes through: hidden, in the same folder, unique to this
    process. ``suffix`` keeps a writer that appends its own extension (NumPy's ``.npz``) from renaming it."""
    return path.with_name(f".{path.name}.{os.getpid()}{suffix}")


def atomic_write(path: str | os.PathLike, write: Callable[[Path], None], suffix: str = ".tmp") -> Path:
    """Call ``write(tmp)`` to write the whole file at a temporary path, then rename it over ``path``. On any error
    the temporary file is removed and ``path`` is untouched; an ``OSError`` is raised again as :class:`OutputError`
    naming ``path``."""
    path = Path(path)
    _check_target(path, str(path))
    tmp = temp_path(path, suffix)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write(tmp)
        with open(tmp, "rb+") as fh:  # the bytes reach the disk before the rename makes them the file
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise OutputError(f"cannot write {path}: {reason}" + (" (the disk is full)" if exc.errno == 28 else "") + "; the file there before, if any, is unchanged") from None
    finally:
        from .errors import run_to_end

        run_to_end(lambda: tmp.unlink(missing_ok=True))  # a second signal must not leave the temporary file behind
    return path


def atomic_write_text(path: str | os.PathLike, text: str) -> Path:
    """:func:`atomic_write` of a text file (UTF-8)."""
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def atomic_write_json(path: str | os.PathLike, obj, indent: int = 1, sort_keys: bool = True) -> Path:
    """:func:`atomic_write` of ``obj`` as JSON with a final newline."""
    return atomic_write_text(path, json.dumps(obj, indent=indent, sort_keys=sort_keys) + "\n")


def _check_target(path: Path, name: str) -> None:
    """A directory, or an existing path that is not a regular file (``/dev/full``, a pipe), is never replaced."""
    if path.is_dir():
        raise OutputError(f"{name}: is a directory; give a file path inside it")
    if path.exists() and not path.is_file():
        raise OutputError(f"{name}: is not a regular file (a device, pipe or socket); give the path of a file to write")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and os.path.samefile(a, b))
    except OSError:
        return False


def refuse_inputs_as_outputs(outputs: dict[str, str | os.PathLike | None], inputs: dict[str, object]) -> None:
    """Raise :class:`OutputError` if an output path (``{flag: path}``; ``None`` skipped) is one of the inputs
    (``{flag: path or list of paths}``) of the same command: writing it would destroy what the command reads."""
    for out_flag, out in outputs.items():
        if out is None:
            continue
        for in_flag, given in inputs.items():
            for path in given if isinstance(given, (list, tuple)) else [given]:
                if path is not None and _same_file(Path(out), Path(path)):
                    raise OutputError(f"{out_flag} {out} is also {in_flag}: writing it would replace the input this command reads; choose another {out_flag}")


def check_new_file_path(flag: str, path: str | os.PathLike, suffixes: tuple[str, ...] = ()) -> Path:
    """``path`` as an output of ``flag``, checked before any work: not empty, not a directory, ending in one of
    ``suffixes`` (if given), and no part of its folder a regular file. Raises :class:`OutputError` naming the flag."""
    text = str(path)
    if not text.strip():
        raise OutputError(f"{flag}: the output path is empty")
    out = Path(text)
    _check_target(out, f"{flag} {text}")
    if suffixes and out.suffix.lower() not in suffixes:
        raise OutputError(f"{flag} {text}: must end in {' or '.join(suffixes)} (the file is written in that format, and read back by its suffix)")
    parent = out.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise OutputError(f"{flag} {text}: {parent} is a file, not a folder, so nothing can be written under it")
    return out
