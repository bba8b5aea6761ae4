"""The paper's protocol on one reward table: every arm, cross-fitted, with learning rate and checkpoint chosen on dev.

Arms (:data:`ARMS`, the arm registry; the paper's facts are in its issue and method chapter):

* trained, the paper's: **FGPO** (Eq. 1 reward, entropy 0.03, batches of 16, 4 epochs), **GRPO (paper)** (the
  differential reward, G = 6, temperature 1, batches of 64, 6.3 epochs), **SFT**, **DPO** (beta 0.1, 0.3, 0.5);
* trained, the controls the paper lacks: **GRPO (Eq. 1, std)** (TRL's default scaling), **Dr. GRPO (Eq. 1)**
  (no std scaling), GRPO (paper) at **1x FGPO's cells** instead of the paper's 2.4x, the **k-subset dial** FGPO with
  k = 2, 4, 8, 16, 32, 64 subsets per update, and the **current protocol** (raw score, no entropy, 200 full-batch
  updates) as a sensitivity row;
* untrained: **No-Tool** (the empty subset), **Random** (one uniform subset per question at a fixed seed),
  **All-Tools** (every tool of the library in one call), **Tools w/ Desc** (a selector given the tools' names and
  descriptions: the LLM's own selection call from the table's extras; pending where the table has none), and the
  per-question **oracle**.

Schedule: epochs, not steps, are matched to the paper. GRPO's budget is set in reasoner calls: "2.4x" gives it 2.4
times the table cells FGPO reads (``n_train x n_subsets``), the paper's ratio.

Protocol: K-fold cross-fitting (:func:`fgpo_lib.crossfit.crossfit_folds`, K = 5, stratified by task, a dev split
inside each training fold); every (seed, fold) trains each learning rate of :data:`LR_GRID`, and keeps the one whose
dev-selected checkpoint (:func:`fgpo_lib.train.train`'s ``selected``) scores best on dev. Every question is tested
once per seed. The result of an arm is ``scores: (n_seeds, n_questions)``, the raw score of the subset it calls on each
question (greedy), plus its tools per question and reasoner calls, in the array convention of :mod:`fgpo_lib.stats`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..batched import BATCHED_METHODS, runs_grid, train_batched
from ..crossfit import crossfit_folds
from ..table import RewardTable
from ..train import TrainConfig, train

LR_GRID = (0.01, 0.05, 0.2)
PAPER_GRPO_RATIO = 2.4  # the paper's on-demand GRPO calls over FGPO's table cells


@dataclass(frozen=True)
class Arm:
    """One arm of the study.

    Attributes:
        name: as the tables write it.
        group: ``"paper"``, ``"control"``, ``"dial"``, ``"sensitivity"`` or ``"untrained"``.
        config: the training configuration (trained arms); its ``steps`` is derived from ``epochs`` or ``budget``.
        epochs: passes over the training questions (steps = epochs x n_train / batch).
        budget: GRPO only: reasoner calls as a multiple of FGPO's table cells (overrides ``epochs``).
        steps: a fixed number of updates (overrides both).
        fixed: untrained arms: ``"no-tool"``, ``"random"``, ``"all-tools"``, ``"tools-w-desc"`` or ``"oracle"``.
    """

    name: str
    group: str
    config: TrainConfig | None = None
    epochs: float = 0.0
    budget: float = 0.0
    steps: int = 0
    fixed: str = ""
    extra: dict = field(default_factory=dict)


def _fgpo(**kw) -> TrainConfig:
    return TrainConfig(method="fgpo", reward="eq1", batch_questions=16, **kw)


ARMS: dict[str, Arm] = {
    a.name: a
    for a in (
        Arm("FGPO", "paper", _fgpo(fgpo={"entropy_coef": 0.03}), epochs=4),
        Arm("GRPO (paper)", "paper", TrainConfig(method="grpo", reward="differential", group_size=6, batch_questions=64), budget=PAPER_GRPO_RATIO),
        Arm("SFT", "paper", TrainConfig(method="sft", batch_questions=16), epochs=4),
        *(Arm(f"DPO (beta {b:g})", "paper", TrainConfig(method="dpo", batch_questions=16, dpo={"beta": b}), epochs=4) for b in (0.1, 0.3, 0.5)),
        Arm("GRPO (Eq. 1, std)", "control", TrainConfig(method="grpo", reward="eq1", group_size=6, batch_questions=64), budget=PAPER_GRPO_RATIO),
        Arm("Dr. GRPO (Eq. 1)", "control", TrainConfig(method="grpo", reward="eq1", group_size=6, batch_questions=64, grpo={"scale_rewards": "none"}), budget=PAPER_GRPO_RATIO),
        Arm("GRPO (paper) at 1x cells", "control", TrainConfig(method="grpo", reward="differential", group_size=6, batch_questions=64), budget=1.0),
        *(Arm(f"FGPO k={k}", "dial", _fgpo(fgpo={"entropy_coef": 0.03, "subsets_per_update": k}), epochs=4) for k in (2, 4, 8, 16, 32, 64)),
        Arm("FGPO (current protocol)", "sensitivity", TrainConfig(method="fgpo", reward="score", batch_questions=0), steps=200),
        Arm("GRPO (current protocol)", "sensitivity", TrainConfig(method="grpo", reward="score", batch_questions=0, group_size=8), steps=200),
        Arm("No-Tool", "untrained", fixed="no-tool"),
        Arm("Random", "untrained", fixed="random"),
        Arm("All-Tools", "untrained", fixed="all-tools"),
        Arm("Tools w/ Desc", "untrained", fixed="tools-w-desc"),
        Arm("Oracle", "untrained", fixed="oracle"),
    )
}


def arm_steps(arm: Arm, n_train: int, n_subsets: int) -> int:
    """Updates for ``arm`` on ``n_train`` training questions (module doc)."""
    cfg = arm.config
    if arm.steps:
        return arm.steps
    batch = n_train if cfg.batch_questions <= 0 else min(cfg.batch_questions, n_train)
    if arm.budget:
        per_update = batch * (cfg.group_size + (cfg.reward == "differential"))  # G samples, and the no-tool cell
        return max(1, round(arm.budget * n_train * n_subsets / per_update))
    return max(1, math.ceil(arm.epochs * n_train / batch))


@dataclass
class ArmResult:
    """An arm over every seed: ``scores, sizes: (n_seeds, n_questions)`` (raw score and tools of the subset called on
    each question, every question tested once per seed), ``calls: (n_seeds,)`` mean reasoner calls per fold, and
    ``lrs`` the dev-chosen learning rate of every (seed, fold)."""

    arm: str
    scores: np.ndarray
    sizes: np.ndarray
    calls: np.ndarray
    lrs: list = field(default_factory=list)
    pending: str = ""


def _fixed(arm: Arm, table: RewardTable, seeds: list[int]) -> ArmResult:
    space, n = table.space, table.n_questions
    if arm.fixed == "no-tool":
        cols = np.full(n, space.index_of([]))
    elif arm.fixed == "random":
        cols = np.random.default_rng(0).integers(0, space.n_subsets, n)
    elif arm.fixed == "oracle":
        cols = table.rewards.argmax(axis=1)
    elif arm.fixed == "all-tools":
        extra = table.extras.get("all_tools")
        if extra is None and space.max_size < space.n_tools:
            return ArmResult(arm.name, np.full((len(seeds), n), np.nan), np.full((len(seeds), n), np.nan), np.zeros(len(seeds)), pending="no All-Tools cells in this table")
        if extra is not None:
            s = np.asarray(extra["rewards"], np.float64)
            return ArmResult(arm.name, np.tile(s, (len(seeds), 1)), np.full((len(seeds), n), float(space.n_tools)), np.full(len(seeds), float(n)))
        cols = np.full(n, space.index_of(space.tool_names))
    else:  # tools-w-desc
        extra = table.extras.get("selection")
        if extra is None:
            return ArmResult(arm.name, np.full((len(seeds), n), np.nan), np.full((len(seeds), n), np.nan), np.zeros(len(seeds)), pending="no selection calls in this table")
        s = np.array([0.0 if r is None else r for r in extra["rewards"]])  # unparseable: no answer, score 0
        size = np.array([0.0 if lb is None else (len(lb.split("+")) if lb else 0) for lb in extra["subsets"]])
        return ArmResult(arm.name, np.tile(s, (len(seeds), 1)), np.tile(size, (len(seeds), 1)), np.full(len(seeds), float(2 * n)))
    scores = table.rewards[np.arange(n), cols].astype(np.float64)
    calls = {"no-tool": n, "random": n, "all-tools": n, "oracle": n * space.n_subsets}[arm.fixed]
    return ArmResult(arm.name, np.tile(scores, (len(seeds), 1)), np.tile(space.sizes[cols].astype(np.float64), (len(seeds), 1)), np.full(len(seeds), float(calls)))


def run_arm(arm: Arm, table: RewardTable, features: np.ndarray, seeds: list[int], k: int = 5, lrs=LR_GRID, eval_points: int = 8) -> ArmResult:
    """One arm over ``seeds`` x ``k`` folds x ``lrs`` (module doc)."""
    if arm.fixed:
        return _fixed(arm, table, seeds)
    n = table.n_questions
    scores, sizes = np.full((len(seeds), n), np.nan), np.full((len(seeds), n), np.nan)
    calls, chosen = np.zeros(len(seeds)), []
    by_seed = {s: crossfit_folds(table.question_ids, table.tasks, k=k, seed=s) for s in seeds}
    n_train = min(len(f["train"]) for folds in by_seed.values() for f in folds)
    steps = arm_steps(arm, n_train, table.n_subsets)
    cfg = TrainConfig(**{**arm.config.__dict__, "steps": steps, "eval_every": max(1, steps // eval_points)})
    runs = [run for s in seeds for run in runs_grid(by_seed[s], [s], list(lrs))]
    if cfg.method in BATCHED_METHODS:
        records = train_batched(table, cfg, runs, features)
    else:
        records = [train(table, TrainConfig(**{**cfg.__dict__, "seed": r.seed, "lr": r.lr}), features=features, splits=r.splits) for r in runs]
    row_of = {q: i for i, q in enumerate(table.question_ids)}
    for (run, rec) in _best_lr(runs, records):
        si = seeds.index(run.seed)
        pq = rec["selected"]["per_question"]["test"]
        idx = [row_of[q] for q in pq["question_ids"]]
        scores[si, idx] = pq["greedy_reward"]
        sizes[si, idx] = pq["greedy_size"]
        calls[si] += rec["selected"]["reasoner_calls"] / k
        chosen.append(run.lr)
    return ArmResult(arm.name, scores, sizes, calls, chosen)


def _best_lr(runs, records):
    """Per (seed, fold): the run whose dev-selected checkpoint scores best on dev (ties: the first learning rate)."""
    best: dict = {}
    for run, rec in zip(runs, records):
        key = (run.seed, run.fold)
        dev = rec["selected"]["dev"]["greedy_reward"]
        if key not in best or dev > best[key][1]["selected"]["dev"]["greedy_reward"]:
            best[key] = (run, rec)
    return list(best.values())


# --- many settings, and the paired statistics of the main table -----------------------------------------------------
def run_protocol(tables: dict, seeds: list[int], arms: list[str] | None = None, k: int = 5, progress: bool = True) -> dict:
    """Every arm of ``arms`` (default: all of :data:`ARMS`) on every table of ``tables`` (setting name -> RewardTable),
    with the text featurizer. Returns ``{setting: {arm: ArmResult}}``; a tqdm bar in the terminal."""
    from tqdm import tqdm

    from ..features import make_featurizer

    names = list(ARMS) if arms is None else arms
    out: dict = {}
    with tqdm(total=len(tables) * len(names), desc="protocol", unit="arm", disable=not progress) as bar:
        for setting, table in tables.items():
            features = make_featurizer("text")(table.questions)
            out[setting] = {}
            for name in names:
                out[setting][name] = run_arm(ARMS[name], table, features, seeds, k=k)
                bar.update()
    return out


def main_table(results: dict) -> "pd.DataFrame":
    """Settings x arms: mean test score in points with its 95% bootstrap CI (seeds and questions), as the paper's
    Table 2 is laid out. Columns: ``setting``, ``questions``, then one ``"mean [lo, hi]"`` column per arm."""
    import pandas as pd

    from ..stats import bootstrap_ci

    rows = []
    for setting, arms in results.items():
        row = {"setting": setting}
        for name, res in arms.items():
            row["questions"] = res.scores.shape[1]
            if res.pending:
                row[name] = "pending"
                continue
            m, lo, hi = bootstrap_ci(res.scores)
            row[name] = f"{100 * m:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"
        rows.append(row)
    return pd.DataFrame(rows)


def paired_comparison(results: dict, a: str, b: str) -> "pd.DataFrame":
    """``a`` against ``b`` in every setting: the mean paired difference in points with its CI, McNemar's p on
    full-credit answers (score 1; per question, correct under the majority of seeds), Holm's adjustment across
    settings, the minimum detectable difference at 80% power, and tools per question of both."""
    import pandas as pd

    from ..stats import holm, mcnemar, min_detectable_difference, paired_difference_ci

    rows = []
    for setting, arms in results.items():
        ra, rb = arms[a], arms[b]
        if ra.pending or rb.pending:
            continue
        diff, lo, hi = paired_difference_ci(ra.scores, rb.scores)
        correct_a, correct_b = (ra.scores == 1).mean(0) > 0.5, (rb.scores == 1).mean(0) > 0.5
        test = mcnemar(correct_a, correct_b)
        rows.append(
            {
                "setting": setting, "questions": ra.scores.shape[1], f"{a} - {b}": 100 * diff, "lo": 100 * lo, "hi": 100 * hi,
                "a only": test["b10"], "b only": test["b01"], "McNemar p": test["p"],
                "MDD (80%)": 100 * min_detectable_difference(ra.scores.mean(0) - rb.scores.mean(0)),
                f"tools/q {a}": float(ra.sizes.mean()), f"tools/q {b}": float(rb.sizes.mean()),
            }
        )
    df = pd.DataFrame(rows)
    if len(df):
        df.insert(df.columns.get_loc("McNemar p") + 1, "Holm p", holm(df["McNemar p"].to_numpy()))
    return df
