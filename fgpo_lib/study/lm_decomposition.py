"""What the exact estimator is worth on the language-model policy: the chapter's decomposition, from the committed
records (it never trains).

Three arms differ one step at a time:

* **FGPO - Sampled**: the same policy, recipe, warm start, data order and dev rule; only the reward term's gradient
  differs (exact, or G draws with GRPO's advantage: :mod:`fgpo_lib.lm_policy.sampled_arm`). The estimator alone.
* **Sampled - GRPO (TRL)**: what TRL's GRPO changes beside the estimator: it writes its answer at temperature 1,
  takes TRL's loss and its own reward, starts from a longer warm start and selects on free generation.
* **each arm - best fixed**: does it learn at all? The best fixed subset is chosen on the runs' training and dev
  questions (every run of a benchmark shares one split) and scored on the same test questions.

An arm is scored in its own decoding (candidate scoring for FGPO, Sampled and SFT; free generation for TRL's GRPO,
which is how it answers and how it is selected), on its training table's test questions.

Statistics (:func:`decomposition_frame`, :func:`seed_pair_tests`): the primary interval is the percentile bootstrap
over seeds (of each arm, independently) and questions (paired) of the per-seed-pair difference
(:func:`fgpo_lib.stats.paired_difference_ci`); beside it, per seed pair, McNemar's exact test on full-credit answers,
Holm-adjusted within its family (the seed pairs of one comparison on one benchmark), and at the seed level an exact
permutation test of the seed means. No reduction of several seeds to one answer per question is a headline test.

Array convention: ``scores: (n_seeds, n_questions)`` in [0, 1], seeds in order, questions in the records' test order.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from ..lm_policy.arms import ARM_LABELS, LM_ARMS
from ..stats import holm, mcnemar, paired_difference_ci
from ..table import RewardTable
from .lm_runs import ROOT

#: the decomposition's steps: (minuend arm, subtrahend arm, what differs between them)
STEPS = (("fgpo", "sampled", "the estimator alone"), ("sampled", "grpo", "free generation, TRL's loss, reward and warm start"))


def own_decoding(arm: str) -> str:
    """The decoding an arm answers and is selected in: free generation for an arm that writes its completions."""
    return "generation" if LM_ARMS[arm].samples else "scoring"


def arm_scores(main: dict, benchmark: str) -> dict[str, dict]:
    """Per arm with a main record on ``benchmark``: ``{"seeds", "runs", "scores": (n_seeds, n_q), "choices":
    (n_seeds, n_q), "question_ids"}`` in its own decoding (a format failure scores the no-tool cell, as the record
    holds it). ``main``: the main table's records (:func:`~fgpo_lib.study.lm_report.main_records`)."""
    out: dict[str, dict] = {}
    for run, rec in sorted(main.values(), key=lambda r: (r[0].arm, r[0].seed)):
        if run.benchmark != benchmark:
            continue
        block = rec["test"][own_decoding(run.arm)]
        entry = out.setdefault(run.arm, {"seeds": [], "runs": [], "scores": [], "choices": [], "question_ids": rec["test"]["question_ids"]})
        if rec["test"]["question_ids"] != entry["question_ids"]:
            raise ValueError(f"{run.name}: its test questions differ from its arm's other seeds'")
        entry["seeds"].append(run.seed)
        entry["runs"].append(run)
        entry["scores"].append(block["scores"])
        entry["choices"].append(block["choices"])
    for entry in out.values():
        entry["scores"] = np.asarray(entry["scores"], np.float64)
    return out


def best_fixed(run, rec) -> tuple[int, np.ndarray]:
    """``(subset, scores (n_test,))``: the subset with the best mean score on the run's training and dev questions,
    and its scores on the run's test questions (in the record's order)."""
    table = RewardTable.load(ROOT / run.table)
    row_of = {q: i for i, q in enumerate(table.question_ids)}
    fit = np.array([row_of[q] for q in rec["splits"]["train"] + rec["splits"]["dev"]])
    te = np.array([row_of[q] for q in rec["test"]["question_ids"]])
    best = int(table.rewards[fit].mean(0).argmax())
    return best, table.rewards[te, best].astype(np.float64)


def _benchmarks(main: dict) -> list[str]:
    return sorted({run.benchmark for run, _ in main.values()})


def _fixed(main: dict, benchmark: str) -> np.ndarray:
    run, rec = next((r, rec) for r, rec in main.values() if r.benchmark == benchmark)
    return best_fixed(run, rec)[1]


def _interval(a: np.ndarray, b: np.ndarray) -> dict:
    d, lo, hi = paired_difference_ci(a, b)
    return {"diff": 100 * d, "lo": 100 * lo, "hi": 100 * hi}


def decomposition_frame(main: dict) -> pd.DataFrame:
    """Per benchmark and step: the mean difference in points with its 95% interval (module doc), the seeds on each
    side, and what differs; the steps are :data:`STEPS`, then every arm against the best fixed subset. A step whose
    arm has no record yet is left out."""
    rows = []
    for benchmark in _benchmarks(main):
        arms = arm_scores(main, benchmark)
        fixed = _fixed(main, benchmark)[None, :]
        for a, b, what in STEPS:
            if a in arms and b in arms:
                rows.append({"benchmark": benchmark, "comparison": f"{ARM_LABELS[a]} - {ARM_LABELS[b]}", "what differs": what,
                             **_interval(arms[a]["scores"], arms[b]["scores"]), "seeds": f"{len(arms[a]['seeds'])} vs {len(arms[b]['seeds'])}"})
        for a in arms:
            rows.append({"benchmark": benchmark, "comparison": f"{ARM_LABELS[a]} - best fixed", "what differs": "does it learn at all?",
                         **_interval(arms[a]["scores"], fixed), "seeds": f"{len(arms[a]['seeds'])} vs -"})
    return pd.DataFrame(rows, columns=["benchmark", "comparison", "what differs", "diff", "lo", "hi", "seeds"])


def permutation_p(a: np.ndarray, b: np.ndarray) -> float:
    """Exact two-sided permutation test of the seed means ``a: (n_a,)`` against ``b: (n_b,)``: the share of the
    relabelings of the pooled seeds whose mean difference is at least as far from 0 as the observed one."""
    pooled = np.concatenate([a, b])
    observed = abs(a.mean() - b.mean())
    hits = total = 0
    for idx in itertools.combinations(range(len(pooled)), len(a)):
        mask = np.zeros(len(pooled), bool)
        mask[list(idx)] = True
        total += 1
        hits += abs(pooled[mask].mean() - pooled[~mask].mean()) >= observed - 1e-12
    return hits / total


def seed_pair_tests(main: dict) -> pd.DataFrame:
    """Per benchmark, decomposition step and seed pair: the difference in points, McNemar's exact p on full-credit
    answers and its Holm adjustment within the family (the seed pairs of that step on that benchmark); with the
    step's exact seed-level permutation p (:func:`permutation_p`) and the family's size."""
    rows = []
    for benchmark in _benchmarks(main):
        arms = arm_scores(main, benchmark)
        for a, b, _ in STEPS:
            if a not in arms or b not in arms:
                continue
            sa, sb = arms[a]["scores"], arms[b]["scores"]
            family = []
            for (i, seed_a), (j, seed_b) in itertools.product(enumerate(arms[a]["seeds"]), enumerate(arms[b]["seeds"])):
                test = mcnemar(sa[i] == 1, sb[j] == 1)
                family.append({"benchmark": benchmark, "comparison": f"{ARM_LABELS[a]} - {ARM_LABELS[b]}", "seed pair": f"{seed_a} vs {seed_b}",
                               "diff": 100 * float(sa[i].mean() - sb[j].mean()), "McNemar p": test["p"]})
            adjusted = holm([f["McNemar p"] for f in family])
            seed_p = permutation_p(sa.mean(1), sb.mean(1))
            for f, p in zip(family, adjusted):
                rows.append({**f, "Holm p (family: its seed pairs)": float(p), "pairs in family": len(family), "seed-level permutation p": seed_p})
    return pd.DataFrame(rows)


#: a setting as a run's label writes it
SETTING_NAMES = {"entropy_coef": "β", "group_size": "G", "scale_rewards": "advantage scaling", "loss_type": "loss", "epsilon_high": "clip-higher ε"}


def _number(v) -> str:
    """``3e-4`` for a small rate, ``0.3`` otherwise; text as it is."""
    if isinstance(v, float):
        return f"{v:.0e}".replace("e-0", "e-") if 0 < abs(v) < 0.01 else f"{v:g}"
    return str(v)


def run_label(run) -> str:
    """A run as a table names it: what differs from its arm's defaults, then its seed (``"β 0.3, lr 3e-4, seed 1"``);
    settings shared by every point of a search (its schedule) are left out."""
    from .lm_runs import SEARCH_BASE

    shared = {k: v for k, v in SEARCH_BASE.items() if k not in ("lr",)}
    parts = [f"{SETTING_NAMES.get(k, k)} {_number(v)}" for k, v in sorted(run.settings.items())
             if shared.get(k) != v and k not in LM_ARMS[run.arm].run_settings]
    if run.format_warmup != LM_ARMS[run.arm].warmup:
        parts.append(f"{run.format_warmup:g}-pass warm start")
    if run.init_from is not None:
        parts.append(f"from {ARM_LABELS[run.init_from.arm]}'s adapter")
    return ", ".join([*parts, f"seed {run.seed}"])


def label_runs(df: pd.DataFrame, runs: dict, columns: tuple[str, ...] = ("run", "point")) -> pd.DataFrame:
    """``df`` with every run's record name in ``columns`` replaced by :func:`run_label`, prefixed by the run's
    benchmark and arm where ``df`` has no column for them; other values are kept. ``runs``: ``{record name: LMRun}``."""
    def label(value):
        run = runs.get(value)
        if run is None:
            return value
        prefix = [text for text, column in ((benchmark_title(run.benchmark), "benchmark"), (ARM_LABELS[run.arm], "arm")) if column not in df]
        return f"{', '.join(prefix)}: {run_label(run)}" if prefix else run_label(run)

    return df.assign(**{c: df[c].map(label) for c in columns if c in df})


def seed_frame(main: dict) -> pd.DataFrame:
    """Per benchmark, arm and seed: the run (:func:`run_label`), its test score (points, own decoding), the distinct
    subsets it picks and the share of its most-picked one, and its score minus the best fixed subset's with the 95%
    bootstrap interval over questions."""
    from ..lm_policy.data import routing_measures

    rows = []
    for benchmark in _benchmarks(main):
        fixed = _fixed(main, benchmark)
        for arm, entry in arm_scores(main, benchmark).items():
            for run, scores, choices in zip(entry["runs"], entry["scores"], entry["choices"]):
                m = routing_measures(choices)
                iv = _interval(scores[None, :], fixed[None, :])
                rows.append({"benchmark": benchmark, "arm": ARM_LABELS[arm], "run": run_label(run), "decoding": own_decoding(arm), "score": 100 * float(scores.mean()),
                             "distinct subsets": m["distinct_subsets"], "top share": m["top_subset_share"],
                             "- best fixed": iv["diff"], "lo": iv["lo"], "hi": iv["hi"]})
    return pd.DataFrame(rows)


def benchmark_title(name: str) -> str:
    """A benchmark's title in the chapter's sentences: the registry's, without its parenthesis ("GeneRegion")."""
    from ..genomics.benchmarks import BENCHMARKS

    return BENCHMARKS[name].title.split(" (")[0] if name in BENCHMARKS else name


def _span(row) -> str:
    return f"{row['diff']:+.1f} [{row['lo']:+.1f}, {row['hi']:+.1f}]"


def estimator_keys() -> set[str]:
    """The sampled arm's settings that FGPO's arm has not (its estimator's: G, the advantage's scaling)."""
    from dataclasses import fields

    from ..lm_policy.fgpo_arm import LMFGPOConfig
    from ..lm_policy.sampled_arm import LMSampledConfig

    return {f.name for f in fields(LMSampledConfig)} - {f.name for f in fields(LMFGPOConfig)}


def same_point_frame(records: dict) -> pd.DataFrame:
    """Every sampled run that has an FGPO twin, a run of any role with the same benchmark, seed, warm start and
    settings but for the estimator's (:func:`estimator_keys`): the estimator alone at one point and one seed, before
    the main seeds. Per pair: the sampled run (:func:`run_label`), both arms' best dev and test scores (points,
    candidate scoring), and FGPO - Sampled with its 95% bootstrap interval over questions and McNemar's exact p on
    full-credit answers. ``records``: ``{name: (run, record)}`` (:func:`~fgpo_lib.study.lm_report.load_records`)."""
    from .lm_runs import best_dev_score

    own = estimator_keys()
    fgpo = {(r.benchmark, r.seed, r.format_warmup, tuple(sorted(r.settings.items()))): (r, rec)
            for r, rec in records.values() if r.arm == "fgpo" and r.init_from is None}
    rows = []
    for run, rec in sorted(records.values(), key=lambda x: x[0].name):
        if run.arm != "sampled":
            continue
        key = (run.benchmark, run.seed, run.format_warmup, tuple(sorted((k, v) for k, v in run.settings.items() if k not in own)))
        if key not in fgpo:
            continue
        twin = fgpo[key][1]
        if twin["test"]["question_ids"] != rec["test"]["question_ids"]:
            raise ValueError(f"{run.name}: its test questions differ from its FGPO twin's")
        a, b = (np.asarray(r["test"]["scoring"]["scores"], np.float64) for r in (twin, rec))
        rows.append({"benchmark": run.benchmark, "sampled run": run_label(run), "FGPO dev": 100 * best_dev_score(twin), "Sampled dev": 100 * best_dev_score(rec),
                     "FGPO": 100 * a.mean(), "Sampled": 100 * b.mean(), **_interval(a[None, :], b[None, :]), "McNemar p": mcnemar(a == 1, b == 1)["p"]})
    return pd.DataFrame(rows, columns=["benchmark", "sampled run", "FGPO dev", "Sampled dev", "FGPO", "Sampled", "diff", "lo", "hi", "McNemar p"])


def _so_far(same_point: pd.DataFrame) -> str:
    """What :func:`same_point_frame` says while the main seeds are pending, as a short clause (the page's lead has
    a word budget): the range of FGPO - Sampled and how many of its intervals exclude 0."""
    if not len(same_point):
        return ""
    n, where = len(same_point), " and ".join(map(benchmark_title, dict.fromkeys(same_point.benchmark)))
    if n == 1:
        return f"; so far, one seed at one point on {where}: {_span(same_point.iloc[0])}"
    above, below = int((same_point.lo > 0).sum()), int((same_point.hi < 0).sum())
    sides = ", ".join(f"{k} of {n} intervals {side} 0" for k, side in ((above, "above"), (below, "below")) if k)
    return f"; so far, one seed at {n} points on {where}: {same_point['diff'].min():+.1f} to {same_point['diff'].max():+.1f} points" + (f", {sides}" if sides else ", every interval across 0")


def answer_sentence(frame: pd.DataFrame, same_point: pd.DataFrame | None = None) -> str:
    """The chapter's answer in one sentence, from a :func:`decomposition_frame`: the estimator's share (FGPO -
    Sampled) per benchmark, then the rest of the gap to TRL's GRPO (Sampled - GRPO), each with its interval, or what is pending;
    while FGPO - Sampled is pending, what ``same_point`` (:func:`same_point_frame`) says so far."""
    so_far = _so_far(same_point if same_point is not None else pd.DataFrame())
    if not len(frame):
        return "pending: no main run has a record yet" + so_far
    parts = []
    for (a, b, _), lead in zip(STEPS, ("the exact estimator alone (FGPO minus the same policy trained with GRPO's sampled estimator) is worth",
                                       "the rest of the gap to TRL's GRPO (Sampled minus GRPO: free generation, its loss, reward and warm start) is")):
        rows = frame[frame.comparison == f"{ARM_LABELS[a]} - {ARM_LABELS[b]}"]
        if len(rows):
            parts.append(f"{lead} " + ", ".join(f"{_span(r)} points on {benchmark_title(r['benchmark'])}" for _, r in rows.iterrows()))
        else:
            parts.append(f"{lead} (pending: the {ARM_LABELS[a]} and {ARM_LABELS[b]} runs of one benchmark{so_far if a == 'fgpo' else ''})")
    return "; ".join(parts) + " (95% intervals over seeds and questions)"


def searches_frame(records: dict, chosen: set[str] | None = None) -> pd.DataFrame:
    """Every arm's tuning on the search's benchmark, side by side: one row per seed-0 point (the search runs, and the
    main and first-design runs that were points of a choice: GRPO's rates, SFT's first design), with the run
    (:func:`run_label`), its dev score at its warm start and its best after training began (its own decoding;
    points) and whether the best is above the warm start's (does training move it at all?), the update dev
    selection kept, its test score (own decoding), its CPU-hours (warm start and training, wall seconds x threads)
    and whether it is the arm's point in the main table (``chosen``: run names; default, those of
    :func:`~fgpo_lib.study.lm_report.main_records`, GRPO at its chosen rate)."""
    from .lm_report import main_records
    from .lm_runs import SEARCH_BENCHMARK, best_dev_score, warm_start_dev_score

    chosen = set(main_records(records)) if chosen is None else chosen

    rows = []
    for name, (run, rec) in records.items():
        if run.benchmark != SEARCH_BENCHMARK or run.seed != 0 or not (run.searched or run.role in ("main", "first-design", "warm-start")):
            continue
        warm = rec.get("format_warmup") or {}
        cpu = (warm.get("seconds", 0.0) + rec["train_seconds"]) * rec["backbone"].get("torch_threads", 1) / 3600
        is_main = name in chosen
        best, warm_dev = 100 * best_dev_score(rec), 100 * warm_start_dev_score(rec)
        rows.append({"arm": ARM_LABELS[run.arm], "run": run_label(run), "role": run.role, "warm-start dev": warm_dev, "best dev": best, "above warm start": bool(best > warm_dev), "at update": rec["selected_step"],
                     "test": 100 * float(np.mean(rec["test"][own_decoding(run.arm)]["scores"])), "CPU-hours": cpu, "main point": is_main})
    order = {label: i for i, label in enumerate(ARM_LABELS.values())}
    return pd.DataFrame(rows).sort_values(["arm", "best dev"], key=lambda c: c.map(order) if c.name == "arm" else -c, ignore_index=True) if rows else pd.DataFrame(rows)
