"""A selector inside a user's agent: it knows its tools, explains its choice, and takes a budget and a fallback at
select time; ``fgpo calibrate`` picks the fallback threshold for a target on held-out questions."""

import json

import numpy as np
import pytest

from fgpo_lib import TrainConfig, train_selector
from fgpo_lib.examples import protein_structure_table, synthetic_table
from fgpo_lib.selector import Selector, SelectorError

from test_user_errors import run


@pytest.fixture(scope="module")
def protein(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sel")
    table = protein_structure_table(n_questions=200, seed=0)
    table.save(folder / "t.npz")
    fgpo, _ = train_selector(table, TrainConfig(method="fgpo", steps=100, seed=0))
    reference, _ = train_selector(table, TrainConfig(method="reference", reward="eq1", steps=1, seed=0))
    fgpo.save(folder / "fgpo")
    reference.save(folder / "reference")
    return folder, table


def test_a_selector_refuses_another_agents_tools_naming_both_lists(protein):
    folder, table = protein
    assert Selector.load(folder / "fgpo", tools=list(reversed(table.tool_names))).tool_names == table.tool_names  # any order
    with pytest.raises(SelectorError, match=r"chooses among the tools .*, but the agent's tools are distance, atlas"):
        Selector.load(folder / "fgpo", tools=["distance", "atlas"])
    code, _, err = run(["select", folder / "fgpo", "--question", "How far?", "--tools", "distance,atlas"])
    assert code == 2 and table.tool_names[0] in err and "distance, atlas" in err


def test_select_explains_with_alternatives_tool_probabilities_and_expected_tools(protein):
    folder, table = protein
    code, out, err = run(["select", folder / "fgpo", "--question", table.questions[0], "--top", "2"])
    assert code == 0, err
    row = json.loads(out)
    sel = Selector.load(folder / "fgpo")
    p = sel.probabilities([table.questions[0]])[0]
    order = np.argsort(-p, kind="stable")
    assert row["tools"] == list(sel.space.names_of(int(order[0]))) and row["probability"] == pytest.approx(p[order[0]], abs=1e-6)
    assert [a["tools"] for a in row["alternatives"]] == [list(sel.space.names_of(int(s))) for s in order[1:3]]
    for i, name in enumerate(sel.tool_names):  # a tool's marginal: the mass of the subsets that hold it
        assert row["tool_probabilities"][name] == pytest.approx(p[np.asarray(sel.space.masks)[:, i]].sum(), abs=1e-6)
    assert row["expected_tools"] == pytest.approx(float(p @ np.asarray(sel.space.sizes)), abs=1e-6)
    assert "predicted_reward" not in row and sel.subset_names == table.space.labels()


def test_a_reference_selector_gives_its_predicted_rewards(protein):
    folder, table = protein
    code, out, _ = run(["select", folder / "reference", "--question", table.questions[1]])
    row = json.loads(out)
    sel = Selector.load(folder / "reference")
    pred = sel.predicted_rewards([table.questions[1]])[0]
    assert code == 0 and row["predicted_reward"] == pytest.approx(pred.max(), abs=1e-6)  # the reference picks its best prediction
    assert all(a["predicted_reward"] <= row["predicted_reward"] + 1e-9 for a in row["alternatives"])


def test_a_budget_and_a_fallback_at_select_time(protein):
    folder, table = protein
    sel = Selector.load(folder / "fgpo")
    qs = table.questions[:20]
    assert all(len(s) <= 1 for s in sel.select(qs, max_tools=1))
    everything = sel.select(qs, threshold=1.0)  # every question unsure: All-Tools
    assert everything == [tuple(sel.tool_names)] * len(qs)
    first = sel.tool_names[0]
    assert sel.select(qs, threshold=1.0, fallback=[first]) == [(first,)] * len(qs)
    with pytest.raises(ValueError, match="more than max_tools"):
        sel.select(qs, max_tools=1, threshold=1.0, fallback=list(sel.tool_names))
    code, out, _ = run(["select", folder / "fgpo", "--question", "q", "--threshold", "1", "--fallback", first])
    assert code == 0 and json.loads(out)["tools"] == [first] and json.loads(out)["fell_back"]
    code, _, err = run(["select", folder / "fgpo", "--question", "q", "--threshold", "1", "--fallback", "none"])  # no empty subset in this space
    assert code == 2 and "fallback []" in err


@pytest.mark.parametrize("target", [2.5, 3.0, 3.5])
def test_a_calibrated_threshold_hits_a_target_average_of_tools_on_held_out_questions(tmp_path, target):
    """Picked on one half of 900 test questions, the threshold keeps the other half within 0.1 tools of the target."""
    from fgpo_lib.calibrate import calibrate

    table = synthetic_table(n_questions=3000, seed=0)
    sel, _ = train_selector(table, TrainConfig(method="fgpo", steps=300, seed=0, reward="eq1"))
    res = calibrate(sel, table, target_tools=target)
    assert res["calibration"]["tools"] <= target
    assert abs(res["evaluation"]["tools"] - target) <= 0.1, res["evaluation"]
    table.save(tmp_path / "t.npz")
    sel.save(tmp_path / "sel")
    code, out, err = run(["calibrate", tmp_path / "sel", "--table", tmp_path / "t.npz", "--target-tools", target, "--out", tmp_path / "c.json"])
    assert code == 0 and f"threshold {res['threshold']:.6f}" in out, err
    assert json.loads((tmp_path / "c.json").read_text())["threshold"] == res["threshold"]


def test_calibrate_names_a_target_it_cannot_reach(protein, tmp_path):
    folder, _ = protein
    code, _, err = run(["calibrate", folder / "fgpo", "--table", folder / "t.npz", "--target-tools", "0.01"])
    assert code == 2 and "no threshold keeps the average at 0.01 tools" in err


def test_the_frontier_figure_shares_labels_marks_the_choice_and_explains_a_gap_it_cannot_recover():
    import pandas as pd

    from fgpo_lib.frontier import gap_column, plot_frontier

    points = pd.DataFrame({"lambda": [0.0, 0.1, 0.5], "accuracy": [0.8, 0.8, 0.8], "tools_per_question": [3.0, 1.0, 1.0], "distinct_subsets": [1, 2, 2],
                           "gap_recovered": [float("nan")] * 3})
    refs = pd.DataFrame({"reference": ["All-Tools", "best fixed", "Oracle"], "accuracy": [0.8, 0.8, 0.8], "tools_per_question": [4.0, 4.0, 1.0]})
    fig = plot_frontier(points, refs, chosen=0.1)
    ax = fig.axes[0]
    labels = ax.get_legend_handles_labels()[1]
    assert "All-Tools = best fixed" in labels and "chosen (lambda 0.1)" in labels  # neither hides the other; the choice is ringed
    assert sorted(t.get_text() for t in ax.texts) == ["lambda 0", "lambda 0.1, 0.5"]  # one label per point, never two on one spot
    texts, note = gap_column(points)
    assert texts == ["—"] * 3 and "no gap to recover" in note
    assert gap_column(points.assign(gap_recovered=[0.0, 0.5, 1.0])) == (["0%", "50%", "100%"], "")
