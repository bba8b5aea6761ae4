"""The full-information reference selector (a registry method) against ridge solutions computed by hand."""

import numpy as np
import pytest

from fgpo_lib import RewardTable, SubsetSpace
from fgpo_lib.algos.reference import ReferenceConfig, fit_reference
from fgpo_lib.train import TrainConfig, train


def test_the_ridge_fit_on_one_hot_features_by_hand():
    """With one-hot group features, no intercept and penalty alpha, each group's weight for a subset is the sum of
    its rewards over (n_group + alpha): group A (rows 0, 1) sums to (2, 1, 0), group B (rows 2, 3, 4) to (0, 3, 1)."""
    x = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [0, 1]], float)
    r = np.array([[1, 1, 0], [1, 0, 0], [0, 1, 0], [0, 1, 1], [0, 1, 0]], float)
    coef, alpha = fit_reference(x, r, alphas=(1.0,))
    assert alpha == 1.0
    np.testing.assert_allclose(coef, [[2 / 3, 0 / 4], [1 / 3, 3 / 4], [0 / 3, 1 / 4]])


def test_the_reference_method_picks_the_argmax_of_its_predictions():
    """Through train(): no update is taken, every training cell is read once, and each test question's greedy
    subset is the argmax of the hand-computed prediction (group A: subset 0, 2/3 > 1/3; group B: subset 1, 3/4)."""
    space = SubsetSpace(2, tool_names=("a", "b"))  # 4 subsets: none, a, b, a+b
    r = np.array([[1, 1, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 1, 1, 0], [0, 1, 0, 0], [0, 0, 0, 1], [0, 0, 0, 1]], np.float32)
    split = np.array(["train"] * 5 + ["test"] * 2)
    table = RewardTable(r, [f"q{i}" for i in range(7)], space, questions=[f"q{i}" for i in range(7)], split=split)
    features = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [0, 1], [1, 0], [0, 1]], np.float32)
    run = train(table, TrainConfig(method="reference", reward="score", settings={"alphas": [1.0]}), features=features)
    test = run["per_question"]["test"]
    assert test["greedy_subset"] == [0, 1]
    assert test["greedy_reward"] == [0.0, 0.0]  # the two test rows reward only a+b: the features cannot know it
    assert run["final"]["optimizer_steps"] == 0
    assert run["final"]["reasoner_calls"] == 5 * 4
    expected = np.array([[2 / 3, 1 / 3, 0, 0], [0, 3 / 4, 1 / 4, 0]])
    probs = np.exp(expected / 0.05) / np.exp(expected / 0.05).sum(1, keepdims=True)  # the displayed policy
    np.testing.assert_allclose(run["subset_probs"]["test"], probs.mean(0), rtol=1e-5, atol=1e-6)


def test_bad_reference_settings_are_named_errors():
    with pytest.raises(ValueError, match="alphas"):
        ReferenceConfig(alphas=())
    with pytest.raises(ValueError, match="temperature"):
        ReferenceConfig(temperature=0)
    with pytest.raises(ValueError, match="hidden"):
        space = SubsetSpace(2)
        table = RewardTable(np.zeros((4, 4), np.float32), ["a", "b", "c", "d"], space, split=np.array(["train", "train", "test", "test"]))
        train(table, TrainConfig(method="reference", hidden=4))
