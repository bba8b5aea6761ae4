import numpy as np
import pandas as pd
import pytest

from fgpo_lib import RewardTable, RewardTableError, SubsetSpace
from fgpo_lib.table import stratified_split


def test_npz_round_trip(tmp_path, three_tool_table):
    t = three_tool_table
    t.provenance = {"reasoner": "hand", "data_sha256": "abc"}
    path = t.save(tmp_path / "t.npz")
    u = RewardTable.load(path)
    assert np.array_equal(u.rewards, t.rewards) and u.rewards.dtype == np.float32
    assert u.question_ids == t.question_ids and u.tasks == t.tasks and u.split.tolist() == t.split.tolist()
    assert u.space == t.space and u.provenance == t.provenance
    assert u.content_hash() == t.content_hash()
    assert u.seconds is None  # no cell times: none written, none read
    t.seconds = np.where(np.arange(t.rewards.size).reshape(t.rewards.shape) % 3 == 0, np.nan, 0.25).astype(np.float32)
    v = RewardTable.load(t.save(tmp_path / "timed.npz"))
    assert np.array_equal(v.seconds, t.seconds, equal_nan=True) and v.content_hash() == t.content_hash()


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_long_round_trip(tmp_path, three_tool_table, suffix):
    t = three_tool_table
    df = t.to_long(tmp_path / f"t{suffix}")
    assert set(df.columns) >= {"question_id", "tools", "reward"}
    assert (df["tools"] == "").sum() == t.n_questions  # the empty subset is ''
    u = RewardTable.from_long(tmp_path / f"t{suffix}", tool_names=t.tool_names)
    assert np.array_equal(u.rewards, t.rewards)
    assert u.split.tolist() == t.split.tolist() and u.tasks == t.tasks


def _long(rows):
    return pd.DataFrame(rows, columns=["question_id", "tools", "reward"])


def _full_rows(space, qids=("q0", "q1")):
    return [[q, space.label(s), 1.0] for q in qids for s in range(len(space))]


SPACE = SubsetSpace(2, tool_names=("gene_search", "blast"))


def _csv(tmp_path, rows):
    path = tmp_path / "bad.csv"
    _long(rows).to_csv(path, index=False)
    return path


def test_unknown_tool_names_file_row_column(tmp_path):
    rows = _full_rows(SPACE)
    rows[2][1] = "blast+omim"
    with pytest.raises(RewardTableError, match=r"bad\.csv: row 3, column 'tools': unknown tool 'omim'"):
        RewardTable.from_long(_csv(tmp_path, rows), tool_names=SPACE.tool_names)


def test_missing_cell(tmp_path):
    rows = _full_rows(SPACE)
    del rows[6]  # q1, 'blast'
    with pytest.raises(RewardTableError, match=r"bad\.csv: missing cell: no row for question 'q1' with tools 'blast'"):
        RewardTable.from_long(_csv(tmp_path, rows), tool_names=SPACE.tool_names)


def test_duplicate_cell(tmp_path):
    rows = _full_rows(SPACE) + [["q0", "blast+gene_search", 0.0]]  # same subset, other order
    with pytest.raises(RewardTableError, match=r"bad\.csv: row 9, columns 'question_id','tools': duplicates row 4"):
        RewardTable.from_long(_csv(tmp_path, rows), tool_names=SPACE.tool_names)


@pytest.mark.parametrize("value", ["nan", "", "abc"])
def test_nan_or_missing_reward(tmp_path, value):
    rows = _full_rows(SPACE)
    rows[6][2] = value
    with pytest.raises(RewardTableError, match=r"bad\.csv: row 7, column 'reward': .* missing, NaN or not a number"):
        RewardTable.from_long(_csv(tmp_path, rows), tool_names=SPACE.tool_names)


def test_reward_outside_declared_range(tmp_path):
    rows = _full_rows(SPACE)
    rows[1][2] = 1.5
    with pytest.raises(RewardTableError, match=r"bad\.csv: row 2, column 'reward': 1.5 is outside the declared reward range \[0.0, 1.0\]"):
        RewardTable.from_long(_csv(tmp_path, rows), tool_names=SPACE.tool_names)
    assert RewardTable.from_long(_csv(tmp_path, rows), tool_names=SPACE.tool_names, reward_range=(0, 2)).rewards.max() == 1.5


def test_missing_column_and_unreadable_files(tmp_path):
    path = tmp_path / "nocol.csv"
    pd.DataFrame({"question_id": ["q"], "tools": [""]}).to_csv(path, index=False)
    with pytest.raises(RewardTableError, match="nocol.csv: missing column 'reward'"):
        RewardTable.from_long(path)
    bad = tmp_path / "broken.npz"
    bad.write_bytes(b"not a zip file")
    with pytest.raises(RewardTableError, match="broken.npz: cannot read"):
        RewardTable.load(bad)
    with pytest.raises(RewardTableError, match="missing.npz: no such file"):
        RewardTable.load(tmp_path / "missing.npz")


def test_in_memory_validation(three_tool_table):
    t = three_tool_table
    bad = t.rewards.copy()
    bad[1, 2] = np.nan
    with pytest.raises(RewardTableError, match="NaN for question 'q1', subset 'snp_lookup'"):
        RewardTable(bad, t.question_ids, t.space)
    with pytest.raises(RewardTableError, match="shape"):
        RewardTable(t.rewards[:, :5], t.question_ids, t.space)
    with pytest.raises(RewardTableError, match="duplicate question id 'q0'"):
        RewardTable(t.rewards, ["q0", "q0", "q2", "q3"], t.space)
    secs = np.full(t.rewards.shape, np.nan, dtype=np.float32)  # unknown cell times are allowed
    assert RewardTable(t.rewards, t.question_ids, t.space, seconds=secs).seconds.shape == t.rewards.shape
    secs[2, 1] = -0.5
    with pytest.raises(RewardTableError, match="seconds is negative for question 'q2', subset 'gene_search'"):
        RewardTable(t.rewards, t.question_ids, t.space, seconds=secs)
    with pytest.raises(RewardTableError, match="seconds has shape"):
        RewardTable(t.rewards, t.question_ids, t.space, seconds=secs[:, :3])


def test_saved_table_with_bad_reward_is_rejected_on_load(tmp_path, three_tool_table):
    path = three_tool_table.save(tmp_path / "t.npz")
    import json

    with np.load(path) as z:
        meta = json.loads(str(z["meta"]))
        rewards = z["rewards"].copy()
    rewards[0, 0] = -1
    np.savez_compressed(path, rewards=rewards, meta=np.array(json.dumps(meta)))
    with pytest.raises(RewardTableError, match=r"t.npz: reward -1.0 for question 'q0', subset '' is outside"):
        RewardTable.load(path)


def test_stratified_split_is_deterministic_and_stratified():
    ids = [f"q{i}" for i in range(100)]
    tasks = ["a"] * 50 + ["b"] * 50
    s1 = stratified_split(ids, tasks, 0.3, seed=1)
    s2 = stratified_split(list(reversed(ids)), list(reversed(tasks)), 0.3, seed=1)[::-1]
    assert s1.tolist() == s2.tolist()
    assert (s1[:50] == "test").sum() == 15 and (s1[50:] == "test").sum() == 15
