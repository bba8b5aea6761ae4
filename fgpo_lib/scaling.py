"""The scaling chapter: every estimator on libraries of 8 to 20 tools, accuracy against the reasoner calls it pays for.

* :data:`ESTIMATORS` is the estimator registry (name -> :class:`~fgpo_lib.train.TrainConfig` settings): full FGPO,
  the k-subset dial, sum-and-sample, the unordered-set estimator, coverage-preserving candidate sets, GRPO, and the
  peers' fixes for dead groups (RLOO, Dr. GRPO, DAPO dynamic sampling, GRESO-style skipping, a replay buffer, an
  entropy bonus). ``benchmarks/bench_scaling.py`` times the same registry.
* :func:`scaling_tables` builds one reward table over the 20-tool library with the precompute engine (cached cells)
  and cuts the 8-, 12- and 16-tool tables out of it: a subset's cell is the same in every library that holds its tools.
* :func:`run_scaling` trains every estimator on every library over seeds, and returns one row per evaluation point.

How it departs from the textbook: the cost of a method is counted in **distinct reasoner calls**, the cells it read at
least once, since a cached cell is never paid for twice (the engine's cache); full FGPO pays for every cell of its
training questions up front. Accuracy is the greedy subset's raw score on the table's test questions. Every method
gets the same number of updates of the same batches, so the budget axis comes from the method, not from the schedule.

Array convention: ``rewards: (n_questions, n_subsets)``; the frame of :func:`run_scaling` is long, one row per
(library size, estimator, seed, evaluation step).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .genomics.libraries import LARGE_LIBRARIES, sub_table
from .table import RewardTable
from .scaling_estimators import ESTIMATORS, REFERENCE, SAMPLING_ESTIMATORS  # noqa: F401  (part of this module's interface)
from .train_config import TrainConfig

def scaling_tables(benchmark: str, reasoner: str, questions: int | None, cache: str | Path, sizes=(8, 12, 16, 20), progress: bool = False) -> dict[int, RewardTable]:
    """``{n_tools: RewardTable}`` for the libraries of :data:`~fgpo_lib.genomics.libraries.LARGE_LIBRARIES`: the
    largest built by the precompute engine (a task-stratified sample of ``questions``; ``None`` for all), the others
    its exact sub-tables."""
    from .precompute import PrecomputeEngine, PrecomputeSpec

    largest = max(sizes)
    engine = PrecomputeEngine(PrecomputeSpec(benchmark, reasoner, questions=questions, tools=LARGE_LIBRARIES[largest]), cache=cache)
    engine.run(progress=progress)
    full = engine.build_table()
    return {n: full if n == largest else sub_table(full, LARGE_LIBRARIES[n]) for n in sizes}


def run_scaling(tables: dict[int, RewardTable], estimators=None, seeds=(0, 1), steps: int = 60, batch: int = 16, eval_every: int = 10, lr: float = 0.05, reward: str = "eq1", progress: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every estimator of ``estimators`` (default: all of :data:`ESTIMATORS`) on every table, ``steps`` updates of
    ``batch`` questions, G = 8, trained on ``reward``. Returns two long frames:

    * ``curves``, one row per evaluation point: ``tools`` (library size), ``subsets``, ``estimator``, ``seed``,
      ``step``, ``calls`` and ``distinct calls`` (cells read), ``test score`` (points, greedy), ``dead groups`` (share
      of the training groups since the last point whose rewards were all equal; sampled estimators only);
    * ``finals``, one row per test question of each run: ``tools``, ``estimator``, ``seed``, ``question_id``,
      ``score`` (0-1, the final greedy subset's raw score), for paired intervals.
    """
    from tqdm import tqdm

    names = list(ESTIMATORS) if estimators is None else list(estimators)
    curves, finals = [], []
    with tqdm(total=len(tables) * len(names) * len(seeds), desc="scaling", unit="run", disable=not progress) as bar:
        for n_tools, table in tables.items():
            for name in names:
                for seed in seeds:
                    from .train import train

                    c, f = run_rows(n_tools, name, seed, train(table, scaling_config(name, seed, steps, batch, eval_every, lr, reward)))
                    curves += c
                    finals.append(f)
                    bar.update()
    return pd.DataFrame(curves), pd.concat(finals, ignore_index=True)


def scaling_config(name: str, seed: int, steps: int, batch: int, eval_every: int, lr: float, reward: str) -> TrainConfig:
    """The :class:`~fgpo_lib.train.TrainConfig` of estimator ``name`` in a scaling run: the text featurizer, G = 8."""
    return TrainConfig(steps=steps, batch_questions=batch, eval_every=eval_every, lr=lr, seed=seed, featurizer="text", group_size=8, reward=reward, **ESTIMATORS[name])


def run_rows(n_tools: int, name: str, seed: int, rec: dict) -> tuple[list[dict], pd.DataFrame]:
    """One run record as the rows of :func:`run_scaling`'s two frames (its docstring has the columns)."""
    curves = [{"tools": n_tools, "subsets": rec["table"]["n_subsets"], "estimator": name, "seed": seed, "step": p["step"],
               "calls": p["reasoner_calls"], "distinct calls": p["unique_reasoner_calls"],
               "test score": 100 * p["test"]["greedy_reward"], "dead groups": p.get("group_zero_variance")} for p in rec["curves"]]
    pq = rec["per_question"]["test"]
    return curves, pd.DataFrame({"tools": n_tools, "estimator": name, "seed": seed, "question_id": pq["question_ids"], "score": pq["greedy_reward"]})


def pareto_front(points: pd.DataFrame, cost: str = "distinct calls", value: str = "test score") -> pd.DataFrame:
    """The rows of ``points`` no other row beats: none with a cost at most theirs and a higher value. Sorted by cost."""
    pts = points.sort_values([cost, value], ascending=[True, False])
    keep, best = [], -np.inf
    for i, v in zip(pts.index, pts[value]):
        if v > best:
            keep.append(i)
            best = v
    return pts.loc[keep]


def final_points(df: pd.DataFrame) -> pd.DataFrame:
    """Per (tools, estimator): the last evaluation point, mean over seeds, with the seeds' spread of the score
    (``score lo``/``score hi``: min and max)."""
    last = df[df.step == df.groupby(["tools", "estimator", "seed"])["step"].transform("max")]
    g = last.groupby(["tools", "estimator"], sort=False)
    out = g[["subsets", "calls", "distinct calls", "test score"]].mean()
    out["score lo"], out["score hi"] = g["test score"].min(), g["test score"].max()
    return out.reset_index()


def paired_against(finals: pd.DataFrame, reference: str = "FGPO (all subsets)") -> pd.DataFrame:
    """Per (tools, estimator): the mean score difference to ``reference`` in points, paired by question (seeds
    averaged), with its 95% bootstrap interval (:func:`fgpo_lib.stats.paired_difference_ci`)."""
    from .stats import paired_difference_ci

    rows = []
    for (n_tools, name), df in finals.groupby(["tools", "estimator"], sort=False):
        ref = finals[(finals.tools == n_tools) & (finals.estimator == reference)]
        if name == reference or not len(ref):
            continue
        a = df.pivot(index="seed", columns="question_id", values="score")
        b = ref.pivot(index="seed", columns="question_id", values="score")[a.columns].mean(0).to_numpy()[None, :]
        d, lo, hi = paired_difference_ci(a.to_numpy(), np.repeat(b, len(a), axis=0))
        rows.append({"tools": n_tools, "estimator": name, f"vs {reference}": 100 * d, "lo": 100 * lo, "hi": 100 * hi})
    return pd.DataFrame(rows)


MARGIN = 2.0  # points: an estimator whose mean paired difference to full FGPO is at least -MARGIN matches it


def answer(curves: pd.DataFrame, finals: pd.DataFrame, reference: str = REFERENCE) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The chapter's answer from runs of several settings (a ``setting`` column). Returns

    * ``summary`` per (tools, estimator): mean paired difference to ``reference`` (points), the lowest CI bound over
      settings, in how many settings it **matches** the reference (its mean paired difference is at least
      ``-MARGIN`` points; a test split of a few dozen questions is too small for an interval to decide it), in how
      many its 95% interval lies wholly below zero, and its distinct calls as a share of the reference's (mean over
      settings);
    * ``win`` per library size: the cheapest estimator that matches the reference in every setting.
    """
    settings = list(dict.fromkeys(curves.setting))
    fp = pd.concat([final_points(curves[curves.setting == s]).assign(setting=s) for s in settings], ignore_index=True)
    pa = pd.concat([paired_against(finals[finals.setting == s], reference).assign(setting=s) for s in settings], ignore_index=True)
    calls = fp.set_index(["setting", "tools", "estimator"])["distinct calls"]
    pa["calls vs full FGPO"] = [calls[(s, n, e)] / calls[(s, n, reference)] for s, n, e in zip(pa.setting, pa.tools, pa.estimator)]
    pa["matches"] = pa[f"vs {reference}"] >= -MARGIN
    pa["worse"] = pa["hi"] < 0
    summary = (pa.groupby(["tools", "estimator"], sort=False)
               .agg(**{"mean vs full FGPO": (f"vs {reference}", "mean"), "worst lo": ("lo", "min"), "settings matched": ("matches", "sum"),
                       "settings worse (CI)": ("worse", "sum"), "calls vs full FGPO": ("calls vs full FGPO", "mean")})
               .reset_index())
    summary["settings"] = len(settings)
    win = []
    for n, d in summary.groupby("tools"):
        ok = d[d["settings matched"] == len(settings)].sort_values("calls vs full FGPO")
        best = ok.iloc[0] if len(ok) else None
        win.append({"tools": int(n), "cheapest that matches everywhere": best.estimator if best is not None else "none",
                    "its calls vs full FGPO": float(best["calls vs full FGPO"]) if best is not None else np.nan,
                    "its mean difference (points)": float(best["mean vs full FGPO"]) if best is not None else np.nan})
    return summary, pd.DataFrame(win)


def recommend(n_tools: int, runs_dir: Path | None = None) -> str | None:
    """What the committed scaling runs recommend for a library of ``n_tools`` (read at the nearest measured size at
    or below it, else the smallest): the cheapest estimator that matched full FGPO in every setting; ``None`` when no
    runs are committed."""
    try:
        curves, finals, _ = load_runs(runs_dir or RUNS_DIR)
    except FileNotFoundError:
        return None
    _, win = answer(curves, finals)
    sizes = sorted(win.tools)
    at = max([s for s in sizes if s <= n_tools], default=sizes[0])
    r = win.set_index("tools").loc[at]
    if r["cheapest that matches everywhere"] == "none":
        return f"no partial estimator matched full FGPO in every setting at {at} tools (scaling chapter)"
    return f"{r['cheapest that matches everywhere']}: it matched full FGPO in every setting at {at} tools with {100 * r['its calls vs full FGPO']:.1f}% of its reasoner calls (scaling chapter)"


# --- committed run records ------------------------------------------------------------------------------------------
#: where ``fgpo scaling`` writes, and the book reads, the scaling runs
from .paths import SCALING_RECORDS as RUNS_DIR  # noqa: E402
SCHEDULE = dict(seeds=(0, 1, 2), steps=60, batch=16, eval_every=10, lr=0.05, reward="eq1")


def write_runs(out: Path, benchmark: str, reasoner: str, questions: int | None, tables: dict, curves: pd.DataFrame, finals: pd.DataFrame, seconds: dict) -> None:
    """``out/``: ``curves.parquet``, ``finals.parquet`` and ``provenance.json`` (each table's content hash and
    provenance, the schedule, the estimators, the code version, the measured build and training seconds)."""
    import json

    from ._version import code_version

    out.mkdir(parents=True, exist_ok=True)
    curves.to_parquet(out / "curves.parquet", index=False)
    finals.to_parquet(out / "finals.parquet", index=False)
    prov = {"benchmark": benchmark, "reasoner": reasoner, "questions": questions, "code_version": code_version(), "schedule": {k: list(v) if isinstance(v, tuple) else v for k, v in SCHEDULE.items()},
            "estimators": ESTIMATORS, "seconds": seconds,
            "tables": {str(n): {"content_hash": t.content_hash(), "n_questions": t.n_questions, "n_subsets": t.n_subsets, "tools": list(t.tool_names), "tools_version": t.provenance.get("tools_version")} for n, t in tables.items()}}
    (out / "provenance.json").write_text(json.dumps(prov, indent=1))


def load_runs(runs_dir: Path = RUNS_DIR) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Every committed scaling run under ``runs_dir``: ``(curves, finals, {name: provenance})``, with a ``setting``
    column (``<benchmark>__<reasoner>``)."""
    import json

    curves, finals, prov = [], [], {}
    for d in sorted(p for p in Path(runs_dir).iterdir() if (p / "provenance.json").exists()):
        curves.append(pd.read_parquet(d / "curves.parquet").assign(setting=d.name))
        finals.append(pd.read_parquet(d / "finals.parquet").assign(setting=d.name))
        prov[d.name] = json.loads((d / "provenance.json").read_text())
    if not prov:
        raise FileNotFoundError(f"no scaling runs under {runs_dir}; make them with fgpo scaling")
    return pd.concat(curves, ignore_index=True), pd.concat(finals, ignore_index=True), prov
