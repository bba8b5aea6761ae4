"""The method registry: every optimizer and untrained reference policy, by name, typed once.

A method is one :class:`Method` entry here plus its algorithm file in this package. Everything else derives from
:data:`METHODS`: ``TrainConfig.method``'s choices, ``fgpo train --method``, ``fgpo compare --methods``, the batched
trainer (:mod:`fgpo_lib.batched`), on-demand training (:mod:`fgpo_lib.ondemand`) and the protocol's arms.

Families (what a method needs from the loop):

* ``exact``: reads every cell of its training questions once (``n_train x n_subsets`` calls); its per-question loss
  ``loss(config, logits, rewards, subset_mask)`` is what the batched trainer steps on.
* ``grpo``: samples ``G`` subsets per question through a counting reward oracle; a variant only changes the
  advantage, ``advantage(config, reward_spec) -> (rewards (B, G), log pi_old (B, S)) -> (B, G)``.
* ``sampled``: another sampled gradient estimator (:mod:`.sampled`), train() only.
* ``imitation``: fits the table's best subsets (SFT, DPO).
* ``reference``: fitted once in closed form with every cell known, no updates (:mod:`.reference`); its policy is a
  flat linear head, whatever ``parameterization`` says.
* ``baseline``: no training (:mod:`.baselines`).

A method's own settings live in a dataclass (:attr:`Method.settings`), held by ``TrainConfig.settings``; the older
methods keep their named fields of ``TrainConfig`` (``fgpo``, ``grpo``, ``dpo``, ``sas``, ``us``: :attr:`Method.field`),
so saved run records still load.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .._lazy import torch

from .baselines import BASELINES  # noqa: F401  (the baseline entries below are its policies)
from .fgpo import FGPO, FGPOConfig, fgpo_loss
from .gpg import gpg_advantages
from .grpo import GRPO, GRPOConfig
from .imitation import DPO, SFT, DPOConfig
from .reference import Reference, ReferenceConfig
from .rloo import RLOOConfig, rloo_surrogate
from .sampled import SampledEstimator
from .sum_and_sample import SumAndSampleConfig, sum_and_sample_surrogate
from .tpo import TPO, TPOConfig, tpo_loss
from .unordered_set import UnorderedSetConfig, unordered_set_surrogate
from .zero_variance import RLZVPConfig, ngrpo_advantages, rl_zvp_advantages

FAMILIES = ("exact", "grpo", "sampled", "imitation", "reference", "baseline")


@dataclass(frozen=True)
class Setup:
    """What a builder may use to make a method's optimizer (one object with ``update`` and ``evaluations``).

    Attributes:
        config: the run's ``TrainConfig``.
        settings: the method's settings (:func:`settings_of`), or ``None``.
        table: the reward table.
        rewards: ``(n_questions, n_subsets)`` the training reward (``config.reward`` applied to the raw scores).
        reward: the :class:`~fgpo_lib.rewards.RewardSpec` of ``rewards``.
        ref_policy: the frozen initial policy (the KL terms' reference).
        n_train: training questions.
        oracle: ``() -> RewardOracle``: a counting oracle of the training reward, made on first use.
    """

    config: Any
    settings: Any
    table: Any
    rewards: torch.Tensor
    reward: Any
    ref_policy: torch.nn.Module
    n_train: int
    oracle: Callable[[], Any]


@dataclass(frozen=True)
class Method:
    """One method (module doc).

    Attributes:
        summary: one line for ``--help`` and the book.
        family: one of :data:`FAMILIES`.
        build: ``(Setup) -> optimizer``; ``None`` for a baseline and for the ``grpo`` family, which
            :func:`make_optimizer` builds from ``advantage``.
        settings: the dataclass of its own settings, or ``None``.
        field: the ``TrainConfig`` field holding them (the older methods); ``None``: ``TrainConfig.settings``.
        loss: ``exact`` family: ``(config, logits, rewards, subset_mask) -> per-question loss``, for the batched trainer.
        advantage: ``grpo`` family: ``(config, reward_spec) -> advantage function``; ``None`` is GRPO's own.
        batched: whether :func:`fgpo_lib.batched.train_batched` runs it.
        reads: which reasoner calls it pays for: ``"table"`` (every cell of its training questions, once),
            ``"samples"`` (the cells its sampled groups ask for) or ``"nothing"`` (it reads no reward).
    """

    summary: str
    family: str
    build: Callable[[Setup], Any] | None = None
    settings: type | None = None
    field: str | None = None
    loss: Callable | None = None
    advantage: Callable | None = None
    batched: bool = False
    reads: str = ""

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"unknown family {self.family!r}; use one of {FAMILIES}")
        if not self.reads:  # the family's: sampling methods pay for their samples, the rest read the table
            object.__setattr__(self, "reads", "samples" if self.family in ("grpo", "sampled") else "table")


def _sampled(surrogate):
    return lambda s: SampledEstimator(surrogate(s.config, s.settings), s.oracle())


METHODS: dict[str, Method] = {
    "fgpo": Method(
        "exact expected reward over every subset of the table (the paper's method)", "exact",
        lambda s: FGPO(s.settings, s.rewards, s.ref_policy, s.n_train, torch.tensor(s.table.space.masks)),
        FGPOConfig, "fgpo", loss=lambda cfg, z, r, mask: fgpo_loss(z, r, cfg.fgpo.entropy_coef, subset_mask=mask, reduction="none"), batched=True,
    ),
    "tpo": Method(
        "target policy optimization: cross-entropy to pi_old exp(R / eta), exact over the table", "exact",
        lambda s: TPO(s.settings, s.rewards, s.n_train), TPOConfig,
        loss=lambda cfg, z, r, mask: tpo_loss(z, r, cfg.settings.eta, reduction="none"), batched=True,
    ),
    "grpo": Method("GRPO as TRL's GRPOTrainer computes it: G samples per question, group-relative advantages", "grpo", settings=GRPOConfig, field="grpo", batched=True),
    "ngrpo": Method(
        "GRPO whose group statistics include a virtual maximum-reward sample (NGRPO)", "grpo", batched=True,
        advantage=lambda cfg, spec: lambda r, logp: ngrpo_advantages(r, spec.range()[1]),
    ),
    "rl-zvp": Method(
        "GRPO with entropy-scaled signed advantages on zero-variance groups (RL-ZVP)", "grpo", settings=RLZVPConfig, batched=True,
        advantage=lambda cfg, spec: lambda r, logp: rl_zvp_advantages(r, logp, cfg.settings.alpha, cfg.grpo.scale_rewards),
    ),
    "gpg": Method(
        "GRPO's groups with a mean-centred advantage, scaled by B / (B - dead groups) (GPG)", "grpo", batched=True,
        advantage=lambda cfg, spec: lambda r, logp: gpg_advantages(r),
    ),
    "rloo": Method("REINFORCE with a leave-one-out baseline", "sampled", _sampled(lambda cfg, st: rloo_surrogate(RLOOConfig(cfg.group_size)))),
    "sum-and-sample": Method("top-m subsets summed exactly, the rest sampled", "sampled", _sampled(lambda cfg, st: sum_and_sample_surrogate(st)), SumAndSampleConfig, "sas"),
    "unordered-set": Method("the unordered-set estimator over k distinct draws", "sampled", _sampled(lambda cfg, st: unordered_set_surrogate(st)), UnorderedSetConfig, "us"),
    "sft": Method("cross-entropy on each question's best subset", "imitation", lambda s: SFT(torch.as_tensor(s.table.rewards), s.n_train), batched=True),
    "dpo": Method("DPO: the best subset preferred over a drawn worse one", "imitation", lambda s: DPO(s.settings, torch.as_tensor(s.table.rewards), s.ref_policy, s.n_train), DPOConfig, "dpo", batched=True),
    "reference": Method("full-information reference: one ridge regression per subset's reward, then the argmax (no RL)", "reference",
                        lambda s: Reference(s.settings, s.rewards, s.n_train), ReferenceConfig),
    "uniform": Method("untrained reference policy: every subset equally likely", "baseline", reads="nothing"),
    "oracle-best": Method("untrained reference policy: each question's best subset, read from the table (a ceiling)", "baseline"),
}


def make_optimizer(name: str, s: Setup):
    """The optimizer of method ``name`` for one run (``None`` for a baseline)."""
    m = check_method(name)
    if m.family == "grpo":
        advantage = None if m.advantage is None else m.advantage(s.config, s.reward)
        return GRPO(s.config.grpo, s.oracle(), s.config.group_size, s.ref_policy, advantage)
    return None if m.build is None else m.build(s)


def check_method(name: str) -> Method:
    if name not in METHODS:
        raise ValueError(f"unknown method {name!r}; use one of {', '.join(METHODS)}")
    return METHODS[name]


def settings_of(config) -> Any:
    """The settings of ``config.method`` (a dataclass), from its named field or from ``config.settings``."""
    m = check_method(config.method)
    return getattr(config, m.field) if m.field else config.settings


def parse_settings(method: str, settings) -> Any:
    """``TrainConfig.settings`` for ``method``: a dict (or an instance) -> its settings dataclass; ``{}`` for a
    method with none of its own or with a named field. A setting the method does not have is a named error."""
    m = check_method(method)
    if m.settings is None or m.field:
        if settings:
            raise ValueError(f"method {method!r} takes no 'settings'" + (f"; give them as {m.field}=" if m.field else ""))
        return {}
    if isinstance(settings, m.settings):
        return settings
    try:
        return m.settings(**dict(settings or {}))
    except TypeError as e:
        raise ValueError(f"method {method!r}: {e}") from None


def sampling_methods() -> tuple[str, ...]:
    """Methods that learn only through a reward oracle (can train on demand, without a table's cells)."""
    return tuple(n for n, m in METHODS.items() if m.family in ("grpo", "sampled"))


def batched_methods() -> tuple[str, ...]:
    return tuple(n for n, m in METHODS.items() if m.batched)
