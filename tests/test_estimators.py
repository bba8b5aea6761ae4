"""Beyond full enumeration: the sampled estimators against the exact FGPO gradient on a hand-built 3-tool table."""

import numpy as np
import pytest
import torch

from fgpo_lib.algos import fgpo_loss
from fgpo_lib.algos.rloo import RLOOConfig, rloo_advantages, rloo_surrogate
from fgpo_lib.algos.sampled import table_reward_of
from fgpo_lib.algos.sum_and_sample import SumAndSampleConfig, sum_and_sample_surrogate

Z = torch.tensor([0.3, -0.2, 1.0, 0.1, -0.5, 0.7, 0.0, 0.4])  # one question's logits over the 8 subsets


def exact_gradient(rewards_row: np.ndarray) -> torch.Tensor:
    z = Z.clone().requires_grad_(True)
    return torch.autograd.grad(-fgpo_loss(z[None], torch.as_tensor(rewards_row)[None]), z)[0]


def mean_estimate(surrogate, rewards_row: np.ndarray, n: int = 40000, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """The mean of ``n`` independent estimates of the gradient wrt Z, and its standard error: every batch row is a
    copy of the question, differentiated through its own copy of Z, so each row's gradient is one estimate."""
    zz = Z.clone().repeat(n, 1).requires_grad_(True)
    obj, _ = surrogate(zz, table_reward_of(np.tile(rewards_row, (n, 1))), torch.Generator().manual_seed(seed))
    g = torch.autograd.grad(obj * n, zz)[0]  # the objective is a mean over rows
    return g.mean(0), g.std(0) / np.sqrt(n)


def test_sum_and_sample_with_every_subset_is_fgpo_exactly(three_tool_table):
    row = three_tool_table.rewards[0]
    z = Z.clone().requires_grad_(True)
    obj, cells = sum_and_sample_surrogate(SumAndSampleConfig(top_m=8))(z[None], table_reward_of(row[None]), torch.Generator().manual_seed(0))
    assert cells.shape == (1, 8)
    assert (torch.autograd.grad(obj, z)[0] - exact_gradient(row)).abs().max() < 1e-6


@pytest.mark.parametrize("top_m", [1, 3])
def test_sum_and_sample_is_unbiased(top_m, three_tool_table):
    row = three_tool_table.rewards[3]
    mean, se = mean_estimate(sum_and_sample_surrogate(SumAndSampleConfig(top_m=top_m, n_samples=2)), row)
    exact = exact_gradient(row)
    assert ((mean - exact).abs() <= 4 * se + 1e-6).all(), (mean, exact, se)


def test_rloo_baseline_excludes_the_sample_itself():
    adv = rloo_advantages(torch.tensor([[1.0, 0.0, 0.0, 1.0], [0.5, 0.5, 0.5, 0.5]]))
    np.testing.assert_allclose(adv[0].numpy(), [1 - 1 / 3, 0 - 2 / 3, 0 - 2 / 3, 1 - 1 / 3], atol=1e-6)
    assert (adv[1] == 0).all()  # a dead group stays dead
    r = torch.tensor([[0.2, 0.9, 0.4]])
    for i in range(3):  # changing R_i moves A_i by exactly that much: its own reward is not in its baseline
        bumped = r.clone()
        bumped[0, i] += 1.0
        assert rloo_advantages(bumped)[0, i] - rloo_advantages(r)[0, i] == pytest.approx(1.0)


def test_rloo_is_unbiased(three_tool_table):
    row = three_tool_table.rewards[0]
    mean, se = mean_estimate(rloo_surrogate(RLOOConfig(group_size=4)), row)
    assert ((mean - exact_gradient(row)).abs() <= 4 * se + 1e-6).all()


@pytest.mark.parametrize("method", ["rloo", "sum-and-sample", "unordered-set"])
def test_estimators_train_through_the_loop_and_count_their_calls(method, three_tool_table):
    from fgpo_lib import TrainConfig, train

    t = three_tool_table
    t.split[:] = "train"
    run = train(t, TrainConfig(method=method, steps=100, lr=0.1, featurizer="text", parameterization="flat", group_size=4, sas={"top_m": 2, "n_samples": 2}, us={"set_size": 3}))
    per_update = 4 * {"rloo": 4, "sum-and-sample": 2 + 2, "unordered-set": 3}[method]  # questions x cells per question
    assert run["final"]["reasoner_calls"] == 100 * per_update
    assert run["final"]["unique_reasoner_calls"] <= 4 * 8
    assert run["final"]["train"]["expected_reward"] > t.rewards.mean()  # it learns


def test_set_probability_by_hand():
    from fgpo_lib.algos.unordered_set import set_prob

    p = torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64)
    # {a, b} from (a .5, b .3, c .2): a then b, .5 * .3/.5, plus b then a, .3 * .5/.7
    assert set_prob(p[:2]).item() == pytest.approx(0.5 * 0.3 / 0.5 + 0.3 * 0.5 / 0.7)
    # every 2-set of 3 items: the probabilities of all sets of one size sum to 1
    sets = [set_prob(p[list(ix)]).item() for ix in ((0, 1), (0, 2), (1, 2))]
    assert sum(sets) == pytest.approx(1.0)


@pytest.mark.parametrize("k", [2, 4])
def test_unordered_set_estimator_is_unbiased(k, three_tool_table):
    from fgpo_lib.algos.unordered_set import UnorderedSetConfig, unordered_set_surrogate

    row = three_tool_table.rewards[3]
    mean, se = mean_estimate(unordered_set_surrogate(UnorderedSetConfig(set_size=k)), row, n=20000)
    assert ((mean - exact_gradient(row)).abs() <= 4 * se + 1e-6).all(), (mean, exact_gradient(row), se)


def test_unordered_set_draws_distinct_subsets_and_a_dead_set_gives_zero():
    from fgpo_lib.algos.unordered_set import UnorderedSetConfig, unordered_set_surrogate

    z = Z.clone().repeat(50, 1).requires_grad_(True)
    obj, draws = unordered_set_surrogate(UnorderedSetConfig(set_size=4))(z, table_reward_of(np.full((50, 8), 0.7, np.float32)), torch.Generator().manual_seed(0))
    assert all(len(set(r.tolist())) == 4 for r in draws)
    assert torch.autograd.grad(obj, z)[0].abs().max() < 1e-6  # equal rewards: the built-in baseline cancels them


def test_dynamic_sampling_never_learns_from_a_dead_group_and_counts_every_discarded_call(three_tool_table):
    from fgpo_lib.algos import GRPO, GRPOConfig
    from fgpo_lib.oracle import TableOracle

    oracle = TableOracle(three_tool_table)
    algo = GRPO(GRPOConfig(dynamic_sampling=3), oracle, group_size=2, ref_policy=None)
    policy = torch.nn.Linear(2, 8)
    opt = torch.optim.SGD(policy.parameters(), lr=0.0)  # no learning: every update sees the same policy
    seen_groups = []
    real = algo._redraw_dead

    def spy(rows, logp, samples, rewards, gen):
        out = real(rows, logp, samples, rewards, gen)
        seen_groups.append((out[1][out[2]], out[1]))
        return out

    algo._redraw_dead = spy
    x, rows, gen = torch.randn(4, 2), torch.arange(4), torch.Generator().manual_seed(0)
    for _ in range(30):
        before = oracle.calls
        algo.update(policy, opt, x, rows, gen)
        kept, all_rewards = seen_groups[-1]
        assert not (kept == kept[:, :1]).all(dim=1).any()  # no kept group is dead
        redraws = oracle.calls - before - 4 * 2
        assert redraws >= 0 and redraws % 2 == 0  # every redraw of a group is G more counted calls
    assert oracle.calls > 30 * 4 * 2  # q2 (constant) is always dead: its redraws were counted, then it was dropped


def _grpo(table, **cfg):
    from fgpo_lib.algos import GRPO, GRPOConfig
    from fgpo_lib.oracle import TableOracle

    oracle = TableOracle(table)
    return GRPO(GRPOConfig(**cfg), oracle, group_size=2, ref_policy=None), oracle


def test_greso_skipping_saves_the_calls_of_questions_last_seen_dead(three_tool_table):
    algo, oracle = _grpo(three_tool_table, skip_dead=1.0)
    policy, x, rows, gen = torch.nn.Linear(2, 8), torch.randn(4, 2), torch.arange(4), torch.Generator().manual_seed(0)
    opt = torch.optim.SGD(policy.parameters(), lr=0.0)
    algo.update(policy, opt, x, rows, gen)
    assert oracle.calls == 4 * 2 and algo.last_dead[2]  # q2 is constant: its first group was dead
    for _ in range(10):
        before = oracle.calls
        algo.update(policy, opt, x, rows, gen)
        assert oracle.calls - before <= (4 - 1) * 2  # q2 (always dead) is never asked again at skip_dead = 1
    assert algo.skipped >= 10


def test_replay_fills_dead_slots_with_stored_live_groups_without_calls(three_tool_table):
    from fgpo_lib.algos import grpo as grpo_module

    algo, oracle = _grpo(three_tool_table, replay=16)
    policy, x, rows, gen = torch.nn.Linear(2, 8), torch.randn(4, 2), torch.arange(4), torch.Generator().manual_seed(1)
    opt = torch.optim.SGD(policy.parameters(), lr=0.0)
    batches = []
    real_adv = grpo_module.grpo_advantages
    grpo_module.grpo_advantages = lambda r, scale: (batches.append(r.clone()), real_adv(r, scale))[1]
    try:
        for _ in range(20):
            algo.update(policy, opt, x, rows, gen)
    finally:
        grpo_module.grpo_advantages = real_adv
    assert oracle.calls == 20 * 4 * 2  # replays cost nothing
    assert algo.replayed > 0 and len(algo.buffer) <= 16
    for r in batches:  # the loss never sees a dead group: dead slots are refilled from the buffer, or left out
        assert not (r == r[:, :1]).all(dim=1).any()


def test_candidate_sets_by_hand(three_tool_table):
    from fgpo_lib.algos.fgpo import candidate_mask

    space = three_tool_table.space  # tools a b c; subsets () a b c ab ac bc abc
    tm = torch.from_numpy(np.array(space.masks))
    probs = torch.tensor([[0.0, 0.5, 0.1, 0.0, 0.3, 0.0, 0.0, 0.1]])  # P(a) = .9, P(b) = .5, P(c) = .1
    rewards = torch.from_numpy(three_tool_table.rewards[3:4])  # q3: only subsets with c score
    none_seen = torch.zeros(1, 8, dtype=torch.bool)
    assert candidate_mask(probs, tm, 1, rewards, none_seen)[0].tolist() == [True, True, False, False, False, False, False, False]  # (), a
    assert candidate_mask(probs, tm, 2, rewards, none_seen)[0].tolist() == [True, True, True, False, True, False, False, False]  # subsets of {a, b}
    seen = none_seen.clone()
    seen[0, [1, 3]] = True  # a (0) and c (1) were seen: c's tool is kept, coverage preserved
    assert candidate_mask(probs, tm, 1, rewards, seen)[0].tolist() == [True, True, False, True, False, True, False, False]  # subsets of {a, c}


def test_candidate_sets_train_and_count_their_cells(three_tool_table):
    from fgpo_lib import TrainConfig, train

    t = three_tool_table
    t.split[:] = "train"
    run = train(t, TrainConfig(method="fgpo", steps=40, lr=0.1, featurizer="text", parameterization="flat", fgpo={"candidate_tools": 2}))
    final = run["final"]
    assert 0 < final["unique_reasoner_calls"] <= 4 * 8 and final["reasoner_calls"] >= final["unique_reasoner_calls"]
    assert final["reasoner_calls"] <= 40 * 4 * 4  # at most 4 candidate subsets (of 2 tools) per question per epoch
