"""The cost-accuracy frontier: FGPO trained over a sweep of the parsimony weight lambda of the paper's Eq. 1, each point
its test accuracy against the tools it calls per question, beside the untrained references and the full-information
reference selector.

Eq. 1 rewards a subset ``+-1`` for a right or wrong answer plus ``lambda (1 - 2|S|/n)``: at ``lambda = 0`` only
correctness counts, and a larger ``lambda`` buys fewer tools with accuracy. Each point is one FGPO run (the same
settings but the reward); accuracy is always the table's raw score. The references, on the same test questions:
No-Tool, All-Tools (where the table holds the full subset), the best fixed subset (chosen on the training questions),
the reference selector (:mod:`fgpo_lib.algos.reference`, trained on the same questions and features) and the
per-question Oracle. ``gap recovered`` is ``(accuracy - best fixed) / (Oracle - best fixed)``: the share of what
routing could add over one fixed subset that the point gets.

Shapes: ``points`` has one row per lambda; ``references`` one row per reference.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from .table import RewardTable
from .train_config import TrainConfig

#: the default sweep of Eq. 1's lambda (the paper reports 0 and 0.1)
LAMBDAS = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0)


def reference_points(table: RewardTable, base: TrainConfig) -> pd.DataFrame:
    """``reference, accuracy, tools_per_question`` on the test questions (module doc); accuracy in [0, 1]."""
    space, train_rows, test_rows = table.space, table.split_index("train"), table.split_index("test")
    r = table.rewards.astype(np.float64)
    rows = []

    def add(name: str, cols) -> None:
        cols = np.asarray(cols)
        rows.append({"reference": name, "accuracy": float(r[test_rows, cols].mean()), "tools_per_question": float(space.sizes[cols].mean())})

    if space.has_empty:
        add("No-Tool", np.full(len(test_rows), space.index_of([])))
    if space.max_size >= space.n_tools and space.min_size == 0 or space.is_full and space.max_size >= space.n_tools:
        add("All-Tools", np.full(len(test_rows), space.index_of(list(space.tool_names))))
    add("best fixed", np.full(len(test_rows), int(r[train_rows].mean(0).argmax())))
    from .train import train

    ref = train(table, replace(base, method="reference", reward=base.reward, steps=0))
    add("Reference (ridge)", ref["per_question"]["test"]["greedy_subset"])
    add("Oracle", r[test_rows].argmax(1))
    return pd.DataFrame(rows)


def frontier(table: RewardTable, base: TrainConfig, lambdas=LAMBDAS, progress: bool = False) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """``(points, references, kept)``: one FGPO run per ``lambda`` (``base``'s settings, reward ``eq1(lambda)``),
    its test ``accuracy`` and ``tools_per_question`` and the ``gap_recovered``; the references; and per lambda
    ``(config, keep, record)`` for a :class:`~fgpo_lib.selector.Selector`."""
    from tqdm import tqdm

    if not len(table.split_index("test")) or not len(table.split_index("train")):
        raise ValueError("the frontier needs training and test questions (the table's split has none of one)")
    refs = reference_points(table, replace(base, reward="score"))
    best, oracle = (float(refs.loc[refs.reference == k, "accuracy"].iloc[0]) for k in ("best fixed", "Oracle"))
    rows, kept = [], {}
    for lam in tqdm(list(lambdas), desc="frontier", unit="lambda", disable=not progress):
        cfg = replace(base, method="fgpo", reward=f"eq1({lam:g})")
        keep: dict = {}
        from .train import train

        rec = train(table, cfg, keep=keep)
        test = rec["per_question"]["test"]
        acc = float(np.mean(test["greedy_reward"]))
        rows.append({"lambda": float(lam), "accuracy": acc, "tools_per_question": float(np.mean(test["greedy_size"])),
                     "distinct_subsets": len(set(test["greedy_subset"])), "gap_recovered": (acc - best) / (oracle - best) if oracle > best else float("nan")})
        kept[float(lam)] = (cfg, keep, rec)
    return pd.DataFrame(rows), refs, kept


def choose_point(points: pd.DataFrame, max_tools: float | None = None, target_accuracy: float | None = None) -> float:
    """The lambda to keep: the most accurate point calling at most ``max_tools`` per question, or the one calling
    the fewest tools with at least ``target_accuracy`` (in [0, 1]); a named ``ValueError`` when none qualifies."""
    if (max_tools is None) == (target_accuracy is None):
        raise ValueError("choose the point by --max-tools or by --target-accuracy (one of them)")
    if max_tools is not None:
        ok = points[points.tools_per_question <= max_tools + 1e-9]
        if ok.empty:
            raise ValueError(f"--max-tools {max_tools}: no point calls so few tools (the fewest: {points.tools_per_question.min():.2f} per question)")
        return float(ok.sort_values(["accuracy", "tools_per_question"], ascending=[False, True]).iloc[0]["lambda"])
    ok = points[points.accuracy >= target_accuracy - 1e-12]
    if ok.empty:
        raise ValueError(f"--target-accuracy {target_accuracy}: no point reaches it (the best: {points.accuracy.max():.4f})")
    return float(ok.sort_values(["tools_per_question", "accuracy"], ascending=[True, False]).iloc[0]["lambda"])


def _same_place(frame: pd.DataFrame) -> list[tuple[float, float, pd.DataFrame]]:
    """Rows of ``frame`` grouped by where they plot (tools per question, accuracy), in order of tools."""
    key = frame.assign(_x=frame.tools_per_question.round(6), _y=frame.accuracy.round(6))
    return [(x, y, g) for (x, y), g in key.groupby(["_x", "_y"], sort=True)]


def plot_frontier(points: pd.DataFrame, refs: pd.DataFrame, title: str = "", chosen: float | None = None):
    """The frontier as a figure: test accuracy (%) against tools per question. FGPO's points are joined, and the
    lambdas that land on one point share one label; references that land on one point share one marker and one
    legend entry (``All-Tools = best fixed``), so none hides another; the ``chosen`` lambda's point is ringed."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    pts = points.sort_values("tools_per_question")
    ax.plot(pts.tools_per_question, 100 * pts.accuracy, "o-", color="C0", label="FGPO, Eq. 1 with parsimony weight lambda", zorder=3)
    for i, (x, y, g) in enumerate(_same_place(points)):  # neighbours' labels alternate above and below the line
        ax.annotate("lambda " + ", ".join(f"{v:g}" for v in sorted(g["lambda"])), (x, 100 * y), textcoords="offset points",
                    xytext=(4, 7 if i % 2 == 0 else -13), fontsize=7)
    markers = {"No-Tool": "s", "All-Tools": "D", "best fixed": "^", "Reference (ridge)": "P", "Oracle": "*"}
    for i, (x, y, g) in enumerate(_same_place(refs), start=1):
        names = list(g.reference)
        ax.plot(x, 100 * y, markers.get(names[0], "x"), color=f"C{i}", markersize=9, linestyle="none", label=" = ".join(names), zorder=2)
    if chosen is not None:
        row = points[points["lambda"] == chosen].iloc[0]
        ax.plot(row.tools_per_question, 100 * row.accuracy, "o", markersize=16, markerfacecolor="none", markeredgecolor="black", linestyle="none",
                label=f"chosen (lambda {chosen:g})", zorder=4)
    ax.set_xlabel("tools called per question")
    ax.set_ylabel("test accuracy (%)")
    ax.set_title(title or "cost-accuracy frontier")
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return fig


def gap_column(points: pd.DataFrame) -> tuple[list[str], str]:
    """``(texts, footnote)``: each point's share of the best-fixed-to-oracle gap recovered, in percent, and "—" with
    the footnote where the best fixed subset already scores the oracle's accuracy (no gap to recover)."""
    texts = ["—" if np.isnan(v) else f"{100 * v:.0f}%" for v in points.gap_recovered]
    note = "— : the best fixed subset already scores the oracle's accuracy on the test questions, so there is no gap to recover" if "—" in texts else ""
    return texts, note
