"""The sampled arm's estimator against hand-computed gradients, and the arm through its real loop on a tiny model.

The toy: three candidates with logits (0, 0, ln 2), so q = (1/4, 1/4, 1/2), and rewards (1, 0, 0.5), so the expected
reward J = 0.5 and the exact gradient of -J with respect to the logits is -q_k (r_k - J) = (-0.125, 0.125, 0).
"""

import math

import numpy as np
import pytest
import torch

from fgpo_lib.lm_policy.sampled_arm import LMSampledConfig, SampledEstimator, sampled_reward_loss

LOGITS = (0.0, 0.0, math.log(2.0))
REWARDS = torch.tensor([1.0, 0.0, 0.5])
EXACT_GRAD = np.array([-0.125, 0.125, 0.0])  # of -J, by hand (module doc)


def _grad(draws, beta=0.0, scale_rewards="none") -> np.ndarray:
    z = torch.tensor(LOGITS, requires_grad=True)
    sampled_reward_loss(z, REWARDS, torch.tensor(draws), beta, scale_rewards).backward()
    return z.grad.numpy()


def test_the_gradient_for_fixed_draws_is_the_formula_by_hand():
    # draws (0, 2): rewards (1, 0.5), mean 0.75, unscaled advantages (0.25, -0.25). The gradient of
    # -(1/G) sum_i A_i log q(S_i) on logit k is -(1/G) sum_i A_i (1[S_i = k] - q_k):
    #   k=0: -(1/2) (0.25 * 0.75 + (-0.25) * (-0.25)) = -0.125;  k=1: -(1/2) (0.25 * -0.25 - 0.25 * -0.25) = 0;
    #   k=2: -(1/2) (0.25 * -0.5 + (-0.25) * 0.5) = 0.125
    assert _grad([0, 2]) == pytest.approx([-0.125, 0.0, 0.125], abs=1e-6)
    # the group's scaling: Bessel's std of (1, 0.5) is sqrt(0.125) = 0.353553, plus TRL's 1e-4
    assert _grad([0, 2], scale_rewards="group") == pytest.approx(np.array([-0.125, 0.0, 0.125]) / (math.sqrt(0.125) + 1e-4), abs=1e-6)
    # a dead group (both draws of candidate 1, reward 0 twice): no reward gradient at all
    assert _grad([1, 1], scale_rewards="group") == pytest.approx([0.0, 0.0, 0.0], abs=1e-12)
    # the entropy term is exact and needs no draw: d(sum q log q)/dz_k = q_k (log q_k + H), H = 1.5 ln 2, so
    # with beta 0.5 it adds 0.5 * (1/4 (-ln 4 + 1.5 ln 2), 1/4 (-ln 4 + 1.5 ln 2), 1/2 (-ln 2 + 1.5 ln 2))
    ln2 = math.log(2.0)
    entropy_grad = 0.5 * np.array([0.25 * (-0.5 * ln2), 0.25 * (-0.5 * ln2), 0.5 * (0.5 * ln2)])
    assert _grad([1, 1], beta=0.5) == pytest.approx(entropy_grad, abs=1e-6)


@pytest.mark.parametrize("group_size", [2, 6])
def test_the_unscaled_advantage_averages_to_g_minus_1_over_g_times_the_exact_gradient(group_size):
    # Dr. GRPO's r - mean r: the sample's own reward sits in its baseline, so E[gradient] = (G - 1)/G * exact
    rng = np.random.default_rng(0)
    q = np.array([0.25, 0.25, 0.5])
    n = 20_000
    total = np.zeros(3)
    for _ in range(n):
        total += _grad(list(rng.choice(3, size=group_size, p=q)))
    mean = total / n
    assert mean == pytest.approx((group_size - 1) / group_size * EXACT_GRAD, abs=0.004)
    assert not mean == pytest.approx(EXACT_GRAD, abs=0.004), "the factor (G - 1)/G is measurable at this many draws"


def test_the_estimator_counts_dead_groups_and_distinct_cells_and_resumes_its_draws():
    rewards = torch.tensor([[1.0, 0.0, 0.5], [0.0, 0.0, 0.0]])
    raw = torch.tensor([[1.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    cfg = LMSampledConfig(group_size=4, seed=3)
    est = SampledEstimator(rewards, cfg, raw)
    scores = torch.tensor(LOGITS)
    est.loss(scores, 0)
    est.loss(scores, 1)  # an all-zero row: every group is dead whatever is drawn
    measured = est.end_update()
    assert measured["dead_group_rate"] in (0.5, 1.0) and measured["cells_read"] == len(est.read) <= 3 + 3
    assert measured["score_dead_rate"] >= measured["dead_group_rate"]  # raw scores tie wherever the rewards do, and more
    assert {row for row, _ in est.read} == {0, 1}
    held = est.state()
    after = [est.draw(scores).tolist() for _ in range(3)]
    again = SampledEstimator(rewards, cfg)
    again.load_state(held)
    assert [again.draw(scores).tolist() for _ in range(3)] == after, "a resumed run draws what the uninterrupted one would"
    assert again.record(2) == {"reasoner_calls": len(held["read"]), "group_size": 4}


def test_the_sampled_arms_settings_name_bad_values():
    with pytest.raises(ValueError, match="scale_rewards"):
        LMSampledConfig(scale_rewards="median")
    with pytest.raises(ValueError, match="group_size"):
        LMSampledConfig(group_size=1)
    with pytest.raises(ValueError, match="objective must be 'expected'"):
        LMSampledConfig(objective="tpo")


def test_two_updates_of_the_sampled_arm_on_a_tiny_model_record_what_they_read():
    from test_lm_arms import _model, _table, _tokenizer

    from fgpo_lib.lm_policy.data import lm_splits
    from fgpo_lib.lm_policy.sampled_arm import train_sampled

    table, tokenizer = _table(), _tokenizer()
    model = _model(tokenizer)
    splits = lm_splits(table, max_train=8)
    n_train = len(splits["train"])
    rec = train_sampled(model, tokenizer, table, splits, LMSampledConfig(batch_questions=4, epochs=8 / n_train, eval_every=1, lr=1e-2, group_size=3))
    assert [u["step"] for u in rec["updates"]] == [1, 2]
    cells = [u["cells_read"] for u in rec["updates"]]
    assert 0 < cells[0] <= cells[1] <= 8 * 3 and rec["reasoner_calls"] == cells[-1] < n_train * table.n_subsets
    assert all(0 <= u["dead_group_rate"] <= u["score_dead_rate"] <= 1 for u in rec["updates"])
    assert [p["step"] for p in rec["curve"]] == [0, 1, 2] and rec["curve"][1]["cells_read"] == cells[0]


def test_a_killed_sampled_run_resumes_to_the_uninterrupted_draws_and_result(tmp_path, monkeypatch):
    """Killed in its third update (after the dev checkpoint of the second), the sampled arm resumes with the draw
    stream and the cells read where they were: its per-update record and its curve equal an uninterrupted run's."""
    from test_lm_arms import _Killed, _kill_on_call, _model, _table, _tokenizer, _without_seconds

    from fgpo_lib.lm_policy import sampled_arm
    from fgpo_lib.lm_policy.data import lm_splits
    from fgpo_lib.lm_policy.resume import RunCheckpoint

    table, tokenizer = _table(), _tokenizer()
    splits = lm_splits(table, max_train=8)
    cfg = LMSampledConfig(batch_questions=4, epochs=16 / len(splits["train"]), eval_every=2, lr=1e-2, group_size=3)
    whole = sampled_arm.train_sampled(_model(tokenizer), tokenizer, table, splits, cfg)
    monkeypatch.setattr(sampled_arm, "sampled_reward_loss", _kill_on_call(2 * 4 + 1, sampled_arm.sampled_reward_loss))
    with pytest.raises(_Killed):
        sampled_arm.train_sampled(_model(tokenizer), tokenizer, table, splits, cfg, checkpoint=RunCheckpoint(tmp_path / "p", {"run": "s"}))
    monkeypatch.undo()
    resumed = sampled_arm.train_sampled(_model(tokenizer), tokenizer, table, splits, cfg, checkpoint=RunCheckpoint(tmp_path / "p", {"run": "s"}))
    assert resumed["updates"] == whole["updates"] and resumed["reasoner_calls"] == whole["reasoner_calls"]
    assert _without_seconds(resumed["curve"]) == _without_seconds(whole["curve"])
    assert resumed["test"]["scoring"]["choices"] == whole["test"]["scoring"]["choices"]
