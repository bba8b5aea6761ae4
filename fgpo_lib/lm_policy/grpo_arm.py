"""GRPO on the language-model policy with TRL's ``GRPOTrainer`` itself (not fgpo's GRPO code), one file.

The trainer samples ``G = 6`` completions per question at temperature 1.0 and scores each with
:class:`TableReward`: the completion is parsed, its subset's cell looked up in the table by
the dataset's ``question_id`` column, and the paper's reward ``0.95 r_diff + 0.05 r_fmt`` returned; every lookup is a
counted reasoner call and each question's no-tool cell is asked once. ``loss_type`` and ``scale_rewards`` are set
here and recorded, since TRL's defaults have changed between releases (1.16: ``"dapo"`` and ``"group"``). CPU
training on the model's device: the CPU (``use_cpu``, no bf16 autocast), or a GPU under accelerate. Every ``eval_every`` steps a callback scores the dev questions by
greedy generation (GRPO's own decoding) and keeps the best checkpoint.

Two dead-group rates are recorded per step: the **live** one (:class:`TableReward`, the share of the step's questions
whose ``G`` completions got equal rewards, from the completions themselves) and TRL's ``frac_reward_zero_std``, the
share of groups whose reward standard deviation is zero. The two agree in exact arithmetic, but TRL computes the
standard deviation in float32 and tests it with ``torch.isclose`` (absolute tolerance 1e-8), so six equal rewards
whose float32 mean is rounded (0.525, say) read as a live group (:func:`~fgpo_lib.study.lm_report.trl_zero_std_check`).

How it departs from the paper: the paper's budget is 2.4x FGPO's table cells; a run here gets ``budget`` times the
training questions' cells in *sampled completions* (``max_steps`` follows from it), stated in the record.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import asdict, dataclass
from types import SimpleNamespace

import numpy as np

from ..validation import MAX_GROUP, MAX_QUESTIONS, MAX_SEED, MAX_STEPS, Ranged, check_choice, check_int_fields
from .dev import DevSelector, evaluate_on_test
from .trl_dev import train_with_dev
from .data import check_table, empirical_entropy, grpo_reward_values, prompt_text
from .prompt import parse_answer
from .resume import RunCheckpoint


class TableReward:
    """The GRPO reward, looked up in the table: ``0.95 r_diff + 0.05 r_fmt`` per completion (the paper's), with
    ``r_diff = c(S) - c(empty)`` for the subset the completion names and ``r_fmt = 1`` when it parses.

    TRL calls it with the batch's prompts and completions and every dataset column as a keyword list (here
    ``question_id``). It counts every lookup of a well-formed completion as a reasoner call and each question's
    no-tool cell once, keeps the format-failure count, and records the **live dead-group rate** of each call: the
    share of the batch's questions whose completions all got the same reward (computed from the completions
    themselves), which it also logs through TRL's ``log_metric``, and the mean entropy of each group's parsed subsets
    (a format failure is its own outcome).
    """

    __name__ = "table_reward"

    def __init__(self, table: RewardTable) -> None:
        check_table(table)
        self.table, self.space = table, table.space
        self.row_of = {q: i for i, q in enumerate(table.question_ids)}
        self.empty = table.space.index_of([])
        self.differential = grpo_reward_values(table)[:, :-1]  # (n_questions, n_subsets)
        self.calls = 0
        self.asked_empty: set[int] = set()
        self.format_failures = 0
        self.completions = 0
        self.dead_rates: list[float] = []
        self.group_entropies: list[float] = []

    #: the counters a resumed run restores
    STATE = ("calls", "asked_empty", "format_failures", "completions", "dead_rates", "group_entropies")

    def state(self) -> dict:
        return {k: getattr(self, k) for k in self.STATE}

    def load_state(self, held: dict) -> None:
        for k in self.STATE:
            setattr(self, k, held[k])

    def __call__(self, prompts=None, completions=None, question_id=None, log_metric=None, **kwargs) -> list[float]:
        out, parsed = [], []
        for completion, qid in zip(completions, question_id):
            text = completion if isinstance(completion, str) else completion[-1]["content"]
            row = self.row_of[qid]
            if row not in self.asked_empty:
                self.asked_empty.add(row)
                self.calls += 1
            self.completions += 1
            s = parse_answer(text, self.space)
            parsed.append(s)
            if s is None:
                self.format_failures += 1
                out.append(0.0)
                continue
            if s != self.empty:
                self.calls += 1
            out.append(float(self.differential[row, s]))
        groups: dict = {}
        for qid, r, s in zip(question_id, out, parsed):
            groups.setdefault(qid, []).append((r, s))
        dead = float(np.mean([len({r for r, _ in v}) == 1 for v in groups.values()]))
        self.dead_rates.append(dead)
        self.group_entropies.append(float(np.mean([empirical_entropy([s for _, s in v]) for v in groups.values()])))
        if log_metric is not None:
            log_metric("live_dead_group_rate", dead)
        return out


@dataclass
class LMGRPOConfig(Ranged):
    lr: float = 3e-4
    """Learning rate of the adapter."""
    group_size: int = 6
    """G: completions per question (the paper's)."""
    questions_per_step: int = 4
    """Questions per optimizer step (the trainer's batch is questions_per_step x G completions)."""
    temperature: float = 1.0
    """Sampling temperature (the paper's)."""
    max_completion_length: int = 16
    """Tokens a completion may have; <answer>0,1,2,3</answer> needs about 13."""
    budget: float = 2.4
    """Sampled completions as a multiple of FGPO's table cells (n_train x n_subsets): the paper's 2.4."""
    loss_type: str = "dapo"
    """TRL's loss aggregation, set explicitly."""
    scale_rewards: str = "group"
    """TRL's advantage scaling, set explicitly."""
    beta: float = 0.0
    """KL weight to the initial policy (TRL's default 0)."""
    epsilon_high: float = 0.2
    """Upper clipping bound of the policy ratio, 1 + epsilon_high (TRL's default: its epsilon, 0.2); DAPO's
    clip-higher raises it to 0.28 so that unlikely completions with a positive advantage can grow. Inert here
    (:func:`inert_settings`): this arm takes one optimizer step per generated batch, so the ratio is 1."""
    entropy_coef: float = 0.0
    """TRL's entropy bonus: the loss minus entropy_coef x the completions' mean per-token entropy (0: none, TRL's default)."""
    use_adaptive_entropy: bool = False
    """TRL's adaptive entropy control (Skywork-OR1) at TRL's defaults: from entropy_coef, the coefficient rises by
    0.005 per step while the mean per-token entropy is below 0.2 nats (up to 1.0) and falls otherwise, and applies
    only below it."""
    eval_every: int = 10
    """Steps between dev evaluations (and checkpoints)."""
    seed: int = 0
    """TRL's seed: sampling and data order."""

    RANGES = {"lr": (1e-12, 1.0), "group_size": (2, MAX_GROUP), "questions_per_step": (1, MAX_QUESTIONS), "temperature": (1e-6, None),
              "max_completion_length": (1, 4096), "budget": (1e-6, 10_000), "beta": (0, None), "epsilon_high": (0, None), "entropy_coef": (0, None), "eval_every": (1, MAX_STEPS), "seed": (0, MAX_SEED)}

    def __post_init__(self) -> None:
        super().__post_init__()
        check_int_fields(self, ("group_size", "questions_per_step", "max_completion_length", "eval_every", "seed"))
        check_choice("loss_type", self.loss_type, ("grpo", "bnpo", "dr_grpo", "dapo"))
        check_choice("scale_rewards", self.scale_rewards, ("group", "batch", "none"))

    def inert(self) -> list[str]:
        """The settings that change no update (:func:`inert_settings`); ``fgpo lm-train`` warns of each."""
        return inert_settings(asdict(self))


def inert_settings(config: dict) -> list[str]:
    """What in an arm ``config`` (:class:`LMGRPOConfig` as a dict, a record's ``config``) changes no update, each as
    a sentence. Clip-higher: TRL clips the policy ratio pi / pi_old, and this arm takes one optimizer step per
    generated batch (TRL's ``num_iterations`` 1, ``steps_per_generation`` 1), so pi_old is the policy itself, the
    ratio is 1 and neither bound binds; DAPO's clip-higher acts on the later mini-batches of a batch, which the
    paper's on-policy GRPO does not take."""
    out = []
    if config.get("epsilon_high", LMGRPOConfig.epsilon_high) != LMGRPOConfig.epsilon_high:  # the field's default is TRL's epsilon
        out.append(f"epsilon_high {config['epsilon_high']:g} changes no update: the arm takes one optimizer step per generated batch, so the policy ratio "
                   f"is 1 and no clip binds (DAPO's clip-higher acts on later mini-batches of a batch)")
    return out


def grpo_args(cfg: LMGRPOConfig, out: str, steps: int, progress: bool = False, saving: dict | None = None, model=None):
    """TRL's ``GRPOConfig`` of the arm: every setting the record states is set here explicitly, on the CPU.

    Gradient checkpointing is on, set explicitly as in every TRL config of the policy (TRL 1.x's default): without
    it a warm-start or GRPO step of SmolLM2-135M peaked at 11.7 GB resident, and two runs side by side were killed
    for memory on this 24 GB machine. It leaves the model without its KV cache in training mode, so the FGPO arm,
    which needs the cache for its shared-prompt scoring, turns it off on the model before it trains. ``saving``:
    the resumable run's checkpoint settings (:meth:`~fgpo_lib.lm_policy.resume.RunCheckpoint.trl_settings`); none
    by default."""
    from trl import GRPOConfig

    from .model import trainer_device_args

    device_args = (lambda m: trainer_device_args(m) if m is not None else {"use_cpu": True, "bf16": False})
    saving = {"save_strategy": "no", "output_dir": out, **(saving or {})}
    return GRPOConfig(
        **saving, learning_rate=cfg.lr, num_generations=cfg.group_size, temperature=cfg.temperature,
        max_completion_length=cfg.max_completion_length, per_device_train_batch_size=cfg.questions_per_step * cfg.group_size,
        max_steps=steps, loss_type=cfg.loss_type, scale_rewards=cfg.scale_rewards, beta=cfg.beta, epsilon_high=cfg.epsilon_high,
        entropy_coef=cfg.entropy_coef, use_adaptive_entropy=cfg.use_adaptive_entropy, **device_args(model),
        logging_steps=1, report_to=[], seed=cfg.seed, disable_tqdm=not progress, lr_scheduler_type="cosine",
        gradient_checkpointing=True,
    )


def train_grpo(model, tokenizer, table, splits: dict, cfg: LMGRPOConfig, progress: bool = False, checkpoint: RunCheckpoint | None = None) -> dict:
    """Train ``model``'s adapter with TRL's GRPOTrainer; returns the arm's record (see :func:`~fgpo_lib.lm_policy.fgpo_arm.train_fgpo`),
    with the per-step dead-group rates, format failures and the TRL settings used. With a ``checkpoint`` the run
    saves at every dev point and resumes from the last one (:mod:`.resume`)."""
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOTrainer

    check_table(table)
    reward = TableReward(table)
    rows = np.asarray(splits["train"])
    data = Dataset.from_dict({"prompt": [prompt_text(tokenizer, table.questions[r], table.space.n_tools) for r in rows],
                              "question_id": [table.question_ids[r] for r in rows]})
    completions_budget = cfg.budget * len(rows) * table.n_subsets
    steps = max(1, math.ceil(completions_budget / (cfg.questions_per_step * cfg.group_size)))
    dev = DevSelector(model, tokenizer, table, splits["dev"], "generation", max_new_tokens=cfg.max_completion_length)
    logged: list[dict] = []

    class Log(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kw):
            if logs:
                logged.append({"step": state.global_step, **{k: v for k, v in logs.items() if isinstance(v, (int, float))}})

    def set_counters(held: dict) -> None:
        reward.load_state(held["reward"])
        logged[:] = held["logged"]

    counters = SimpleNamespace(get=lambda: {"reward": reward.state(), "logged": list(logged)}, set=set_counters)
    with tempfile.TemporaryDirectory() as out:
        args = grpo_args(cfg, out, steps, progress, checkpoint.trl_settings(cfg.eval_every) if checkpoint else None, model)
        trainer = GRPOTrainer(model=model, reward_funcs=[reward], args=args, train_dataset=data, processing_class=tokenizer, callbacks=[Log()])
        seconds = train_with_dev(trainer, dev, steps, cfg.eval_every, lambda: {"reasoner_calls": reward.calls, "format_failures": reward.format_failures, "completions": reward.completions},
                                 checkpoint, counters)
    steps_log = [p for p in logged if "frac_reward_zero_std" in p]
    return {"config": asdict(cfg), "trl": {"loss_type": args.loss_type, "scale_rewards": args.scale_rewards, "num_generations": args.num_generations, "epsilon_high": args.epsilon_high, "entropy_coef": args.entropy_coef,
                                            "use_adaptive_entropy": args.use_adaptive_entropy, "steps_per_generation": args.steps_per_generation, "gradient_checkpointing": args.gradient_checkpointing,
                                            "temperature": args.temperature, "max_steps": steps, "completions_budget": completions_budget},
            "curve": dev.curve, "selected_step": dev.best_step, "train_seconds": seconds, "reasoner_calls": reward.calls,
            "format_failures": reward.format_failures, "completions": reward.completions,
            "dead_groups": {"live": reward.dead_rates, "trl_frac_reward_zero_std": [p["frac_reward_zero_std"] for p in steps_log]},
            "group_entropy": reward.group_entropies,
            "log": logged, "test": evaluate_on_test(model, tokenizer, table, splits["test"], max_new_tokens=cfg.max_completion_length),
            "test_last_tie": dev.last_tie_test(splits["test"])}
