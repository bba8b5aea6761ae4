"""The paper's remaining analyses by hand: single tools, the empty-optimal share, tool removal (the ceilings and FGPO
retrained without a tool on a candidate-set table), and Proposition 1 (reward collisions), both as a property of
Eq. 7 over random class masses and on a table's rewards."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fgpo_lib.study.paper_analyses import coarsens, dead_prob, empty_optimal_share, proposition1_check, single_tools, tool_removal


def test_single_tools_and_empty_optimal_share_by_hand(three_tool_table):
    t = three_tool_table  # columns: (), a, b, c, ab, ac, bc, abc
    s = single_tools(t)["score"]
    assert s["No-Tool"] == pytest.approx(100 * (0 + 0 + 0.5 + 0) / 4)
    assert s["gene_search alone"] == pytest.approx(100 * (1 + 0 + 0.5 + 0) / 4)
    assert s["All-Tools"] == pytest.approx(100 * (0.5 + 1 + 0.5 + 1) / 4)
    assert s["oracle"] == pytest.approx(100 * (1 + 1 + 0.5 + 1) / 4)
    # only the constant question q2 has the empty subset among its best
    assert empty_optimal_share(t) == {"all questions": 25.0, "questions a subset changes": 0.0}


def test_tool_removal_ceilings_by_hand(three_tool_table):
    r = tool_removal(three_tool_table)
    # without gene_search: columns (), b, c, bc -> oracle per question 0, 1, .5, 1; best fixed bc = (0+1+.5+1)/4
    assert r.loc["gene_search", "oracle"] == pytest.approx(62.5)
    assert r.loc["gene_search", "oracle change"] == pytest.approx(62.5 - 87.5)
    assert r.loc["gene_search", "best fixed"] == pytest.approx(62.5)
    assert r.loc["gene_search", "best fixed change"] == pytest.approx(62.5 - 75.0)  # full best: abc, (.5+1+.5+1)/4


def test_select_subsets_keeps_the_tools_and_drops_the_extras(three_tool_table):
    t = three_tool_table
    sub = t.select_subsets([7, 0, 2])
    assert sub.space.n_tools == 3 and sub.space.tool_names == t.space.tool_names
    assert [sub.space.label(i) for i in range(3)] == ["", "snp_lookup", "gene_search+snp_lookup+blast"]
    np.testing.assert_array_equal(sub.rewards, t.rewards[:, [0, 2, 7]])
    assert sub.extras == {} and sub.question_ids == t.question_ids
    with pytest.raises(ValueError, match="0..7"):
        t.select_subsets([8])


def test_fgpo_without_a_tool_never_calls_it_and_maps_back_to_the_full_table():
    from fgpo_lib.features import make_featurizer
    from fgpo_lib.precompute import PrecomputeEngine, PrecomputeSpec
    from fgpo_lib.study.protocol import ARMS, removal_arm, run_arm

    engine = PrecomputeEngine(PrecomputeSpec("genehop", "records"))
    engine.run(progress=False)
    table = engine.build_table()
    res = run_arm(ARMS[removal_arm(0)], table, make_featurizer("text")(table.questions), seeds=[0], k=5, lrs=(0.2,))
    assert (res.subsets >= 0).all() and not table.space.masks[res.subsets, 0].any()
    rows = np.arange(table.n_questions)
    np.testing.assert_array_equal(res.scores[0], table.rewards[rows, res.subsets[0]])  # scored from the full table's cells
    frame = tool_removal(table, {"FGPO": res, removal_arm(0): res})
    assert frame.loc[table.space.tool_names[0], "FGPO change"] == 0.0 and np.isnan(frame.loc[table.space.tool_names[1]].get("FGPO", np.nan))


masses = st.lists(st.floats(0.0, 1.0), min_size=2, max_size=8).filter(lambda w: sum(w) > 1e-3).map(lambda w: np.asarray(w) / sum(w))


@settings(max_examples=200, deadline=None)
@given(w=masses, g=st.integers(2, 12), pair=st.tuples(st.integers(0, 7), st.integers(0, 7)))
def test_proposition_1_merging_two_classes_never_lowers_the_dead_rate(w, g, pair):
    u, v = (i % len(w) for i in pair)
    if u == v:
        return
    merged = np.append(np.delete(w, [u, v]), w[u] + w[v])
    assert dead_prob(merged, g) >= dead_prob(w, g) - 1e-15


@settings(max_examples=200, deadline=None)
@given(w=masses, g=st.integers(2, 12), frac=st.floats(0.01, 1.0))
def test_proposition_1_concentrating_mass_raises_the_dead_rate(w, g, frac):
    order = np.argsort(w)
    u, v = order[0], order[-1]
    if w[u] < 1e-6 or u == v:
        return
    moved = w.copy()
    moved[u] -= frac * w[u]
    moved[v] += frac * w[u]
    assert dead_prob(moved, g) > dead_prob(w, g)
    # Schur-convexity's two ends: uniform masses are the least dead, one class the most
    assert dead_prob(np.full(len(w), 1 / len(w)), g) <= dead_prob(w, g) + 1e-15 <= 1 + 1e-15


def test_proposition_1_by_hand_and_on_a_table(three_tool_table):
    assert dead_prob(np.array([0.5, 0.5]), 2) == 0.5 and dead_prob(np.array([1.0]), 2) == 1.0
    fine = np.array([[0, 1, 2, 2], [0, 1, 2, 3]])
    coarse = np.array([[5, 5, 6, 6], [0, 1, 1, 0]])
    assert coarsens(fine, coarse).tolist() == [True, True] and coarsens(coarse, fine).tolist() == [False, False]
    frame = proposition1_check(three_tool_table, group_size=6, n_random=5)
    assert list(frame.index) == ["uniform", "Dirichlet(1)", "Dirichlet(0.1)"]
    assert (frame["(i) violations"] == 0).all() and (frame["(ii) raised (%)"] == 100).all()
    # Eq. 1's values here never collide across scores (0 -> [-1.1, -0.9], 0.5 -> -0.1, 1 -> [0.9, 1.1]), so on every
    # question the differential reward, a function of the score alone, merges Eq. 1's classes
    assert frame.loc["uniform", "coarsening (%)"] == 100.0
    assert (frame["dead differential (%)"] >= frame["dead Eq. 1 (%)"]).all()
