"""Committed reward tables (tables/*.npz) carry their provenance and re-derive live under this machine's llama.cpp
build.

What a live re-derivation can catch is a property of the (reasoner model file, prompt template, llama.cpp build)
combination, not of one table: a cell is the reasoner's answer to a prompt built from the benchmark's tool outputs.
So one table of each combination (:data:`COMBOS`, 9 of the 22 tables, GeneTuring's where it has one) re-derives 10
random cells (4 for the 1.5B
model, whose cells cost a prompt of a thousand tokens on one thread each); at these sizes the rule still asks at
least half of them to agree. What the rule catches at more cells, the corrupted-table control shows at 20: one
combination re-derives 20 cells, and the same live values must fail the rule against a corrupted copy of its table.
The extra cells (All-Tools, the selection call) are the same model on the prompt template's two other prompts: a
model file that changed is caught by its cells, and this machine's build is the same for every table, so the extras
of 2 questions re-derive once per prompt template (the genomics and GeneRegion prompts, each in ChatML and raw), on
the smallest model whose extras the rule can check (:func:`extras_table`; they cost more than the 10 cells): today
all four (the raw genomics prompt's, Gemma's, on GeneTuring, where its measured rate gives the rule power at 2
questions). Every table
is checked, with no cell computed, to share its combination's fingerprints with this code: the model file's and the
prompt's sha256, the build, the tools' version and the benchmark data's sha256
(:func:`test_every_table_is_fingerprinted_as_this_code_and_its_combination`). A table that passes both could differ
from its re-derived sibling only in its questions' tool outputs, which its tools version and data hash pin.

The rule (:mod:`fgpo_lib.crossbuild`): at least the 1% quantile of Binomial(n, p_lo), with p_lo the lower 95% bound
of the agreement measured for that table (``records/crossbuild/``) in the same situation: re-derived on its own build
or on another. On this project's machines the tables' AVX-512 build and the portable x86-64-v3 build are both
common, so this test runs the cross-build leg wherever the build is not the table's. Where the rule would accept 0
agreeing items (a measured rate too low for so few items: SmolLM2's selection calls), that check is skipped and says
so rather than pretending to check. The negative controls show what the rule catches: the same cells re-derived by a
wrong model or with a wrong prompt must fail it.
"""

from functools import lru_cache
from pathlib import Path

import pytest

from fgpo_lib import RewardTable
from fgpo_lib.crossbuild import build_name, control_rule, corrupted_agreement, file_sha256, load_records, rule_for, wrong_reasoner
from fgpo_lib.reasoners.llm import llama_backend
from fgpo_lib.verify import verify_extras, verify_table

TABLES = sorted((Path(__file__).resolve().parents[1] / "tables").glob("*.npz"))
RECORDS = load_records()


@lru_cache(maxsize=None)
def _reasoner(name: str, kwargs: str):
    """One reasoner per (model, settings) for the whole session: loading a model and hashing its file is the slow part."""
    import json

    from fgpo_lib.reasoners import make_reasoner

    return make_reasoner(name, **json.loads(kwargs))


@pytest.fixture(scope="module", autouse=True)
def _free_models_while_python_is_whole():
    """The cached models are freed at the module's end: freed at interpreter exit instead, llama.cpp's finalizer runs
    after the modules it calls are torn down and prints a traceback (``'NoneType' object is not callable``)."""
    import gc

    yield
    _reasoner.cache_clear()
    gc.collect()


def combination(table: RewardTable) -> tuple[str, str, str]:
    """``(reasoner, prompt sha256, llama.cpp build)`` of a table: what its cells' re-derivation depends on."""
    prov = table.provenance
    return prov["reasoner"], prov["prompt_sha256"], build_name(prov["backend"])


#: the corrupted-table control (:func:`fgpo_lib.crossbuild.corrupted`: 30% of the rewards flipped) runs on this
#: combination's live cells, which re-derive :data:`CONTROL_CELLS` cells instead of 10: compared with the corrupted
#: copy they must fail the rule that the table itself passes (SmolLM2's 4-tool GenHop table: cheap cells, and a copy
#: that agrees with 11 of 20 where the rule asks 16; GeneTuring's corrupted copy agrees with 17 of 20, too many zeros)
CONTROL, CONTROL_CELLS = "genehop__smollm2-135m__4tools", 20


def _combos() -> dict[tuple, Path]:
    """One table per combination (every table's fingerprints are checked against it): the control's for its own,
    else GeneTuring's where the combination has one (its tool replies are the genomics benchmarks' shortest: the
    1.5B model re-derives 4 of its cells in about 35 s against 63 s on GenHop's), else the first by name."""
    out: dict = {}
    for path in sorted(TABLES, key=lambda p: (p.stem != CONTROL, not p.stem.startswith("geneturing__"), p.stem)):
        out.setdefault(combination(RewardTable.load(path)), path)
    return out


COMBOS = _combos()


def _extras_rule(path: Path, table: RewardTable) -> int:
    """The rule's count for the extras of 2 questions of the table at ``path`` (0: no power at that size)."""
    kinds = len({"all_tools", "selection"} & set(table.extras))
    return rule_for(path, table, 2 * kinds, "extras", llama_backend(), RECORDS) if kinds else 0


@lru_cache(maxsize=None)
def extras_table(prompt_sha256: str) -> Path | None:
    """The combination table whose extras re-derive for this prompt template: the smallest model's among those the
    rule can check, or None."""
    from fgpo_lib.reasoners.registry import REASONERS

    fit = [(REASONERS[c[0]].params_m, p) for c, p in COMBOS.items() if c[1] == prompt_sha256 and _extras_rule(p, RewardTable.load(p)) > 0]
    return min(fit)[1] if fit else None


@pytest.mark.parametrize("path", list(COMBOS.values()), ids=[p.stem for p in COMBOS.values()])
def test_each_reasoner_prompt_and_build_rederives_live(path):
    import json

    table = RewardTable.load(path)
    large = table.provenance["reasoner"] == "qwen2.5-coder-1.5b"
    n = 4 if large else CONTROL_CELLS if path.stem == CONTROL else 10
    reasoner = _reasoner(table.provenance["reasoner"], json.dumps(table.provenance.get("reasoner_kwargs") or {}, sort_keys=True))
    reasoner.reset()  # a model shared across tables starts each one from scratch, as the measurement did
    live = llama_backend()
    res = verify_table(table, n, seed=0, reasoner=reasoner)
    assert res["checked"] == n
    k = rule_for(path, table, n, "cells", live, RECORDS)
    assert k >= n // 2, f"the cells' rule asks only {k} of {n}: a check this weak would pass a broken table"
    assert res["agree"] >= k, (build_name(table.provenance["backend"]), build_name(live), k, res["disagreements"])
    if path.stem == CONTROL:  # the negative control the cell rule is for, on these very live cells
        assert corrupted_agreement(table, res["live"]) < control_rule(CONTROL, n, RECORDS), "a table with 30% of its rewards flipped passes the rule"
    # the extra cells (All-Tools, the selection call) of 2 questions, once per prompt template: see the module doc
    if path == extras_table(combination(table)[1]):
        k = _extras_rule(path, table)
        extra = verify_extras(table, 2, seed=0, reasoner=reasoner)
        assert extra["checked"] == 2 * len({"all_tools", "selection"} & set(table.extras)) and extra["agree"] >= k, (k, extra["disagreements"])


@pytest.mark.parametrize("path", TABLES, ids=[p.stem for p in TABLES])
def test_every_table_is_fingerprinted_as_this_code_and_its_combination(path):
    """Every table carries its provenance, its combination has a live re-derivation above, and its tools version,
    model file, prompt and data are this code's (``verify_table`` with no cell checks the first three)."""
    import json

    from fgpo_lib.agent import resolve_benchmark

    table = RewardTable.load(path)
    for key in ("model_sha256", "prompt_sha256", "data_sha256", "code_version", "tools_version", "backend"):
        assert table.provenance.get(key), key
    assert combination(table) in COMBOS
    reasoner = _reasoner(table.provenance["reasoner"], json.dumps(table.provenance.get("reasoner_kwargs") or {}, sort_keys=True))
    assert verify_table(table, 0, seed=0, reasoner=reasoner)["checked"] == 0  # raises where a fingerprint differs
    assert table.provenance["data_sha256"] == resolve_benchmark(table.provenance["benchmark"]).data_sha256()


def test_cross_build_records_match_their_tables():
    """A record speaks for the very file it measured: a table changed since (a partial table that grew) must be
    measured again (`fgpo cross-build`); a table with no record yet is judged by the pooled rate of the others."""
    by_stem = {p.stem: p for p in TABLES}
    stale = [stem for stem, rec in RECORDS.items() if stem in by_stem and rec["table_sha256"] != file_sha256(by_stem[stem])]
    assert not stale, f"run `fgpo cross-build` again on: {stale}"
    assert RECORDS, "no cross-build record: the rule has nothing to stand on"
    assert CONTROL in {p.stem for p in COMBOS.values()}, "the corrupted-table control's table re-derives no cell: choose a combination's table"
    for rec in RECORDS.values():
        assert rec["cells"]["checked"] >= 100 and 0 <= rec["cells"]["agree"] <= rec["cells"]["checked"]


@pytest.mark.parametrize("wrong", ["model", "prompt"])
def test_a_wrong_model_or_prompt_is_refused_before_any_cell(wrong):
    """A wrong model or prompt is caught by the fingerprint check (the model file's and the prompt's sha256 against
    the table's provenance), not by cell agreement: on these tables a wrong model agrees with 17-18 of 20 cells and a
    changed system prompt with 20 (records/crossbuild/controls/), which the cell rule cannot tell from a faithful
    re-derivation."""
    path = next(p for p in TABLES if p.stem == "genehop__smollm2-135m__4tools")
    table = RewardTable.load(path)
    with pytest.raises(ValueError, match="model file or prompt template differs"):
        verify_table(table, 2, seed=0, reasoner=wrong_reasoner(table, wrong))
