"""The paper's protocol pieces against hand-computed values: derived rewards, Dr. GRPO's advantages, the k-subset dial,
McNemar, Holm, the minimum detectable difference, and cross-fitting."""

import math

import numpy as np
import pytest
import torch

from fgpo_lib.algos import FGPO, FGPOConfig, fgpo_loss, grpo_advantages
from fgpo_lib.algos.fgpo import draw_subset_mask
from fgpo_lib.crossfit import crossfit_folds
from fgpo_lib.rewards import RewardSpec
from fgpo_lib.stats import holm, mcnemar, min_detectable_difference

# sizes of the 3-tool space's subsets, canonical order: () a b c ab ac bc abc
THIRD = 1 / 3


def test_eq1_by_hand(three_tool_table):
    r = RewardSpec("eq1", 0.1).apply(three_tool_table.rewards, three_tool_table.space)
    parsimony = [0.1, 0.1 * THIRD, 0.1 * THIRD, 0.1 * THIRD, -0.1 * THIRD, -0.1 * THIRD, -0.1 * THIRD, -0.1]
    # q0 scores 0 1 0 0 1 1 0 0.5 -> 2s-1 = -1 1 -1 -1 1 1 -1 0
    np.testing.assert_allclose(r[0], np.array([-1, 1, -1, -1, 1, 1, -1, 0]) + parsimony, atol=1e-6)
    # q2 scores 0.5 everywhere: only the parsimony term is left, fewer tools higher
    np.testing.assert_allclose(r[2], parsimony, atol=1e-6)
    assert RewardSpec("eq1", 0.1).range() == (-1.1, 1.1)


def test_differential_by_hand(three_tool_table):
    r = RewardSpec("differential").apply(three_tool_table.rewards, three_tool_table.space)
    np.testing.assert_allclose(r[0], [0.05, 1.0, 0.05, 0.05, 1.0, 1.0, 0.05, 0.525], atol=1e-6)  # c(empty) = 0
    np.testing.assert_allclose(r[2], [0.05] * 8, atol=1e-6)  # constant 0.5: tools neither rescue nor break
    scores = three_tool_table.rewards.copy()
    scores[3, 0] = 1.0  # right without tools: every subset that is wrong breaks it
    r3 = RewardSpec("differential").apply(scores, three_tool_table.space)[3]
    np.testing.assert_allclose(r3, [0.05, -0.9, -0.9, 0.05, -0.9, 0.05, 0.05, 0.05], atol=1e-6)


def test_score_and_parsing():
    assert RewardSpec.parse("eq1(0.05)") == RewardSpec("eq1", 0.05)
    assert RewardSpec.parse("eq1") == RewardSpec("eq1", 0.1) and RewardSpec.parse("differential").kind == "differential"
    for bad in ("eq2", "score(1)", "", "eq1(-1)"):
        with pytest.raises(ValueError):
            RewardSpec.parse(bad)


def test_differential_needs_the_empty_subset():
    from fgpo_lib import SubsetSpace

    with pytest.raises(ValueError, match="empty subset"):
        RewardSpec("differential").apply(np.zeros((1, 7)), SubsetSpace(3, min_size=1))


def test_dr_grpo_keeps_a_parsimony_only_group_small_and_std_scaling_blows_it_up(three_tool_table):
    """Every subset is right (score 1): Eq. 1 rewards differ only in the 0.1 tie-break."""
    lam = 0.1
    space = three_tool_table.space
    r = RewardSpec("eq1", lam).apply(np.ones((1, space.n_subsets)), space)[0]
    group = torch.tensor([[r[0], r[1], r[4], r[7]]])  # sizes 0, 1, 2, 3: rewards 1.1, 1.033, 0.967, 0.9
    dr = grpo_advantages(group, "none")
    std = grpo_advantages(group, "group")
    np.testing.assert_allclose(dr.numpy(), [[0.1, 0.1 * THIRD, -0.1 * THIRD, -0.1]], atol=1e-6)
    assert dr.abs().max() <= lam + 1e-6
    assert std.abs().max() > 1.0  # 0.1 / std([.1, .033, -.033, -.1]) = 1.16: a tie-break as big as right-vs-wrong
    gen = np.random.default_rng(0)  # any parsimony-only group: Dr. GRPO's advantages stay within the term's range, 2 lam
    for _ in range(200):
        g = torch.tensor(r[gen.integers(0, space.n_subsets, size=6)])[None]
        assert grpo_advantages(g, "none").abs().max() <= 2 * lam + 1e-6


def test_k_dial_at_all_is_fgpo_exactly():
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(5, 16, generator=gen, requires_grad=True)
    rewards = torch.rand(5, 16, generator=gen)
    full = torch.autograd.grad(fgpo_loss(logits, rewards, entropy_coef=0.03), logits)[0]
    mask = draw_subset_mask(5, 16, 16, gen)
    assert mask.all()
    dial = torch.autograd.grad(fgpo_loss(logits, rewards, entropy_coef=0.03, subset_mask=mask), logits)[0]
    assert (full - dial).abs().max() < 1e-6


def test_k_dial_renormalises_on_the_drawn_subsets():
    logits = torch.tensor([[0.0, 1.0, 2.0, 3.0]], requires_grad=True)
    rewards = torch.tensor([[1.0, 0.0, 0.5, 0.0]])
    mask = torch.tensor([[True, False, True, False]])
    loss = fgpo_loss(logits, rewards, subset_mask=mask, entropy_coef=0.03)
    p = torch.softmax(torch.tensor([0.0, 2.0]), 0)  # pi renormalised on subsets 0 and 2
    assert torch.isfinite(loss)
    grad = torch.autograd.grad(loss, logits)[0][0]
    expected = -p * (torch.tensor([1.0, 0.5]) - (p * torch.tensor([1.0, 0.5])).sum())  # exact gradient over the two
    ent = 0.03 * p * (torch.log(p) - (p * torch.log(p)).sum())
    np.testing.assert_allclose(grad[[0, 2]].numpy(), (expected + ent).numpy(), atol=1e-6)
    assert grad[1] == 0 and grad[3] == 0
    assert draw_subset_mask(7, 16, 4, torch.Generator().manual_seed(1)).sum(1).tolist() == [4] * 7


def test_k_dial_counts_the_cells_it_draws():
    rewards = torch.rand(10, 16)
    algo = FGPO(FGPOConfig(subsets_per_update=4), rewards, None, n_train=10)
    policy = torch.nn.Linear(3, 16)
    opt = torch.optim.Adam(policy.parameters())
    gen = torch.Generator().manual_seed(0)
    for _ in range(3):
        algo.update(policy, opt, torch.randn(10, 3), torch.arange(10), gen)
    assert algo.evaluations["reasoner_calls"] == 3 * 10 * 4
    assert 10 * 4 <= algo.evaluations["unique_reasoner_calls"] <= 10 * 12 and algo.evaluations["unique_reasoner_calls"] == int(algo.seen.sum())


def test_mcnemar_by_hand():
    a = np.array([1] * 10 + [0] * 2 + [1] * 5 + [0] * 3, bool)  # 10 a-only, 2 b-only, 5 both, 3 neither
    b = np.array([0] * 10 + [1] * 2 + [1] * 5 + [0] * 3, bool)
    res = mcnemar(a, b)
    assert (res["b10"], res["b01"], res["method"]) == (10, 2, "exact binomial")
    assert res["p"] == pytest.approx(2 * (1 + 12 + 66) / 2**12, rel=1e-9)  # 2 P(X <= 2), X ~ Bin(12, 1/2)
    a = np.array([1] * 30 + [0] * 10, bool)
    res = mcnemar(a, ~a)
    assert res["method"].startswith("chi-squared")
    assert res["p"] == pytest.approx(math.erfc(math.sqrt((19**2 / 40) / 2)), rel=1e-9)  # (|30-10|-1)^2/40 on 1 df
    assert mcnemar(a, a)["p"] == 1.0


def test_holm_and_minimum_detectable_difference_by_hand():
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    np.testing.assert_allclose(holm([0.5, 0.9]), [1.0, 1.0])
    d = np.tile([1.0, -1.0], 50)  # sd (ddof 1) = sqrt(100/99)
    expected = (1.959963984540054 + 0.8416212335729143) * math.sqrt(100 / 99) / 10
    assert min_detectable_difference(d) == pytest.approx(expected, rel=1e-9)


def test_crossfitting_tests_every_question_exactly_once_per_seed():
    ids = [f"q{i}" for i in range(103)]
    tasks = [f"t{i % 4}" for i in range(103)]
    for seed in (0, 1):
        folds = crossfit_folds(ids, tasks, k=5, seed=seed)
        tested = np.concatenate([f["test"] for f in folds])
        assert sorted(tested.tolist()) == list(range(103))
        for f in folds:
            assert not set(f["train"]) & set(f["dev"]) and not (set(f["train"]) | set(f["dev"])) & set(f["test"])
            assert len(f["train"]) + len(f["dev"]) + len(f["test"]) == 103 and len(f["dev"]) > 0
            per_task = [sum(tasks[i] == t for i in f["test"]) for t in ("t0", "t1", "t2", "t3")]
            assert max(per_task) - min(per_task) <= 1  # stratified: every task spread over the folds
    assert [f["test"].tolist() for f in crossfit_folds(ids, tasks, seed=0)] != [f["test"].tolist() for f in crossfit_folds(ids, tasks, seed=1)]


def test_reward_oracle_derives_on_demand_and_counts_the_no_tool_calls(three_tool_table):
    from fgpo_lib.oracle import RewardOracle, TableOracle

    space = three_tool_table.space
    rows, subsets = np.array([0, 3]), np.array([[1, 7], [3, 3]])
    for spec in (RewardSpec("eq1", 0.1), RewardSpec("differential"), RewardSpec("score")):
        oracle = RewardOracle(TableOracle(three_tool_table), spec, space)
        got = oracle(rows, subsets)
        table = spec.apply(three_tool_table.rewards, space)
        np.testing.assert_allclose(got, table[rows[:, None], subsets], atol=1e-6)
        extra = 2 if spec.kind == "differential" else 0  # one no-tool request per question in the batch
        assert oracle.calls == 4 + extra and oracle.unique_calls == 3 + extra


def test_training_records_its_reward_and_reports_accuracy_on_the_raw_score(three_tool_table):
    from fgpo_lib import TrainConfig, train

    runs = {r: train(three_tool_table, TrainConfig(method=m, reward=r, steps=20, featurizer="constant")) for m, r in (("fgpo", "eq1(0.1)"), ("grpo", "differential"))}
    for reward, run in runs.items():
        assert run["config"]["reward"] == reward
        final = run["final"]["train"]
        assert 0.0 <= final["greedy_reward"] <= 1.0 and 0.0 <= final["expected_reward"] <= 1.0  # raw scores, not Eq. 1
    with pytest.raises(ValueError, match="unknown reward"):
        TrainConfig(reward="bonus")


def test_best_subsets_and_dpo_rejected_by_hand(three_tool_table):
    from fgpo_lib.algos import best_subsets
    from fgpo_lib.algos.imitation import draw_rejected

    scores = torch.from_numpy(three_tool_table.rewards)
    best = best_subsets(scores)
    assert best.tolist() == [1, 2, 0, 3]  # first maximum: q0 'a', q1 'b', q2 constant -> the empty subset, q3 'c'
    gen = torch.Generator().manual_seed(0)
    for _ in range(50):
        rejected, has = draw_rejected(scores, best, gen)
        assert has.tolist() == [True, True, False, True]
        for q in (0, 1, 3):
            assert scores[q, rejected[q]] < scores[q, best[q]]


@pytest.mark.parametrize("method", ["sft", "dpo"])
def test_sft_and_dpo_learn_the_best_subset(method, three_tool_table):
    from fgpo_lib import TrainConfig, train

    t = three_tool_table
    t.split[:] = "train"
    run = train(t, TrainConfig(method=method, steps=150, lr=0.1, featurizer="text", parameterization="flat"))
    assert run["final"]["train"]["greedy_reward"] == pytest.approx((1 + 1 + 0.5 + 1) / 4)  # each question's best score (q2: 0.5 everywhere)
    assert run["final"]["reasoner_calls"] == 4 * 8


def test_dev_selection_picks_the_best_dev_checkpoint_and_reports_its_test_metrics():
    from fgpo_lib import TrainConfig, train
    from fgpo_lib.examples import protein_structure_table

    table = protein_structure_table(n_questions=60, seed=0)
    folds = crossfit_folds(table.question_ids, table.tasks, k=3, seed=0)
    run = train(table, TrainConfig(method="grpo", steps=40, eval_every=10, featurizer="constant"), splits=folds[0])
    dev_curve = [(c["step"], c["dev"]["greedy_reward"]) for c in run["curves"]]
    best = max(r for _, r in dev_curve)
    assert run["selected"]["step"] == next(step for step, r in dev_curve if r == best)  # the earliest best
    point = next(c for c in run["curves"] if c["step"] == run["selected"]["step"])
    assert run["selected"]["test"] == point["test"] and run["table"]["n_test"] == len(folds[0]["test"])
    assert run["per_question"]["test"]["question_ids"] == [table.question_ids[i] for i in folds[0]["test"]]
    assert train(table, TrainConfig(steps=5, featurizer="constant"))["selected"] is None  # no dev split


def test_degenerate_share_by_library_size_by_hand(three_tool_table):
    from fgpo_lib.table_analyses import degenerate_share_by_library_size

    df = degenerate_share_by_library_size(three_tool_table.rewards, three_tool_table.space)
    # 1 tool: each of {a}, {b}, {c} leaves 3 of 4 questions constant; 2 tools: 2 of 4 each; all 3: only q2
    assert df.to_dict("list") == {"tools": [1, 2, 3], "libraries": [3, 3, 1], "degenerate_share": [0.75, 0.5, 0.25]}


def test_dead_group_rate_by_hand(three_tool_table):
    from fgpo_lib.table_analyses import dead_group_rate

    rewards = three_tool_table.rewards[:1]  # q0: 0 1 0 0 1 1 0 0.5
    uniform = np.full((1, 8), 1 / 8)
    df = dead_group_rate(uniform, rewards, [2, 3])
    np.testing.assert_allclose(df.dead_group_rate, [(4 / 8) ** 2 + (3 / 8) ** 2 + (1 / 8) ** 2, (4 / 8) ** 3 + (3 / 8) ** 3 + (1 / 8) ** 3])
    eq1 = RewardSpec("eq1", 0.1).apply(three_tool_table.rewards, three_tool_table.space)[:1]
    # Eq. 1 splits each score class by size: -0.9 (empty), 1.033 (a), -0.967 (b, c), 0.967 (ab, ac), -1.033 (bc),
    # -0.1 (abc): class sizes 1, 1, 2, 2, 1, 1 of 8, so G = 2 gives (1 + 1 + 4 + 4 + 1 + 1) / 64
    assert dead_group_rate(uniform, eq1, [2]).dead_group_rate[0] == pytest.approx(12 / 64)


def test_grpo_paper_gets_the_papers_epochs():
    """The paper: 200 steps x 64 prompts x G = 6 = 76,800 sampled calls against FGPO's 16 x 2,002 cells (2.4x), i.e.
    6.39 epochs over its 2,002 training questions; the no-tool cell of the differential reward is not counted."""
    from fgpo_lib.study.protocol import ARMS, arm_steps

    arm = ARMS["GRPO (paper)"]
    steps = arm_steps(arm, n_train=2002, n_subsets=16)
    assert steps == 200
    assert round(steps * arm.config.batch_questions / 2002, 2) == 6.39


def test_the_differential_reward_asks_for_the_no_tool_cell_once_per_question(three_tool_table):
    from fgpo_lib.oracle import RewardOracle, TableOracle
    from fgpo_lib.rewards import RewardSpec

    inner = TableOracle(three_tool_table)
    oracle = RewardOracle(inner, RewardSpec.parse("differential"), three_tool_table.space)
    rows, subsets = np.array([0, 1]), np.array([[1, 2], [3, 4]])
    oracle(rows, subsets)
    oracle(rows, subsets)
    assert inner.calls == 2 * 4 + 2  # the sampled cells of both updates, and each question's no-tool cell once
