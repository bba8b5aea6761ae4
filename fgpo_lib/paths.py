"""Every place the repository keeps something, named once: the tables, each kind of record, the book, the caches.

Every other module imports its folder from here (no other module builds a records path), and :func:`table_path` is
the one place a committed table's path is built (``tables/<benchmark>__<reasoner>[__4tools].npz``)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLES_DIR = ROOT / "tables"
RECORDS_DIR = ROOT / "records"
#: the scaling chapter's runs on reader tables of 8 to 20 tools (``fgpo scaling``)
SCALING_RECORDS = RECORDS_DIR / "scaling"
#: the on-demand runs, every cell an LLM call (``fgpo ondemand``)
ONDEMAND_RECORDS = RECORDS_DIR / "scaling_llm"
#: how committed LLM tables re-derive under a llama.cpp build (``fgpo cross-build``)
CROSSBUILD_RECORDS = RECORDS_DIR / "crossbuild"
#: the language-model policy's run records (``fgpo lm-train``; the chapter's registry: fgpo_lib.study.lm_runs)
LM_RECORDS = RECORDS_DIR / "lm_policy"
#: search points stopped before their last update: their dev curves up to that point
LM_STOPPED_RECORDS = LM_RECORDS / "stopped"
#: the book's folder (``fgpo study --book-dir``)
BOOK_DIR = ROOT / "book"
#: the cell cache of the precompute engine (SQLite), outside the repository
CELL_CACHE = Path.home() / ".cache" / "fgpo" / "cells.sqlite"
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
