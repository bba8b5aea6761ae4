"""The scaling chapter's estimators by name (one registry: ``fgpo scaling``, ``fgpo ondemand`` and the chapter read it),
light enough for a command's ``--help``."""

from __future__ import annotations

from .train_config import SAMPLING_METHODS

#: estimator name -> TrainConfig settings (method and its sub-config); G = 8 for the sampled ones
ESTIMATORS: dict[str, dict] = {
    "FGPO (all subsets)": dict(method="fgpo"),
    "FGPO k=32": dict(method="fgpo", fgpo={"subsets_per_update": 32}),
    "candidate sets t=4": dict(method="fgpo", fgpo={"candidate_tools": 4}),
    "sum-and-sample m=8": dict(method="sum-and-sample", sas={"top_m": 8, "n_samples": 4}),
    "unordered set k=4": dict(method="unordered-set", us={"set_size": 4}),
    "GRPO": dict(method="grpo"),
    "RLOO": dict(method="rloo"),
    "Dr. GRPO": dict(method="grpo", grpo={"scale_rewards": "none"}),
    "DAPO dynamic sampling": dict(method="grpo", grpo={"dynamic_sampling": 2}),
    "GRESO skipping": dict(method="grpo", grpo={"skip_dead": 0.5}),
    "GRPO + replay": dict(method="grpo", grpo={"replay": 64}),
    "GRPO + entropy": dict(method="grpo", grpo={"entropy_bonus": 0.01}),
}
#: the estimators that sample subsets (their dead-group rate is a curve)
SAMPLING_ESTIMATORS = tuple(n for n, kw in ESTIMATORS.items() if kw["method"] in SAMPLING_METHODS)
#: the estimator every other is compared with
REFERENCE = "FGPO (all subsets)"
#: the estimators ``fgpo ondemand`` runs with every cell an LLM call: the ones that sample
ON_DEMAND = SAMPLING_ESTIMATORS
