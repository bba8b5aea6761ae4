"""The scaling chapter's larger libraries: 12 real extra tools, libraries of 12/16/20 tools, and cells shared with the
8-tool library."""

import numpy as np
import pytest

from fgpo_lib.genomics.benchmarks import load_benchmark
from fgpo_lib.genomics.libraries import ALL_TOOL_ORDER, LARGE_LIBRARIES, library_tools
from fgpo_lib.genomics.tools import TOKEN_CAP, TOOL_ORDER, Context, count_tokens
from fgpo_lib.genomics.tools_extra import EXTRA_TOOL_CLASSES, CodonUsage, GcSkew, make_all_tools
from fgpo_lib.genomics.benchmarks import library_tools_version, tools_version
from fgpo_lib.precompute import PrecomputeEngine, PrecomputeSpec
from fgpo_lib.subsets import SubsetSpace


def test_library_sizes_and_order():
    assert [len(LARGE_LIBRARIES[n]) for n in (8, 12, 16, 20)] == [8, 12, 16, 20]
    assert LARGE_LIBRARIES[8] == TOOL_ORDER and ALL_TOOL_ORDER[:8] == TOOL_ORDER  # the 8-tool library is unchanged
    assert [SubsetSpace(n, 4).n_subsets for n in (12, 16, 20)] == [794, 2517, 6196]
    assert library_tools(["melting_temp", "gene_search"]) == ("gene_search", "melting_temp")
    assert library_tools_version(TOOL_ORDER) == tools_version() != library_tools_version(LARGE_LIBRARIES[12])


def test_extra_tools_never_raise_and_respect_the_cap():
    tools = [c() for c in EXTRA_TOOL_CLASSES]
    for b in ("geneturing", "genehop", "geneseq"):
        for q in load_benchmark(b)[::7]:
            for t in tools:
                out = t.run(q.text, Context())
                assert out.text.startswith(f"[{t.name}] ") and count_tokens(out.text) <= TOKEN_CAP
    for t in tools:
        assert t.run("", Context()).text  # an empty question gives the empty result, not an error


def test_sequence_tools_by_hand():
    seq = "ATGAAACCCGGGTTTTAA"  # 6 codons, ending in a stop
    codons = CodonUsage().lines(seq)
    assert codons[0].startswith("6 codons; top: AAA=1, ATG=1") and codons[1] == "stop codons in frame: 1"
    skew = GcSkew().lines("GGGC")[0]  # (3 - 1) / 4
    assert skew.startswith("overall GC skew +0.50")


def test_larger_library_shares_the_eight_tool_cells(tmp_path):
    """A 12-tool table's columns of the 8 tools equal the 8-tool table's; those cells are not computed twice."""
    cache = tmp_path / "c.sqlite"
    eight = PrecomputeEngine(PrecomputeSpec("genehop", "records", questions=6), cache=cache)
    eight.run(progress=False)
    t8 = eight.build_table()
    twelve = PrecomputeEngine(PrecomputeSpec("genehop", "records", questions=6, tools=LARGE_LIBRARIES[12]), cache=cache)
    stats = twelve.run(progress=False)
    t12 = twelve.build_table()
    assert t12.n_subsets == 794 and t12.provenance["tools_version"] != t8.provenance["tools_version"]
    assert stats["computed"] == 6 * (794 - 163)
    cols = [t12.space.index_of(t8.space.names_of(s)) for s in range(163)]
    np.testing.assert_array_equal(t12.rewards[:, cols], t8.rewards)
    assert tuple(t.name for t in make_all_tools()) == ALL_TOOL_ORDER  # the 8, the 12, then GeneRegion's 4: one registry
    assert len(ALL_TOOL_ORDER) == 24
