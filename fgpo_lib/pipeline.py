"""The whole study in one command, stage by stage: ``fgpo pipeline`` (``make pipeline``), ``--dry-run`` to see the plan.

Stages, in order, each resuming from what is committed and declaring what it writes:

1. **precompute** (writes ``tables/``): every committed LLM table that is not complete (its cells, or the extras its
   run asked for) is extended with ``fgpo precompute --resume-from T --out T`` (its own sample, library, extras and
   reasoner settings, from its provenance); a complete table costs nothing.
2. **scaling** (writes ``records/scaling/``): ``fgpo scaling`` for each scaling run of the run registry
   (:mod:`fgpo_lib.runs`) without records.
3. **ondemand** (writes ``records/scaling_llm/``): ``fgpo ondemand`` for each on-demand run of the registry; it
   resumes its own records, so a finished one trains nothing.
4. **lm_policy** (writes ``records/lm_policy/``): ``fgpo lm-train`` for each language-model run of the registry
   without a record (a record is written only when its run finishes).
5. **study** (writes ``book/``): ``fgpo study``, which ``make book`` runs alone: the cheap last step.

The LLM stages take CPU-hours; ``make book`` and the tests never run them. ``--dry-run`` reads the tables'
provenance and the records, loads no model and computes nothing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from .paths import ROOT, TABLES_DIR as TABLES
from .runs import STAGES, all_runs


def precompute_commands() -> list[tuple[str, list[str]]]:
    """``(what remains, command)`` for every committed table that is not complete."""
    from .table import RewardTable

    out = []
    tables = {path: RewardTable.load(path) for path in sorted(TABLES.glob("*.npz"))}
    for path, table in tables.items():
        prov = table.provenance
        if prov.get("complete", True):
            continue
        left = int(prov.get("sample_size", table.n_questions)) - table.n_questions
        # every committed table of the same benchmark and reasoner seeds the cache: libraries share their cells
        seeds = [p for p, t in tables.items() if (t.provenance.get("benchmark"), t.provenance.get("reasoner")) == (prov["benchmark"], prov["reasoner"])]
        cmd = ["precompute", "--benchmark", prov["benchmark"], "--reasoner", prov["reasoner"], "--tools", ",".join(prov.get("library") or table.tool_names),
               "--max-size", str(prov.get("max_size", 4)), "--sample-seed", str(prov.get("sample_seed", 0)), "--extras", "--checkpoint-every", "10",
               *[a for p in seeds for a in ("--resume-from", str(p.relative_to(ROOT)))], "--out", str(path.relative_to(ROOT))]
        if prov.get("questions"):
            cmd += ["--questions", str(prov["questions"])]
        if prov.get("reasoner_kwargs"):
            import json

            cmd += ["--reasoner-kwargs", json.dumps(prov["reasoner_kwargs"])]
        what = f"{left} of {prov.get('sample_size')} questions remain" if left else f"every cell is done; its extras ({', '.join(prov.get('extras', []))}) remain"
        out.append((f"{path.stem}: {what}", cmd))
    return out


def plan() -> dict[str, list[tuple[str, list[str]]]]:
    """Every stage's ``(what it would recompute, fgpo command)`` pairs; an empty list: nothing to do."""
    steps: dict[str, list[tuple[str, list[str]]]] = {"precompute": precompute_commands(), "scaling": [], "ondemand": [], "lm_policy": []}
    for run in all_runs():
        if run.resumes:
            steps[run.stage].append((f"{run.name}: " + ("resumes its records" if run.done_when.parent.exists() else "no records yet"), list(run.command)))
        elif not run.done:
            steps[run.stage].append((f"{run.name}{f' ({run.role})' if run.role else ''}: no record yet", list(run.command)))
    steps["study"] = [("the book, from the tables and records", ["study"])]
    return steps


def still_registered(cmd: list[str], folder: Path | None = None) -> bool:
    """Whether the ``lm-train`` command ``cmd`` (its ``--out`` record) is still a run of the registry as the records
    in ``folder`` (default: the committed folder) make it now: a GRPO seed-0 record written earlier in the same
    pipeline chooses GRPO's rate, and its later seed at the other rate leaves the registry
    (:func:`~fgpo_lib.study.lm_runs.chosen_grpo_rate`)."""
    from .study import lm_runs as registry

    out = Path(cmd[cmd.index("--out") + 1]).name
    return any(f"{run.name}.json" == out for run in registry.lm_runs(folder if folder is not None else registry.LM_RECORDS))


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--dry-run", action="store_true", help="print each stage and what it would recompute; compute nothing")
    ap.add_argument("--stages", default=",".join(STAGES), help=f"comma-separated stages to run, in the pipeline's order (default all: {','.join(STAGES)})")


def run(args: argparse.Namespace) -> int:
    stages = [s.strip() for s in args.stages.split(",") if s.strip()]
    unknown = [s for s in stages if s not in STAGES]
    if unknown or not stages:
        raise ValueError(f"--stages {args.stages!r}: unknown stage(s) {unknown}; the stages are {', '.join(STAGES)}")
    steps = plan()
    for stage in (s for s in STAGES if s in stages):
        print(f"stage {stage}: {'nothing to do' if not steps[stage] else f'{len(steps[stage])} command(s)'}", flush=True)
        for what, cmd in steps[stage]:
            print(f"  {what}\n    fgpo {' '.join(cmd)}", flush=True)
            if stage == "lm_policy" and not still_registered(cmd):
                print("    skipped: no longer a registered run (GRPO's later seed at the rate its seed 0 did not choose on dev)", flush=True)
            elif not args.dry_run:
                subprocess.run([sys.executable, "-m", "fgpo_lib.cli", *cmd], check=True, cwd=ROOT)
    return 0
