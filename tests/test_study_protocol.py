"""The study protocol: arms' schedules, the untrained arms by hand, and a cross-fitted arm that tests every
question once per seed with a dev-chosen learning rate."""

import numpy as np
import pytest

from fgpo_lib.features import make_featurizer
from fgpo_lib.precompute import PrecomputeEngine, PrecomputeSpec
from fgpo_lib.study.protocol import ARMS, LR_GRID, arm_steps, run_arm


def test_arm_schedules_match_epochs_and_budgets():
    assert arm_steps(ARMS["FGPO"], 320, 16) == 80  # 4 epochs of 320 questions in batches of 16
    # GRPO (paper): 2.4x FGPO's 320 x 16 cells, at 64 x 6 sampled calls per update (the paper's count; the no-tool
    # cell is cached, asked for once per question)
    assert arm_steps(ARMS["GRPO (paper)"], 320, 16) == round(2.4 * 320 * 16 / (64 * 6))
    assert arm_steps(ARMS["Dr. GRPO (Eq. 1)"], 320, 163) == round(2.4 * 320 * 163 / (64 * 6))
    assert arm_steps(ARMS["GRPO (paper) at 1x cells"], 320, 16) == round(320 * 16 / (64 * 6))
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
    assert got["Tools w/ Desc"].pending and np.isnan(got["Tools w/ Desc"].scores).all()  # an LLM table without selection calls
    # the dead-group rate of a deterministic policy is 1 at every G; of the uniform policy, the closed form by hand
    assert np.allclose(got["No-Tool"].dead["selected"], 1.0)
    eq1 = (2 * t.rewards - 1) + 0.1 * (1 - 2 * t.space.sizes[None, :] / 3)
    by_hand = np.mean([sum((np.sum(row == v) / 8) ** 6 for v in np.unique(row)) for row in eq1])
    assert got["Random"].dead["selected"][4] == pytest.approx(by_hand)  # G = 6 is the fifth of 2, 3, ...


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
    from fgpo_lib.study.protocol import run_protocol
    from fgpo_lib.study.protocol_results import main_table, paired_comparison

    table, _ = genehop_records
    results = run_protocol({"genehop x records": table}, seeds=[0], arms=["FGPO", "GRPO (paper)", "No-Tool", "Tools w/ Desc"], progress=False)
    mt = main_table(results)
    assert list(mt.columns) == ["setting", "questions", "FGPO", "GRPO (paper)", "No-Tool", "Tools w/ Desc"]
    assert mt.loc[0, "questions"] == 100
    # a reader's Tools w/ Desc is MiniLM's description selector: a subset of the table for every question
    desc = results["genehop x records"]["Tools w/ Desc"]
    assert not desc.pending and (desc.subsets >= 0).all() and (desc.sizes >= 1).all()
    np.testing.assert_array_equal(desc.scores[0], table.rewards[np.arange(100), desc.subsets[0]])
    pc = paired_comparison(results, "FGPO", "GRPO (paper)")
    r = pc.iloc[0]
    assert r["lo"] <= r["FGPO - GRPO (paper)"] <= r["hi"] and 0 <= r["McNemar p"] <= r["Holm p"] <= 1
    assert r["MDD (80%)"] >= 0
    a, b = results["genehop x records"]["FGPO"].scores, results["genehop x records"]["GRPO (paper)"].scores
    assert r["FGPO - GRPO (paper)"] == pytest.approx(100 * (a.mean() - b.mean()))


def test_dev_selection_never_reports_the_untrained_policy(genehop_records):
    """Ties on dev go to the earliest trained checkpoint, never step 0 (the paper picks among steps 25, 50, ...)."""
    from fgpo_lib.crossfit import crossfit_folds
    from fgpo_lib.train import TrainConfig, train

    table, features = genehop_records
    fold = crossfit_folds(table.question_ids, table.tasks, k=5, seed=0)[0]
    rec = train(table, TrainConfig(method="fgpo", steps=8, eval_every=2, lr=1e-6), features=features, splits=fold)  # barely moves: dev ties
    assert rec["selected"]["step"] == 2


def test_saved_protocol_round_trips_and_transfer_by_hand(tmp_path, three_tool_table):
    """save/load keep every array; transfer scores A's choices in B's table on the shared questions."""
    from fgpo_lib.study.protocol_results import SettingMeta, transfer_frame

    t = three_tool_table
    a = run_arm(ARMS["Oracle"], t, None, seeds=[0])
    from fgpo_lib.study.protocol import ArmResult

    back = ArmResult.from_json(a.to_json())
    for k in ("scores", "final", "sizes", "subsets", "calls"):
        np.testing.assert_array_equal(getattr(a, k), getattr(back, k))
    # B: the same questions, rewards reversed over subsets; A's oracle choices scored there by hand
    b_table = type(t)(rewards=t.rewards[:, ::-1].copy(), question_ids=t.question_ids, space=t.space, questions=t.questions, tasks=t.tasks, split=t.split)
    pa, pb = tmp_path / "a.npz", tmp_path / "b.npz"
    t.save(pa), b_table.save(pb)
    b = run_arm(ARMS["Oracle"], b_table, None, seeds=[0])
    results = {"4 tools": {"A": {"FGPO": a}, "B": {"FGPO": b}}}
    meta = {("4 tools", "A"): SettingMeta("x", "ra", "4 tools", pa), ("4 tools", "B"): SettingMeta("x", "rb", "4 tools", pb)}
    tr = transfer_frame(results, meta, "4 tools").set_index(["trained on", "evaluated on"])
    by_hand = b_table.rewards[np.arange(4), a.subsets[0]].mean()
    assert tr.loc[("ra", "rb"), "transfer"] == pytest.approx(100 * by_hand)
    assert tr.loc[("ra", "rb"), "loss"] == pytest.approx(100 * (b_table.rewards.max(1).mean() - by_hand))
    assert tr.loc[("ra", "ra"), "loss"] == pytest.approx(0)


def test_description_selector_by_hand():
    from fgpo_lib.genomics.desc_selector import select_by_similarity, tool_descriptions

    sim = np.array([[0.5, 0.47, 0.1], [0.2, 0.3, 0.9], [0.4, 0.4, 0.4]])
    assert select_by_similarity(sim, max_size=4) == [(0, 1), (2,), (0, 1, 2)]
    assert select_by_similarity(sim, max_size=2) == [(0, 1), (2,), (0, 1)]
    assert tool_descriptions(["blast"])[0].startswith("blast: ")
    with pytest.raises(ValueError, match="unknown tools"):
        tool_descriptions(["nope"])


def test_every_library_of_every_benchmark_has_tool_descriptions():
    """Tools w/ Desc runs on every reader setting, GeneRegion's four sequence tools included (a full book once failed
    there: the selector knew only the eight NCBI tools)."""
    from fgpo_lib.genomics.desc_selector import tool_descriptions
    from fgpo_lib.genomics.libraries import ALL_TOOL_ORDER, LIBRARIES

    assert len(tool_descriptions(ALL_TOOL_ORDER)) == len(ALL_TOOL_ORDER)
    for benchmark, tools in LIBRARIES.items():
        assert all(d.split(": ", 1)[1] for d in tool_descriptions(tools)), benchmark


def test_tool_output_tokens():
    """No tool, no tokens; a subset's outputs are what its tools print, tokenized by SmolLM2's real vocabulary."""
    from fgpo_lib.genomics.benchmarks import load_benchmark
    from fgpo_lib.genomics.prompt_tokens import ToolOutputTokens, smollm2_token_count
    from fgpo_lib.genomics.tools import make_tools, run_subset

    q = load_benchmark("genehop")[0]
    c = ToolOutputTokens("genehop")
    assert c.count(q.qid, ()) == 0
    assert smollm2_token_count("BRCA1") >= 1 and smollm2_token_count("a b c d e f") > smollm2_token_count("a")
    two = ("gene_search", "gene_record")
    assert c.count(q.qid, two) == smollm2_token_count("\n".join(o.text for o in run_subset(make_tools(), two, q.text)))
    assert c.count(q.qid, two) >= c.count(q.qid, ("gene_search",))
    with pytest.raises(KeyError, match="no question"):
        c.count("nope", two)


def test_tool_output_tokens_of_every_benchmarks_library():
    """The protocol chapter counts tokens on every headline library, GeneRegion's sequence tools included (the full
    book once failed there: the counter knew only the eight NCBI tools); each tool alone prints something."""
    from fgpo_lib.genomics.benchmarks import load_benchmark
    from fgpo_lib.genomics.libraries import LIBRARIES
    from fgpo_lib.genomics.prompt_tokens import ToolOutputTokens
    from fgpo_lib.genomics.region_tools import REGION_TOOL_ORDER

    for benchmark, tools in LIBRARIES.items():
        q = load_benchmark(benchmark)[0]
        c = ToolOutputTokens(benchmark)
        alone = [c.count(q.qid, (t,)) for t in tools]
        if set(tools) <= set(REGION_TOOL_ORDER):  # sequence tools always print (an NCBI tool may find nothing)
            assert min(alone) > 0, alone
        assert c.count(q.qid, tools) >= max(alone), benchmark


def test_sub_table_leaves_out_the_parent_librarys_extras(three_tool_table):
    """A 2-tool sub-table must not report the 3-tool All-Tools call as its own; the arm refuses a mismatched one."""

    from fgpo_lib.genomics.libraries import sub_table

    t = three_tool_table
    t.extras = {"all_tools": {"kind": "cell", "subsets": ["+".join(t.tool_names)] * t.n_questions, "answers": [""] * t.n_questions, "rewards": [1.0] * t.n_questions}}
    sub = sub_table(t, t.tool_names[:2])
    assert sub.extras == {}
    res = run_arm(ARMS["All-Tools"], sub, None, seeds=[0])
    np.testing.assert_array_equal(res.scores[0], sub.rewards[:, sub.space.index_of(list(sub.tool_names))])
    sub.extras = t.extras
    with pytest.raises(ValueError, match="not its library"):
        run_arm(ARMS["All-Tools"], sub, None, seeds=[0])
