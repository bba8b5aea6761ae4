"""The scaling chapter: its committed run records re-derive live, and its Pareto front and paired differences by hand."""

import json

import numpy as np
import pandas as pd
import pytest

from fgpo_lib.precompute import PrecomputeEngine, PrecomputeSpec
from fgpo_lib.scaling import RUNS_DIR, SCHEDULE, load_runs, paired_against, pareto_front, run_scaling


def test_pareto_front_by_hand():
    pts = pd.DataFrame({"distinct calls": [10, 20, 5, 30, 20], "test score": [50, 60, 40, 55, 70]})
    front = pareto_front(pts)
    assert list(zip(front["distinct calls"], front["test score"])) == [(5, 40), (10, 50), (20, 70)]


def test_paired_against_by_hand():
    rows = []
    for est, scores in (("FGPO (all subsets)", [1, 1, 0, 1]), ("GRPO", [1, 0, 0, 1])):
        for seed in (0, 1):
            rows += [{"tools": 8, "estimator": est, "seed": seed, "question_id": f"q{i}", "score": s} for i, s in enumerate(scores)]
    got = paired_against(pd.DataFrame(rows)).iloc[0]
    assert got["estimator"] == "GRPO" and got["vs FGPO (all subsets)"] == pytest.approx(-25.0)
    assert got["lo"] <= -25.0 <= got["hi"]


@pytest.mark.skipif(not (RUNS_DIR / "genehop__records" / "provenance.json").exists(), reason="no committed GeneHop scaling run")
def test_a_committed_scaling_point_rederives_live(tmp_path):
    """The 8-tool table of the committed GeneHop x records run is rebuilt from the engine (its content hash must
    match), and one estimator's run is repeated: every curve point equals the committed one."""
    d = RUNS_DIR / "genehop__records"
    prov = json.loads((d / "provenance.json").read_text())
    engine = PrecomputeEngine(PrecomputeSpec("genehop", "records", questions=prov["questions"]), cache=tmp_path / "c.sqlite")
    engine.run(progress=False)
    table = engine.build_table()
    assert table.content_hash() == prov["tables"]["8"]["content_hash"]
    s = SCHEDULE
    curves, _ = run_scaling({8: table}, ["GRPO"], seeds=[0], steps=s["steps"], batch=s["batch"], eval_every=s["eval_every"], lr=s["lr"], reward=s["reward"])
    committed, _, _ = load_runs(RUNS_DIR)
    want = committed[(committed.setting == "genehop__records") & (committed.tools == 8) & (committed.estimator == "GRPO") & (committed.seed == 0)]
    cols = ["step", "calls", "distinct calls", "test score"]
    np.testing.assert_allclose(curves[cols].to_numpy(float), want[cols].to_numpy(float), rtol=0, atol=1e-9)
