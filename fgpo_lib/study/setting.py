"""One setting of the study, computed: its table, the paper's protocol on each of its libraries, and the earlier
protocol's method comparison, saved where the book's chapters read them. ``notebooks/setting.md`` calls
:func:`run_setting` once with its parameters and only shows what comes back.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..compare import compare_runs
from ..features import make_featurizer
from ..table import RewardTable
from ..train import TrainConfig
from .protocol import run_protocol, section_arms
from .protocol_results import save_protocol
from .earlier_results import save_setting


@dataclass
class SettingRun:
    """What :func:`run_setting` computed.

    Attributes:
        table: the setting's reward table.
        featurizer: the question featurizer used (``"text"`` when the one asked for could not load).
        n_features: its width.
        proto_tables: ``{library: RewardTable}`` of the paper's protocol.
        proto: ``{library: {arm: ArmResult}}``.
        runs: the earlier protocol's ``compare_runs`` records, ``{method: [run record per seed]}``.
        results_dir: where the results were saved.
    """

    table: RewardTable
    featurizer: str
    n_features: int
    proto_tables: dict
    proto: dict
    runs: dict
    results_dir: Path


def run_setting(benchmark: str, reasoner: str, table_path: str = "", results_dir: str = "", library_paths: dict | None = None,
                protocol_seeds=(0, 1, 2), protocol_arms: list | None = None, methods=("fgpo", "grpo", "uniform", "oracle-best"),
                seeds=(0, 1, 2), group_size: int = 8, steps: int = 200, lr: float = 0.05, batch_questions: int = 0,
                featurizer: str = "text", parameterization: str = "factorized", eval_every: int = 10) -> SettingRun:
    """Compute one setting (module doc); the arguments are ``notebooks/setting.md``'s parameters, documented there.

    The headline library runs every arm of ``protocol_arms``; a second library (the 8-tool section) leaves out the
    dial and sensitivity rows (:func:`~fgpo_lib.study.protocol.section_arms`). The protocol is saved only when every
    library has a table file (a reader's table built in a temporary folder is not)."""
    from . import table_for

    scratch = Path(tempfile.mkdtemp(prefix="fgpo-setting-"))
    table = RewardTable.load(table_path or table_for(benchmark, reasoner, scratch, scratch / "cells.sqlite"))
    out = Path(results_dir or scratch / "results")
    try:
        features, used = make_featurizer(featurizer)(table.questions), featurizer
    except Exception:  # a missing model package: the text featurizer, and the page says which was used
        features, used = make_featurizer("text")(table.questions), "text"
    library_paths = library_paths or {"8 tools" if table.n_subsets > 16 else "4 tools": str(table_path or "")}
    proto_tables = {lib: RewardTable.load(p) if p else table for lib, p in library_paths.items()}
    proto = {lib: run_protocol({lib: t}, list(protocol_seeds), protocol_arms if i == 0 else section_arms(protocol_arms), progress=False)[lib]
             for i, (lib, t) in enumerate(proto_tables.items())}
    if all(library_paths.values()):
        save_protocol(proto, library_paths, out / "protocol.json", benchmark, reasoner)
    base = TrainConfig(steps=steps, lr=lr, batch_questions=batch_questions, group_size=group_size, parameterization=parameterization, eval_every=eval_every)
    runs = compare_runs(table, base, list(methods), list(seeds), progress=False, features=features)
    save_setting(runs, table, str(out), {"benchmark": benchmark, "reasoner": reasoner, "featurizer": used, "seeds": list(seeds), "steps": steps, "lr": lr,
                                         "group_size": group_size, "batch_questions": batch_questions, "parameterization": parameterization})
    return SettingRun(table, used, int(features.shape[1]), proto_tables, proto, runs, out)
