"""The study protocol: arms' schedules, the untrained arms by hand, and a cross-fitted arm that tests every
question once per seed with a dev-chosen learning rate."""

import numpy as np
import pytest

from fgpo_lib.features import make_featurizer
from fgpo_lib.precompute import PrecomputeEngine, PrecomputeSpec
from fgpo_lib.study.protocol import ARMS, LR_GRID, arm_steps, run_arm


def test_arm_schedules_match_epochs_and_budgets():
    assert arm_steps(ARMS["FGPO"], 320, 16) == 80  # 4 epochs of 320 questions in batches of 16
    # GRPO (paper): 2.4x FGPO's 320 x 16 cells, at 64 x (6 samples + 1 no-tool cell) calls per update
    assert arm_steps(ARMS["GRPO (paper)"], 320, 16) == round(2.4 * 320 * 16 / (64 * 7))
    assert arm_steps(ARMS["Dr. GRPO (Eq. 1)"], 320, 163) == round(2.4 * 320 * 163 / (64 * 6))
    assert arm_steps(ARMS["GRPO (paper) at 1x cells"], 320, 16) == round(320 * 16 / (64 * 7))
    assert arm_steps(ARMS["FGPO (current protocol)"], 320, 16) == 200


def test_untrained_arms_by_hand(three_tool_table):
    t = three_tool_table
    got = {name: run_arm(ARMS[name], t, None, seeds=[0, 1]) for name in ("No-Tool", "Oracle", "All-Tools", "Random", "Tools w/ Desc")}
    np.testing.assert_array_equal(got["No-Tool"].scores, np.tile(t.rewards[:, 0], (2, 1)))
    np.testing.assert_array_equal(got["Oracle"].scores[0], [1, 1, 0.5, 1])
    np.testing.assert_array_equal(got["All-Tools"].scores[0], t.rewards[:, 7])  # a+b+c, the last column
    assert got["All-Tools"].sizes[0].tolist() == [3, 3, 3, 3]
    cols = np.random.default_rng(0).integers(0, 8, 4)
    np.testing.assert_array_equal(got["Random"].scores[1], t.rewards[np.arange(4), cols])
    assert got["Tools w/ Desc"].pending and np.isnan(got["Tools w/ Desc"].scores).all()


@pytest.fixture(scope="module")
def genehop_records(tmp_path_factory):
    engine = PrecomputeEngine(PrecomputeSpec("genehop", "records"), cache=tmp_path_factory.mktemp("c") / "c.sqlite")
    engine.run(progress=False)
    table = engine.build_table()
    return table, make_featurizer("text")(table.questions)


@pytest.mark.parametrize("name", ["FGPO", "GRPO (paper)", "SFT"])
def test_a_trained_arm_tests_every_question_once_per_seed(name, genehop_records):
    table, features = genehop_records
    res = run_arm(ARMS[name], table, features, seeds=[0, 1], k=5)
    assert res.scores.shape == (2, 100) and not np.isnan(res.scores).any()
    assert ((0 <= res.scores) & (res.scores <= 1)).all() and ((0 <= res.sizes) & (res.sizes <= 4)).all()
    assert len(res.lrs) == 10 and set(res.lrs) <= set(LR_GRID)  # 2 seeds x 5 folds, each with a dev-chosen rate
    assert (res.calls > 0).all()
    # the arm learns: above the uniform policy's mean score
    assert res.scores.mean() > table.rewards.mean()


def test_protocol_tables_on_two_settings(genehop_records, three_tool_table):
    from fgpo_lib.study.protocol import main_table, paired_comparison, run_protocol

    table, _ = genehop_records
    results = run_protocol({"genehop x records": table}, seeds=[0], arms=["FGPO", "GRPO (paper)", "No-Tool", "Tools w/ Desc"], progress=False)
    mt = main_table(results)
    assert list(mt.columns) == ["setting", "questions", "FGPO", "GRPO (paper)", "No-Tool", "Tools w/ Desc"]
    assert mt.loc[0, "Tools w/ Desc"] == "pending" and mt.loc[0, "questions"] == 100
    pc = paired_comparison(results, "FGPO", "GRPO (paper)")
    r = pc.iloc[0]
    assert r["lo"] <= r["FGPO - GRPO (paper)"] <= r["hi"] and 0 <= r["McNemar p"] <= r["Holm p"] <= 1
    assert r["MDD (80%)"] >= 0
    a, b = results["genehop x records"]["FGPO"].scores, results["genehop x records"]["GRPO (paper)"].scores
    assert r["FGPO - GRPO (paper)"] == pytest.approx(100 * (a.mean() - b.mean()))
