"""Tables over any candidate set: a long CSV covering only some subsets loads as a first-class table
(``subsets="observed"``), trains with every method that does not need the full space, and what cannot work gives a
named error."""

import numpy as np
import pandas as pd
import pytest

from fgpo_lib import RewardTable, TrainConfig, train
from fgpo_lib.cli import main
from fgpo_lib.table import RewardTableError
from fgpo_lib.train_config import METHOD_NAMES as METHODS

LABELS = ["", "a", "c+b", "d+e+f", "a+b+c+d"]  # 5 arbitrary subsets of 6 tools ('c+b': any order)


@pytest.fixture
def csv(tmp_path):
    rng = np.random.default_rng(0)
    rows = [(f"q{i}", lbl, float(rng.random() < 0.2 + 0.15 * j), f"t{i % 3}") for i in range(30) for j, lbl in enumerate(LABELS)]
    path = tmp_path / "cand.csv"
    pd.DataFrame(rows, columns=["question_id", "tools", "reward", "task"]).to_csv(path, index=False)
    return path


def test_observed_subsets_make_a_candidate_set_that_round_trips(csv, tmp_path):
    table = RewardTable.from_long(csv, tool_names=list("abcdef"), subsets="observed")
    assert table.n_subsets == 5 and not table.space.is_full and table.space.has_empty
    assert table.space.labels() == ["", "a", "b+c", "d+e+f", "a+b+c+d"]  # canonical order: by size, then tools
    assert table.rewards[0, table.space.index_of_label("c+b")] == table.rewards[0, 2]
    table.save(tmp_path / "t.npz")
    back = RewardTable.load(tmp_path / "t.npz")
    assert back.space == table.space and np.array_equal(back.rewards, table.rewards)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_trains_on_a_candidate_set(csv, method):
    table = RewardTable.from_long(csv, tool_names=list("abcdef"), subsets="observed")
    run = train(table, TrainConfig(method=method, steps=3, seed=0))
    assert 0 <= run["final"]["test"]["greedy_reward"] <= 1
    assert len(run["subset_probs"]["test"]) == 5


def test_a_missing_cell_and_an_outside_subset_are_named(csv, tmp_path):
    df = pd.read_csv(csv, keep_default_na=False, dtype={"tools": str})
    df.drop(index=7).to_csv(tmp_path / "missing.csv", index=False)  # q1's third subset
    with pytest.raises(RewardTableError, match=r"missing cell: no row for question 'q1' with tools 'b\+c'"):
        RewardTable.from_long(tmp_path / "missing.csv", subsets="observed")
    with pytest.raises(RewardTableError, match=r"row 2, column 'tools': subset 'a' is not in the candidate set"):
        RewardTable.from_long(csv, subsets=["", "c+b", "d+e+f", "a+b+c+d"])


def test_what_needs_the_empty_subset_says_so(csv, tmp_path):
    df = pd.read_csv(csv, keep_default_na=False, dtype={"tools": str})
    table = RewardTable.from_long(df[df.tools != ""], subsets="observed")
    assert not table.space.has_empty
    with pytest.raises(ValueError, match="differential reward compares with the empty subset"):
        train(table, TrainConfig(method="grpo", reward="differential", steps=2))


def test_compare_takes_subsets_observed_and_no_flag_is_abbreviated(csv, capsys):
    assert main(["compare", "--table", str(csv), "--subsets", "observed", "--methods", "fgpo,grpo,uniform,oracle-best", "--seeds", "0", "--steps", "3"]) == 0
    assert "5 subsets" in capsys.readouterr().out
    with pytest.raises(SystemExit):  # --subset is not --subsets, nor --subsets-per-update
        main(["train", "--table", str(csv), "--subset", "observed"])
