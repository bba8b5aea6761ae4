"""The paper's protocol on one reward table: every arm, cross-fitted, with learning rate and checkpoint chosen on dev.

Arms (:data:`ARMS`, the arm registry; the paper's facts are in its issue and method chapter):

* trained, the paper's: **FGPO** (Eq. 1 reward, entropy 0.03, batches of 16, 4 epochs), **GRPO (paper)** (the
  differential reward, G = 6, temperature 1, batches of 64, 6.39 epochs), **SFT**, **DPO** (beta 0.1, 0.3, 0.5);
* trained, the controls the paper lacks: the full-information **Reference (ridge)** (one ridge regression per
  subset's reward on the same features, then the argmax: no RL, :mod:`fgpo_lib.algos.reference`), **GRPO (Eq. 1, std)** (TRL's default scaling), **Dr. GRPO (Eq. 1)**
  (no std scaling), the **parsimony ablation** FGPO with lambda = 0 (Eq. 1 without its tool-count term), GRPO
  (paper) at **1x FGPO's cells** instead of the paper's 2.4x, the **k-subset dial** FGPO with
  k = 2, 4, 8, 16, 32, 64 subsets per update, and the **current protocol** (raw score, no entropy, 200 full-batch
  updates) as a sensitivity row;
* untrained: **No-Tool** (the empty subset), **Random** (one uniform subset per question at a fixed seed),
  **All-Tools** (every tool of the library in one call), **Tools w/ Desc** (a selector given the tools' names and
  descriptions: the LLM's own selection call from the table's extras, MiniLM's description selector for a reader
  (:mod:`fgpo_lib.genomics.desc_selector`); pending where an LLM table has no selection calls), and the
  per-question **oracle**.

Schedule: epochs, not steps, are matched to the paper. GRPO's budget is set in reasoner calls: "2.4x" gives it 2.4
times the table cells FGPO reads (``n_train x n_subsets``), the paper's ratio, counted as the paper counts it: the G
sampled calls of each question (200 steps x 64 prompts x 6 = 76,800 against 16 x 2,002 cells, 6.39 epochs); the
no-tool cell of the differential reward is asked for once per question and cached.

Protocol: K-fold cross-fitting (:func:`fgpo_lib.crossfit.crossfit_folds`, K = 5, stratified by task, a dev split
inside each training fold); every (seed, fold) trains each learning rate of :data:`LR_GRID`, and keeps the one whose
dev-selected checkpoint (:func:`fgpo_lib.train.train`'s ``selected``) scores best on dev. Every question is tested
once per seed. The result of an arm is ``scores: (n_seeds, n_questions)``, the raw score of the subset it calls on each
question (greedy), plus its tools per question and reasoner calls, in the array convention of :mod:`fgpo_lib.stats`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..batched import BATCHED_METHODS, runs_grid, train_batched
from ..crossfit import crossfit_folds, subsample_training
from ..table import RewardTable, extra_scores
from ..train import TrainConfig, train

LR_GRID = (0.01, 0.05, 0.2)
#: the names of the arms other modules and chapters refer to, typed once
FGPO_ARM, GRPO_PAPER, SFT_ARM, REFERENCE_ARM = "FGPO", "GRPO (paper)", "SFT", "Reference (ridge)"
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
        lrs: the learning rates dev chooses from; ``()`` for the shared grid :data:`LR_GRID`.
        data_fraction: the share of each training fold it trains on (the data-scale study); dev and test unchanged.
        without_tool: the library position of a tool whose cells are dropped before training (the paper's one-tool
            removal, its Table 12): the arm trains and is tested on the table's other subsets; -1 keeps every tool.
    """

    name: str
    group: str
    config: TrainConfig | None = None
    epochs: float = 0.0
    budget: float = 0.0
    steps: int = 0
    fixed: str = ""
    lrs: tuple = ()
    data_fraction: float = 1.0
    without_tool: int = -1


def removal_arm(position: int) -> str:
    """The name of FGPO (paper) retrained without the library's tool at ``position`` (0-based; written T1..Tn)."""
    return f"{FGPO_ARM} (without T{position + 1})"


REMOVAL_POSITIONS = range(4)  # the headline library's four tools


def _fgpo(reward: str = "eq1", **kw) -> TrainConfig:
    return TrainConfig(method="fgpo", reward=reward, batch_questions=16, **kw)


_PAPER_FGPO = Arm(FGPO_ARM, "paper", _fgpo(fgpo={"entropy_coef": 0.03}), epochs=4)
_PAPER_GRPO = Arm(GRPO_PAPER, "paper", TrainConfig(method="grpo", reward="differential", group_size=6, batch_questions=64), budget=PAPER_GRPO_RATIO)
ARMS: dict[str, Arm] = {
    a.name: a
    for a in (
        _PAPER_FGPO,
        _PAPER_GRPO,
        Arm(SFT_ARM, "paper", TrainConfig(method="sft", batch_questions=16), epochs=4),
        *(Arm(f"DPO (beta {b:g})", "paper", TrainConfig(method="dpo", batch_questions=16, dpo={"beta": b}), epochs=4) for b in (0.1, 0.3, 0.5)),
        Arm("GRPO (Eq. 1, std)", "control", TrainConfig(method="grpo", reward="eq1", group_size=6, batch_questions=64), budget=PAPER_GRPO_RATIO),
        Arm("Dr. GRPO (Eq. 1)", "control", TrainConfig(method="grpo", reward="eq1", group_size=6, batch_questions=64, grpo={"scale_rewards": "none"}), budget=PAPER_GRPO_RATIO),
        Arm("FGPO (lambda 0)", "control", _fgpo("eq1(0)", fgpo={"entropy_coef": 0.03}), epochs=4),
        # the 2025-26 repairs of dead groups without enumeration, and a second exact method (their chapter section)
        Arm("NGRPO (Eq. 1)", "control", TrainConfig(method="ngrpo", reward="eq1", group_size=6, batch_questions=64), budget=PAPER_GRPO_RATIO),
        Arm("RL-ZVP (Eq. 1)", "control", TrainConfig(method="rl-zvp", reward="eq1", group_size=6, batch_questions=64), budget=PAPER_GRPO_RATIO),
        Arm("GRPO (Eq. 1, batch std)", "control", TrainConfig(method="grpo", reward="eq1", group_size=6, batch_questions=64, grpo={"scale_rewards": "batch"}), budget=PAPER_GRPO_RATIO),
        Arm("TPO (Eq. 1)", "control", TrainConfig(method="tpo", reward="eq1", batch_questions=16), epochs=4),
        # no RL: one ridge regression per subset's Eq. 1 reward on the same features, then the argmax (algos.reference):
        # how much routing the features allow when every cell is known
        Arm(REFERENCE_ARM, "control", TrainConfig(method="reference", reward="eq1"), steps=1, lrs=(0.05,)),
        Arm(f"{GRPO_PAPER} at 1x cells", "control", TrainConfig(method="grpo", reward="differential", group_size=6, batch_questions=64), budget=1.0),
        *(Arm(f"{FGPO_ARM} k={k}", "dial", _fgpo(fgpo={"entropy_coef": 0.03, "subsets_per_update": k}), epochs=4) for k in (2, 4, 8, 16, 32, 64)),
        # the earlier protocol had one learning rate, 0.05; it keeps it (and is 3x cheaper than a grid)
        Arm("FGPO (current protocol)", "sensitivity", TrainConfig(method="fgpo", reward="score", batch_questions=0), steps=200, lrs=(0.05,)),
        Arm("GRPO (current protocol)", "sensitivity", TrainConfig(method="grpo", reward="score", batch_questions=0, group_size=8), steps=200, lrs=(0.05,)),
        # the paper's data scale (Table 11) and sensitivity (Table 5): the headline library only
        *(Arm(f"{name} ({int(100 * f)}% data)", "sensitivity", base.config, base.epochs, base.budget, data_fraction=f)
          for f in (0.25, 0.5) for name, base in ((FGPO_ARM, _PAPER_FGPO), (GRPO_PAPER, _PAPER_GRPO))),
        *(replace(_PAPER_FGPO, name=removal_arm(j), group="sensitivity", without_tool=j) for j in REMOVAL_POSITIONS),
        *(Arm(f"FGPO (entropy {b:g})", "sensitivity", _fgpo(fgpo={"entropy_coef": b}), epochs=4) for b in (0.0, 0.01, 0.08)),
        *(Arm(f"{GRPO_PAPER}, temperature {t:g}", "sensitivity", TrainConfig(method="grpo", reward="differential", group_size=6, batch_questions=64, grpo={"temperature": t}), budget=PAPER_GRPO_RATIO) for t in (0.7, 1.3)),
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
    if arm.budget:  # the paper's count: the G sampled calls of each question (its no-tool cell is cached, not counted)
        return max(1, round(arm.budget * n_train * n_subsets / (batch * cfg.group_size)))
    return max(1, math.ceil(arm.epochs * n_train / batch))


DEAD_GROUP_G = tuple(range(2, 33))  # the group sizes of the dead-group analysis
DEAD_GROUP_REWARD = "eq1"  # the paper's failure rate is over the reward classes of its Eq. 1
DEAD_GROUP_HIST_G = 6  # the group size of the per-question dead-group histogram (the paper's GRPO group)


@dataclass
class ArmResult:
    """An arm over every seed, every question tested once per seed.

    Attributes:
        scores: ``(n_seeds, n_questions)`` raw score of the subset called (greedy) at the dev-selected checkpoint.
        final: ``(n_seeds, n_questions)`` the same at the final checkpoint (untrained arms: ``scores``).
        sizes: ``(n_seeds, n_questions)`` tools called.
        subsets: ``(n_seeds, n_questions)`` canonical index of the subset called; -1 where it is outside the table
            (the 8-tool All-Tools call, or a selection above the size cap).
        calls: ``(n_seeds,)`` reasoner calls per training fold (table cells read, or on-demand calls).
        lrs: the dev-chosen learning rate of every (seed, fold).
        dead: ``{"selected"|"final": (len(DEAD_GROUP_G),)}`` the closed-form dead-group rate of the arm's test
            policies at each G of :data:`DEAD_GROUP_G`, over Eq. 1's reward classes, mean over seeds and questions.
        pending: why the arm has no result here ("" when it has one).
        dead_q: ``(n_questions,)`` the closed-form dead-group chance of each test question at G =
            :data:`DEAD_GROUP_HIST_G` under the arm's dev-selected policy, Eq. 1's reward classes, mean over seeds
            (trained arms; ``None`` otherwise).
    """

    arm: str
    scores: np.ndarray
    final: np.ndarray
    sizes: np.ndarray
    subsets: np.ndarray
    calls: np.ndarray
    lrs: list = field(default_factory=list)
    dead: dict = field(default_factory=dict)
    pending: str = ""
    dead_q: np.ndarray | None = None

    def to_json(self) -> dict:
        return {k: (v.tolist() if isinstance(v, np.ndarray) else {a: b.tolist() for a, b in v.items()} if k == "dead" else v) for k, v in self.__dict__.items()}

    @classmethod
    def from_json(cls, d: dict) -> "ArmResult":
        arrays = {k: np.asarray(d[k], np.int64 if k == "subsets" else np.float64) for k in ("scores", "final", "sizes", "subsets", "calls")}
        dead_q = None if d.get("dead_q") is None else np.asarray(d["dead_q"], np.float64)
        return cls(d["arm"], **arrays, lrs=d["lrs"], dead={k: np.asarray(v) for k, v in d["dead"].items()}, pending=d["pending"], dead_q=dead_q)


def dead_group_curve(probs: np.ndarray, table: RewardTable) -> np.ndarray:
    """``probs: (n_questions, n_subsets)`` on ``table``'s rows -> ``(len(DEAD_GROUP_G),)`` mean dead-group rate."""
    from ..metrics import dead_prob, reward_value_probs
    from ..rewards import RewardSpec

    eq1 = RewardSpec(DEAD_GROUP_REWARD).apply(table.rewards, table.space)
    _, masses = reward_value_probs(probs, eq1)  # the class masses once; each G only raises them to its power
    return np.array([dead_prob(masses, g).mean() for g in DEAD_GROUP_G])


def _pending(arm: Arm, n_seeds: int, n: int, why: str) -> ArmResult:
    nan = np.full((n_seeds, n), np.nan)
    return ArmResult(arm.name, nan, nan, nan, np.full((n_seeds, n), -1), np.zeros(n_seeds), pending=why)


def _constant(arm: Arm, table: RewardTable, n_seeds: int, scores, sizes, cols, calls: float, probs=None) -> ArmResult:
    """An untrained arm: the same choice under every seed; ``probs`` its policy (default: one-hot on ``cols``)."""
    tile = lambda a, dt=np.float64: np.tile(np.asarray(a, dt), (n_seeds, 1))  # noqa: E731
    if probs is None and (np.asarray(cols) >= 0).all():
        probs = np.eye(table.n_subsets)[np.asarray(cols)]
    dead = {} if probs is None else {k: dead_group_curve(probs, table) for k in ("selected", "final")}
    return ArmResult(arm.name, tile(scores), tile(scores), tile(sizes), tile(cols, np.int64), np.full(n_seeds, float(calls)), dead=dead)


def _selection_cols(table: RewardTable, picks: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Selections (tool-name tuples, or ``None`` for an unparseable answer) -> their columns (-1 outside the table),
    scores (the table's cell; 0 for ``None``) and sizes."""
    space, n = table.space, len(picks)
    cols, scores, sizes = np.full(n, -1), np.zeros(n), np.zeros(n)
    for i, pick in enumerate(picks):
        if pick is None:
            continue
        sizes[i] = len(pick)
        if len(pick) <= space.max_size:
            cols[i] = space.index_of(list(pick))
            scores[i] = table.rewards[i, cols[i]]
    return cols, scores, sizes


def _fixed(arm: Arm, table: RewardTable, seeds: list[int]) -> ArmResult:
    space, n, S = table.space, table.n_questions, len(seeds)
    if arm.fixed in ("no-tool", "random", "oracle"):
        cols = {"no-tool": lambda: np.full(n, space.index_of([])), "random": lambda: np.random.default_rng(0).integers(0, space.n_subsets, n), "oracle": lambda: table.rewards.argmax(axis=1)}[arm.fixed]()
        calls = {"no-tool": n, "random": n, "oracle": n * space.n_subsets}[arm.fixed]
        uniform = np.full((n, space.n_subsets), 1.0 / space.n_subsets) if arm.fixed == "random" else None  # Random's policy
        return _constant(arm, table, S, table.rewards[np.arange(n), cols], space.sizes[cols], cols, calls, uniform)
    if arm.fixed == "all-tools":
        extra = table.extras.get("all_tools")
        if extra is not None and set(extra["subsets"]) != {"+".join(space.tool_names)}:
            raise ValueError(f"the table's All-Tools cells call {extra['subsets'][0]!r}, not its library {'+'.join(space.tool_names)!r}")
        if extra is not None:  # every tool of the library in one call, precomputed beside the table
            cols = np.full(n, space.index_of(space.tool_names) if space.max_size >= space.n_tools else -1)
            return _constant(arm, table, S, np.asarray(extra["rewards"], np.float64), np.full(n, float(space.n_tools)), cols, n)
        if space.max_size < space.n_tools:
            return _pending(arm, S, n, "no All-Tools cells in this table")
        cols = np.full(n, space.index_of(space.tool_names))
        return _constant(arm, table, S, table.rewards[np.arange(n), cols], space.sizes[cols], cols, n)
    # tools-w-desc: the LLM's own selection call (table extras), or, for a reader, MiniLM's description selector
    extra = table.extras.get("selection")
    if extra is not None:
        picks = [None if lb is None else tuple(t for t in lb.split("+") if t) for lb in extra["subsets"]]
        calls = 2 * n  # the selection call, then the answer
    elif _is_reader(table):
        from ..genomics.desc_selector import minilm_selection

        picks, calls = minilm_selection(table.questions, space.tool_names, space.max_size), n
    else:
        return _pending(arm, S, n, "no selection calls in this table")
    cols, scores, sizes = _selection_cols(table, picks)
    if extra is not None:  # a selection above the size cap was still answered: its score is in the extras
        scores = extra_scores(extra)
    return _constant(arm, table, S, scores, sizes, cols, calls)


def _is_reader(table: RewardTable) -> bool:
    """Whether ``table`` was precomputed by a reader of the registry (its provenance names the reasoner)."""
    from ..reasoners.registry import REASONERS

    entry = REASONERS.get(str(table.provenance.get("reasoner", "")))
    return entry is not None and entry.kind == "reader"


def arm_runs(arm: Arm, table: RewardTable, seeds: list[int], k: int, lrs, eval_points: int) -> tuple[TrainConfig, list]:
    """A trained arm's configuration (its steps from its epochs or budget, ``eval_points`` dev checkpoints) and its
    runs: every (seed, fold, learning rate) of ``k``-fold cross-fitting, training on the arm's share of each fold."""
    by_seed = {s: subsample_training(crossfit_folds(table.question_ids, table.tasks, k=k, seed=s), arm.data_fraction, table.tasks, s) for s in seeds}
    n_train = min(len(f["train"]) for folds in by_seed.values() for f in folds)
    steps = arm_steps(arm, n_train, table.n_subsets)
    cfg = TrainConfig(**{**arm.config.__dict__, "steps": steps, "eval_every": max(1, steps // eval_points)})
    return cfg, [run for s in seeds for run in runs_grid(by_seed[s], [s], list(lrs))]


def run_arm(arm: Arm, table: RewardTable, features: np.ndarray, seeds: list[int], k: int = 5, lrs=None, eval_points: int = 8) -> ArmResult:
    """One arm over ``seeds`` x ``k`` folds x ``lrs`` (default: the arm's own, else :data:`LR_GRID`; module doc)."""
    lrs = lrs or arm.lrs or LR_GRID
    if arm.fixed:
        return _fixed(arm, table, seeds)
    if arm.without_tool >= 0:
        return _without_tool(arm, table, features, seeds, k, lrs, eval_points)
    n = table.n_questions
    scores, final, sizes = (np.full((len(seeds), n), np.nan) for _ in range(3))
    subsets = np.full((len(seeds), n), -1)
    probs = {"selected": np.zeros((len(seeds), n, table.n_subsets)), "final": np.zeros((len(seeds), n, table.n_subsets))}
    calls, chosen = np.zeros(len(seeds)), []
    cfg, runs = arm_runs(arm, table, seeds, k, lrs, eval_points)
    if cfg.method in BATCHED_METHODS:
        records = train_batched(table, cfg, runs, features, curves=False)  # the protocol reads choices, not curves
    else:
        records = [train(table, TrainConfig(**{**cfg.__dict__, "seed": r.seed, "lr": r.lr}), features=features, splits=r.splits) for r in runs]
    row_of = {q: i for i, q in enumerate(table.question_ids)}
    for (run, rec) in _best_lr(runs, records):
        si = seeds.index(run.seed)
        sel, fin = rec["selected"]["per_question"]["test"], rec["per_question"]["test"]
        idx = [row_of[q] for q in sel["question_ids"]]
        scores[si, idx], sizes[si, idx], subsets[si, idx] = sel["greedy_reward"], sel["greedy_size"], sel["greedy_subset"]
        final[si, [row_of[q] for q in fin["question_ids"]]] = fin["greedy_reward"]
        probs["selected"][si, idx] = sel["probs"]
        probs["final"][si, [row_of[q] for q in fin["question_ids"]]] = fin["probs"]
        calls[si] += rec["selected"]["reasoner_calls"] / k
        chosen.append(run.lr)
    dead = {key: np.mean([dead_group_curve(p[si], table) for si in range(len(seeds))], axis=0) for key, p in probs.items()}
    from ..metrics import zero_variance_prob
    from ..rewards import RewardSpec

    eq1 = RewardSpec(DEAD_GROUP_REWARD).apply(table.rewards, table.space)
    dead_q = np.mean([zero_variance_prob(probs["selected"][si], eq1, DEAD_GROUP_HIST_G) for si in range(len(seeds))], axis=0)
    return ArmResult(arm.name, scores, final, sizes, subsets, calls, chosen, dead, dead_q=dead_q)


def _without_tool(arm: Arm, table: RewardTable, features: np.ndarray, seeds: list[int], k: int, lrs, eval_points: int) -> ArmResult:
    """``arm`` on ``table``'s subsets without its tool (a candidate-set table), its choices mapped back to ``table``'s
    columns. The space keeps every tool's name, so Eq. 1's tool-count term still divides by the full library size."""
    if arm.without_tool >= table.space.n_tools:
        raise ValueError(f"arm {arm.name!r} removes tool {arm.without_tool + 1}, but the library has {table.space.n_tools}")
    cols = np.flatnonzero(~table.space.masks[:, arm.without_tool])
    res = run_arm(replace(arm, without_tool=-1), table.select_subsets(cols), features, seeds, k=k, lrs=lrs, eval_points=eval_points)
    res.subsets = np.where(res.subsets >= 0, cols[np.maximum(res.subsets, 0)], -1)
    return res


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
#: the groups of arms a setting's second library (the 8-tool section) runs: the dial and the sensitivity rows are the
#: headline library's only, where they cost least
SECTION_GROUPS = ("paper", "control", "untrained")


def section_arms(arms: list[str] | None) -> list[str]:
    """``arms`` (``None``: every arm) without the groups a second library leaves out (:data:`SECTION_GROUPS`)."""
    return [a for a in (list(ARMS) if arms is None else arms) if ARMS[a].group in SECTION_GROUPS]


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
