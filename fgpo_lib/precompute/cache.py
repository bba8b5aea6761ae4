"""The cell cache: every evaluated (question, subset) cell in one SQLite file, so a cell is computed once.

A question's cells are written in one transaction (WAL journal), so ``kill -9`` loses at most the question in flight.
An SQLite error (a full disk, a damaged or foreign file) is a :class:`~fgpo_lib.errors.PrecomputeError` that names
the cache file and says what to do, never a bare "disk I/O error".
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from ..errors import PrecomputeError

from ..paths import CELL_CACHE as DEFAULT_CACHE  # noqa: E402


class CellCache:
    """SQLite store of evaluated cells: ``key -> (qid, subset, reasoner, answer, reward, status, error, seconds)``;
    ``seconds`` is the wall time spent on the cell, NULL where not known (a cell seeded from a table that had none)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self._open()
        except (sqlite3.Error, OSError) as exc:
            raise PrecomputeError(f"cell cache {self.path} (--cache): cannot be used as an SQLite cell cache: {exc}. "
                                  "Give --cache a writable file path (a new file is created); a damaged cache file can be deleted, "
                                  "and a rerun with --resume-from refills it from committed tables") from None

    def _open(self) -> None:
        if self.path.is_dir():
            raise OSError("it is a directory")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(self.path), timeout=60)
        # several processes may open a new cache at once; switching it to WAL takes a lock that sqlite's busy timeout
        # does not wait for, so it is retried here
        for attempt in range(100):
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                break
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or attempt == 99:
                    raise
                time.sleep(0.1)
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS cells (key TEXT PRIMARY KEY, qid TEXT, subset TEXT, reasoner TEXT, "
            "answer TEXT, reward REAL, status TEXT, error TEXT, seconds REAL)"
        )
        self.db.commit()
        check = self.db.execute("PRAGMA quick_check(1)").fetchone()[0]  # a truncated file opens, then fails on read
        if check != "ok":
            raise sqlite3.DatabaseError(f"integrity check: {check}")

    def _failed(self, what: str, exc: Exception) -> PrecomputeError:
        full = "full" in str(exc).lower() or "disk i/o" in str(exc).lower()
        return PrecomputeError(f"cell cache {self.path}: cannot {what} ({exc})" + ("; is the disk full? Free space, then rerun: every cell written before is kept" if full else
                               "; every cell written before is kept, and a rerun continues from them"))

    def get(self, keys: list[str]) -> dict[str, tuple]:
        """``key -> (answer, reward, status, error, seconds)`` of the keys found."""
        out = {}
        try:
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                rows = self.db.execute(f"SELECT key, answer, reward, status, error, seconds FROM cells WHERE key IN ({','.join('?' * len(chunk))})", chunk)
                out.update({r[0]: r[1:] for r in rows})
        except sqlite3.Error as exc:
            raise self._failed("read cells", exc) from None
        return out

    def ok(self, keys: list[str]) -> set[str]:
        """The keys among ``keys`` whose cell is evaluated without failure."""
        return {k for k, hit in self.get(keys).items() if hit[2] == "ok"}

    def put(self, rows: list[tuple]) -> None:
        """Rows ``(key, qid, subset, reasoner, answer, reward, status, error, seconds)``, in one transaction."""
        try:
            with self.db:
                self.db.executemany("INSERT OR REPLACE INTO cells VALUES (?,?,?,?,?,?,?,?,?)", rows)
        except sqlite3.Error as exc:
            raise self._failed(f"write {len(rows)} cells", exc) from None

    def count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM cells").fetchone()[0]

    def close(self) -> None:
        self.db.close()
