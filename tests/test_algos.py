import numpy as np
import pytest
import torch

from fgpo_lib import SubsetPolicy, SubsetSpace
from fgpo_lib.algos import fgpo_loss, grpo_advantages, grpo_loss
from fgpo_lib.algos.grpo import STD_EPS


def test_fgpo_gradient_equals_analytic(three_tool_table):
    """d/dz_S of -mean_q sum_S pi R  =  -pi_S (R_S - pi.R) / n_q, on the hand-built 3-tool table."""
    torch.manual_seed(0)
    R = torch.tensor(three_tool_table.rewards, dtype=torch.float64)
    z = torch.randn(R.shape, dtype=torch.float64, requires_grad=True)
    fgpo_loss(z, R).backward()
    pi = torch.softmax(z.detach(), dim=-1)
    analytic = -pi * (R - (pi * R).sum(-1, keepdim=True)) / R.shape[0]
    assert (z.grad - analytic).abs().max().item() < 1e-6
    # the constant-reward question (row 2) has exactly zero gradient
    assert z.grad[2].abs().max().item() < 1e-15


def test_fgpo_entropy_and_kl_gradients_equal_analytic(three_tool_table):
    torch.manual_seed(1)
    R = torch.tensor(three_tool_table.rewards, dtype=torch.float64)
    z = torch.randn(R.shape, dtype=torch.float64, requires_grad=True)
    z_ref = torch.randn(R.shape, dtype=torch.float64)
    a, b = 0.3, 0.7
    fgpo_loss(z, R, entropy_coef=a, kl_coef=b, ref_logits=z_ref).backward()
    pi = torch.softmax(z.detach(), dim=-1)
    logpi, logref = torch.log(pi), torch.log_softmax(z_ref, -1)
    center = lambda f: pi * (f - (pi * f).sum(-1, keepdim=True))  # noqa: E731  d/dz of sum pi f (f fixed)
    # d/dz sum pi log pi = center(log pi) (the extra sum_S pi_S dlog pi_S/dz is 0); same for the KL
    analytic = (-center(R) + a * center(logpi) + b * center(logpi - logref)) / R.shape[0]
    assert (z.grad - analytic).abs().max().item() < 1e-6


def test_fgpo_policy_gradient_through_linear_policy(three_tool_table):
    """Chain rule through SubsetPolicy's flat head: dW = dz^T x."""
    t = three_tool_table
    x = torch.eye(4, dtype=torch.float64)
    policy = SubsetPolicy(4, t.space).double()
    with torch.no_grad():
        policy.head.weight.normal_(generator=torch.Generator().manual_seed(0))
    R = torch.tensor(t.rewards, dtype=torch.float64)
    fgpo_loss(policy(x), R).backward()
    pi = torch.softmax(policy(x).detach(), -1)
    dz = -pi * (R - (pi * R).sum(-1, keepdim=True)) / 4
    assert (policy.head.weight.grad - dz.T @ x).abs().max().item() < 1e-6


def test_grpo_advantages_by_hand():
    r = torch.tensor([[1.0, 0.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]])
    std = np.sqrt(1 / 3)  # Bessel: sum (r - 0.5)^2 / (4 - 1)
    a = grpo_advantages(r, "group")
    assert torch.allclose(a[0], torch.tensor([0.5, -0.5, -0.5, 0.5]) / (std + STD_EPS))
    assert torch.equal(a[1], torch.zeros(4))
    assert torch.allclose(grpo_advantages(r, "none")[0], torch.tensor([0.5, -0.5, -0.5, 0.5]))
    batch_std = float(r.std())
    assert torch.allclose(grpo_advantages(r, "batch")[0], torch.tensor([0.5, -0.5, -0.5, 0.5]) / (batch_std + STD_EPS))
    with pytest.raises(ValueError, match="scale_rewards"):
        grpo_advantages(r, "sequence")


def test_grpo_group_with_equal_rewards_gives_exactly_zero_gradient():
    space = SubsetSpace(3)
    policy = SubsetPolicy(5, space)
    with torch.no_grad():
        policy.head.weight.normal_(generator=torch.Generator().manual_seed(0))
    x = torch.randn(2, 5, generator=torch.Generator().manual_seed(1))
    samples = torch.tensor([[0, 3, 3, 7], [1, 2, 4, 4]])
    rewards = torch.tensor([[1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 0.0]])
    for num_iter_ratio_shift in (0.0, 0.3):  # on-policy (ratio 1) and off-policy (ratio != 1)
        logp = torch.log_softmax(policy(x), -1).gather(1, samples)
        loss = grpo_loss(logp, logp.detach() - num_iter_ratio_shift, grpo_advantages(rewards), beta=0.0)
        policy.zero_grad()
        loss.backward()
        assert all(p.grad is None or torch.count_nonzero(p.grad) == 0 for p in policy.parameters())
    # a group with different rewards does move the policy
    rewards[0, 0] = 0.0
    logp = torch.log_softmax(policy(x), -1).gather(1, samples)
    policy.zero_grad()
    grpo_loss(logp, logp.detach(), grpo_advantages(rewards)).backward()
    assert torch.count_nonzero(policy.head.weight.grad) > 0


def test_grpo_clipping_by_hand():
    logp_old = torch.zeros(1, 2)
    adv = torch.tensor([[1.0, -1.0]])
    logp = torch.log(torch.tensor([[1.5, 0.5]]))  # ratios 1.5 and 0.5
    # -min(1.5*1, 1.2*1) = -1.2 ; -min(0.5*-1, 0.8*-1) = 0.8 ; mean = -0.2
    assert grpo_loss(logp, logp_old, adv, epsilon=0.2).item() == pytest.approx(-0.2)
    # k3 KL at logp == logp_ref is 0
    assert grpo_loss(logp_old, logp_old, torch.zeros(1, 2), beta=1.0, logp_ref=logp_old).item() == 0.0


def test_factorized_policy_logits_are_tool_sums_plus_size_term():
    space = SubsetSpace(3, max_size=2)
    policy = SubsetPolicy(1, space, "factorized")
    with torch.no_grad():
        policy.head.bias.copy_(torch.tensor([1.0, 2.0, 4.0, 0.0, 10.0, 20.0]))  # tools a,b,c; sizes 0,1,2
    z = policy(torch.zeros(1, 1))[0]
    expected = [0 + 0, 1 + 10, 2 + 10, 4 + 10, 3 + 20, 5 + 20, 6 + 20]
    assert z.tolist() == expected


def test_prior_sets_the_initial_policy():
    space = SubsetSpace(2)
    prior = np.array([0.1, 0.6, 0.2, 0.1])
    p = torch.softmax(SubsetPolicy(3, space, prior=prior)(torch.ones(1, 3)), -1)[0]
    assert torch.allclose(p, torch.tensor(prior, dtype=torch.float32))
    with pytest.raises(ValueError, match="positive probabilities"):
        SubsetPolicy(3, space, prior=[0.5, 0.5, 0.0, 0.0])
