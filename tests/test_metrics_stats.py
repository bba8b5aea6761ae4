import numpy as np
import pytest

from fgpo_lib import SubsetSpace
from fgpo_lib.metrics import constant_reward, entropy, evaluate, expected_reward, greedy_reward, zero_variance_observed, zero_variance_prob
from fgpo_lib.stats import bootstrap_ci, iqm, paired_difference_ci


def test_closed_form_by_hand():
    probs = np.array([[0.5, 0.25, 0.25], [1.0, 0.0, 0.0]])
    rewards = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]])
    # q0: P(R=1)=0.5, P(R=0)=0.5 -> 0.5^3 + 0.5^3 = 0.25 ; q1: all mass on reward 0 -> 1
    assert zero_variance_prob(probs, rewards, 3).tolist() == pytest.approx([0.25, 1.0])
    assert greedy_reward(probs, rewards).tolist() == [1.0, 0.0]
    assert expected_reward(probs, rewards).tolist() == [0.5, 0.0]
    assert entropy(probs).tolist() == pytest.approx([-(0.5 * np.log(0.5) + 0.5 * np.log(0.25)), 0.0])
    assert constant_reward(np.array([[1, 1, 1], [0, 1, 0]])).tolist() == [1.0, 0.0]
    assert zero_variance_observed(np.array([[0, 0], [1, 2]]), rewards).tolist() == [1.0, 1.0]
    assert zero_variance_observed(np.array([[0, 1]]), rewards[:1]).tolist() == [0.0]


def test_observed_zero_variance_rate_matches_closed_form():
    rng = np.random.default_rng(0)
    n_q, n_s, G = 4000, 15, 8
    space = SubsetSpace(4, min_size=1)
    rewards = rng.choice([0.0, 0.5, 1.0], size=(n_q, n_s), p=[0.5, 0.1, 0.4])
    logits = rng.normal(scale=2.5, size=(n_q, n_s))  # concentrated policies, so failures are common
    probs = np.exp(logits) / np.exp(logits).sum(1, keepdims=True)
    m = evaluate(probs, rewards, space, G, np.random.default_rng(1))
    cf = m["failure_rate_closed_form"]
    se = np.sqrt(np.mean(zero_variance_prob(probs, rewards, G) * (1 - zero_variance_prob(probs, rewards, G)))) / np.sqrt(n_q)
    assert 0.05 < cf < 0.95
    assert abs(m["failure_rate_observed"] - cf) < 4 * se
    # uniform policy on a table with many subsets: failures are rare
    uni = np.full((n_q, n_s), 1 / n_s)
    assert evaluate(uni, rewards, space, G, np.random.default_rng(2))["failure_rate_closed_form"] < 0.05


def test_evaluate_sizes_and_keys():
    space = SubsetSpace(2)  # '', t0, t1, t0+t1
    probs = np.array([[0.0, 0.0, 0.25, 0.75]])
    rewards = np.array([[0.0, 1.0, 0.0, 1.0]])
    m = evaluate(probs, rewards, space, 4, np.random.default_rng(0))
    assert m["greedy_size"] == 2.0 and m["expected_size"] == pytest.approx(0.25 * 1 + 0.75 * 2)
    assert m["greedy_reward"] == 1.0 and m["expected_reward"] == 0.75


def test_bootstrap_by_hand():
    mean, lo, hi = bootstrap_ci(np.full((3, 10), 0.7))
    assert (mean, lo, hi) == pytest.approx((0.7, 0.7, 0.7))
    # one run, two questions (0, 1): resampled mean is 0, 0.5, 1 w.p. 1/4, 1/2, 1/4 -> 95% CI [0, 1]
    mean, lo, hi = bootstrap_ci(np.array([[0.0, 1.0]]), n_boot=4000)
    assert (mean, lo, hi) == (0.5, 0.0, 1.0)
    a = np.array([[1.0, 1.0, 0.0, 1.0]] * 2)
    b = np.array([[0.0, 1.0, 0.0, 0.0]] * 3)
    d, lo, hi = paired_difference_ci(a, b, n_boot=4000)
    assert d == 0.5 and lo == 0.0 and hi == 1.0  # per-question differences 1,0,0,1: same two-point argument
    with pytest.raises(ValueError, match="same questions"):
        paired_difference_ci(a, b[:, :3])


def test_iqm_by_hand():
    assert iqm(np.arange(1, 9)) == 4.5  # mean of 3, 4, 5, 6


def test_cached_bootstrap_draws_are_a_fresh_generators():
    """The bootstrap's counts are cached per (seed, sizes); every interval equals one drawn from a fresh
    ``default_rng(seed)`` in the documented order (runs then questions; for a paired difference questions, then
    each arm's runs), on the first call and on a cached one."""
    rng = np.random.default_rng(3)
    a, b = rng.random((3, 40)), (rng.random((2, 40)) > 0.5).astype(float)
    alpha = (1 - 0.95) / 2

    def fresh_boot(s):
        g = np.random.default_rng(0)
        run_w = g.multinomial(len(s), np.full(len(s), 1 / len(s)), size=2000).astype(np.float64)
        q_w = g.multinomial(s.shape[1], np.full(s.shape[1], 1 / s.shape[1]), size=2000).astype(np.float64)
        boots = np.einsum("br,rq,bq->b", run_w, s, q_w) / s.size
        return (float(s.mean()), *map(float, np.quantile(boots, [alpha, 1 - alpha])))

    def fresh_pair(x, y):
        g = np.random.default_rng(0)
        q_w = g.multinomial(40, np.full(40, 1 / 40), size=2000).astype(np.float64)
        run_x = g.multinomial(len(x), np.full(len(x), 1 / len(x)), size=2000) @ x / len(x)
        run_y = g.multinomial(len(y), np.full(len(y), 1 / len(y)), size=2000) @ y / len(y)
        boots = ((run_x - run_y) * q_w).sum(axis=1) / 40
        return (float(x.mean() - y.mean()), *map(float, np.quantile(boots, [alpha, 1 - alpha])))

    for _ in range(2):  # the second call reads the cache
        assert bootstrap_ci(a) == fresh_boot(a) and bootstrap_ci(b) == fresh_boot(b)
        assert paired_difference_ci(a, b) == fresh_pair(a, b)
