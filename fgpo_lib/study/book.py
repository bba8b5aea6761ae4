"""Notebook execution (papermill) and the book build (``jupyter-book build -W``), used by :mod:`fgpo_lib.study`.

Executed notebooks go to ``<book-dir>/_generated/``, which the table of contents points at; the book itself is built
with ``execute_notebooks: off``, so every number in it comes from these executions (through ``glue``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ..paths import ROOT

NOTEBOOKS = ROOT / "notebooks"
#: the book's chapters, in reading order, each ``(name, kind)``: ``page`` (``book/<name>.md``, written by hand),
#: ``notebook`` (``notebooks/<name>.md``, a MyST text notebook executed into ``_generated/`` after the settings) or
#: ``settings`` (``book/settings.md``, then one page per setting that ran). The table of contents, the notebooks the
#: study executes and their order all derive from this list (:func:`toc`).
#: the book's first page (its root): a notebook, so that it states the study's answer in glued numbers
ROOT_PAGE = ("intro", "notebook")
CHAPTERS = (
    ("method", "page"),
    ("worked_example", "notebook"),
    ("own_agent", "notebook"),
    ("environment", "notebook"),
    ("protocol", "notebook"),
    ("results", "notebook"),
    ("paper_analyses", "notebook"),
    ("lm_policy", "notebook"),
    ("scaling", "notebook"),
    ("reproducibility", "notebook"),
    ("checklist", "notebook"),
    ("settings", "settings"),
    ("limitations", "page"),
    ("references", "page"),
)
#: every notebook the study executes after the settings, the root page last (it reads what the chapters read)
BOOK_NOTEBOOKS = tuple(name for name, kind in CHAPTERS if kind == "notebook") + ((ROOT_PAGE[0],) if ROOT_PAGE[1] == "notebook" else ())


def toc(settings: list[str]) -> str:
    """``_toc.yml`` of a build: :data:`CHAPTERS`, with the settings that ran (``<benchmark>__<reasoner>``) under
    their part (left out when none ran). Written at build time; the full build's is committed as ``book/_toc.yml``
    (:func:`fgpo_lib.study.runner.committed_toc`, which a test compares with it)."""
    root = f"_generated/{ROOT_PAGE[0]}" if ROOT_PAGE[1] == "notebook" else ROOT_PAGE[0]
    lines = ["format: jb-book", f"root: {root}", "chapters:"]
    for name, kind in CHAPTERS:
        if kind == "notebook":
            lines.append(f"  - file: _generated/{name}")
        elif kind == "page":
            lines.append(f"  - file: {name}")
        elif settings:
            lines += [f"  - file: {name}", "    sections:"] + [f"      - file: _generated/settings/{n}" for n in settings]
    return "\n".join(lines) + "\n"


def notebook_source(name: str):
    """``notebooks/<name>.md`` (MyST, :mod:`jupytext`) as an ``nbformat`` notebook: what papermill executes."""
    import jupytext

    return jupytext.read(NOTEBOOKS / f"{name}.md")
#: environment of notebook kernels, unless the caller set it. Thread caps: the policies are tiny, and torch's default of one
#: thread per core made two parallel settings 10-40x slower than one thread each (measured: 31.6 s vs 3.3 s for one
#: FGPO run while the other core was busy)
#: Progress bars and loading chatter are for the terminal, not the published page: tqdm (every bar, through its
#: TQDM_* environment defaults), Hugging Face's download bars and transformers' "Loading weights" lines are off.
KERNEL_ENV = {
    "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false",
    "TQDM_DISABLE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error", "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
}


def execute_notebook(name: str, out_dir: Path, parameters: dict, out_name: str | None = None) -> Path:
    """Run the text notebook ``notebooks/<name>.md`` with ``parameters`` into ``out_dir/<out_name or name>.ipynb``.

    jupytext turns the text into the notebook papermill runs (its ``parameters`` cell keeps its tag). The kernel
    inherits this process's environment, with :data:`KERNEL_ENV` filled in where unset.
    """
    import nbformat
    import papermill  # imported here: the command line loads this module for every subcommand

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"{out_name or name}.ipynb"
    source = out_dir / f".{out_name or name}.source.ipynb"  # the text notebook as papermill's input
    nbformat.write(notebook_source(name), source)
    added = {k: v for k, v in KERNEL_ENV.items() if k not in os.environ}
    os.environ.update(added)  # the kernel is a child process: it sees these; they are removed again below
    try:
        papermill.execute_notebook(str(source), str(out), parameters=parameters, kernel_name="python3", cwd=str(out_dir), progress_bar=False)
    finally:
        source.unlink(missing_ok=True)
        for key in added:
            os.environ.pop(key, None)
    fold_injected_parameters(out)
    logs = page_logs(out)
    if logs:
        raise RuntimeError(f"{out}: the page prints {len(logs)} log or warning stream(s), which a published page must "
                           f"not show; the first: {logs[0].strip().splitlines()[0]!r}")
    return out


def page_logs(notebook: Path) -> list[str]:
    """The ``stderr`` stream outputs (warnings, logs, progress bars) of an executed notebook, in cell order."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    return [o.get("text", "") for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "stream" and o.get("name") == "stderr"]


def fold_injected_parameters(notebook: Path) -> None:
    """Fold papermill's injected parameters cell like the other code cells of a published page."""
    import nbformat

    nb = nbformat.read(notebook, as_version=4)
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if "injected-parameters" in tags and "hide-input" not in tags:
            cell.metadata["tags"] = [*tags, "hide-input"]
    nbformat.write(nb, notebook)


def show(df, digits: int = 3):
    """A DataFrame as the book shows it: an HTML table without the pandas index, numbers rounded to ``digits``."""
    from IPython.display import HTML

    return HTML(df.round(digits).to_html(index=False, border=0, classes="dataframe"))


def glue_figure(name: str, fig) -> None:
    """Glue a matplotlib figure for the book's prose, then close it, so the notebook does not show it a second time."""
    import matplotlib.pyplot as plt
    from myst_nb import glue

    glue(name, fig, display=False)
    plt.close(fig)


def forest_figure(frame, label: str, diff: str, lo: str, hi: str, xlabel: str, group: str | None = None):
    """A chapter's answer as a figure: one row per line of ``frame`` (labelled by its ``label`` column), the point
    ``diff`` with its interval ``[lo, hi]``, a line at 0; ``group`` colours the rows by that column."""
    import matplotlib.pyplot as plt
    import numpy as np

    fig, ax = plt.subplots(figsize=(7.2, 0.27 * len(frame) + 1.3))
    y = np.arange(len(frame))[::-1]
    groups = list(dict.fromkeys(frame[group])) if group else [None]
    for i, g in enumerate(groups):
        m = np.ones(len(frame), bool) if g is None else (frame[group] == g).to_numpy()
        d, l, h = (frame[c].to_numpy(float)[m] for c in (diff, lo, hi))
        ax.errorbar(d, y[m], xerr=[d - l, h - d], fmt="o", color=f"C{i}", capsize=2, label=g)
    ax.axvline(0, color="0.4", lw=0.8)
    ax.set_yticks(y, list(frame[label]), fontsize=7)
    ax.set_xlabel(xlabel)
    if group:
        ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig


def build_book(book_dir: Path) -> Path:
    """``jupyter-book build`` with warnings as errors and nitpicky references; returns the HTML folder."""
    jb = Path(sys.executable).with_name("jupyter-book")
    cmd = [str(jb) if jb.exists() else "jupyter-book", "build", str(book_dir), "-W", "-n", "--keep-going"]
    if subprocess.run(cmd).returncode != 0:
        raise RuntimeError(f"jupyter-book build {book_dir} failed; its warnings (turned into errors by -W) are printed "
                           "above, each naming the page and line")
    return Path(book_dir) / "_build" / "html"
