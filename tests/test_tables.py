"""Committed reward tables (tables/*.npz) carry their provenance and re-derive live: 20 random cells each, >= 95%."""

from pathlib import Path

import pytest

from fgpo_lib import RewardTable
from fgpo_lib.precompute import verify_table

TABLES = sorted((Path(__file__).resolve().parents[1] / "tables").glob("*.npz"))


@pytest.mark.parametrize("path", TABLES, ids=[p.stem for p in TABLES])
def test_committed_table_rederives_live(path):
    table = RewardTable.load(path)
    for key in ("model_sha256", "prompt_sha256", "data_sha256", "code_version", "tools_version"):
        assert table.provenance.get(key), key
    res = verify_table(table, 20, seed=0)
    assert res["checked"] == 20
    assert res["agree"] >= 19, res["disagreements"]
