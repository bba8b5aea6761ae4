"""Reading a user's JSON-lines file: the one reader of ``fgpo select --questions`` and ``fgpo score --predictions``.

Lines are split on ``\\n`` alone (JSON may hold U+2028 and U+2029 raw inside a string, which ``str.splitlines``
would split on); blank lines are skipped; a path that is no regular file but can be read (``/dev/stdin``, a shell's
``<(...)``) is read like one. Every failure is a ``ValueError`` naming the flag, the file and the line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterator


def read_json_objects(path: str | Path, flag: str) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for every non-blank line of ``path``; a line that is not a JSON object is an error."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"{flag} {path}: no such file")
    if path.is_dir():
        raise ValueError(f"{flag} {path}: is a folder, not a JSON-lines file")
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        raise ValueError(f"{flag} {path}: cannot be read ({exc.strerror or exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{flag} {path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    for n, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{flag} {path}: line {n}: not valid JSON ({exc})") from None
        if not isinstance(obj, dict):
            raise ValueError(f"{flag} {path}: line {n}: expected a JSON object, got {type(obj).__name__}")
        yield n, obj
