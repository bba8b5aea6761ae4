"""The whole study in one command, stage by stage: ``fgpo pipeline`` (``make pipeline``), ``--dry-run`` to see the plan.

Stages, in order, each resuming from what is committed and declaring what it writes:

1. **precompute** (writes ``tables/``): every committed LLM table that is not complete (its cells, or the extras its
   run asked for) is extended with ``fgpo precompute --resume-from T --out T`` (its own sample, library, extras and
   reasoner settings, from its provenance); a complete table costs nothing.
2. **scaling** (writes ``records/scaling/``): ``fgpo scaling`` for each (benchmark, reasoner) of
   :data:`SCALING_RUNS` without records.
3. **ondemand** (writes ``records/scaling_llm/``): ``fgpo ondemand`` for each of :data:`ONDEMAND_RUNS`; it resumes
   its own records, so a finished one trains nothing.
4. **lm_policy** (writes ``records/lm_policy/``): ``fgpo lm-train`` for each run of
   :data:`~fgpo_lib.lm_policy.runs.LM_RUNS` without a record (a record is written only when its run finishes).
5. **study** (writes ``book/``): ``fgpo study``, which ``make book`` runs alone: the cheap last step.

The LLM stages take CPU-hours; ``make book`` and the tests never run them. ``--dry-run`` reads the tables'
provenance and the records, loads no model and computes nothing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLES = ROOT / "tables"
#: the scaling chapter's reader runs: (benchmark, reasoner, questions)
SCALING_RUNS = (("geneturing", "records", 150), ("geneturing", "minilm", 150), ("genehop", "records", None), ("geneseq", "records", 150))
#: the scaling chapter's on-demand LLM runs: (benchmark, reasoner, committed 163-subset table, library size)
ONDEMAND_RUNS = (("geneturing", "gemma3-270m", "tables/geneturing__gemma3-270m.npz", 12),)
STAGES = ("precompute", "scaling", "ondemand", "lm_policy", "study")


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
    from .lm_policy.runs import pending_runs
    from .ondemand import RUNS_DIR as LLM_RUNS
    from .scaling import RUNS_DIR

    scaling = [(f"{b} x {r}: no records yet", ["scaling", "--benchmark", b, "--reasoner", r, *(["--questions", str(q)] if q else [])])
               for b, r, q in SCALING_RUNS if not (RUNS_DIR / f"{b}__{r}" / "provenance.json").exists()]
    ondemand = [(f"{b} x {r} at {n} tools: " + ("resumes its records" if (LLM_RUNS / f"{b}__{r}").exists() else "no records yet"),
                 ["ondemand", "--benchmark", b, "--reasoner", r, "--table", t, "--tools", str(n), "--reasoner-kwargs", '{"n_threads": 1}'])
                for b, r, t, n in ONDEMAND_RUNS]
    lm_policy = [(f"{run.name} ({run.role}): no record yet", run.command()) for run in pending_runs()]
    return {"precompute": precompute_commands(), "scaling": scaling, "ondemand": ondemand, "lm_policy": lm_policy, "study": [("the book, from the tables and records", ["study"])]}


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
            if not args.dry_run:
                subprocess.run([sys.executable, "-m", "fgpo_lib.cli", *cmd], check=True, cwd=ROOT)
    return 0
