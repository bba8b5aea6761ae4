"""The language-model policy's committed runs: the chapter's design, as one registry.

:data:`LM_RUNS` names every run of "The paper's policy" chapter; ``fgpo pipeline --stages lm_policy`` trains each
one that has no record under :data:`LM_RECORDS`, and the chapter reads the records. The design (the paper's, cut to
a CPU budget):

* **One training table per benchmark**: Qwen2.5-Coder-0.5B's 4-tool table (:data:`TRAINING_REASONER`), the strongest
  reasoner whose tables cover every question of every benchmark. The trained policy's test choices are then scored
  on every reasoner's 4-tool table (:func:`~fgpo_lib.lm_policy.runner.rescore`), the paper's transfer design.
* **GeneTuring, GeneSeq and GeneRegion**; GeneHop's 100 questions leave 56 to train on, too few for a language
  model, so it is left out.
* **The main table** (role ``main``): FGPO with :data:`RECIPE`, the routing search's point with the best dev score;
  the sampled arm at its search's dev-chosen point, on :data:`FIRST_BENCHMARKS`; SFT at :func:`sft_main_point`; TRL's
  GRPO at two rates (:data:`GRPO_LRS`) on seed 0, the better on seed 0's dev the only rate of its later seeds
  (:func:`chosen_grpo_rate`), and at its search's point where one beats it on dev (:func:`grpo_main_point`); each
  arm's seeds and measured cost rate are its row's in the arm registry (:data:`~fgpo_lib.lm_policy.arms.LM_ARMS`),
  :func:`cost_cpu_hours` the runs'; :func:`awaiting_choice` the runs a search's choice will add.
* **The tie-break point** (role ``tie-break``, :data:`TIE_BREAK_POINT`): the recipe with dev ties broken by the exact
  expected dev reward, on every benchmark's FGPO seeds (GeneTuring's first, where the first of the tied checkpoints
  picks two subsets on seeds 1 and 2).
* **The confirmation** (role ``confirmation``, :data:`CONFIRMATION_SEEDS`): the tie-break point on fresh GeneTuring
  seeds, registered before any of them ran, so that a rule chosen after seeing seeds 0 to 2 is judged on seeds it was
  not chosen on; each record scores the first rule's checkpoint beside it (``test_first_rule``).
* **The first design** (role ``first-design``, ``lr-grid``): FGPO's runs before the search, at the rate of a grid on
  GeneTuring (:data:`~fgpo_lib.lm_policy.fgpo_arm.LM_LR_GRID`); each picked one subset for every question.
* **Train on** :data:`MAX_TRAIN` task-stratified training questions; GRPO at 1x FGPO's cells, not the paper's 2.4x
  (:data:`ARM_SETTINGS`), from a longer answer-format warm start, since it samples (:data:`ARM_WARMUP`).
* One **length-normalisation ablation** (sum of log-probabilities) and one **policy-size point** (Qwen2.5-Coder-0.5B
  as the backbone), both FGPO on GeneTuring. The policy-size point trains one epoch, not four
  (:data:`POLICY_SIZE_SETTINGS`).
* One **format-anchor run**, FGPO on GeneTuring with the anchor that keeps free generation inside the candidate set
  (:data:`FORMAT_ANCHOR_SETTINGS`; not in the paper): every FGPO run without it lost the answer tag.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..lm_policy.arms import LM_ARMS
from ..paths import LM_RECORDS
from ..paths import LM_STOPPED_RECORDS as STOPPED_DIR  # noqa: F401  (module doc of STOPPED_POINTS)
from ..paths import ROOT
from ..lm_policy.warmup import FormatWarmup

TRAINING_REASONER = "qwen2.5-coder-0.5b"
MAX_TRAIN = 150
#: the learning rate every arm uses, the middle of the grid; the chapter shows the grid's dev scores and states
#: whether this rate is their best
LR = 3e-4


#: a setting's name in a run's file name, where it differs from the field: FGPO's entropy weight was ``beta`` before it
#: took the linear head's name, and the records made then keep their file names
NAME_KEYS = {"entropy_coef": "beta"}


@dataclass(frozen=True)
class LMRun:
    """One run: an arm trained on a benchmark's training table."""

    benchmark: str
    """The benchmark; its training table is ``tables/<benchmark>__<TRAINING_REASONER>__4tools.npz``."""
    arm: str
    """An arm of :data:`~fgpo_lib.lm_policy.arms.LM_ARMS`."""
    settings: dict = field(default_factory=dict)
    """The arm's settings (``--set``) beyond the learning rate :data:`LR`."""
    backbone: str = "smollm2-135m"
    """The policy's backbone (:data:`~fgpo_lib.lm_policy.model.BACKBONES`)."""
    format_warmup: float = FormatWarmup.epochs
    """Passes of the answer-format warm start (:class:`~fgpo_lib.lm_policy.warmup.FormatWarmup`; the arm registry sets it, :data:`ARM_WARMUP`)."""
    role: str = "main"
    """``main`` (the main table), ``search`` (the routing search), ``tie-break`` (the recipe with another dev tie
    break, :data:`TIE_BREAK_POINT`), ``confirmation`` (that point on fresh seeds), ``first-design`` (FGPO's main
    runs before the search), ``lr-grid``, ``format-anchor``, ``length-norm`` or ``policy-size``."""
    in_search: bool = False
    """A ``main`` run that is also a point of the routing search (the search table lists it): the recipe's first
    seed on the search's benchmark is the search point that chose it."""
    seed: int = 0
    """The arm's seed (its warm start, data order and sampling)."""
    init_from: "LMRun | None" = None
    """Another run whose trained adapter this one starts from (e.g. the SFT arm's), instead of the answer-format
    warm start; it must have its record (and adapter) first."""

    @property
    def name(self) -> str:
        """``benchmark__arm[__backbone][__setting-value ...][__warmup-P][__from-ARM]__sS``; a setting is written under
        its name in :data:`NAME_KEYS` where it has one (the names of records made before a field was renamed)."""
        extra = "".join(f"__{NAME_KEYS.get(k, k)}-{v}" for k, v in sorted(self.settings.items(), key=lambda kv: NAME_KEYS.get(kv[0], kv[0])))
        size = "" if self.backbone == "smollm2-135m" else f"__{self.backbone}"
        warm = "" if self.format_warmup == FormatWarmup.epochs else f"__warmup-{self.format_warmup}"
        init = "" if self.init_from is None else f"__from-{self.init_from.arm}"
        return f"{self.benchmark}__{self.arm}{size}{extra}{warm}{init}__s{self.seed}"

    @property
    def searched(self) -> bool:
        """Whether the routing search's table lists it: a ``search`` run, or the main run that is a search point."""
        return self.role == "search" or self.in_search

    @property
    def table(self) -> str:
        from ..paths import relative, table_path

        return relative(table_path(self.benchmark, TRAINING_REASONER, "four"))

    @property
    def record(self) -> Path:
        return LM_RECORDS / f"{self.name}.json"

    def command(self) -> list[str]:
        """The ``fgpo`` command line that trains it."""
        settings = {"lr": LR, **self.settings, **({"seed": self.seed} if self.seed else {})}
        return ["lm-train", "--table", self.table, "--arm", self.arm, *[a for k, v in settings.items() for a in ("--set", f"{k}={v}")],
                "--backbone", self.backbone, "--max-train", str(MAX_TRAIN), *(["--format-warmup", str(self.format_warmup)] if self.format_warmup != FormatWarmup.epochs else []),
                *(["--init-adapter", os.path.relpath(self.init_from.adapter, ROOT)] if self.init_from is not None else []),
                "--out", os.path.relpath(self.record, ROOT)]

    @property
    def adapter(self) -> Path:
        """Where the run keeps its trained adapter (beside its record)."""
        return LM_RECORDS / f"{self.name}.adapter"


LM_BENCHMARKS = ("geneturing", "geneseq", "generegion")
#: an arm's settings in every run beyond the learning rate, and its answer-format warm start in passes: the arm
#: registry's (fgpo_lib.lm_policy.arms.LM_ARMS says why GRPO's differ)
ARM_SETTINGS = {name: arm.run_settings for name, arm in LM_ARMS.items() if arm.run_settings}
ARM_WARMUP = {name: arm.warmup for name, arm in LM_ARMS.items() if arm.warmup != FormatWarmup.epochs}
#: GRPO's one learning-rate point beside :data:`LR`: every run's rate comes from FGPO's grid, and GRPO at LR had every
#: group of its GeneTuring run dead from step 20 on (one greedy answer on every dev question). A third of the rate asks
#: whether that collapse follows the rate rather than the objective
GRPO_LR_POINT = 1e-4


#: the routing search (issue: every FGPO run above picks one subset for every question): FGPO's recipe varied one
#: choice at a time on a cheap proxy, GeneSeq (where routing is worth most on Qwen 0.5B's table, the chapter's
#: reference table shows how much, and the task is in the question's first words). Every point evaluates dev by
#: candidate scoring alone (``dev_measures``), a tenth of a full dev point's cost. ``SEARCH_BASE`` is the starting point: four times the updates of the runs
#: above at the same cost (batch 4, not 16), a third of their rate, and a short linear warm-up.
SEARCH_BENCHMARK = "geneseq"
SEARCH_BASE = {"batch_questions": 4, "lr": 1e-4, "warmup_ratio": 0.05, "dev_measures": "scoring"}
#: the first two points, stopped by hand at update 70 of 150 (their curves: ``records/lm_policy/stopped/``, which the
#: chapter's search table reads): at a third of the rate, the expected reward's q sharpened onto one subset for every
#: dev question, and TPO's target found one to three; neither is registered as a run to finish
STOPPED_POINTS: tuple[dict, ...] = (SEARCH_BASE, {**SEARCH_BASE, "objective": "tpo"})


def stopped_runs() -> tuple[LMRun, ...]:
    """The search's stopped points as runs (their curves, not records, are in ``STOPPED_DIR``, under these names)."""
    return tuple(LMRun(SEARCH_BENCHMARK, "fgpo", point, role="search") for point in STOPPED_POINTS)


#: SFT with the search's schedule, and FGPO started from its adapter: SFT's per-question target sets up routing that
#: the exact expected reward then refines (a warm start from the SFT arm's adapter, one of the issue's candidates)
SEARCH_SFT = LMRun(SEARCH_BENCHMARK, "sft", {"batch_questions": 4, "lr": 3e-4, "warmup_ratio": 0.05, "dev_measures": "scoring"}, role="search")
SEARCH_POINTS: tuple[dict, ...] = (
    # the entropy weight: q's optimum per question is proportional to exp(r / beta), so a larger beta keeps q off one
    # shared subset while the question's own signal is learnt (the paper's Table 5 tries 0.08), at the rate that moved
    # the first design's runs (their rate moved q little in a first epoch)
    {**SEARCH_BASE, "lr": 3e-4, "entropy_coef": 1.0},
    {**SEARCH_BASE, "lr": 3e-4, "entropy_coef": 0.3},
)
#: FGPO's recipe for the main table, chosen on **dev** among the finished search points: the best dev score (the
#: chapter's tuning table gives every point's)
RECIPE = SEARCH_POINTS[1]
#: the tie-break point: the recipe with dev ties broken by the exact expected reward of q on dev (fgpo_lib.lm_policy.dev),
#: on every benchmark's FGPO seeds. Chosen after the main runs: on GeneTuring several trained checkpoints tie the best
#: dev score, and the recipe's rule keeps the first, which on two seeds picks 2 distinct test subsets (the chapter's
#: ties table counts them). Training is the recipe's, update for update (the rule only selects), so each point differs from its main
#: run in the selection alone; the chapter reports it beside the main runs (its dev-selection section), whose rule
#: stays the one fixed before them. On every benchmark, so that the rule is judged as one recipe, not where it helps
TIE_BREAK_POINT = {**RECIPE, "tie_break": "expected"}
#: the confirmation's seeds: the tie-break point on GeneTuring, where the rule fixed before the runs routes on one seed
#: of three and the tie-break on all three. Registered before any of these seeds ran, with the claim it tests: every
#: seed routes under the tie-break (the chapter's rule, on its training table's test questions). GeneTuring alone:
#: GeneSeq routes under either rule, and on GeneRegion the question text predicts little (the reference selector)
CONFIRMATION_REGISTERED = (3, 4, 5)
#: the confirmation's seeds that ran: its claim failed on the first (:data:`UNRUN`)
CONFIRMATION_SEEDS = CONFIRMATION_REGISTERED[:1]
#: what left the registry unrun, and why (the chapter lists it): each is a diagnostic beside the main table that no
#: acceptance asks for, or one whose question is already answered
UNRUN = {
    "the confirmation's GeneTuring seeds 4 and 5": "its registered claim (every fresh seed routes) failed on seed 3, so they could change only the count",
    "the tie-break point's GeneSeq seeds 1 and 2 and GeneRegion seeds 0-2": "the rule was reported beside the main runs, never in place of them, and the confirmation judged it",
    "FGPO at rate 1e-3 on GeneTuring": "3e-4 already collapses q in the first design's runs; a faster rate cannot route more",
    "the format anchor and the Qwen 0.5B policy on GeneTuring": "ablations of the first design's recipe, which the routing search replaced",
}
#: the tie-break point's seeds per benchmark that ran (the rest: :data:`UNRUN`)
TIE_BREAK_SEEDS = {"geneturing": (0, 1, 2), "geneseq": (0,)}
#: GRPO's learning rates in the main table. Seed 0 runs at each; the one with the better best dev score is GRPO's
#: main row, and GRPO's later seeds run at that rate alone (the rate is tuned on one seed, then replicated: a second
#: seed at the losing rate would cost a GRPO run per benchmark, at its registry cost rate, for rows the table does
#: not show)
GRPO_LRS = (LR, GRPO_LR_POINT)


def _arm_run(benchmark: str, arm: str, settings: dict | None = None, role: str = "main", seed: int = 0) -> LMRun:
    """An arm's run on ``benchmark`` with its settings (:data:`ARM_SETTINGS`, then ``settings``) and its warm start."""
    return LMRun(benchmark, arm, {**ARM_SETTINGS.get(arm, {}), **(settings or {})}, format_warmup=ARM_WARMUP.get(arm, FormatWarmup.epochs), role=role, seed=seed)


def _grpo_run(benchmark: str, lr: float, seed: int) -> LMRun:
    """GRPO's main run on ``benchmark`` at rate ``lr`` (:data:`GRPO_LRS`) and ``seed``."""
    return _arm_run(benchmark, "grpo", {} if lr == LR else {"lr": lr}, seed=seed)


def best_dev_score(record: dict) -> float:
    """A run's best dev score after training began (its curve's points past step 0, on its selection decoding)."""
    return max((p["dev_score"] for p in record["curve"] if p["step"] > 0), default=float("-inf"))


def warm_start_dev_score(record: dict) -> float:
    """A run's dev score before training (its curve's step 0: the warm start, on its selection decoding); NaN if not measured."""
    return next((p["dev_score"] for p in record["curve"] if p["step"] == 0), float("nan"))


def better_grpo_rate(best_dev: dict[float, float]) -> float:
    """Of ``{rate: seed 0's best dev score}``, the rate with the higher score; a tie goes to the rate earlier in
    :data:`GRPO_LRS` (the first design's rate first)."""
    order = {lr: i for i, lr in enumerate(GRPO_LRS)}
    return max(best_dev, key=lambda lr: (best_dev[lr], -order.get(lr, len(order))))


def chosen_grpo_rate(benchmark: str, folder: Path = LM_RECORDS) -> float | None:
    """The rate of GRPO's main row on ``benchmark`` (:func:`better_grpo_rate` of its seed-0 runs' records in
    ``folder``), or None while a seed-0 run at one of :data:`GRPO_LRS` has no record."""
    paths = {lr: Path(folder) / f"{_grpo_run(benchmark, lr, 0).name}.json" for lr in GRPO_LRS}
    if not all(path.exists() for path in paths.values()):
        return None
    return better_grpo_rate({lr: best_dev_score(json.loads(path.read_text())) for lr, path in paths.items()})


#: the sampled arm's search on the proxy (issue: isolate the estimator): FGPO's arm with GRPO's sampled estimator
#: (:mod:`~fgpo_lib.lm_policy.sampled_arm`, G = 6) at the grid of FGPO's search points, rate x entropy weight, on the
#: search's schedule, and Dr. GRPO's unscaled advantage at FGPO's recipe point (the group-normalised advantage scales
#: Eq. 1's parsimony term to unit size wherever a group's scores tie; the unscaled one does not, so the arm gets both
#: forms of the field's estimator); its point for every later run is the one with the best dev score (:func:`chosen_point`)
SAMPLED_UNSCALED = {"scale_rewards": "none"}
SAMPLED_SEARCH_POINTS: tuple[dict, ...] = (*({**SEARCH_BASE, "lr": lr, "entropy_coef": c} for lr in (1e-4, 3e-4) for c in (0.3, 1.0)),
                                           {**RECIPE, **SAMPLED_UNSCALED})
#: the sampled arm's dose-response on the proxy, at its chosen point: G draws per question (6, the paper's, is the
#: chosen point itself)
SAMPLED_GROUP_SIZES = (2, 16)
#: TRL GRPO's search on the proxy, at its chosen rate there (1e-4): the field's answers to dead groups, one at a time
#: from TRL's defaults (loss dapo, scale_rewards group, beta 0, G = 6): DAPO's clip-higher, Dr. GRPO's loss with unscaled
#: advantages, G = 16 (the paper's Table 15), with a dev point every 10 of its 38 steps, and TRL's adaptive entropy
#: bonus at TRL's defaults (Skywork-OR1's answer to entropy collapse, which the default runs show beside their dead
#: groups). Clip-higher ran first and is inert in this arm (:func:`~fgpo_lib.lm_policy.grpo_arm.inert_settings`: one
#: optimizer step per generated batch); its record stays as the evidence, and the entropy bonus is the third answer
GRPO_SEARCH_POINTS: tuple[dict, ...] = ({"epsilon_high": 0.28}, {"loss_type": "dr_grpo", "scale_rewards": "none"}, {"group_size": 16, "eval_every": 10},
                                        {"use_adaptive_entropy": True})
#: the warm-start confound: FGPO's recipe from GRPO's 3-pass answer-format warm start on the proxy, seed 0
WARM_START_POINT = ARM_WARMUP["grpo"]


def chosen_point(runs: "tuple[LMRun, ...]", folder: Path = LM_RECORDS, planned: bool = False) -> "LMRun | None":
    """Of ``runs`` (seed 0 search points of one arm), the one with the best dev score after training began
    (:func:`best_dev_score`, its own selection decoding); a tie goes to the earlier. None while one has no record,
    or, with ``planned``, the last run: a placeholder for the plan's size (:func:`awaiting_choice`)."""
    paths = [Path(folder) / f"{run.name}.json" for run in runs]
    if not all(path.exists() for path in paths):
        return runs[-1] if planned else None
    scores = [best_dev_score(json.loads(path.read_text())) for path in paths]
    return runs[max(range(len(runs)), key=lambda i: (scores[i], -i))]


def sampled_search() -> tuple[LMRun, ...]:
    """The sampled arm's search runs on the proxy (:data:`SAMPLED_SEARCH_POINTS`)."""
    return tuple(LMRun(SEARCH_BENCHMARK, "sampled", point, role="search") for point in SAMPLED_SEARCH_POINTS)


def grpo_search() -> tuple[LMRun, ...]:
    """TRL GRPO's search runs on the proxy (:data:`GRPO_SEARCH_POINTS`) at its chosen rate there."""
    return tuple(_arm_run(SEARCH_BENCHMARK, "grpo", {"lr": GRPO_LR_POINT, **point}, role="search") for point in GRPO_SEARCH_POINTS)


def sampled_runs(folder: Path = LM_RECORDS, planned: bool = False) -> tuple[LMRun, ...]:
    """The sampled arm's search and, once the search has chosen its point, the dose-response on the proxy (its main
    seeds at that point are :func:`_main_runs`'); ``planned``: :func:`chosen_point`'s."""
    search = sampled_search()
    chosen = chosen_point(search, folder, planned)
    if chosen is None:
        return search
    return (*search, *(LMRun(SEARCH_BENCHMARK, "sampled", {**chosen.settings, "group_size": g}, role="group-size") for g in SAMPLED_GROUP_SIZES))


#: the benchmarks where the estimator's comparison runs first (the issue's order: GeneRegion if the budget allows). The
#: plan on these two already takes the CPU budget at the arms' measured rates (the chapter's "Where the runs stand"
#: gives its CPU-hours), so GeneRegion waits: the sampled arm has no runs there, and TRL GRPO's main runs there stay at
#: TRL's defaults whatever its search chooses
FIRST_BENCHMARKS = ("geneseq", "geneturing")
#: the benchmarks of an arm's main-table runs, where not all of :data:`LM_BENCHMARKS`
MAIN_BENCHMARKS = {"sampled": FIRST_BENCHMARKS}
#: the SFT point of the first design, the SFT arm's main point until the search's point won on dev
SFT_FIRST_DESIGN: dict = {}


def sft_main_point(folder: Path = LM_RECORDS) -> dict:
    """SFT's main-table settings: the search's point (:data:`SEARCH_SFT`, batch 4 with warm-up) where its best dev
    score beats the first design's seed 0 on the search's benchmark, else the first design's (:data:`SFT_FIRST_DESIGN`)."""
    first = _arm_run(SEARCH_BENCHMARK, "sft", SFT_FIRST_DESIGN)
    paths = [Path(folder) / f"{run.name}.json" for run in (SEARCH_SFT, first)]
    if not all(path.exists() for path in paths):
        return SFT_FIRST_DESIGN
    search, design = (best_dev_score(json.loads(path.read_text())) for path in paths)
    return SEARCH_SFT.settings if search > design else SFT_FIRST_DESIGN


def grpo_main_point(folder: Path = LM_RECORDS, planned: bool = False) -> dict:
    """TRL GRPO's main-table settings beyond its rate: the point of its search (:data:`GRPO_SEARCH_POINTS`) whose
    seed-0 run on the proxy has the best dev score, where it beats GRPO's seed 0 with TRL's defaults at the proxy's
    chosen rate (:func:`chosen_grpo_rate`; a tie goes to TRL's defaults, the runs made first); {} (TRL's defaults)
    while one of them has no record. A point whose settings change no update (clip-higher here,
    :func:`~fgpo_lib.lm_policy.grpo_arm.inert_settings`) trains TRL's defaults again and is not a candidate: its dev
    score differs from theirs by sampling alone. ``planned``: :func:`chosen_point`'s (its placeholder is a search point)."""
    from ..lm_policy.grpo_arm import inert_settings

    rate = chosen_grpo_rate(SEARCH_BENCHMARK, folder)
    if rate is None:
        return {}
    base = _grpo_run(SEARCH_BENCHMARK, rate, 0)
    search = [(run, point) for run, point in zip(grpo_search(), GRPO_SEARCH_POINTS) if not inert_settings(point)]
    chosen = chosen_point((base, *(run for run, _ in search)), folder, planned)
    return {} if chosen is None or chosen == base else next(point for run, point in search if run == chosen)


def main_point(arm: str, folder: Path = LM_RECORDS, planned: bool = False) -> dict | None:
    """The settings of ``arm``'s main-table runs beyond its registry row's: FGPO's :data:`RECIPE`, the sampled arm's
    dev-chosen search point (None until its search has chosen), SFT's :func:`sft_main_point`, TRL GRPO's
    :func:`grpo_main_point` (its rate is chosen per benchmark, :func:`chosen_grpo_rate`); an arm with no design of
    its own (a new one) runs at its row's settings. ``planned``: :func:`chosen_point`'s."""
    if arm == "fgpo":
        return RECIPE
    if arm == "sampled":
        chosen = chosen_point(sampled_search(), folder, planned)
        return None if chosen is None else chosen.settings
    if arm == "sft":
        return sft_main_point(folder)
    if arm == "grpo":
        return grpo_main_point(folder, planned)
    return {}


def _grpo_rate_runs(benchmark: str, folder: Path) -> list[LMRun]:
    """TRL GRPO's runs on ``benchmark`` with TRL's defaults: seed 0 at each rate of :data:`GRPO_LRS`, the later
    seeds at :func:`chosen_grpo_rate` (at every rate while seed 0 has not chosen: the pipeline skips the loser's
    once it has)."""
    chosen, seeds = chosen_grpo_rate(benchmark, folder), LM_ARMS["grpo"].seeds
    return [_grpo_run(benchmark, lr, s) for s in seeds for lr in (GRPO_LRS if s == seeds[0] or chosen is None else (chosen,))]


def _main_runs(benchmark: str, folder: Path, points: dict[str, dict | None]) -> tuple[LMRun, ...]:
    """The main table's runs on ``benchmark``: every arm of the registry at its point in ``points`` (arm ->
    :func:`main_point`, computed once for every benchmark) and its seeds, on its :data:`MAIN_BENCHMARKS`. TRL GRPO's are :func:`_grpo_rate_runs` until its search chooses another point, then, on
    :data:`FIRST_BENCHMARKS`, its seeds at that point and the benchmark's chosen rate. The search's benchmark's seed-0 run of a point chosen by a
    search is that search point (``in_search``)."""
    out = []
    for arm, row in LM_ARMS.items():
        if benchmark not in MAIN_BENCHMARKS.get(arm, LM_BENCHMARKS):
            continue
        point, rate = points[arm], None
        if arm == "grpo":
            rate = chosen_grpo_rate(benchmark, folder)
            if not point or rate is None or benchmark not in FIRST_BENCHMARKS:
                out += _grpo_rate_runs(benchmark, folder)
                continue
        if point is None:
            continue
        settings = {**row.run_settings, **({"lr": rate} if rate not in (None, LR) else {}), **point}
        out += [LMRun(benchmark, arm, settings, format_warmup=row.warmup, seed=s, in_search=(benchmark, s) == (SEARCH_BENCHMARK, 0) and bool(point))
                for s in row.seeds]
    return tuple(out)


def lm_runs(folder: Path = LM_RECORDS, planned: bool = False) -> tuple[LMRun, ...]:
    """Every run, in the order the pipeline trains them: the routing search, the sampled arm's runs, TRL GRPO's
    search, the main table's runs (:data:`FIRST_BENCHMARKS` first, then seed 0 first), the warm-start run, SFT's main
    runs (the issue's order of spending: SFT last), then the first design's runs
    (FGPO's main runs before the search, its rate grid and ablations, SFT's first point where the search's replaced
    it). GRPO's later seeds depend on its seed-0 records in ``folder`` (:func:`chosen_grpo_rate`), the sampled arm's
    and SFT's main points on their searches' (``planned``: :func:`chosen_point`'s). A search point that is also a main
    run is listed once, as the main run; where a search moved an arm's main point, its runs before keep their records
    as ``first-design`` runs."""
    points = {arm: main_point(arm, folder, planned) for arm in LM_ARMS}
    main = sorted((r for b in LM_BENCHMARKS for r in _main_runs(b, folder, points)), key=lambda r: (r.benchmark not in FIRST_BENCHMARKS, r.seed, r.arm != "fgpo"))
    grpo_first = [] if not points["grpo"] else [replace(r, role="first-design") for b in FIRST_BENCHMARKS for r in _grpo_rate_runs(b, folder)]
    sft_first = [] if points["sft"] == SFT_FIRST_DESIGN else [_arm_run(b, "sft", SFT_FIRST_DESIGN, role="first-design", seed=s)
                                                                        for b in LM_BENCHMARKS for s in LM_ARMS["sft"].seeds]
    runs = (
        *(LMRun(SEARCH_BENCHMARK, "fgpo", point, role="search") for point in SEARCH_POINTS),
        SEARCH_SFT,
        LMRun(SEARCH_BENCHMARK, "fgpo", {**SEARCH_BASE, "epochs": 2.0}, role="search", init_from=SEARCH_SFT),
        *sampled_runs(folder, planned),
        *grpo_search(),
        *(r for r in main if r.arm != "sft"),
        LMRun(SEARCH_BENCHMARK, "fgpo", RECIPE, format_warmup=WARM_START_POINT, role="warm-start"),
        *(r for r in main if r.arm == "sft"),
        *(LMRun(b, "fgpo", TIE_BREAK_POINT, role="tie-break", seed=s) for b, seeds in TIE_BREAK_SEEDS.items() for s in seeds),
        *(LMRun("geneturing", "fgpo", TIE_BREAK_POINT, role="confirmation", seed=s) for s in CONFIRMATION_SEEDS),
        *(LMRun(b, "fgpo", role="first-design") for b in LM_BENCHMARKS),
        *sft_first,
        *grpo_first,
        LMRun("geneturing", "fgpo", {"lr": GRPO_LR_POINT}, role="lr-grid"),
        LMRun("geneturing", "fgpo", {"length_norm": False}, role="length-norm"),
    )
    mains = {r.name for r in main}
    return tuple(r for r in runs if r.role == "main" or r.name not in mains)


#: the registry as the committed records make it (:func:`lm_runs` of :data:`LM_RECORDS`)
LM_RUNS: tuple[LMRun, ...] = lm_runs()


def cost_cpu_hours(runs: "tuple[LMRun, ...] | list[LMRun]") -> float:
    """CPU-hours to train ``runs`` at their arms' measured rates (the arm registry's ``cpu_hours``; the policy-size point's Qwen backbone costs about three
    SmolLM2 runs a question, for a quarter of the epochs: counted as one). GRPO's later seed on a benchmark counts
    once however many rates it is listed at: while seed 0 has not chosen the rate, it is listed at each, and one of
    them will run."""
    later = lambda r: r.arm == "grpo" and r.role == "main" and r.seed != LM_ARMS["grpo"].seeds[0]  # noqa: E731
    once = {(r.benchmark, r.seed): r for r in runs if later(r)}
    return float(sum(LM_ARMS[r.arm].cpu_hours for r in [*(r for r in runs if not later(r)), *once.values()]))


def awaiting_choice(folder: Path = LM_RECORDS) -> list[LMRun]:
    """The runs the plan adds once every search that has not chosen its point chooses (the sampled arm's main seeds
    and dose-response, TRL GRPO's seeds at a new point), counted with :func:`chosen_point`'s placeholder: a sampled
    point adds as many runs whichever it is, and TRL GRPO's count is an upper bound (its defaults winning adds none).
    Their names are placeholders; ``[]`` once every search has chosen."""
    now = {run.name for run in lm_runs(folder)}
    return [run for run in lm_runs(folder, planned=True) if run.name not in now and not (Path(folder) / f"{run.name}.json").exists()]


def pending_runs() -> list[LMRun]:
    """The runs of :data:`LM_RUNS` without a record, in the registry's order."""
    return [run for run in LM_RUNS if not run.record.exists()]
