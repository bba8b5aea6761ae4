"""Saving one setting's runs, and the cross-setting tables of the results chapter.

Files of a setting (``results/<benchmark>__<reasoner>/``):

* ``meta.json``: benchmark, reasoner, featurizer used, table provenance and sizes, the training schedule;
* ``per_question.parquet``: one row per (method, seed, split, question): greedy reward, expected reward, greedy size;
* ``curves.parquet``: one row per (method, seed, evaluation step, split) with every metric;
* ``finals.parquet``: one row per (method, seed, split) with the final metrics and reasoner calls.

Array convention of the statistics: ``(n_seeds, n_questions)`` per method (:mod:`fgpo_lib.stats`).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from ..compare import curves_frame
from ..stats import bootstrap_ci, paired_difference_ci
from ..table import RewardTable
from ..table_info import table_info


def save_setting(runs: dict[str, list[dict]], table: RewardTable, out: Path, meta: dict) -> None:
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    pq, finals = [], []
    for method, rs in runs.items():
        for r in rs:
            seed = r["config"]["seed"]
            for split, d in r["per_question"].items():
                pq.append(pd.DataFrame({"method": method, "seed": seed, "split": split, "question_id": d["question_ids"], "greedy_reward": d["greedy_reward"], "expected_reward": d["expected_reward"], "greedy_size": d["greedy_size"]}))
                finals.append({"method": method, "seed": seed, "split": split, **r["final"][split], "reasoner_calls": r["final"]["reasoner_calls"], "unique_reasoner_calls": r["final"]["unique_reasoner_calls"], "optimizer_steps": r["final"]["optimizer_steps"]})
    pd.concat(pq, ignore_index=True).to_parquet(out / "per_question.parquet", index=False)
    pd.DataFrame(finals).to_parquet(out / "finals.parquet", index=False)
    curves = pd.concat([curves_frame(runs, "train").assign(split="train"), curves_frame(runs, "test").assign(split="test")], ignore_index=True)
    curves.to_parquet(out / "curves.parquet", index=False)
    info = table_info(table)
    info["mean_by_size"] = {str(k): v for k, v in info["mean_by_size"].items()}
    meta = {**meta, "table": info, "provenance": table.provenance, "n_train": int((table.split == "train").sum()), "n_test": int((table.split == "test").sum()), "n_subsets": table.n_subsets}
    (out / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True, default=str))


def load_study(study_dir: Path) -> dict[str, dict]:
    """``{setting: {"meta", "per_question", "curves", "finals"}}`` for every setting with results."""
    out = {}
    for d in sorted((Path(study_dir) / "results").glob("*__*")):
        if (d / "meta.json").exists():
            out[d.name] = {
                "meta": json.loads((d / "meta.json").read_text()),
                "per_question": pd.read_parquet(d / "per_question.parquet"),
                "curves": pd.read_parquet(d / "curves.parquet"),
                "finals": pd.read_parquet(d / "finals.parquet"),
            }
    return out


def scores(per_question: pd.DataFrame, method: str, split: str = "test", key: str = "greedy_reward") -> np.ndarray:
    """``(n_seeds, n_questions)`` of ``key`` for ``method``, questions in a fixed order."""
    d = per_question[(per_question.method == method) & (per_question.split == split)]
    return d.pivot(index="seed", columns="question_id", values=key).sort_index(axis=1).to_numpy()


def main_table(study: dict[str, dict]) -> pd.DataFrame:
    """One row per setting: FGPO and GRPO test accuracy with 95% CIs, their paired difference, the baselines."""
    rows = []
    for name, s in study.items():
        pq = s["per_question"]
        fg, gr = scores(pq, "fgpo"), scores(pq, "grpo")
        f, flo, fhi = bootstrap_ci(fg)
        g, glo, ghi = bootstrap_ci(gr)
        d, dlo, dhi = paired_difference_ci(fg, gr)
        rows.append(
            {
                "benchmark": s["meta"]["benchmark"],
                "reasoner": s["meta"]["reasoner"],
                "test questions": fg.shape[1],
                "FGPO": 100 * f, "FGPO lo": 100 * flo, "FGPO hi": 100 * fhi,
                "GRPO": 100 * g, "GRPO lo": 100 * glo, "GRPO hi": 100 * ghi,
                "FGPO-GRPO": 100 * d, "diff lo": 100 * dlo, "diff hi": 100 * dhi,
                "uniform (expected)": 100 * scores(pq, "uniform", key="expected_reward").mean(),
                "oracle-best": 100 * scores(pq, "oracle-best").mean(),
            }
        )
    return pd.DataFrame(rows)


def finals_by_method(study: dict[str, dict], split: str = "test") -> pd.DataFrame:
    """Final metrics averaged over seeds: one row per (setting, method)."""
    frames = []
    for name, s in study.items():
        f = s["finals"][s["finals"].split == split].groupby("method").mean(numeric_only=True).reset_index()
        frames.append(f.assign(setting=name, benchmark=s["meta"]["benchmark"], reasoner=s["meta"]["reasoner"]))
    return pd.concat(frames, ignore_index=True)


def evaluations_table(study: dict[str, dict]) -> pd.DataFrame:
    """FGPO's table cells against GRPO's on-demand calls (total and unique), per setting, and their ratios."""
    rows = []
    for name, s in study.items():
        f = s["finals"][s["finals"].split == "train"].groupby("method")[["reasoner_calls", "unique_reasoner_calls"]].mean()
        fg, gr = f.loc["fgpo"], f.loc["grpo"]
        rows.append({"setting": name, "FGPO cells": fg.reasoner_calls, "GRPO calls": gr.reasoner_calls, "GRPO unique": gr.unique_reasoner_calls, "calls / cells": gr.reasoner_calls / fg.reasoner_calls, "unique / cells": gr.unique_reasoner_calls / fg.reasoner_calls})
    return pd.DataFrame(rows)
