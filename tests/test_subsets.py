import numpy as np
import pytest

from fgpo_lib import SubsetSpace, SubsetSpaceError
from fgpo_lib.subsets import count_subsets


def test_paper_subset_counts():
    assert len(SubsetSpace(8, max_size=4)) == 163
    assert len(SubsetSpace(4, min_size=1)) == 15
    assert count_subsets(8, 4) == 163


def test_canonical_order_by_size_then_lexicographic():
    s = SubsetSpace(3, tool_names=("a", "b", "c"))
    assert s.labels() == ["", "a", "b", "c", "a+b", "a+c", "b+c", "a+b+c"]
    assert s.bitmasks.tolist() == [0, 1, 2, 4, 3, 5, 6, 7]
    assert s.sizes.tolist() == [0, 1, 1, 1, 2, 2, 2, 3]
    assert s.masks[5].tolist() == [True, False, True]


def test_index_bitmask_names_round_trip():
    s = SubsetSpace(8, max_size=4)
    for i in range(len(s)):
        assert s.index_of_bitmask(int(s.bitmasks[i])) == i
        assert s.index_of(s.names_of(i)) == i
        assert s.index_of_label(s.label(i)) == i
        assert s.index_of(reversed(s.tools_of(i))) == i
    assert s.index_of_label("t3+t1") == s.index_of(["t1", "t3"])


def test_conversion_errors_name_the_problem():
    s = SubsetSpace(4, max_size=2, tool_names=("a", "b", "c", "d"))
    with pytest.raises(KeyError, match="unknown tool 'x'"):
        s.index_of(["x"])
    with pytest.raises(KeyError, match="appears twice"):
        s.index_of(["a", "a"])
    with pytest.raises(KeyError, match="not a subset"):
        s.index_of(["a", "b", "c"])  # size 3 > max_size 2


def test_trie_order_is_a_permutation_with_parents_first():
    s = SubsetSpace(5, max_size=3)
    order = s.trie_order()
    assert sorted(order.tolist()) == list(range(len(s)))
    seen = set()
    for i in order:
        tools = s.tools_of(int(i))
        if tools:
            assert s.index_of(tools[:-1]) in seen  # every subset's prefix came before it
        seen.add(int(i))


def test_memory_report_and_too_large_errors():
    s = SubsetSpace(8, max_size=4)
    assert s.table_nbytes(600) == 600 * 163 * 4
    assert "97,800 cells" in s.describe_table(600)
    with pytest.raises(SubsetSpaceError, match="does not fit"):
        s.check_table_fits(10**9, available=1 << 30)
    s.check_table_fits(600, available=1 << 30)
    with pytest.raises(SubsetSpaceError, match="more than the 5,000,000"):
        SubsetSpace(40)
    with pytest.raises(SubsetSpaceError, match="62 tools"):
        SubsetSpace(63, max_size=1)
    with pytest.raises(SubsetSpaceError, match="min_size"):
        SubsetSpace(3, max_size=1, min_size=2)
    with pytest.raises(SubsetSpaceError, match="duplicate tool names"):
        SubsetSpace(2, tool_names=("a", "a"))
    with pytest.raises(SubsetSpaceError, match="contains '\\+'"):
        SubsetSpace(2, tool_names=("a+b", "c"))


def test_masks_are_read_only():
    s = SubsetSpace(3)
    with pytest.raises(ValueError):
        s.masks[0, 0] = True
    assert np.array_equal(s.masks.sum(1), s.sizes)
