"""Where the repository keeps its tables and records, and the one place a committed table's path is built:
:func:`table_path` (``tables/<benchmark>__<reasoner>[__4tools].npz``). No other module builds such a path."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLES_DIR = ROOT / "tables"
RECORDS_DIR = ROOT / "records"
#: a library's name -> the suffix of its table files
LIBRARY_SUFFIXES = {"all": "", "four": "__4tools"}


def table_name(benchmark: str, reasoner: str, library: str = "all") -> str:
    """``<benchmark>__<reasoner>[__4tools]``: a setting's table file's stem (``library``: ``all`` or ``four``)."""
    if library not in LIBRARY_SUFFIXES:
        raise ValueError(f"library {library!r}: use one of {', '.join(LIBRARY_SUFFIXES)}")
    return f"{benchmark}__{reasoner}{LIBRARY_SUFFIXES[library]}"


def table_path(benchmark: str, reasoner: str, library: str = "all", folder: Path | None = None) -> Path:
    """The committed table of ``benchmark`` x ``reasoner`` over ``library`` (``all``: the benchmark's whole library;
    ``four``: its 4-tool library), in ``folder`` (default ``tables/``)."""
    return (TABLES_DIR if folder is None else Path(folder)) / f"{table_name(benchmark, reasoner, library)}.npz"


def relative(path: Path) -> str:
    """``path`` relative to the repository (what a command line names)."""
    return str(Path(path).relative_to(ROOT))
