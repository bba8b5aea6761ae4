"""On-demand scaling runs: training and evaluation through the engine's cache equal training on the full table, and the
committed LLM runs re-derive from their cells and their table."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fgpo_lib import TrainConfig, train
from fgpo_lib.genomics.libraries import LARGE_LIBRARIES
from fgpo_lib.ondemand import ON_DEMAND, RUNS_DIR, SCHEDULE, OnDemandTable, load_on_demand
from fgpo_lib.oracle import TableOracle
from fgpo_lib.precompute import EngineOracle, PrecomputeEngine, PrecomputeError, PrecomputeSpec, evaluate_question
from fgpo_lib.scaling import ESTIMATORS, REFERENCE, run_scaling, scaling_config


@pytest.fixture(scope="module")
def engines(tmp_path_factory):
    """A 16-question GeneHop sample (3 test questions) with the records reader: the 12-tool library tabulated in one cache, and an empty
    cache for the on-demand engine."""
    d = tmp_path_factory.mktemp("ondemand")
    spec = PrecomputeSpec("genehop", "records", questions=16, tools=LARGE_LIBRARIES[12])
    full = PrecomputeEngine(spec, cache=d / "full.sqlite")
    full.run(progress=False)
    return full.build_table(), PrecomputeEngine(spec, cache=d / "lazy.sqlite")


@pytest.mark.parametrize("name", ["GRPO", "unordered set k=4"])
def test_on_demand_run_equals_the_table_run(engines, name):
    """Same seed, same cells: the on-demand run's curve is the table run's, and it pays only for the cells it drew."""
    table, lazy = engines
    cfg = scaling_config(name, 0, steps=6, batch=4, eval_every=2, lr=0.5, reward="eq1")
    ref = train(table, cfg, oracle=TableOracle(table))
    before = lazy.cache.count()
    train_oracle, eval_oracle = EngineOracle(lazy), EngineOracle(lazy)
    rec = train(OnDemandTable(lazy), cfg, oracle=train_oracle, eval_oracle=eval_oracle)
    assert [p["test"]["greedy_reward"] for p in rec["curves"]] == pytest.approx([p["test"]["greedy_reward"] for p in ref["curves"]])
    assert [p["reasoner_calls"] for p in rec["curves"]] == [p["reasoner_calls"] for p in ref["curves"]]
    assert rec["per_question"]["test"]["greedy_subset"] == ref["per_question"]["test"]["greedy_subset"]
    assert lazy.cache.count() - before <= train_oracle.unique_calls + eval_oracle.unique_calls < table.n_questions * table.n_subsets


def test_on_demand_refuses_what_needs_the_whole_table(engines):
    _, lazy = engines
    with pytest.raises(AttributeError, match="no reward matrix"):
        OnDemandTable(lazy).rewards
    with pytest.raises(ValueError, match="sampling method"):
        train(OnDemandTable(lazy), TrainConfig(method="fgpo", steps=1), oracle=EngineOracle(lazy), eval_oracle=EngineOracle(lazy))


def test_a_larger_library_is_seeded_from_a_smaller_table(tmp_path):
    """The 8-tool table's cells seed a 12-tool engine (keyed by their own tools); a table whose tools came from other
    code is refused, naming the field."""
    eight = PrecomputeEngine(PrecomputeSpec("genehop", "records", questions=4), cache=tmp_path / "a.sqlite")
    eight.run(progress=False)
    t8 = eight.build_table()
    twelve = PrecomputeEngine(PrecomputeSpec("genehop", "records", questions=4, tools=LARGE_LIBRARIES[12]), cache=tmp_path / "b.sqlite")
    assert twelve.seed_from_table(t8) == 4 * 163
    assert twelve.remaining() == (4 * (794 - 163), 4)
    t8.provenance["tools_version"] = "other-code"
    with pytest.raises(PrecomputeError, match="tools_version"):
        twelve.seed_from_table(t8)


# --- the committed LLM runs ---------------------------------------------------------------------------------------
SETTINGS = sorted(p.name for p in RUNS_DIR.iterdir() if (p / "provenance.json").exists()) if RUNS_DIR.exists() else []


def test_committed_on_demand_runs_exist_and_are_whole():
    assert SETTINGS, "no committed on-demand runs under records/scaling_llm"
    curves, finals, prov = load_on_demand()
    for s in SETTINGS:
        c = curves[curves.setting == s]
        assert set(c[c.tools == 8].estimator) >= {REFERENCE}
        big = c[c.tools > 8]
        assert len(big) and set(big.estimator) <= set(ON_DEMAND)
        assert (big.groupby(["estimator", "seed"]).step.max() == prov[s]["schedule"]["steps"]).all()


@pytest.mark.parametrize("setting", SETTINGS)
def test_committed_cells_rederive_live(setting, tmp_path):
    """Six committed cells that hold an extra tool (three scored above 0, three at 0), evaluated again with the real
    reasoner: the same score."""
    out = RUNS_DIR / setting
    prov = json.loads((out / "provenance.json").read_text())
    cells = pd.read_parquet(out / "cells.parquet")
    extra = set(LARGE_LIBRARIES[20]) - set(LARGE_LIBRARIES[8])
    held = cells[[bool(set(s.split("+")) & extra) for s in cells.subset]]
    pick = pd.concat([held[held.score > 0].sample(3, random_state=0), held[held.score == 0].sample(3, random_state=0)])
    n_tools = max(int(k) for k in prov["tables"])
    spec = PrecomputeSpec(prov["benchmark"], prov["reasoner"], questions=prov["questions"], tools=LARGE_LIBRARIES[n_tools])
    engine = PrecomputeEngine(spec, cache=tmp_path / "c.sqlite")
    engine.check_cells_provenance(prov["tables"][str(n_tools)], prov["tables"][str(n_tools)]["library"], setting)
    by_id = {q.qid: q for q in engine.questions}
    for qid, label, score in zip(pick.question_id, pick.subset, pick.score):
        (_, _, live, status, err), = evaluate_question(spec, by_id[qid], [engine.space.index_of(label.split("+"))], engine.reasoner)
        assert status == "ok", err
        assert live == pytest.approx(score, abs=1e-6), (qid, label)


@pytest.mark.parametrize("setting", SETTINGS)
def test_committed_eight_tool_point_reruns(setting):
    """The 8-tool runs read the committed table: one estimator's curve, rerun, equals the record."""
    from fgpo_lib.genomics.libraries import sub_table
    from fgpo_lib.table import RewardTable

    prov = json.loads((RUNS_DIR / setting / "provenance.json").read_text())
    table = RewardTable.load(Path(__file__).resolve().parents[1] / "tables" / f"{setting}.npz")
    assert table.content_hash() == prov["tables"]["8"]["content_hash"]
    curves, _, _ = load_on_demand()
    rec = curves[(curves.setting == setting) & (curves.tools == 8) & (curves.estimator == "Dr. GRPO") & (curves.seed == 0)]
    sched = prov["schedule"]
    live, _ = run_scaling({8: sub_table(table, LARGE_LIBRARIES[8])}, ["Dr. GRPO"], seeds=(0,), **{k: sched[k] for k in ("steps", "batch", "eval_every", "lr", "reward")})
    np.testing.assert_allclose(live["test score"], rec["test score"])
    np.testing.assert_array_equal(live["distinct calls"], rec["distinct calls"])


def test_on_demand_cli_names_bad_input(tmp_path, capsys):
    """``fgpo ondemand`` with a table of another benchmark's sample, a missing table and an unknown benchmark: exit 2
    and one line naming the problem."""
    from fgpo_lib.cli import main

    eight = PrecomputeEngine(PrecomputeSpec("genehop", "records", questions=4), cache=tmp_path / "a.sqlite")
    eight.run(progress=False)
    eight.build_table().save(tmp_path / "t.npz")
    common = ["--reasoner", "records", "--cache", str(tmp_path / "b.sqlite"), "--out-dir", str(tmp_path / "out")]
    assert main(["ondemand", "--benchmark", "geneseq", "--table", str(tmp_path / "t.npz"), *common]) == 2
    assert "--table" in (err := capsys.readouterr().err) and "holds other questions than the 4-question sample of geneseq" in err
    assert main(["ondemand", "--benchmark", "genehop", "--table", str(tmp_path / "missing.npz"), *common]) == 2
    assert "missing.npz: no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["ondemand", "--benchmark", "nope", "--table", str(tmp_path / "t.npz"), *common])
    assert "invalid choice: 'nope'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()  # nothing written for a refused run


def test_on_demand_cli_resumes_without_rerunning(tmp_path):
    """A second run over finished records trains nothing again: no (library, estimator, seed, step) twice."""
    from fgpo_lib.cli import main

    def run_ondemand(argv):
        assert main(["ondemand", *argv]) == 0

    eight = PrecomputeEngine(PrecomputeSpec("genehop", "records", questions=16), cache=tmp_path / "a.sqlite")
    eight.run(progress=False)
    eight.build_table().save(tmp_path / "t.npz")
    args = ["--benchmark", "genehop", "--reasoner", "records", "--table", str(tmp_path / "t.npz"), "--estimators", "GRPO",
            "--cache", str(tmp_path / "b.sqlite"), "--out-dir", str(tmp_path / "out")]
    run_ondemand(args)
    first = pd.read_parquet(tmp_path / "out" / "genehop__records" / "curves.parquet")
    run_ondemand(args)
    again = pd.read_parquet(tmp_path / "out" / "genehop__records" / "curves.parquet")
    assert len(again) == len(first) and not again.duplicated(["tools", "estimator", "seed", "step"]).any()
    assert set(again.tools) == {8, 20} and set(again.seed) == set(SCHEDULE["seeds"])
