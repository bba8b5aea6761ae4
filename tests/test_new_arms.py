"""The 2025-26 controls against hand-computed advantages and targets, and the method registry that carries them.

Hand values (Bessel's std, GRPO's eps = 1e-4):
* NGRPO, group (0, 0) with r_max = 1: values (0, 0, 1), mean 1/3, std sqrt(1/3), so A = -(1/3) / sqrt(1/3).
* RL-ZVP, alpha 0.1 over 4 subsets: all correct under a uniform pi gives +0.1 ln 4; all wrong under
  pi = (0.97, 0.01, 0.01, 0.01) gives -0.1 (ln 4 - H), H = -(0.97 ln 0.97 + 3 x 0.01 ln 0.01).
* TPO, zero logits over 2 subsets, rewards (1, 0), eta 0.5: q = (e^2, 1) / (e^2 + 1); the gradient of the loss in the
  logits is pi - q.
* batch std: groups (1, 0) and (1, 1): advantages (0.5, -0.5, 0, 0) over the batch's std of (1, 0, 1, 1), 0.5.
* GPG, groups (0, 0), (1, 0), (1, 1): one live group of 3, alpha = 3, so A = 3 x (0.5, -0.5) on it and 0 elsewhere;
  a batch of dead groups only gives 0 (alpha 1, no division by zero).
"""

import math

import numpy as np
import pytest
import torch

from fgpo_lib import RewardTable
from fgpo_lib.algos.gpg import gpg_advantages
from fgpo_lib.algos.grpo import STD_EPS, grpo_advantages
from fgpo_lib.algos.registry import METHODS, batched_methods, parse_settings
from fgpo_lib.algos.tpo import tpo_loss, tpo_target
from fgpo_lib.algos.zero_variance import ngrpo_advantages, rl_zvp_advantages
from fgpo_lib.batched import RunSpec, train_batched
from fgpo_lib.train import TrainConfig, train


def test_ngrpo_by_hand():
    s = math.sqrt(1 / 3)
    adv = ngrpo_advantages(torch.tensor([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]]), 1.0)
    want = torch.tensor([[-(1 / 3) / (s + STD_EPS)] * 2, [(1 / 3) / (s + STD_EPS), -(2 / 3) / (s + STD_EPS)], [0.0, 0.0]])
    assert torch.allclose(adv, want, atol=1e-6)
    assert (grpo_advantages(torch.tensor([[0.0, 0.0]])) == 0).all()  # the group GRPO drops


def test_gpg_by_hand():
    adv = gpg_advantages(torch.tensor([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]]))
    assert torch.equal(adv, torch.tensor([[0.0, 0.0], [1.5, -1.5], [0.0, 0.0]]))
    assert torch.equal(gpg_advantages(torch.tensor([[1.0, 1.0], [0.0, 0.0]])), torch.zeros(2, 2))
    two_batches = torch.tensor([[[1.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]])  # (2, B=2, G=2): alpha 2, then 1
    assert torch.equal(gpg_advantages(two_batches), torch.tensor([[[1.0, -1.0], [0.0, 0.0]], [[0.5, -0.5], [-0.5, 0.5]]]))


def test_rl_zvp_by_hand():
    uniform = torch.full((4,), math.log(0.25))
    confident = torch.tensor([0.97, 0.01, 0.01, 0.01]).log()
    h = -(0.97 * math.log(0.97) + 3 * 0.01 * math.log(0.01))
    rewards = torch.tensor([[1.0, 1.0], [-1.0, -1.0], [-1.0, -1.0], [1.0, -1.0], [0.0, 0.0]])
    logp = torch.stack([uniform, uniform, confident, uniform, confident])
    adv = rl_zvp_advantages(rewards, logp, alpha=0.1)
    live = 1 / (math.sqrt(2) + STD_EPS)
    want = torch.tensor([[0.1 * math.log(4)] * 2, [0.0, 0.0], [-0.1 * (math.log(4) - h)] * 2, [live, -live], [0.0, 0.0]])
    assert torch.allclose(adv, want, atol=1e-6)


def test_tpo_target_and_gradient_by_hand():
    z = torch.zeros(1, 2, requires_grad=True)
    r = torch.tensor([[1.0, 0.0]])
    q = torch.tensor([[math.exp(2), 1.0]]) / (math.exp(2) + 1)
    assert torch.allclose(tpo_target(z, r, 0.5), q, atol=1e-7)
    tpo_loss(z, r, 0.5).backward()
    assert torch.allclose(z.grad, torch.tensor([[0.5, 0.5]]) - q, atol=1e-6)


def test_batch_std_scaling_by_hand():
    adv = grpo_advantages(torch.tensor([[1.0, 0.0], [1.0, 1.0]]), "batch")
    assert torch.allclose(adv, torch.tensor([[0.5, -0.5], [0.0, 0.0]]) / (0.5 + STD_EPS), atol=1e-6)


def _table(n=60, seed=0) -> RewardTable:
    """3 tools: the question's parity decides which single tool answers it; every other subset scores 0."""
    from fgpo_lib.subsets import SubsetSpace

    space = SubsetSpace(3, tool_names=["a", "b", "c"])
    rewards = np.zeros((n, space.n_subsets))
    for i in range(n):
        rewards[i, space.index_of(["a"] if i % 2 else ["b"])] = 1.0
    questions = [f"question {i} is {'odd' if i % 2 else 'even'}" for i in range(n)]
    split = np.array(["train" if i < 40 else "test" for i in range(n)])
    return RewardTable(rewards.astype(np.float32), [f"q{i}" for i in range(n)], space, questions=questions, split=split)


@pytest.mark.parametrize("method", ["tpo", "ngrpo", "rl-zvp", "gpg"])
def test_a_new_arm_learns_with_train_and_batched_alike(method):
    table = _table()
    cfg = TrainConfig(method=method, reward="eq1", steps=60, lr=0.2, group_size=4, batch_questions=16, eval_every=30)
    rec = train(table, cfg)
    assert rec["final"]["test"]["greedy_reward"] == 1.0, rec["final"]["test"]
    assert method in batched_methods()
    rows = np.arange(table.n_questions)
    runs = [RunSpec(0, 0.2, {"train": rows[:30], "dev": rows[30:40], "test": rows[40:]})]
    parity = np.array([[i % 2, 1 - i % 2] for i in rows], np.float32)  # (n, 2): the feature that decides the answer
    out = train_batched(table, cfg, runs, parity)
    assert out[0]["per_question"]["test"]["greedy_reward"] == [1.0] * 20


def test_ngrpo_learns_from_a_batch_of_all_wrong_groups_where_grpo_cannot():
    """Every question's only correct subset is unreachable in one draw of 2 from a policy that puts 0.97 on a wrong
    one: GRPO's groups are all dead (no step moves pi); NGRPO's virtual sample moves mass off the wrong subset."""
    table = _table(n=40)
    prior = {"c": 0.97}
    probs = {}
    for method in ("grpo", "ngrpo"):
        cfg = TrainConfig(method=method, reward="eq1", steps=5, lr=0.1, group_size=2, prior=prior, featurizer="constant", eval_every=5)
        rec = train(table, cfg)
        probs[method] = rec["subset_probs"]["train"][table.space.index_of(["c"])]
    assert probs["ngrpo"] < probs["grpo"] - 0.01, probs


def test_settings_of_a_registered_method_are_checked():
    assert parse_settings("tpo", {"eta": 0.2}).eta == 0.2
    with pytest.raises(ValueError, match="'tpo'"):
        TrainConfig(method="tpo", settings={"temperature": 1})
    with pytest.raises(ValueError, match="takes no 'settings'"):
        TrainConfig(method="fgpo", settings={"eta": 1})
    assert TrainConfig(method="rl-zvp").settings.alpha == 0.1
    assert set(METHODS) >= {"fgpo", "grpo", "tpo", "ngrpo", "rl-zvp", "sft", "dpo", "uniform", "oracle-best"}


def test_data_scale_cuts_each_training_fold_per_task_and_keeps_dev_and_test():
    from fgpo_lib.crossfit import crossfit_folds, subsample_training

    ids = [f"q{i}" for i in range(40)]
    tasks = ["a"] * 30 + ["b"] * 10
    folds = crossfit_folds(ids, tasks, k=5, seed=0)
    cut = subsample_training(folds, 0.25, tasks, seed=0)
    for f, c in zip(folds, cut):
        assert set(c["train"]) <= set(f["train"]) and (c["dev"] == f["dev"]).all() and (c["test"] == f["test"]).all()
        for t in ("a", "b"):
            n = sum(tasks[r] == t for r in f["train"])
            assert sum(tasks[r] == t for r in c["train"]) == math.ceil(0.25 * n)
    assert subsample_training(folds, 1.0, tasks) is folds
    with pytest.raises(ValueError, match="fraction"):
        subsample_training(folds, 0.0, tasks)


def test_the_new_controls_are_protocol_arms_of_the_registry():
    from fgpo_lib.study.protocol import ARMS

    for name, method in (("NGRPO (Eq. 1)", "ngrpo"), ("RL-ZVP (Eq. 1)", "rl-zvp"), ("TPO (Eq. 1)", "tpo"), ("GRPO (Eq. 1, batch std)", "grpo")):
        assert ARMS[name].config.method == method and ARMS[name].group == "control"
    assert ARMS["GRPO (Eq. 1, batch std)"].config.grpo.scale_rewards == "batch"
