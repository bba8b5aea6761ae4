"""The study: every (benchmark, reasoner) setting run by papermill, the summary notebook, then the book.

    fgpo study [--book-dir book] [--workers 2] [--small] [--param NAME=VALUE ...]

1. **Tables.** A setting's reward table is ``tables/<benchmark>__<reasoner>.npz`` when committed (the LLM tables,
   precomputed with provenance); a reader's table is built by the precompute engine over all questions into
   ``<book-dir>/_generated/tables/`` (cheap; cached cells are reused). A setting with no table is skipped and listed
   in the book as pending.
2. **Settings.** ``notebooks/setting.md`` runs once per setting, in parallel over ``--workers`` processes, into
   ``<book-dir>/_generated/settings/``; its results go to ``<book-dir>/_generated/results/<setting>/``. A rerun skips a
   setting whose stamp (hash of table, notebook, library source and parameters) is unchanged.
3. **Summary.** The chapters' notebooks (:data:`fgpo_lib.study.book.CHAPTERS`), then ``jupyter-book build -W`` over
   the table of contents derived from the same list.

``--small`` is the CI configuration: 2 settings, 2 seeds, few steps.
"""

from __future__ import annotations

import hashlib
import json
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from tqdm import tqdm

from .book import BOOK_NOTEBOOKS, ROOT, build_book, execute_notebook, toc
from ..genomics.benchmarks import BENCHMARKS
from ..reasoners.registry import REASONERS
from ..scaling import RUNS_DIR
from ..ondemand import RUNS_DIR as LLM_RUNS_DIR
from ..paths import table_name, table_path
from .protocol import FGPO_ARM, GRPO_PAPER, SFT_ARM

#: every (benchmark, reasoner) the book shows: the reasoners with a study role in the registry
SETTINGS = [(b, r) for b in BENCHMARKS for r, e in REASONERS.items() if e.study]
SMALL = {
    "settings": [("genehop", "records"), ("geneseq", "bm25")],
    "params": {"seeds": [0, 1], "steps": 30, "featurizer": "text", "protocol_seeds": [0],
               "protocol_arms": [FGPO_ARM, GRPO_PAPER, "GRPO (Eq. 1, std)", "FGPO (lambda 0)", SFT_ARM, "Random", "No-Tool", "Tools w/ Desc", "Oracle"]},
}
#: a partial committed table (still being computed) enters the book once it holds this many questions, the size of
#: the 8-tool LLM samples; below it the setting is listed as pending with its progress
MIN_PARTIAL_QUESTIONS = 60


def setting_name(benchmark: str, reasoner: str) -> str:
    return table_name(benchmark, reasoner)


LIBRARY_NAMES = ("4 tools", "8 tools")  # each page's headline library (the paper's n = 4), then the 8-tool section


def table_for(benchmark: str, reasoner: str, build_dir: Path, cache: Path, library: str = "all") -> Path | None:
    """The setting's table of its whole library (``library`` ``'all'``: the 8 tools, 163 subsets) or of its 4-tool
    library (``'four'``): committed, or (readers only) built now over every question with its All-Tools cells;
    ``None`` if an LLM table is not committed."""
    committed = table_path(benchmark, reasoner, library)
    if committed.exists():
        return committed
    if REASONERS[reasoner].kind != "reader":
        return None
    out = build_dir / committed.name
    if not out.exists():
        from ..genomics.libraries import LIBRARIES
        from ..precompute import PrecomputeEngine, PrecomputeSpec

        engine = PrecomputeEngine(PrecomputeSpec(benchmark, reasoner, tools=LIBRARIES[benchmark] if library == "four" else None), cache=cache)
        engine.run(progress=True)
        engine.run_extras(progress=True)
        engine.build_table().save(out)
    return out


def library_tables(benchmark: str, reasoner: str, build_dir: Path, cache: Path) -> dict[str, Path]:
    """``{"4 tools"|"8 tools": table path}`` of a setting, those that exist. The 4-tool table of an LLM is committed
    (``tables/<benchmark>__<reasoner>__4tools.npz``); a reader's is the exact sub-table of its 8-tool table on the
    benchmark's library (:mod:`fgpo_lib.genomics.libraries`). A committed table still being computed waits outside
    until it holds :data:`MIN_PARTIAL_QUESTIONS` questions, whichever its library."""
    from ..genomics.libraries import LIBRARIES, sub_table
    from ..table import RewardTable

    out = {}
    bench = BENCHMARKS[benchmark]
    if bench.tools == bench.library4:  # its whole library is its 4 tools (GeneRegion): no 8-tool table
        four = table_for(benchmark, reasoner, build_dir, cache, "four")
        return {} if four is None or _too_small(four) else {"4 tools": _snapshot(four, build_dir)}
    eight = table_for(benchmark, reasoner, build_dir, cache)
    four = table_path(benchmark, reasoner, "four")
    if not four.exists() and eight is not None and REASONERS[reasoner].kind == "reader":
        four = build_dir / four.name
        if not four.exists():
            sub_table(RewardTable.load(eight), LIBRARIES[benchmark]).save(four)
    if four.exists() and not _too_small(four):
        out["4 tools"] = four
    if eight is not None and not _too_small(eight):
        out["8 tools"] = eight
    return {lib: _snapshot(p, build_dir) for lib, p in out.items()}


def full_settings() -> list[str]:
    """The settings a full build runs, in its order, without building anything: every reader's (its tables are built
    from the cache) and every LLM's whose committed table is big enough (:func:`library_tables`' rule)."""
    out = []
    for benchmark, reasoner in SETTINGS:
        if REASONERS[reasoner].kind == "reader":
            out.append(setting_name(benchmark, reasoner))
            continue
        bench = BENCHMARKS[benchmark]
        libraries = ("four",) if bench.tools == bench.library4 else ("four", "all")
        if any(table_path(benchmark, reasoner, lib).exists() and not _too_small(table_path(benchmark, reasoner, lib)) for lib in libraries):
            out.append(setting_name(benchmark, reasoner))
    return out


def committed_toc() -> str:
    """The table of contents a full build writes (:func:`~fgpo_lib.study.book.toc` of :func:`full_settings`): the
    committed ``book/_toc.yml``, so that ``jupyter-book build book`` finds one on a fresh clone."""
    return toc(full_settings())


def _too_small(path: Path) -> str:
    """Why a committed table stays out of the book (a partial table below :data:`MIN_PARTIAL_QUESTIONS`), or ``''``."""
    from ..table import RewardTable

    table = RewardTable.load(path)
    if table.provenance.get("complete", True) is False and table.n_questions < MIN_PARTIAL_QUESTIONS:
        return f"{table.n_questions} of {table.provenance.get('sample_size', '?')} questions computed so far"
    return ""


def _snapshot(path: Path, build_dir: Path) -> Path:
    """A committed table copied into the build (unchanged if already there), so that every page of one build reads
    the same table even while a precompute extends the committed one."""
    if Path(path).parent.resolve() == Path(build_dir).resolve():
        return Path(path)
    copy = Path(build_dir) / Path(path).name
    data = Path(path).read_bytes()
    if not copy.exists() or copy.read_bytes() != data:
        copy.write_bytes(data)
    return copy


def _source_hash() -> str:
    h = hashlib.sha256()
    for p in sorted((ROOT / "fgpo_lib").rglob("*.py")):
        h.update(p.read_bytes())
    return h.hexdigest()


def _stamp(tables: list[Path], params: dict) -> str:
    h = hashlib.sha256()
    for p in (*tables, ROOT / "notebooks" / "setting.md"):
        h.update(p.read_bytes())
    h.update(_source_hash().encode())
    h.update(json.dumps(params, sort_keys=True).encode())
    return h.hexdigest()


def setting_title(benchmark: str, reasoner: str) -> str:
    """A setting page's title, from the registries: e.g. ``GeneTuring × SmolLM2-135M``."""
    return f"{BENCHMARKS[benchmark].title} × {REASONERS[reasoner].title}"


def _retitle(notebook: Path, title: str) -> None:
    """Give an executed setting notebook its own page title (the first line of its first cell)."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    first = nb.cells[0]
    first.source = "\n".join([f"# {title}", *first.source.splitlines()[1:]])
    nbformat.write(nb, notebook)


def _library_tables(args: tuple) -> dict[str, Path]:
    benchmark, reasoner, gen = args
    return library_tables(benchmark, reasoner, Path(gen) / "tables", Path(gen) / "tables" / "cells.sqlite")


def _run_setting(args: tuple) -> tuple[str, float]:
    """One setting's notebook; ``(name, wall seconds)``."""
    import time

    name, params, out_dir, title = args
    started = time.perf_counter()
    _retitle(execute_notebook("setting", Path(out_dir), params, out_name=name), title)
    return name, round(time.perf_counter() - started, 1)


def run_study(book_dir: Path, workers: int = 2, small: bool = False, overrides: dict | None = None) -> Path:
    gen = book_dir / "_generated"
    settings = SMALL["settings"] if small else SETTINGS
    base = {**(SMALL["params"] if small else {}), **(overrides or {})}
    jobs, pending, done = [], [], []
    (gen / "tables").mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(max_workers=max(1, workers)) as pool:  # the readers' tables, built in parallel
        built = list(pool.map(_library_tables, [(b, r, str(gen)) for b, r in settings]))
    for (benchmark, reasoner), tables in zip(settings, built):
        name = setting_name(benchmark, reasoner)
        if not tables:
            four = table_path(benchmark, reasoner, "four")
            pending.append(f"{name} ({_too_small(four)})" if four.exists() else name)
            continue
        # paths relative to the notebook's folder: published pages show no path of this machine
        rel = lambda p: os.path.relpath(Path(p).resolve(), (gen / "settings").resolve())  # noqa: E731
        sensitivity = tables.get("8 tools", tables.get("4 tools"))  # the current protocol runs on the 8-tool table where there is one
        # the protocol: every library of a headline reasoner; a control reader (bm25, records) only on the headline one
        params = {**base, "benchmark": benchmark, "reasoner": reasoner, "table_path": rel(sensitivity),
                  "library_paths": {k: rel(v) for k, v in tables.items() if k == "4 tools" or REASONERS[reasoner].study != "control" or "4 tools" not in tables},
                  "results_dir": rel(gen / "results" / name)}
        stamp = _stamp(list(tables.values()), params)
        stamp_file = gen / "results" / name / "stamp.txt"
        done.append(name)
        if stamp_file.exists() and stamp_file.read_text() == stamp and (gen / "settings" / f"{name}.ipynb").exists():
            print(f"up to date: {name}")
            continue
        jobs.append(((name, params, str(gen / "settings"), setting_title(benchmark, reasoner)), stamp_file, stamp))
    print(f"{len(jobs)} settings to run, {len(done) - len(jobs)} up to date, {len(pending)} pending (no table): {pending}", flush=True)
    import time

    timings = _previous_timings(gen)  # wall seconds of each setting's last run and of each chapter (study.json)
    with ProcessPoolExecutor(max_workers=max(1, workers)) as pool, tqdm(total=len(jobs), desc="settings", unit="setting") as bar:
        for (job, stamp_file, stamp), (name, seconds) in zip(jobs, pool.map(_run_setting, [j[0] for j in jobs])):
            stamp_file.write_text(stamp)
            timings["settings"][name] = seconds
            bar.set_postfix_str(name)
            bar.update()
    summary = {"settings": done, "pending": pending, "small": small, "workers": workers, "timings": timings}
    (gen / "study.json").write_text(json.dumps(summary, indent=1))
    for name in BOOK_NOTEBOOKS:
        print(f"executing notebooks/{name}.md", flush=True)
        # the summary notebooks read the study from their own folder; the scaling chapter the committed runs
        params = {"runs_dir": os.path.relpath(RUNS_DIR.resolve(), gen.resolve()), "llm_runs_dir": os.path.relpath(LLM_RUNS_DIR.resolve(), gen.resolve())} if name == "scaling" else {}
        started = time.perf_counter()
        execute_notebook(name, gen, params)
        timings["chapters"][name] = round(time.perf_counter() - started, 1)
        (gen / "study.json").write_text(json.dumps(summary, indent=1))
    _write_settings_toc(book_dir, done)
    return build_book(book_dir)


def _previous_timings(gen: Path) -> dict:
    """``{"settings": {name: seconds}, "chapters": {name: seconds}}`` from the last build's ``study.json`` (a setting
    that is up to date keeps its last run's time), or empty."""
    try:
        held = json.loads((gen / "study.json").read_text()).get("timings") or {}
    except (OSError, ValueError):
        held = {}
    return {"settings": dict(held.get("settings") or {}), "chapters": dict(held.get("chapters") or {})}


def _write_settings_toc(book_dir: Path, done: list[str]) -> None:
    """The table of contents of this build (:func:`fgpo_lib.study.book.toc`). The repository's own book keeps its
    committed one, which a full build must equal (:func:`committed_toc`): a difference is named, not written over."""
    written = toc(done)
    path = book_dir / "_toc.yml"
    if path.resolve() == (ROOT / "book" / "_toc.yml").resolve() and path.exists() and path.read_text() != written:
        raise ValueError(f"this build's table of contents differs from the committed {path} (the committed tables or chapters changed): "
                         "regenerate it with fgpo_lib.study.runner.committed_toc() and commit it")
    path.write_text(written)
