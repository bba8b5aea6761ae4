"""fgpo plan: subset counts, memory and costs by hand, and clear errors."""

import pytest

from fgpo_lib.cli import main
from fgpo_lib.plan import Plan


@pytest.mark.parametrize("n,subsets", [(8, 163), (12, 794), (16, 2517), (20, 6196)])
def test_subset_counts_with_the_size_cap_4(n, subsets):
    assert Plan(n, 4, 100, 1.0).subsets == subsets


def test_costs_by_hand():
    p = Plan(4, 4, 450, 2.0, group_size=6, steps=100)
    assert p.subsets == 16 and p.cells == 7200 and p.table_bytes == 28800
    assert p.grpo_calls == 100 * 450 * 6
    assert p.recommendation().startswith("full FGPO")
    assert Plan(20, 4, 450, 1.0, steps=200).recommendation().startswith("partial enumeration")
    text = p.report()
    assert "7,200 cells, 28.1 KiB" in text and "full precompute at 2 s per call: 4.00 CPU-hours" in text


def test_bad_plans_get_named_errors(capsys):
    for argv, message in (
        (["--tools", "4", "--max-size", "5"], "max_size must be between 0 and the number of tools (4), got 5"),
        (["--tools", "40", "--max-size", "20", "--questions", "100000"], "does not fit"),
    ):
        full = ["plan", "--questions", "10", "--seconds-per-call", "1", *argv]
        assert main(full) == 2
        assert message in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["plan", "--tools", "-3", "--max-size", "1", "--questions", "1", "--seconds-per-call", "1"])
    assert "--tools: must be >= 1" in capsys.readouterr().err
    with pytest.raises(ValueError, match="seconds_per_call must be positive"):
        Plan(4, 2, 10, 0.0)
