"""A selector's folder on disk: written whole or not at all, read only when every file is the one it was written with.

**Writing** (:func:`write_selector_folder`): the files go into a new hidden folder beside the target
(``.NAME.PID.new``); ``selector.json`` is written last, with a manifest of every other file's sha256; then the new
folder takes the target's place in one step (Linux ``renameat2(RENAME_EXCHANGE)``; elsewhere two renames, the old
folder moved aside first) and the old one is removed only after. A kill at any moment leaves the old folder or the new
one, never a mix; concurrent saves of one folder take turns under a lock file beside it (``.NAME.lock``). A folder
the library did not write (no ``selector.json`` of its format) is never written over.

**Reading** (:func:`read_selector_doc`): ``selector.json`` of the library's format and version, every field of the
expected type, and every file of the manifest present with its sha256; each failure is a
:class:`~fgpo_lib.selector.SelectorError` naming the folder and the field or file.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Callable

from .files import OutputError, check_new_file_path
from .weights import file_sha256  # noqa: F401  (part of this module's interface: the manifest's hash)

FORMAT_NAME = "fgpo-selector"
FORMAT_VERSION = 1
DOC = "selector.json"


class SelectorError(ValueError):
    """A selector folder that cannot be saved, loaded or used, named (its path and what is wrong)."""


def _read_doc(folder: Path):
    try:
        return json.loads((folder / DOC).read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def is_selector_folder(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` holds a ``selector.json`` of this library's format (a folder it wrote)."""
    doc = _read_doc(Path(folder)) if (Path(folder) / DOC).is_file() else None
    return isinstance(doc, dict) and doc.get("format") == FORMAT_NAME


def check_selector_dir(folder: str | os.PathLike, flag: str = "--save-selector") -> Path:
    """``folder`` as a selector to write, checked before any work: not a file, and new, empty, or a selector this
    library wrote (a save never mixes its files with others' nor replaces a folder it did not write)."""
    folder = Path(folder)
    if not str(folder).strip():
        raise SelectorError(f"{flag}: the folder path is empty")
    if folder.exists() and not folder.is_dir():
        raise SelectorError(f"{flag} {folder}: is a file; give a folder (it is created)")
    if folder.is_dir() and any(folder.iterdir()) and not is_selector_folder(folder):
        raise SelectorError(f"{flag} {folder}: a folder holding other files (not a selector fgpo wrote); give a new or empty folder, "
                            "or a selector's folder to replace it")
    try:
        check_new_file_path(flag, folder / DOC)  # no file in the way of the folder's parents
    except OutputError as exc:
        raise SelectorError(str(exc)) from None
    return folder


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux ``renameat2`` with ``RENAME_EXCHANGE``); False where the system cannot."""
    import ctypes
    import errno

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def _fsync_tree(folder: Path) -> None:
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            with open(path, "rb+") as fh:
                os.fsync(fh.fileno())


def write_selector_folder(folder: str | os.PathLike, write_files: Callable[[Path], None], doc: dict) -> Path:
    """Write a selector folder whole (module doc): ``write_files(staging)`` writes the weights into the new folder,
    then ``doc`` with its manifest (``doc["files"]``: relative path -> sha256 of every other file) as ``selector.json``,
    then the new folder replaces ``folder``. Any error or signal leaves ``folder`` as it was and no staging folder."""
    from .errors import run_to_end

    folder = check_selector_dir(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = folder.with_name(f".{folder.name}.{os.getpid()}.new")
    aside = folder.with_name(f".{folder.name}.{os.getpid()}.old")  # where exchanges are not available
    try:
        with _folder_lock(folder.parent):
            check_selector_dir(folder)  # again, under the lock: another process may have written it meanwhile
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir()
            try:
                write_files(staging)
            except OSError:
                raise
            except Exception as exc:  # noqa: BLE001 - a writer's own error (safetensors' on a full disk): named
                raise OSError(f"{type(exc).__name__}: {exc}") from None
            files = {str(p.relative_to(staging)): file_sha256(p) for p in sorted(staging.rglob("*")) if p.is_file()}
            (staging / DOC).write_text(json.dumps({**doc, "files": files}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            _fsync_tree(staging)
            if not folder.exists():
                os.rename(staging, folder)
            elif not _exchange(staging, folder):
                os.rename(folder, aside)
                os.rename(staging, folder)
                shutil.rmtree(aside, ignore_errors=True)
    except OSError as exc:
        raise SelectorError(f"cannot write the selector {folder}: {exc.strerror or exc}" + (" (the disk is full)" if exc.errno == 28 else "")
                            + "; the folder there before, if any, is unchanged") from None
    finally:  # a signal during the cleanup must not leave the staging (after an exchange: the old) folder behind
        def cleanup() -> None:
            if aside.exists() and not folder.exists():  # stopped between the fallback's two renames: the old one back
                os.rename(aside, folder)
            shutil.rmtree(aside, ignore_errors=True)
            shutil.rmtree(staging, ignore_errors=True)

        run_to_end(cleanup)
    return folder


class _folder_lock:
    """An exclusive lock on a folder (``flock`` on its descriptor; no lock file left beside a user's files), held
    while a selector in it is replaced; a wait past ``timeout`` seconds is a named error."""

    def __init__(self, folder: Path, timeout: float = 600.0) -> None:
        self.folder, self.timeout = folder, timeout

    def __enter__(self):
        import fcntl
        import time

        self.fd = os.open(self.folder, os.O_RDONLY)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(self.fd)
                    raise SelectorError(f"{self.folder}: another process has been saving a selector here for {self.timeout:.0f} s; try again") from None
                time.sleep(0.05)

    def __exit__(self, *exc) -> None:
        import fcntl

        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


#: the fields of selector.json every kind has, and the type each must be
_FIELDS = {"format": str, "version": int, "kind": str, "space": dict, "provenance": dict, "files": dict}
_SPACE_FIELDS = {"n_tools": int, "tool_names": list}


def folder_identity(folder: str | os.PathLike):
    """What tells one saved version of a folder from the next (a save puts a new directory at the path): its inode
    and times, or None where nothing is. A reader compares it before and after reading (:func:`read_consistently`)."""
    try:
        st = os.stat(folder)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)


def read_consistently(folder: str | os.PathLike, read: Callable[[], object], tries: int = 10):
    """``read()`` of a selector folder that another process may be saving meanwhile: a save replaces the whole folder
    at once, but a reader opens its files one by one, so a read that overlapped a save may pair one version's
    ``selector.json`` with the next one's weights (a sha256 mismatch). Such a read is done again; a read that no save
    overlapped is returned, or its error raised."""
    for _ in range(tries):
        before = folder_identity(folder)
        try:
            result = read()
        except SelectorError:
            if folder_identity(folder) != before:
                continue  # the folder was replaced while it was read: read the new version
            raise
        if folder_identity(folder) == before:
            return result
    raise SelectorError(f"{folder}: another process saved this selector during each of {tries} reads; load it when no save is running")


def read_selector_doc(folder: str | os.PathLike, kinds) -> dict:
    """``selector.json`` of ``folder``, checked (module doc): format, version, ``kind`` one of ``kinds``, each field's
    type, and every manifest file present with its sha256."""
    folder = Path(folder)
    path = folder / DOC
    if not path.is_file():
        raise SelectorError(f"{folder}: not a selector folder (no {DOC}); fgpo train --save-selector DIR writes one")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise SelectorError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        raise SelectorError(f"{path}: not an fgpo selector (format {doc.get('format') if isinstance(doc, dict) else None!r})")
    if doc.get("version") != FORMAT_VERSION or isinstance(doc.get("version"), bool):
        raise SelectorError(f"{path}: selector format version {doc.get('version')!r}; this library reads version {FORMAT_VERSION}")
    for name, kind in _FIELDS.items():
        if not isinstance(doc.get(name), kind) or isinstance(doc.get(name), bool):
            raise SelectorError(f"{path}: field {name!r} must be a {kind.__name__}, got {type(doc.get(name)).__name__}"
                                + (" (a selector saved before manifests existed: save it again)" if name == "files" and name not in doc else ""))
    if doc["kind"] not in kinds:
        raise SelectorError(f"{path}: unknown selector kind {doc['kind']!r}; known: {', '.join(kinds)}")
    space = doc["space"]
    for name, kind in _SPACE_FIELDS.items():
        if not isinstance(space.get(name), kind) or isinstance(space.get(name), bool):
            raise SelectorError(f"{path}: field space.{name} must be a {kind.__name__}, got {type(space.get(name)).__name__}")
    names = space["tool_names"]
    if not names or not all(isinstance(n, str) and n for n in names) or len(set(names)) != len(names):
        raise SelectorError(f"{path}: field space.tool_names must be distinct non-empty tool names, got {names!r}")
    for rel, digest in doc["files"].items():
        if not isinstance(digest, str) or Path(rel).is_absolute() or ".." in Path(rel).parts:
            raise SelectorError(f"{path}: manifest entry {rel!r} is malformed")
        file = folder / rel
        if not file.is_file():
            raise SelectorError(f"{folder}: {rel} is missing; the folder is incomplete (save the selector again)")
        if file_sha256(file) != digest:
            raise SelectorError(f"{folder}: {rel} is not the file this selector was saved with (its sha256 differs): "
                                "changed or copied from another selector; save the selector again")
    return doc
