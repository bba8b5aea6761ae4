"""Whether the language-model policy routes: picks different subsets for different questions, as the chapter "The
paper's policy" counts it, from the committed run records (it never trains).

* :func:`routes` is the chapter's rule (:data:`ROUTES_MIN_DISTINCT`, :data:`ROUTES_MAX_SHARE`, and a score above
  :func:`best_fixed_score`); :func:`routes_by_benchmark` applies it to the runs of a registry role, and
  :func:`routes_summary` counts them.
* :func:`routing_frame`: every run's test choices; :func:`reference_frame`: the untrained rows and the
  full-information reference selector on the same questions, which say how much routing the question text allows.
* :func:`dev_ties_frame`, :func:`tie_break_frame`: dev selection's ties, and the tie-break point (with its
  confirmation on fresh seeds) under both rules, and :func:`confirmation_verdict` on the confirmation's claim;
  :func:`search_frame`: the routing search, one row per point.

Array convention: a record's ``test["scoring"]`` holds ``choices, scores, sizes: (n_test_questions,)``, one subset
index, its score in [0, 1] and its tool count per test question, in the record's test-question order.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..table import RewardTable
from ..lm_policy.data import routing_measures
from .lm_runs import ROOT
from ..lm_policy.runner import ARM_LABELS, mean_score


def routing_frame(records: dict) -> pd.DataFrame:
    """Every run's test choices (candidate scoring) on its training table: ``run, benchmark, arm, role, seed``, the
    score (points), the distinct subsets it picks and the share of questions on its most-picked one, tools per
    question, and whether it routes by the chapter's rule (:func:`routes`)."""
    rows = []
    for name, (run, rec) in records.items():
        s = rec["test"]["scoring"]
        r = routing_measures(s["choices"])
        rows.append({"run": name, "benchmark": run.benchmark, "arm": ARM_LABELS[run.arm], "role": run.role, "seed": run.seed,
                     "score": mean_score(s["scores"]), "distinct subsets": r["distinct_subsets"], "top share": r["top_subset_share"],
                     "tools/q": float(np.mean(s["sizes"]))})
    return pd.DataFrame(rows)


def reference_frame(records: dict) -> pd.DataFrame:
    """Per benchmark with a record: on the records' training table and test questions, the untrained rows (No-Tool,
    All-Tools, the best fixed subset chosen on the training and dev questions, Oracle) and the full-information
    reference selector (:mod:`fgpo_lib.algos.reference`: one ridge regression per subset's Eq. 1 reward on the hashed
    n-grams of the same question text, fitted on the same training questions), each with its score (points), tools
    per question and distinct subsets."""
    from ..algos.reference import fit_reference
    from ..features import make_featurizer
    from ..rewards import RewardSpec

    rows, seen = [], set()
    for name, (run, rec) in records.items():
        if run.benchmark in seen:
            continue
        seen.add(run.benchmark)
        table = RewardTable.load(ROOT / run.table)
        row_of = {q: i for i, q in enumerate(table.question_ids)}
        tr = np.array([row_of[q] for q in rec["splits"]["train"]])
        dev = np.array([row_of[q] for q in rec["splits"]["dev"]])
        te = np.array([row_of[q] for q in rec["splits"]["test"]])
        r = table.rewards.astype(np.float64)
        best = int(r[np.concatenate([tr, dev])].mean(0).argmax())
        x = make_featurizer("text")(table.questions)
        coef, _ = fit_reference(x[tr], RewardSpec.parse("eq1").apply(table.rewards, table.space)[tr], (0.01, 0.1, 1.0, 10.0, 100.0))
        ref = (x[te] @ coef.T).argmax(1)
        space = table.space
        for what, cols in (("No-Tool", np.full(len(te), space.index_of([]))), ("All-Tools", np.full(len(te), space.index_of(list(space.tool_names)))),
                           ("best fixed (train + dev)", np.full(len(te), best)), ("Reference (ridge, question text)", ref), ("Oracle", r[te].argmax(1))):
            m = routing_measures(cols)
            rows.append({"benchmark": run.benchmark, "policy": what, "score": 100 * float(r[te, cols].mean()), "tools/q": float(space.sizes[cols].mean()),
                         "distinct subsets": m["distinct_subsets"], "top share": m["top_subset_share"]})
    return pd.DataFrame(rows)


#: the chapter's rule for "routes", on a run's test questions: at least this many distinct subsets, none on more than
#: this share of them (and, checked where the table is at hand, a score above the best fixed subset chosen on the
#: run's own training and dev questions)
ROUTES_MIN_DISTINCT, ROUTES_MAX_SHARE = 3, 0.9


def best_fixed_score(run, rec) -> float:
    """The test score (points) of the best fixed subset chosen on the run's own training and dev questions."""
    table = RewardTable.load(ROOT / run.table)
    row_of = {q: i for i, q in enumerate(table.question_ids)}
    fit = np.array([row_of[q] for q in rec["splits"]["train"] + rec["splits"]["dev"]])
    te = np.array([row_of[q] for q in rec["splits"]["test"]])
    best = int(table.rewards[fit].mean(0).argmax())
    return 100 * float(table.rewards[te, best].mean())


def routes(run, rec, scoring: dict | None = None) -> bool:
    """The chapter's rule (:data:`ROUTES_MIN_DISTINCT`, :data:`ROUTES_MAX_SHARE`): on its training table's test
    questions, the run picks at least 3 distinct subsets, none on more than 90% of them, and scores above the best
    fixed subset chosen on its own training and dev questions. ``scoring``: another checkpoint's test choices and
    scores of the same run (default: the selected checkpoint's, ``rec["test"]["scoring"]``)."""
    s = scoring if scoring is not None else rec["test"]["scoring"]
    m = routing_measures(s["choices"])
    return m["distinct_subsets"] >= ROUTES_MIN_DISTINCT and m["top_subset_share"] <= ROUTES_MAX_SHARE and mean_score(s["scores"]) > best_fixed_score(run, rec)


def routes_by_benchmark(records: dict, role: str = "main", arm: str = "fgpo") -> dict[str, list[tuple[int, bool]]]:
    """Per benchmark (in name order), ``(seed, routes)`` for each of ``arm``'s runs of registry ``role`` (default:
    FGPO's main runs), :func:`routes` deciding; ``{}`` when no such run has a record."""
    by: dict[str, list[tuple[int, bool]]] = {}
    for run, rec in records.values():
        if run.role == role and run.arm == arm:
            by.setdefault(run.benchmark, []).append((run.seed, routes(run, rec)))
    return dict(sorted(by.items()))


def routes_summary(records: dict, role: str = "main", arm: str = "fgpo") -> str:
    """:func:`routes_by_benchmark` counted: ``"3 of 3 seeds on geneseq; 1 of 3 seeds on geneturing"`` (``"tie-break"``
    for the tie-break point), or ``""`` when no such run has a record."""
    return "; ".join(f"{sum(ok for _, ok in v)} of {len(v)} seeds on {b}" for b, v in routes_by_benchmark(records, role, arm).items())


def confirmation_verdict(records: dict) -> str:
    """The confirmation's claim, registered before its seeds ran (every seed of
    :data:`~fgpo_lib.study.lm_runs.CONFIRMATION_REGISTERED` routes under the tie break, :func:`routes`), judged on the
    records so far: ``"fails: seed 3 does not route (1 of 3 seeds recorded)"`` once one recorded seed does not,
    ``"holds: all 3 seeds route"`` once every seed has a record and routes, else ``"pending: ..."``."""
    from .lm_runs import CONFIRMATION_REGISTERED as CONFIRMATION_SEEDS

    done = dict(pair for v in routes_by_benchmark(records, role="confirmation").values() for pair in v)
    failed = sorted(s for s, ok in done.items() if not ok)
    recorded = f"{len(done)} of {len(CONFIRMATION_SEEDS)} seeds recorded"
    if failed:
        return f"fails: {', '.join(f'seed {s}' for s in failed)} {'does' if len(failed) == 1 else 'do'} not route ({recorded})"
    if len(done) == len(CONFIRMATION_SEEDS):
        return f"holds: all {len(done)} seeds route"
    return f"pending: {recorded}" + (", every one routes" if done else "")


def _last_tie_columns(run, rec) -> dict:
    """The last tied checkpoint's test columns of :func:`dev_ties_frame` (NaN where the record has none)."""
    tie = rec.get("test_last_tie")
    if tie is None:
        return {"test subsets (last tied)": np.nan, "test score (last tied)": np.nan, "routes (last tied)": np.nan}
    return {"test subsets (last tied)": routing_measures(tie["scoring"]["choices"])["distinct_subsets"], "test score (last tied)": mean_score(tie["scoring"]["scores"]),
            "routes (last tied)": routes(run, rec, tie["scoring"])}


def dev_ties_frame(records: dict, arm: str = "fgpo") -> pd.DataFrame:
    """Dev selection and its ties, one row per main run of ``arm`` whose curve records dev routing: the selected
    update (the first trained point with the best dev score, :mod:`~fgpo_lib.lm_policy.dev`), its dev score (points)
    and distinct dev subsets; how many trained points tie that score, the last of them and its distinct dev subsets;
    the test's distinct subsets and score (points) and whether the run routes (:func:`routes`); and the last tied
    checkpoint's distinct test subsets, score (points) and whether it routes where the record has them
    (``test_last_tie``, recorded since the diagnostic existed; NaN before, and where no later point tied)."""
    rows = []
    for name, (run, rec) in records.items():
        curve = [p for p in rec["curve"] if p["step"] > 0 and "dev_distinct_subsets" in p]
        if run.role != "main" or run.arm != arm or not curve:
            continue
        chosen = next(p for p in curve if p["step"] == rec["selected_step"])
        ties = [p for p in curve if p["dev_score"] == chosen["dev_score"]]
        rows.append({"benchmark": run.benchmark, "seed": run.seed, "selected update": chosen["step"], "dev score": 100 * chosen["dev_score"],
                     "dev subsets (selected)": chosen["dev_distinct_subsets"], "tied points": len(ties), "last tied update": ties[-1]["step"],
                     "dev subsets (last tied)": ties[-1]["dev_distinct_subsets"],
                     "test subsets (selected)": routing_measures(rec["test"]["scoring"]["choices"])["distinct_subsets"],
                     "test score (selected)": mean_score(rec["test"]["scoring"]["scores"]), "routes": routes(run, rec), **_last_tie_columns(run, rec)})
    return pd.DataFrame(rows).sort_values(["benchmark", "seed"], ignore_index=True) if rows else pd.DataFrame(rows)


def _dev_scores(rec: dict) -> list[tuple]:
    """A record's dev curve as ``(step, dev score)`` pairs: what two runs of the same training share."""
    return [(p["step"], p["dev_score"]) for p in rec["curve"]]


def tie_break_frame(records: dict) -> pd.DataFrame:
    """The tie-break point (:data:`~fgpo_lib.study.lm_runs.TIE_BREAK_POINT`, roles ``tie-break`` and
    ``confirmation``) under both rules, one row per run: ``role, benchmark, seed``; whether its dev curve agrees at
    every point with the main FGPO run of the same benchmark and seed, whose training it repeats (NaN without one);
    and under each rule (``first``: the main run's selection, else the record's ``test_first_rule``; ``expected``:
    the point's own) the selected update, the distinct test subsets, the test score (points) and whether it routes
    (:func:`routes`). A run with neither source of the first rule's selection is left out."""
    from .lm_runs import RECIPE, TIE_BREAK_POINT

    mains = {(run.benchmark, run.seed): (run, rec) for run, rec in records.values() if run.role == "main" and run.arm == "fgpo" and run.settings == RECIPE}
    rows = []
    for run, rec in records.values():
        if run.arm != "fgpo" or run.settings != TIE_BREAK_POINT:
            continue
        main = mains.get((run.benchmark, run.seed))
        own = rec.get("test_first_rule")
        if main is None and own is None:
            continue
        row = {"role": run.role, "benchmark": run.benchmark, "seed": run.seed, "same dev curve": _dev_scores(main[1]) == _dev_scores(rec) if main else np.nan}
        first = main[1] if main else {"selected_step": own["step"], "test": {"scoring": own["scoring"]}}
        for rule, rc in (("first", first), ("expected", rec)):
            scoring = rc["test"]["scoring"]
            row |= {f"selected update ({rule})": rc["selected_step"], f"test subsets ({rule})": routing_measures(scoring["choices"])["distinct_subsets"],
                    f"test score ({rule})": mean_score(scoring["scores"]), f"routes ({rule})": routes(run, rec, scoring)}
        rows.append(row)
    return pd.DataFrame(rows).sort_values(["role", "benchmark", "seed"], ascending=[False, True, True], ignore_index=True) if rows else pd.DataFrame(rows)


def search_frame(records: dict, stopped_dir: Path | None = None) -> pd.DataFrame:
    """The routing search, one row per point (the ``search`` runs and the points stopped by hand): its recipe (the
    settings that differ from the earlier runs'), its dev curve summarised (the best dev score and the selected
    update, for a stopped point the first reaching it; the most distinct dev argmax subsets at any point and the
    share of the top one then, q's entropy and top mass at the last point) and, for a finished run, its test score,
    distinct test subsets and whether it routes."""
    from .lm_runs import STOPPED_DIR

    def summary(curve: list[dict]) -> dict:
        trained = [p for p in curve if p["step"] > 0] or curve
        best = max(trained, key=lambda p: p["dev_score"])
        widest = max(curve, key=lambda p: (p.get("dev_distinct_subsets", 0), -p.get("dev_top_share", 1)))
        last = curve[-1]
        return {"updates": last["step"], "best dev": 100 * best["dev_score"], "at update": best["step"], "most distinct (dev)": widest.get("dev_distinct_subsets"),
                "its top share": widest.get("dev_top_share"), "q entropy (last)": last["q_entropy"], "q top mass (last)": last["q_top_mass"]}

    rows = []
    for name, (run, rec) in records.items():
        if not run.searched:
            continue
        rows.append({"point": name, "arm": ARM_LABELS[run.arm], "status": "finished", **summary(rec["curve"]), "at update": rec["selected_step"],
                     "test": mean_score(rec["test"]["scoring"]["scores"]), "distinct (test)": len(set(rec["test"]["scoring"]["choices"])), "routes": routes(run, rec)})
    folder = Path(stopped_dir) if stopped_dir is not None else STOPPED_DIR
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        held = json.loads(path.read_text())
        rows.append({"point": held["run"], "arm": ARM_LABELS[held["identity"]["arm"]], "status": f"stopped at update {held['stopped_at_step']}",
                     **summary(held["curve"]), "test": float("nan"), "distinct (test)": float("nan"), "routes": False})
    return pd.DataFrame(rows)
