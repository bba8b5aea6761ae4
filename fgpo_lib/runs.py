"""Every run the pipeline makes, as one typed registry.

:func:`all_runs` gives one :class:`Run` per command the pipeline would run after the precompute stage: the scaling
chapter's reader runs, its on-demand LLM runs, and the language-model policy's runs (whose design is
:data:`fgpo_lib.study.lm_runs.LM_RUNS`). Each entry knows its stage, its ``fgpo`` command and the file whose
existence means it is done; ``fgpo pipeline`` (:mod:`fgpo_lib.pipeline`) runs the pending ones in order, and the
chapters list them from here. The precompute stage's runs are derived from the committed tables themselves
(:func:`fgpo_lib.pipeline.precompute_commands`): a table that is not complete names its own command.

Where each kind of run writes is :mod:`fgpo_lib.paths`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .paths import ONDEMAND_RECORDS, SCALING_RECORDS, relative, table_path

STAGES = ("precompute", "scaling", "ondemand", "lm_policy", "study")


@dataclass(frozen=True)
class Run:
    """One run of the pipeline.

    Attributes:
        stage: one of :data:`STAGES`.
        name: as the plan and the chapters write it.
        command: the ``fgpo`` command line (without ``fgpo``).
        done_when: the file whose existence means the run is done.
        resumes: whether a started run continues from its own partial output (the on-demand runs do).
        role: what the run is for (the language-model policy's runs: ``main``, ``search``, ...).
    """

    stage: str
    name: str
    command: tuple[str, ...]
    done_when: Path
    resumes: bool = False
    role: str = ""

    @property
    def done(self) -> bool:
        return self.done_when.exists()


def _scaling_runs() -> tuple[Run, ...]:
    """The scaling chapter's reader runs: (benchmark, reasoner, questions)."""
    out = []
    for b, r, q in (("geneturing", "records", 150), ("geneturing", "minilm", 150), ("genehop", "records", None), ("geneseq", "records", 150)):
        out.append(Run("scaling", f"{b} x {r}", ("scaling", "--benchmark", b, "--reasoner", r, *(("--questions", str(q)) if q else ())),
                       SCALING_RECORDS / f"{b}__{r}" / "provenance.json"))
    return tuple(out)


def _ondemand_runs() -> tuple[Run, ...]:
    """The scaling chapter's on-demand LLM runs: (benchmark, reasoner, library size), over the committed table."""
    out = []
    for b, r, n in (("geneturing", "gemma3-270m", 12),):
        out.append(Run("ondemand", f"{b} x {r} at {n} tools", ("ondemand", "--benchmark", b, "--reasoner", r, "--table", relative(table_path(b, r)),
                                                               "--tools", str(n), "--reasoner-kwargs", '{"n_threads": 1}'),
                       ONDEMAND_RECORDS / f"{b}__{r}" / "finals.parquet", resumes=True))
    return tuple(out)


def _lm_runs() -> tuple[Run, ...]:
    from .study.lm_runs import LM_RUNS

    return tuple(Run("lm_policy", run.name, tuple(run.command()), run.record, role=run.role) for run in LM_RUNS)


def all_runs() -> tuple[Run, ...]:
    """Every run, built on first use (the language-model runs' registry imports its arms' settings)."""
    return _scaling_runs() + _ondemand_runs() + _lm_runs()
