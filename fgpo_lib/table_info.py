"""Summary statistics of a reward table (what ``fgpo table-info`` prints).

Input convention: ``table.rewards: (n_questions, n_subsets)``, canonical subset order; ``table.seconds`` the same
shape (wall seconds per cell, NaN where unknown) when the table keeps its cost.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .metrics import constant_reward
from .table import RewardTable, extra_scores


def table_info(table: RewardTable) -> dict:
    """Mean reward, share of constant-reward questions, best single subset, oracle-best mean, mean reward by size."""
    r = table.rewards.astype(np.float64)
    by_subset = r.mean(axis=0)
    best = int(np.argmax(by_subset))
    sizes = table.space.sizes
    return {
        "questions": table.n_questions,
        "subsets": table.n_subsets,
        "mean_reward": float(r.mean()),
        "constant_share": float(constant_reward(r).mean()),
        "best_subset": table.space.label(best) or "(no tool)",
        "best_subset_mean": float(by_subset[best]),
        "oracle_best_mean": float(r.max(axis=1).mean()),
        "mean_by_size": {int(k): float(r[:, sizes == k].mean()) for k in np.unique(sizes)},
        **cost_info(table),
        **extras_info(table),
    }


def extras_info(table: RewardTable) -> dict:
    """The table's extra cells (:mod:`fgpo_lib.table`): ``all_tools_mean``, the mean score of the All-Tools cell, and
    ``selection_calls`` / ``selection_unparseable`` / ``selection_mean``, the selection calls, how many named no tool
    of the library (scored 0, as the "Tools w/ Desc" arm scores them) and their picks' mean score; empty without
    extras."""
    out = {}
    if (cell := table.extras.get("all_tools")) is not None:
        out["all_tools_mean"] = float(extra_scores(cell).mean())
    if (sel := table.extras.get("selection")) is not None:
        out["selection_calls"] = len(sel["subsets"])
        out["selection_unparseable"] = sum(s is None for s in sel["subsets"])
        out["selection_mean"] = float(extra_scores(sel).mean())
    return out


def unparseable_selections(info: dict) -> str:
    """``"u of n"`` unparseable selection calls from :func:`table_info` or :func:`extras_info`; ``""`` without them."""
    return f"{info['selection_unparseable']} of {info['selection_calls']}" if "selection_calls" in info else ""


def cost_info(table: RewardTable) -> dict:
    """What the table's timed cells cost: ``timed_cells``, their wall ``seconds``, ``cells_per_second``, a question's
    cost at that rate (``seconds_per_question``) and the whole table's (``estimated_seconds``); empty if the table
    keeps no times."""
    if table.seconds is None or not np.isfinite(table.seconds).any():
        return {}
    known = np.isfinite(table.seconds)
    secs = float(table.seconds[known].sum())
    rate = int(known.sum()) / secs if secs > 0 else float("inf")
    return {"timed_cells": int(known.sum()), "cells": int(table.seconds.size), "seconds": secs, "cells_per_second": rate,
            "seconds_per_question": table.n_subsets / rate, "estimated_seconds": table.seconds.size / rate}


def format_table_info(info: dict) -> str:
    lines = [
        f"questions x subsets: {info['questions']} x {info['subsets']}",
        f"mean reward: {info['mean_reward']:.4f}",
        f"questions with constant reward over all subsets: {100 * info['constant_share']:.1f}%",
        f"best single subset: {info['best_subset']} (mean {info['best_subset_mean']:.4f})",
        f"oracle-best mean (best subset per question): {info['oracle_best_mean']:.4f}",
        "mean reward by subset size: " + ", ".join(f"{k}: {v:.4f}" for k, v in info["mean_by_size"].items()),
    ]
    if "timed_cells" in info:
        lines.append(
            f"cost: {info['timed_cells']:,} of {info['cells']:,} cells timed, {info['seconds']:,.0f} s of wall time "
            f"({info['cells_per_second']:.2f} cells/s, {info['seconds_per_question']:.1f} s per question); "
            f"the whole table at that rate: {info['estimated_seconds'] / 3600:.2f} h"
        )
    else:
        lines.append("cost: not recorded (the table keeps no cell times)")
    if "all_tools_mean" in info:
        lines.append(f"All-Tools cell (every tool in one call): mean {info['all_tools_mean']:.4f}")
    if "selection_calls" in info:
        lines.append(f"selection calls: {info['selection_calls']:,}, {info['selection_unparseable']:,} unparseable; "
                     f"mean of their picks {info['selection_mean']:.4f} (unparseable scored 0)")
    return "\n".join(lines)


def summary_frame(tables: dict[str, RewardTable]) -> pd.DataFrame:
    """One row per named table: its size, whether it is complete, its cost (timed cells, wall hours, cells per
    second, seconds per question), its signal (constant share, best fixed subset, oracle headroom over it) and its
    unparseable selection calls (blank without them)."""
    rows = []
    for name, table in tables.items():
        info = table_info(table)
        rate = info.get("cells_per_second")
        rows.append({
            "table": name,
            "questions": f"{table.n_questions} of {table.provenance.get('sample_size', table.n_questions)}",
            "subsets": table.n_subsets,
            "timed cells": info.get("timed_cells", 0),
            "wall h (timed)": round(info["seconds"] / 3600, 2) if rate else None,
            "cells/s": round(rate, 2) if rate else None,
            "s/question": round(info["seconds_per_question"], 1) if rate else None,
            "constant share": f"{100 * info['constant_share']:.1f}%",
            "best fixed subset": f"{info['best_subset']} ({info['best_subset_mean']:.3f})",
            "oracle": round(info["oracle_best_mean"], 3),
            "headroom": round(info["oracle_best_mean"] - info["best_subset_mean"], 3),
            "selection unparseable": unparseable_selections(info),
        })
    return pd.DataFrame(rows)
