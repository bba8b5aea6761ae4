"""The settings of one training run (:class:`TrainConfig`), apart from the loop that uses them (:mod:`fgpo_lib.train`),
so that reading them (``fgpo train --help``, a record's config) loads no torch."""

from __future__ import annotations

from dataclasses import dataclass, field

from .algos.fgpo import FGPOConfig
from .algos.grpo import GRPOConfig
from .algos.imitation import DPOConfig
from .algos.registry import METHODS as REGISTRY
from .algos.registry import check_method, parse_settings, sampling_methods
from .algos.sum_and_sample import SumAndSampleConfig
from .algos.unordered_set import UnorderedSetConfig
from .rewards import RewardSpec
from .validation import MAX_GROUP, MAX_HIDDEN, MAX_QUESTIONS, MAX_SEED, MAX_STEPS, check_int_fields, check_ranges

#: the method names of :data:`fgpo_lib.algos.registry.METHODS`, in registry order
METHOD_NAMES = tuple(REGISTRY)
#: the methods that learn only through a reward oracle (GRPO's family and the sampled estimators)
SAMPLING_METHODS = sampling_methods()


@dataclass
class TrainConfig:
    method: str = "fgpo"
    """A name of the method registry (:data:`fgpo_lib.algos.registry.METHODS`; ``fgpo train --help`` lists them)."""
    seed: int = 0
    """Fixes policy initialisation, minibatches, GRPO's samples and the metric samples."""
    steps: int = 200
    """Updates: exact FGPO steps, or GRPO generation batches (each runs grpo.num_iterations optimizer steps)."""
    lr: float = 0.05
    """Adam learning rate."""
    batch_questions: int = 0
    """Training questions per update; 0 means all of them (full batch)."""
    group_size: int = 8
    """G: GRPO's samples per question, and the group size of the failure-rate metrics for every method."""
    featurizer: str = "text"
    """Question features: 'text' (hashed n-grams, no model), 'constant', or a name registered in fgpo_lib.features."""
    parameterization: str = "factorized"
    """Policy head: 'factorized' (per-tool scores + a size term) or 'flat' (a logit per subset). Factorized is the
    default: on benchmarks/bench_optim.py's synthetic table the flat head's exact optimum-seeking stalls on a plateau."""
    hidden: int = 0
    """Width of one tanh hidden layer in the policy; 0 for linear."""
    prior: dict[str, float] | None = None
    """Initial policy: {subset label ('a+b'): probability}; the remaining mass is shared equally by the other
    subsets. None starts uniform. Also the reference of the KL terms."""
    eval_every: int = 10
    """Record metrics every this many updates (and at the first and last)."""
    reward: str = "score"
    """What the optimizer trains on (:class:`fgpo_lib.rewards.RewardSpec`): 'score' (the raw table); 'eq1', the
    paper's Eq. 1, (2 score - 1) + lambda (1 - 2 |S| / n) with the paper's lambda = 0.10, or 'eq1(LAMBDA)' for another
    parsimony weight; 'differential' (the paper's GRPO reward). Accuracy is always the raw score."""
    fgpo: FGPOConfig = field(default_factory=FGPOConfig)
    """FGPO-only settings."""
    grpo: GRPOConfig = field(default_factory=GRPOConfig)
    """GRPO-only settings."""
    dpo: DPOConfig = field(default_factory=DPOConfig)
    """DPO-only settings."""
    sas: SumAndSampleConfig = field(default_factory=SumAndSampleConfig)
    """Sum-and-sample settings (RLOO takes group_size)."""
    us: UnorderedSetConfig = field(default_factory=UnorderedSetConfig)
    """Unordered-set estimator settings."""
    settings: dict = field(default_factory=dict)
    """The method's own settings when the registry gives it no field above (for example {"eta": 0.5} for 'tpo',
    {"alpha": 0.1} for 'rl-zvp'); {} takes its defaults."""

    RANGES = {"seed": (0, MAX_SEED), "steps": (0, MAX_STEPS), "lr": (0, None), "batch_questions": (0, MAX_QUESTIONS), "group_size": (2, MAX_GROUP),
              "hidden": (0, MAX_HIDDEN), "eval_every": (1, MAX_STEPS)}

    def __post_init__(self) -> None:
        check_method(self.method)
        check_int_fields(self, ("seed", "steps", "batch_questions", "group_size", "hidden", "eval_every"))
        check_ranges(self)
        RewardSpec.parse(self.reward)  # a clear error for an unknown reward, before any training
        if self.prior is not None and (not isinstance(self.prior, dict) or not all(isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool)
                                                                                   for k, v in self.prior.items())):
            raise ValueError(f"prior must be None or an object {{subset label: probability}} such as {{\"a+b\": 0.5}}, got {self.prior!r}")
        for name, cls in (("fgpo", FGPOConfig), ("grpo", GRPOConfig), ("dpo", DPOConfig), ("sas", SumAndSampleConfig), ("us", UnorderedSetConfig)):
            value = getattr(self, name)
            if isinstance(value, dict):
                try:
                    setattr(self, name, cls(**value))
                except TypeError as exc:
                    raise ValueError(f"{name}: {exc}") from None
            elif not isinstance(value, cls):
                raise ValueError(f"{name} must be a {cls.__name__} or a dict of its settings, got {type(value).__name__} {value!r}")
        self.settings = parse_settings(self.method, self.settings)
