"""Committed reward tables (tables/*.npz) carry their provenance and re-derive live: 20 random cells each (10 for the
1.5B model, whose cells cost most), >= 95% agreeing, and the extra cells (All-Tools, selection call) of 2 questions
where a table has them, all but one agreeing."""

from pathlib import Path

import pytest

from fgpo_lib import RewardTable
from fgpo_lib.verify import table_reasoner, verify_extras, verify_table

TABLES = sorted((Path(__file__).resolve().parents[1] / "tables").glob("*.npz"))


@pytest.mark.parametrize("path", TABLES, ids=[p.stem for p in TABLES])
def test_committed_table_rederives_live(path):
    table = RewardTable.load(path)
    for key in ("model_sha256", "prompt_sha256", "data_sha256", "code_version", "tools_version"):
        assert table.provenance.get(key), key
    n = 10 if table.provenance["reasoner"] == "qwen2.5-coder-1.5b" else 20
    reasoner = table_reasoner(table)
    res = verify_table(table, n, seed=0, reasoner=reasoner)
    assert res["checked"] == n
    assert res["agree"] >= n - max(1, n // 20), res["disagreements"]  # 19 of 20, 9 of 10
    # its extra cells (All-Tools, the selection call) of 2 questions, where it has them
    extra = verify_extras(table, 2, seed=0, reasoner=reasoner)
    kinds = len({"all_tools", "selection"} & set(table.extras))
    assert extra["checked"] == 2 * kinds
    assert extra["agree"] >= extra["checked"] - 1, extra["disagreements"]
