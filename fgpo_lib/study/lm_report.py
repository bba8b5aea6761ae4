"""What the chapter "The paper's policy" shows, from the committed run records (it never trains).

* :func:`load_records`: the records of :func:`~fgpo_lib.study.lm_runs.lm_runs` that exist.
* :func:`transfer_results`: the paper's transfer design. Each trained policy's test choices, under one decoding,
  scored on **every** LLM reasoner's 4-tool table of its benchmark, for the test questions that table holds, with
  the untrained rows (No-Tool, Random, All-Tools, Oracle) from the same table and questions. The result has the
  protocol's shape, ``{setting: {arm: ArmResult}}``, so the protocol's main table and paired comparison
  (:mod:`fgpo_lib.study.protocol_results`) read it unchanged.
* :func:`curve_frame`, :func:`dead_group_frame`, :func:`cost_frame`: the training curves, GRPO's per-step dead-group
  rates and what each run cost; :func:`trl_zero_std_check`, :func:`trl_missed_frame`: which dead groups TRL's own rate misses.
* :func:`decoding_frame`: free generation against candidate scoring, per run; :func:`linear_head_frame`: the same
  questions under the linear head of the book's protocol; :func:`pending_frame`: the runs not recorded yet;
  :func:`seed_aggregates`: rliable's aggregates over seeds.
* Whether a run routes, and the reference selector beside it: :mod:`fgpo_lib.study.lm_routing`.

Array convention: an :class:`~fgpo_lib.study.protocol.ArmResult` here has one row (one seed):
``scores, sizes, subsets: (1, n_questions)``; Random's score is its expectation over the uniform policy.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from ..reasoners.registry import REASONERS
from ..table import RewardTable
from ..weights import tqdm_warning_silenced
from ..lm_policy.data import grpo_reward_values
from ..lm_policy.grpo_arm import LMGRPOConfig
from ..lm_policy.runner import ARM_LABELS, DECODINGS, LM_ARMS, mean_score, rescore
from .protocol import FGPO_ARM, GRPO_PAPER, SFT_ARM
from .lm_runs import LM_RECORDS, ROOT, best_dev_score, better_grpo_rate, lm_runs

UNTRAINED = ("No-Tool", "Random", "All-Tools", "Oracle")


def load_records(folder: Path | None = None, role: str | None = None) -> dict:
    """``{run: (LMRun, record)}`` for every registered run (of ``role``, if given) whose record is in ``folder``."""
    folder = Path(folder) if folder is not None else LM_RECORDS
    out = {}
    for run in lm_runs(folder):
        path = folder / f"{run.name}.json"
        if (role is None or run.role == role) and path.exists():
            out[run.name] = (run, json.loads(path.read_text()))
    return out


def main_records(records: dict) -> dict:
    """The main table's records (role ``main``), GRPO at one rate per benchmark: of :data:`~fgpo_lib.study.lm_runs.GRPO_LRS`,
    the rate whose seed-0 run has the better best dev score (its own selection decoding;
    :func:`~fgpo_lib.study.lm_runs.better_grpo_rate`), the issue's fairness rule and the rate GRPO's later seeds
    run at; FGPO and SFT have one rate each. A benchmark whose GRPO runs lack seed 0 keeps none of them."""
    main = {k: v for k, v in records.items() if v[0].role == "main"}
    seed0: dict = {}
    for run, rec in main.values():
        if run.arm == "grpo" and run.seed == 0:
            seed0.setdefault(run.benchmark, {})[rec["config"]["lr"]] = best_dev_score(rec)
    chosen = {benchmark: better_grpo_rate(dev) for benchmark, dev in seed0.items()}
    return {k: (run, rec) for k, (run, rec) in main.items() if run.arm != "grpo" or rec["config"]["lr"] == chosen.get(run.benchmark)}


def evaluation_tables(benchmark: str, tables_dir: Path | None = None) -> dict[str, Path]:
    """``{reasoner: path}``: every LLM reasoner's committed 4-tool table of ``benchmark``."""
    from ..paths import table_path

    paths = {r: table_path(benchmark, r, "four", tables_dir) for r, e in REASONERS.items() if e.kind == "llm"}
    return {r: p for r, p in paths.items() if p.exists()}


def _arm(name: str, scores, sizes, subsets, calls=0.0):
    """An :class:`~fgpo_lib.study.protocol.ArmResult` from ``scores, sizes, subsets``: ``(n_questions,)`` (one run) or
    ``(n_seeds, n_questions)``, and ``calls``: one number or ``(n_seeds,)``."""
    from ..study.protocol import ArmResult

    rows = lambda v, dtype=np.float64: np.atleast_2d(np.asarray(v, dtype))  # noqa: E731
    return ArmResult(name, rows(scores), rows(scores), rows(sizes), rows(subsets, np.int64), np.asarray(calls, np.float64).reshape(-1))


def untrained_arms(table: RewardTable, rows: np.ndarray) -> dict:
    """No-Tool, Random (the uniform policy's expected score), All-Tools and Oracle on ``rows`` of ``table``."""
    space, r = table.space, table.rewards[rows].astype(np.float64)  # (n, n_subsets)
    empty, full = space.index_of([]), space.index_of(list(range(space.n_tools)))
    n = len(rows)
    best = r.argmax(1)
    return {"No-Tool": _arm("No-Tool", r[:, empty], np.zeros(n), np.full(n, empty)),
            "Random": _arm("Random", r.mean(1), np.full(n, space.sizes.mean()), np.full(n, -1)),
            "All-Tools": _arm("All-Tools", r[:, full], np.full(n, space.n_tools), np.full(n, full)),
            "Oracle": _arm("Oracle", r.max(1), space.sizes[best], best)}


def transfer_results(records: dict, decoding: str = "scoring", tables_dir: Path | None = None) -> tuple[dict, pd.DataFrame]:
    """``({setting: {arm: ArmResult}}, settings)`` for the ``main`` records under ``decoding`` (module doc); a
    format failure scores the no-tool cell. An arm's result has one row per seed (``scores: (n_seeds,
    n_questions)``, in seed order), so a paired comparison resamples seeds and questions. ``settings`` has one row per setting: ``setting, benchmark, reasoner,
    questions, training table`` (whether it is the table the policy trained on)."""
    from ..study.runner import setting_title

    if decoding not in DECODINGS:
        raise ValueError(f"decoding {decoding!r}: use one of {', '.join(DECODINGS)}")
    results, meta = {}, []
    by_benchmark: dict[str, list] = {}
    for run, rec in records.values():
        if run.role == "main":
            by_benchmark.setdefault(run.benchmark, []).append((run, rec))
    for benchmark, runs in by_benchmark.items():
        for reasoner, path in evaluation_tables(benchmark, tables_dir).items():
            table = RewardTable.load(path)
            title = setting_title(benchmark, reasoner)
            seeds, ids = {}, None  # arm label: one (scores, sizes, subsets, calls) per seed, in seed order
            row_of = {q: i for i, q in enumerate(table.question_ids)}
            for run, rec in sorted(runs, key=lambda r: r[0].seed):
                scored = rescore(rec, table)[decoding]
                if ids is not None and scored["question_ids"] != ids:
                    raise ValueError(f"{run.name}: its test questions differ from the other arms' on {path.name}")
                ids = scored["question_ids"]
                rows = np.array([row_of[q] for q in ids])
                chosen = [table.space.index_of([]) if c is None else c for c in _choices(rec, decoding, ids)]
                seeds.setdefault(ARM_LABELS[run.arm], []).append((scored["scores"], scored["sizes"], chosen, rec["reasoner_calls"]))
            arms = {label: _arm(label, *map(list, zip(*runs_of))) for label, runs_of in seeds.items()}
            results[title] = {**arms, **untrained_arms(table, rows)}
            meta.append({"setting": title, "benchmark": benchmark, "reasoner": reasoner, "questions": len(ids),
                         "training table": path.name == Path(runs[0][0].table).name})
    return results, pd.DataFrame(meta)


def _choices(rec: dict, decoding: str, ids: list) -> list:
    own = dict(zip(rec["test"]["question_ids"], rec["test"][decoding]["choices"]))
    return [own[q] for q in ids]


def curve_frame(records: dict) -> pd.DataFrame:
    """Every dev evaluation of every run: ``run, benchmark, arm, role`` and the point's fields (step, seconds,
    dev scores under both decodings, format-failure rate, entropies, top mass, closed-form dead-group rate)."""
    rows = [{"run": name, "benchmark": run.benchmark, "arm": ARM_LABELS[run.arm], "role": run.role, **point}
            for name, (run, rec) in records.items() for point in rec["curve"]]
    return pd.DataFrame(rows)


def dead_group_frame(records: dict) -> pd.DataFrame:
    """GRPO's training steps: ``run, benchmark, step``, the live dead-group rate (from the completions), TRL's
    ``frac_reward_zero_std`` and the mean entropy of each group's parsed subsets."""
    rows = []
    for name, (run, rec) in records.items():
        if not LM_ARMS[run.arm].samples:
            continue
        dead = rec["dead_groups"]
        trl = dead["trl_frac_reward_zero_std"] + [np.nan] * (len(dead["live"]) - len(dead["trl_frac_reward_zero_std"]))
        ent = rec.get("group_entropy", [])
        for step, live in enumerate(dead["live"], start=1):
            rows.append({"run": name, "benchmark": run.benchmark, "step": step, "live": live, "trl": trl[step - 1], "group entropy": ent[step - 1] if step <= len(ent) else np.nan})
    return pd.DataFrame(rows)


def inert_frame(records: dict) -> pd.DataFrame:
    """TRL GRPO's runs whose settings change no update (:func:`~fgpo_lib.lm_policy.grpo_arm.inert_settings`), with the
    evidence in their records: the steps where TRL clipped the policy ratio (``clip_ratio/region_mean`` above 0, of
    the logged steps) and, beside the run of the same benchmark, seed and settings at TRL's defaults, how many first
    steps logged the same loss and reward to the last digit (None where that run has no record)."""
    from ..lm_policy.grpo_arm import inert_settings

    defaults = asdict(LMGRPOConfig())  # fill a record made before a field existed

    def steps(rec: dict) -> dict:
        return {p["step"]: (p["loss"], p["reward"]) for p in rec["log"] if "loss" in p and "reward" in p}

    rows = []
    for name, (run, rec) in records.items():
        inert = inert_settings(rec["config"]) if run.arm == "grpo" else []
        if not inert:
            continue
        default = {**defaults, **rec["config"], "epsilon_high": defaults["epsilon_high"]}
        twin = next((r for n, (x, r) in records.items() if n != name and x.arm == "grpo" and x.benchmark == run.benchmark and {**defaults, **r["config"]} == default), None)
        same = None
        if twin is not None:
            mine, theirs = steps(rec), steps(twin)
            same = next((i for i, s in enumerate(sorted(mine)) if theirs.get(s) != mine[s]), len(mine))
        logged = [p for p in rec["log"] if "clip_ratio/region_mean" in p]
        rows.append({"run": name, "benchmark": run.benchmark, "inert": "; ".join(inert), "steps": len(logged),
                     "steps clipped": sum(p["clip_ratio/region_mean"] > 0 for p in logged), "first steps as TRL's defaults": same})
    return pd.DataFrame(rows)


def trl_zero_std_check(values, group_size: int = LMGRPOConfig.group_size) -> pd.DataFrame:
    """Whether TRL's ``frac_reward_zero_std`` counts a dead group as dead: one row per distinct value of ``values``
    (any shape; GRPO rewards, :func:`~fgpo_lib.lm_policy.data.grpo_reward_values`), with the standard deviation that
    ``GRPOTrainer`` computes for ``group_size`` equal rewards of that value (float32, TRL's own ``nanstd``) and
    whether its test ``torch.isclose(std, 0)`` (absolute tolerance 1e-8) calls it zero. The live rate
    (:class:`~fgpo_lib.lm_policy.data.TableReward`) compares the rewards themselves, so it counts every such group."""
    import torch

    with tqdm_warning_silenced():  # TRL imports tqdm.auto
        from trl.trainer.utils import nanstd
    rows = []
    for v in np.unique(np.asarray(values, np.float64)):
        std = nanstd(torch.full((1, group_size), float(v), dtype=torch.float32), dim=1)
        rows.append({"reward": float(v), "TRL's std of equal rewards": float(std[0]), "counted dead by TRL": bool(torch.isclose(std, torch.zeros_like(std)).all())})
    return pd.DataFrame(rows)


def trl_missed_frame() -> pd.DataFrame:
    """:func:`trl_zero_std_check` on the GRPO rewards of each benchmark's training table (the tables of the main GRPO
    runs of :func:`~fgpo_lib.study.lm_runs.lm_runs`) at the arm's group size, with a ``benchmark`` column."""
    tables = {r.benchmark: ROOT / r.table for r in lm_runs() if LM_ARMS[r.arm].samples and r.role == "main"}
    return pd.concat([trl_zero_std_check(grpo_reward_values(RewardTable.load(p))).assign(benchmark=b) for b, p in tables.items()], ignore_index=True)


def cost_frame(records: dict) -> pd.DataFrame:
    """What each run cost: reasoner calls (table cells read, or GRPO's lookups), the warm start's passes and the
    chance it reached that a completion sampled at temperature 1 writes a candidate (absent from records made before
    it was measured), seconds of the warm start and of training, torch's thread count (records made before it was
    recorded ran on one), the dev-selected step, the learning rate, and the run's CPU-hours (warm start and training
    seconds times threads)."""
    rows = []
    for name, (run, rec) in records.items():
        warm = rec.get("format_warmup") or {}
        rows.append({"run": name, "benchmark": run.benchmark, "arm": ARM_LABELS[run.arm], "role": run.role, "backbone": run.backbone,
                     "lr": rec["config"]["lr"], "reasoner calls": rec["reasoner_calls"], "warm-start passes": (warm.get("config") or {}).get("epochs", np.nan),
                     "warm start's sampled format (%)": 100 * warm.get("sampled_candidate_mass", np.nan), "warm-start s": warm.get("seconds", 0.0),
                     "training s": rec["train_seconds"], "threads": rec["backbone"].get("torch_threads", 1), "selected step": rec["selected_step"], "train questions": len(rec["splits"]["train"])})
    cost = pd.DataFrame(rows)
    if len(cost):
        cost["CPU-hours"] = (cost["warm-start s"] + cost["training s"]) * cost["threads"] / 3600
    return cost


def cpu_hours(cost: pd.DataFrame) -> float:
    """CPU-hours of warm start and training in a :func:`cost_frame`: each run's seconds times its threads. Wall
    seconds times threads, so an upper bound where the run shared its cores."""
    return float(cost["CPU-hours"].sum()) if len(cost) else 0.0


def calls_curve_frame(records: dict) -> pd.DataFrame:
    """Each run's dev score (points, on the decoding it selects on) against the reasoner calls paid so far:
    ``run, benchmark, arm, step, calls, dev score``. GRPO's calls are its counted lookups at each dev point; FGPO and
    SFT read a question's whole table row the first time they visit it, so theirs are ``min(step x batch, n_train)
    x n_subsets`` (the first pass pays for all of them)."""
    rows = []
    for name, (run, rec) in records.items():
        n_train = len(rec["splits"]["train"])
        per_question = rec["reasoner_calls"] / max(1, n_train) if not LM_ARMS[run.arm].samples else 0
        for point in rec["curve"]:
            if LM_ARMS[run.arm].samples:
                calls = point.get("reasoner_calls", 0)
            else:
                calls = min(point["step"] * rec["config"]["batch_questions"], n_train) * per_question
            rows.append({"run": name, "benchmark": run.benchmark, "arm": ARM_LABELS[run.arm], "step": point["step"], "calls": calls, "dev score": 100 * point["dev_score"]})
    return pd.DataFrame(rows, columns=["run", "benchmark", "arm", "step", "calls", "dev score"])


def pending_frame(folder: Path | None = None) -> pd.DataFrame:
    """The runs of :func:`~fgpo_lib.study.lm_runs.lm_runs` with no record in ``folder`` yet: ``run, role, arm,
    benchmark`` and the ``fgpo`` command that trains it (``fgpo pipeline --stages lm_policy`` runs them all)."""
    folder = Path(folder) if folder is not None else LM_RECORDS
    return pd.DataFrame([{"run": run.name, "role": run.role, "arm": ARM_LABELS[run.arm], "benchmark": run.benchmark,
                          "command": "fgpo " + " ".join(run.command())} for run in lm_runs(folder) if not (folder / f"{run.name}.json").exists()],
                        columns=["run", "role", "arm", "benchmark", "command"])


def decoding_frame(records: dict) -> pd.DataFrame:
    """Every run's test questions on its training table under both decodings: ``run, benchmark, arm, role``, the
    mean score in points under candidate scoring and under free generation, their gap, the share of free
    generations that are format failures (%), and tools per question under each decoding."""
    rows = []
    for name, (run, rec) in records.items():
        t = rec["test"]
        s, g = t["scoring"], t["generation"]
        rows.append({"run": name, "benchmark": run.benchmark, "arm": ARM_LABELS[run.arm], "role": run.role,
                     "candidate scoring": mean_score(s["scores"]), "free generation": mean_score(g["scores"]),
                     "generation - scoring": mean_score(g["scores"]) - mean_score(s["scores"]),
                     "format failures (%)": 100 * g["format_failures"] / max(1, len(g["scores"])),
                     "tools/q scoring": float(np.mean(s["sizes"])), "tools/q generation": float(np.mean(g["sizes"]))})
    return pd.DataFrame(rows)


#: the linear head's protocol arm that an arm of the language-model policy is set beside, where it has one (the
#: sampled arm's counterpart is the linear head's GRPO: G draws, the group-normalised advantage)
LINEAR_ARM = {"fgpo": FGPO_ARM, "sampled": GRPO_PAPER, "grpo": GRPO_PAPER, "sft": SFT_ARM}


def linear_head_frame(records: dict, study_dir: Path, library: str = "4 tools") -> pd.DataFrame:
    """The same test questions under the two policy classes: for each ``main`` run, its candidate-scoring test score
    on its training table beside the linear head's (the book's protocol, :data:`LINEAR_ARM`, mean over its seeds)
    on the same questions of the same table. Empty when the study in ``study_dir`` has no such setting."""
    from ..study.protocol_results import load_protocol

    results, meta = load_protocol(Path(study_dir))
    rows = []
    for name, (run, rec) in records.items():
        if run.role != "main":
            continue
        key = next(((lib, title) for (lib, title), m in meta.items() if lib == library and (m.benchmark, m.reasoner) == (run.benchmark, rec["table"]["reasoner"])), None)
        arm = results.get(library, {}).get(key[1], {}).get(LINEAR_ARM.get(run.arm)) if key else None
        if arm is None or arm.pending:
            continue
        row_of = {q: i for i, q in enumerate(meta[key].load_table().question_ids)}
        test = rec["test"]
        shared = [k for k, q in enumerate(test["question_ids"]) if q in row_of]  # positions in the record's test list
        cols = [row_of[test["question_ids"][k]] for k in shared]  # the same questions' columns in the protocol's arm
        rows.append({"benchmark": run.benchmark, "arm": ARM_LABELS[run.arm], "questions": len(shared),
                     "language model (LoRA)": mean_score([test["scoring"]["scores"][k] for k in shared]), "linear head": mean_score(arm.scores[:, cols].mean(0)),
                     "tools/q, language model": float(np.mean([test["scoring"]["sizes"][k] for k in shared])),
                     "tools/q, linear head": float(arm.sizes[:, cols].mean())})
    return pd.DataFrame(rows)


def _tasks_of(table_path: str) -> dict:
    """Question id -> task of a committed table (``table_path`` relative to the repository)."""
    table = RewardTable.load(ROOT / table_path)
    return dict(zip(table.question_ids, table.tasks))


@contextmanager
def _numpy_global_seed(seed: int):
    """numpy's global random state seeded with ``seed`` inside the block, and put back after it."""
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        yield
    finally:
        np.random.set_state(state)


def _poi_by_task_column():
    """rliable's ``probability_of_improvement(x, y)`` as a bootstrap statistic, ``x: (n_runs_x, n_tasks)``, computed
    per task column and remembered: rliable's statistic is the mean over tasks of a per-task Mann-Whitney value, and
    its stratified bootstrap resamples each task's runs on their own, so with a few seeds a side the same column pair
    recurs thousands of times (2,000 replicates x tasks x arm pairs called scipy 48,000 times, 50 s of the chapter).
    The value is rliable's, from the same per-task numbers averaged in the same order."""
    from rliable import metrics

    seen: dict = {}

    def per_task(x: np.ndarray, y: np.ndarray) -> float:
        key = (x.tobytes(), y.tobytes(), x.shape, y.shape)
        if key not in seen:
            seen[key] = metrics.probability_of_improvement(x, y)
        return seen[key]

    return lambda x, y: np.array([np.mean([per_task(x[:, [t]], y[:, [t]]) for t in range(x.shape[1])])])


def seed_aggregates(records: dict, reps: int = 2000, tasks: dict | None = None, seed: int = 0) -> pd.DataFrame:
    """Per benchmark and arm of the ``main`` runs, on the benchmarks where some arm has two seeds or more: rliable's
    interquartile mean of the test score over seeds and the benchmark's tasks (a stratified bootstrap interval), and
    the probability that FGPO improves on each other arm (rliable's ``probability_of_improvement``: per task, the
    chance that a random FGPO run scores above a random run of the other arm, ties counting a half, then the mean
    over tasks), with its interval.

    Array convention (rliable's): ``scores: (n_seeds, n_tasks)`` per arm, a run's mean test score on each task of
    the arms' shared test questions. rliable's runs are seeds and its tasks the benchmark's question tasks, as it
    intends (a run's normalised score per environment): a question's 0/1 score is no task score, and the IQM of 0/1
    values trims away the outcomes themselves. ``tasks``: question id -> task (default: each run's table's).
    ``seed`` fixes the bootstrap: rliable 1.2 draws its resamples from numpy's global state whatever ``random_state``
    it is given, so two builds printed different intervals (:func:`_numpy_global_seed`)."""
    from rliable import library as rly
    from rliable import metrics

    by: dict = {}
    table_of: dict = {}  # benchmark -> its training table (every arm of a benchmark trains on the same one)
    for name, (run, rec) in records.items():
        if run.role == "main":
            ids = rec["test"]["question_ids"]
            by.setdefault(run.benchmark, {}).setdefault(run.arm, []).append(dict(zip(ids, rec["test"]["scoring"]["scores"])))
            table_of[run.benchmark] = run.table
    rows = []
    for benchmark, arms in by.items():
        if max(len(runs) for runs in arms.values()) < 2:
            continue
        task_of = tasks if tasks is not None else _tasks_of(table_of[benchmark])
        shared = sorted(set.intersection(*(set(d) for runs in arms.values() for d in runs)))
        names = sorted({task_of[q] for q in shared})
        of_task = [[q for q in shared if task_of[q] == t] for t in names]
        scores = {arm: np.array([[np.mean([d[q] for q in qs]) for qs in of_task] for d in runs], np.float64) for arm, runs in arms.items()}
        with _numpy_global_seed(seed):
            point, ci = rly.get_interval_estimates(scores, lambda s: np.array([metrics.aggregate_iqm(s)]), reps=reps)
        for arm in scores:
            rows.append({"benchmark": benchmark, "arm": ARM_LABELS[arm], "seeds": len(scores[arm]), "tasks": len(names), "questions": len(shared),
                         "IQM": 100 * float(point[arm][0]), "IQM lo": 100 * float(ci[arm][0][0]), "IQM hi": 100 * float(ci[arm][1][0])})
        if "fgpo" in scores:
            pairs = {f"fgpo,{arm}": (scores["fgpo"], scores[arm]) for arm in scores if arm != "fgpo"}
            if pairs:
                with _numpy_global_seed(seed):
                    p_point, p_ci = rly.get_interval_estimates(pairs, _poi_by_task_column(), reps=reps)
                for key in pairs:
                    other = key.split(",")[1]
                    for row in rows:
                        if row["benchmark"] == benchmark and row["arm"] == ARM_LABELS[other]:
                            row |= {"P(FGPO > arm)": float(p_point[key][0]), "P lo": float(p_ci[key][0][0]), "P hi": float(p_ci[key][1][0])}
    return pd.DataFrame(rows)
