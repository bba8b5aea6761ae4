"""The reasoner ladder's machinery: split-part weights, 4-tool libraries, sub-tables, resuming from a committed table."""

import hashlib
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from fgpo_lib import RewardTable
from fgpo_lib.cli import main
from fgpo_lib.genomics.libraries import LIBRARIES, choose_library, library_tools, sub_table
from fgpo_lib.precompute import PrecomputeEngine, PrecomputeError, PrecomputeSpec, sample_order, sample_questions
from fgpo_lib.genomics.benchmarks import load_benchmark
from fgpo_lib.reasoners import ReasonerError
from fgpo_lib.weights import QWEN25_CODER_05B, QWEN25_CODER_15B, SplitPartModel, gguf_header

TABLE_DIR = Path(__file__).resolve().parents[1] / "tables"


def _committed() -> list[tuple[str, str, bool]]:
    """``(benchmark, reasoner, is 4-tool)`` of every committed table."""
    out = []
    for p in sorted(TABLE_DIR.glob("*.npz")):
        parts = p.stem.split("__")
        out.append((parts[0], parts[1], parts[2:] == ["4tools"]))
    return out


@pytest.mark.parametrize("model", [QWEN25_CODER_05B, QWEN25_CODER_15B], ids=["0.5b", "1.5b"])
def test_split_part_models_assemble_to_the_pinned_file(model, tmp_path):
    path = model.path(tmp_path)
    assert path.stat().st_size == model.size
    h = hashlib.sha256(path.read_bytes()).hexdigest()
    assert h == model.sha256
    head = gguf_header(path)
    assert (head["general.name"], head["general.architecture"]) == (model.header_name, "qwen2")
    assert head["tensor_count"] == {QWEN25_CODER_05B: 291, QWEN25_CODER_15B: 339}[model]


def test_a_wrong_pin_or_header_is_refused(tmp_path):
    wrong_hash = SplitPartModel(**{**QWEN25_CODER_05B.__dict__, "sha256": "0" * 64})
    with pytest.raises(ReasonerError, match="assembled parts have sha256"):
        wrong_hash.path(tmp_path / "a")
    assert not list((tmp_path / "a").glob("*")), "nothing half-written is left behind"
    wrong_name = SplitPartModel(**{**QWEN25_CODER_05B.__dict__, "header_name": "Some Other Model"})
    with pytest.raises(ReasonerError, match="GGUF header names"):
        wrong_name.path(tmp_path / "b")
    missing = SplitPartModel(**{**QWEN25_CODER_05B.__dict__, "pip_prefix": "no-such-package-part"})
    with pytest.raises(ReasonerError, match="no-such-package-part1==0.9.0 is not installed"):
        missing.path(tmp_path / "c")


def test_requirements_models_lists_every_part():
    lines = {line.strip() for line in (Path(__file__).parents[1] / "requirements-models.txt").read_text().splitlines()}
    for model in (QWEN25_CODER_05B, QWEN25_CODER_15B):
        assert set(model.pip_names()) <= lines


def test_library_tools_keep_canonical_order_and_name_errors():
    assert library_tools(["blast", "gene_search"]) == ("gene_search", "blast")
    with pytest.raises(ValueError, match="unknown tools \\['hmmer'\\]"):
        library_tools(["hmmer"])
    with pytest.raises(ValueError, match="appears twice"):
        library_tools(["blast", "blast"])


def test_sub_table_by_hand(three_tool_table):
    sub = sub_table(three_tool_table, ["blast", "gene_search"])  # tools (gene_search, snp_lookup, blast) -> (gene_search, blast)
    assert sub.tool_names == ("gene_search", "blast")
    # columns of the 3-tool table: () a b c ab ac bc abc -> () a c ac = 0, 1, 3, 5
    np.testing.assert_array_equal(sub.rewards, three_tool_table.rewards[:, [0, 1, 3, 5]])


def test_choose_library_by_hand(three_tool_table):
    # reach with 2 tools: {gs,snp}: q0 q1 q2 -> 3; {gs,blast}: q0 q2 q3 -> 3; {snp,blast}: q1 q2 q3 -> 3.
    # tie on reach; mean best: {gs,snp}: (1+1+.5+0)/4=.625, {gs,blast}: (1+0+.5+1)/4=.625, {snp,blast}: (0+1+.5+1)/4=.625
    # full tie: the earliest library in canonical order
    assert choose_library(three_tool_table, 2) == ("gene_search", "snp_lookup")
    t = RewardTable(three_tool_table.rewards.copy(), three_tool_table.question_ids, three_tool_table.space)
    t.rewards[2, 5] = 0.9  # q2 by (gs, blast): every library still reaches 3, but {gs,blast}'s mean is (1+0+.9+1)/4
    assert choose_library(t, 2) == ("gene_search", "blast")
    t.rewards[0, 3] = 0.25  # q0 by blast alone: {snp,blast} now reaches all 4 questions, and reach comes first
    assert choose_library(t, 2) == ("snp_lookup", "blast")


@pytest.mark.parametrize("benchmark", sorted(LIBRARIES))
def test_the_four_tool_libraries_follow_the_stated_rule(benchmark, tmp_path):
    """The rule chooses among the 8 tools; a benchmark built with exactly four tools of its own (GeneRegion) has
    nothing to choose, and its library is those four."""
    from fgpo_lib.genomics.benchmarks import BENCHMARKS

    if len(BENCHMARKS[benchmark].tools) == 4:
        assert LIBRARIES[benchmark] == BENCHMARKS[benchmark].tools
        return
    engine = PrecomputeEngine(PrecomputeSpec(benchmark, "records"), cache=tmp_path / "c.sqlite")
    engine.run(progress=False)
    assert choose_library(engine.build_table()) == LIBRARIES[benchmark]


def test_sample_order_prefixes_are_the_stratified_samples():
    qs = load_benchmark("geneturing")
    order = sample_order(qs, 0)
    for n in (9, 27, 63):
        assert {q.qid for q in order[:n]} == {q.qid for q in sample_questions(qs, n, 0)}
    assert sorted(q.qid for q in order) == sorted(q.qid for q in qs)


def test_resume_from_a_table_recomputes_nothing_and_extends_a_sample(tmp_path, capsys):
    small = tmp_path / "small.npz"
    args = ["precompute", "--benchmark", "geneseq", "--reasoner", "records", "--quiet"]
    assert main(args + ["--questions", "12", "--cache", str(tmp_path / "a.sqlite"), "--out", str(small)]) == 0
    capsys.readouterr()
    # a new machine: an empty cache, seeded from the committed table; 12 -> 24 questions computes only the new 12
    big = tmp_path / "big.npz"
    assert main(args + ["--questions", "24", "--cache", str(tmp_path / "b.sqlite"), "--resume-from", str(small), "--out", str(big)]) == 0
    out = capsys.readouterr().out
    assert f"seeded {12 * 163:,} cells" in out and f"{12 * 163:,} cells of 12 questions remain" in out and f"computed {12 * 163:,} cells" in out
    a, b = RewardTable.load(small), RewardTable.load(big)
    rows = [b.question_ids.index(q) for q in a.question_ids]
    np.testing.assert_array_equal(b.rewards[rows], a.rewards)
    seed = b.provenance["seeded_from"][0]  # where the resumed cells came from, and which code made them
    assert seed["source"] == "small.npz" and seed["cells"] == 12 * 163 and seed["code_version"] == a.provenance["code_version"]
    # the 4-tool library of the same questions: every cell is already there
    four = tmp_path / "four.npz"
    assert main(args + ["--questions", "24", "--tools", "four", "--cache", str(tmp_path / "c.sqlite"), "--resume-from", str(big), "--out", str(four)]) == 0
    assert "computed 0 cells" in capsys.readouterr().out
    np.testing.assert_array_equal(RewardTable.load(four).rewards, sub_table(b, LIBRARIES["geneseq"]).rewards)


def test_resume_from_refuses_another_reasoners_table(tmp_path):
    t = tmp_path / "bm25.npz"
    assert main(["precompute", "--benchmark", "geneseq", "--reasoner", "bm25", "--questions", "6", "--quiet", "--cache", str(tmp_path / "a.sqlite"), "--out", str(t)]) == 0
    engine = PrecomputeEngine(PrecomputeSpec("geneseq", "records", questions=6), cache=tmp_path / "b.sqlite")
    with pytest.raises(PrecomputeError, match="its reasoner is 'bm25' but this engine's is 'records'"):
        engine.seed_from_table(RewardTable.load(t), source=str(t))
    assert engine.cache.count() == 0


def test_checkpoints_write_partial_tables(tmp_path, capsys):
    out = tmp_path / "t.npz"
    assert main(["precompute", "--benchmark", "genehop", "--reasoner", "records", "--questions", "10", "--quiet", "--checkpoint-every", "3", "--cache", str(tmp_path / "c.sqlite"), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "checkpoint: 3 of 10 questions" in text and "checkpoint: 9 of 10 questions" in text
    assert re.search(r"checkpoint: 3 of 10 questions .*; 1,141 cells remain, about [0-9.]+ h at the [0-9.]+ cells/s of its timed cells", text)
    table = RewardTable.load(out)
    assert table.n_questions == 10 and table.provenance["complete"] is True and table.answers.shape == table.rewards.shape


def test_checkpoints_also_cover_the_extras_pass(tmp_path, capsys):
    """With --extras, every question's cells are written before the extras' single pass starts, and the pass itself
    checkpoints, so a run killed during the extras keeps all its cells and the extras done (once lost 19 questions)."""
    out = tmp_path / "t.npz"
    assert main(["precompute", "--benchmark", "genehop", "--reasoner", "records", "--questions", "10", "--quiet", "--extras", "--checkpoint-every", "4",
                 "--cache", str(tmp_path / "c.sqlite"), "--out", str(out)]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("checkpoint:")]
    # the cell pass at 4 and 8 questions, all 10 before the extras, then twice during them (after 3 and 7 questions)
    assert [line.split(" of ")[0] for line in lines] == ["checkpoint: 4", "checkpoint: 8", "checkpoint: 10", "checkpoint: 10", "checkpoint: 10"]


def test_dry_run_prints_the_cost_and_caches_its_pilot(tmp_path, capsys):
    assert main(["precompute", "--benchmark", "geneturing", "--reasoner", "bm25", "--questions", "18", "--dry-run", "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "t.npz")]) == 0
    text = capsys.readouterr().out
    assert "estimated CPU time for all 2,934 cells" in text and "pilot: 326 cells of 2 questions" in text
    assert not (tmp_path / "t.npz").exists()


LLM_163 = {(b, r) for b, r, four in _committed() if not four}


@pytest.fixture(scope="module")
def smollm2():
    from fgpo_lib.reasoners import make_reasoner

    return make_reasoner("smollm2-135m")


@pytest.mark.parametrize("benchmark", ["geneturing", "generegion"])
def test_a_four_tool_table_is_an_exact_sub_table_live(benchmark, smollm2):
    """One question's 4-tool subsets, evaluated live as cells of the 163-subset library and of the 4-tool library:
    the 16 cells are equal. One benchmark of each prompt (the genomics benchmarks share one, and GeneTuring's tool
    replies are its shortest; GeneRegion has its own): the equality is the engine's, the same for every benchmark of a
    prompt.

    Both sides run here: llama.cpp's arithmetic depends on the CPU's instruction sets, so a cell computed on another
    machine may differ (the committed tables are checked at >= 95% by test_tables.py, and exactly below). The 8-tool
    side evaluates only the 16 shared subsets (in its own trie order): the other 147 cells play no part in the check."""
    from fgpo_lib.precompute import evaluate_question

    q = sample_questions(load_benchmark(benchmark), 1)[0]
    full, four = PrecomputeSpec(benchmark, "smollm2-135m"), PrecomputeSpec(benchmark, "smollm2-135m", tools=LIBRARIES[benchmark])
    shared = {full.space().index_of_label(four.space().label(s)) for s in range(four.space().n_subsets)}
    on_full = {full.space().label(s): (a, r) for s, a, r, _, _ in evaluate_question(full, q, [s for s in full.space().trie_order().tolist() if s in shared], smollm2)}
    on_four = {four.space().label(s): (a, r) for s, a, r, _, _ in evaluate_question(four, q, four.space().trie_order().tolist(), smollm2)}
    assert len(on_four) == 16
    assert on_four == {label: on_full[label] for label in on_four}


def test_committed_four_tool_tables_agree_with_the_163_subset_tables():
    """Wherever a reasoner has both, the 4-tool table equals the 163-subset table's columns on shared questions."""
    checked = 0
    for b, r, four in _committed():
        if not four or (b, r) not in LLM_163:
            continue
        small, full = RewardTable.load(TABLE_DIR / f"{b}__{r}__4tools.npz"), RewardTable.load(TABLE_DIR / f"{b}__{r}.npz")
        shared = [q for q in small.question_ids if q in set(full.question_ids)]
        assert shared, f"{b} x {r}: the samples should be nested"
        s_rows = [small.question_ids.index(q) for q in shared]
        f_rows = [full.question_ids.index(q) for q in shared]
        np.testing.assert_array_equal(small.rewards[s_rows], sub_table(full.select(f_rows), small.tool_names).rewards)
        checked += 1
    if not checked:
        pytest.skip("no reasoner has both tables yet")


@pytest.mark.parametrize(
    "text,expected",
    [
        ("gene_search, gene_record", ("gene_search", "gene_record")),
        ("Gene Record and gene-search", ("gene_search", "gene_record")),  # library order, any case, '-' or ' ' for '_'
        ("blast", ()),  # not in this library: nothing named, and not 'none' -> see below
        ("none", ()),
        ("No tools needed.", ()),
        ("I would look it up", None),
        ("", None),
        ("gene_searches", None),  # whole words only
    ],
)
def test_parse_selection_by_hand(text, expected):
    from fgpo_lib.reasoners.selection import parse_selection

    library = ("gene_search", "snp_lookup", "gene_record")
    got = parse_selection(text, library)
    assert got == (None if text == "blast" else expected)


def test_extras_all_tools_cell_for_a_reader(tmp_path):
    from fgpo_lib.genomics.tools import TOOL_ORDER
    from fgpo_lib.precompute import evaluate_question
    from fgpo_lib.reasoners import make_reasoner

    engine = PrecomputeEngine(PrecomputeSpec("geneturing", "records", questions=9), cache=tmp_path / "c.sqlite")
    engine.run(progress=False)
    assert engine.run_extras(progress=False) == {"selections": 0, "unparseable": 0}  # a reader has no selection call
    table = engine.build_table()
    extra = table.extras["all_tools"]
    assert "selection" not in table.extras and extra["subsets"][0] == "+".join(TOOL_ORDER)
    q = engine.questions[0]
    live = evaluate_question(engine.spec, q, [TOOL_ORDER], make_reasoner("records"))[0][2]
    assert extra["rewards"][0] == live
    path = tmp_path / "t.npz"
    table.save(path)
    assert RewardTable.load(path).extras == table.extras
    # live re-derivation of the extra cells: all agree; a changed All-Tools reward is caught and named
    from fgpo_lib.verify import verify_extras

    assert verify_extras(table, 3, seed=0) == {"checked": 3, "agree": 3, "disagreements": []}
    extra["rewards"] = [r - 2.0 for r in extra["rewards"]]
    res = verify_extras(table, 9, seed=0)
    assert res["checked"] == 9 and res["agree"] == 0 and {name for _, name, _, _ in res["disagreements"]} == {"all_tools"}


@pytest.fixture(scope="module")
def two_question_cells(tmp_path_factory, smollm2) -> Path:
    """The cell cache of GeneTuring's first 2 of 9 sampled questions x 16 subsets, computed live once for the two
    extras tests below (a cell's cache key does not depend on whether extras are asked for); each test copies it."""
    cache = tmp_path_factory.mktemp("cells") / "cells.sqlite"
    engine = PrecomputeEngine(PrecomputeSpec("geneturing", "smollm2-135m", questions=9, tools=LIBRARIES["geneturing"]), cache=cache, reasoner=smollm2)
    engine.questions = engine.questions[:2]
    engine.run(progress=False)
    engine.cache.close()
    return cache


def test_extras_selection_call_with_a_real_llm_and_resume(tmp_path, smollm2, two_question_cells):
    spec = PrecomputeSpec("geneturing", "smollm2-135m", questions=9, tools=LIBRARIES["geneturing"])
    shutil.copy(two_question_cells, tmp_path / "a.sqlite")
    engine = PrecomputeEngine(spec, cache=tmp_path / "a.sqlite", reasoner=smollm2)
    engine.questions = engine.questions[:2]
    assert engine.run(progress=False)["computed"] == 0  # the shared cells
    counts = engine.run_extras(progress=False)
    table = engine.build_table()
    sel = table.extras["selection"]
    assert counts["selections"] == 2 and len(sel["answers"]) == 2 and all(isinstance(a, str) for a in sel["answers"])
    for i, label in enumerate(sel["subsets"]):
        if label is not None:  # inside the 4-tool library: the picked subset's reward is its table cell
            assert sel["rewards"][i] == table.rewards[i, table.space.index_of_label(label)]
    assert counts["unparseable"] == sum(label is None for label in sel["subsets"])
    # all four tools in one call is the table's own last column here
    np.testing.assert_array_equal(table.extras["all_tools"]["rewards"], table.rewards[:, -1])
    path = tmp_path / "t.npz"
    table.save(path)
    fresh = PrecomputeEngine(spec, cache=tmp_path / "b.sqlite", reasoner=smollm2)
    fresh.questions = engine.questions
    fresh.seed_from_table(RewardTable.load(path))
    before = fresh.cache.count()
    fresh.run_extras(progress=False)
    assert fresh.cache.count() == before, "a resumed run recomputes no extra cell"
    assert fresh.build_table().extras == table.extras
    # the selection calls re-derive live; a pick the model did not make is caught
    from fgpo_lib.verify import verify_extras

    assert verify_extras(table, 2, reasoner=smollm2) == {"checked": 4, "agree": 4, "disagreements": []}
    sel["subsets"] = ["gene_search+snp_lookup+gene_record+blast+" if s is None else "gene_search+blast+" + s for s in sel["subsets"]]
    table.extras = {"selection": sel}  # the selection calls alone: the All-Tools cells agreed just above
    res = verify_extras(table, 2, reasoner=smollm2)
    assert res["checked"] == 2 and res["agree"] == 0 and [name for _, name, _, _ in res["disagreements"]] == ["selection", "selection"]


def test_a_run_killed_during_the_selection_calls_keeps_the_replies_it_paid_for(tmp_path, smollm2, two_question_cells):
    """A checkpoint written during the extras pass holds the selection replies made so far (as ``partial_selection``,
    which no reader sees) and says the table is not complete; a resume on a new machine (an empty cache) seeds them
    back, asks only the questions left, and ends with the table of an uninterrupted run. Before, a selection extra was
    written only once every question had one, so a run killed at 180 of 300 questions lost all 180 replies."""
    from fgpo_lib.precompute import PARTIAL_EXTRA

    spec = PrecomputeSpec("geneturing", "smollm2-135m", questions=9, tools=LIBRARIES["geneturing"], extras=True)
    shutil.copy(two_question_cells, tmp_path / "whole.sqlite")
    whole = PrecomputeEngine(spec, cache=tmp_path / "whole.sqlite", reasoner=smollm2)
    whole.questions = whole.questions[:2]
    whole.run(progress=False)
    whole.run_extras(progress=False)
    expected = whole.build_table()
    assert expected.provenance["complete"] is True and expected.provenance["extras"] == ["all_tools", "selection"]

    class Killed(Exception):
        pass

    killed = PrecomputeEngine(spec, cache=tmp_path / "a.sqlite", reasoner=smollm2)
    killed.questions = whole.questions
    cells_only = expected.select(range(expected.n_questions))
    cells_only.extras = {}
    killed.seed_from_table(cells_only)  # the cell pass was done; the run is killed in the extras pass
    assert killed.remaining() == (0, 0)
    path = tmp_path / "t.npz"

    def checkpoint_then_die():
        killed.build_table(partial=True).save(path)
        raise Killed

    with pytest.raises(Killed):
        killed.run_extras(progress=False, checkpoint=checkpoint_then_die, checkpoint_every=2)  # after the first question's extras
    partial = RewardTable.load(path)
    assert partial.provenance["complete"] is False, "every cell is done, but the extras asked for are not"
    assert "selection" not in partial.extras, "readers see only whole extras"
    replies = partial.extras[PARTIAL_EXTRA.format("selection")]["answers"]
    assert isinstance(replies[0], str) and replies[1:] == [None]

    resumed = PrecomputeEngine(spec, cache=tmp_path / "b.sqlite", reasoner=smollm2)
    resumed.questions = whole.questions
    resumed.seed_from_table(partial, source=str(path))
    before = resumed.cache.count()
    resumed.run_extras(progress=False)
    assert resumed.cache.count() - before == 1, "only the question left is asked"
    final = resumed.build_table()
    assert final.extras == expected.extras and final.provenance["complete"] is True


def test_the_pipeline_resumes_a_table_whose_extras_are_missing(tmp_path, monkeypatch):
    """A table whose cells are all done but whose extras (asked for) are not is not complete, so ``fgpo pipeline``
    resumes it; once the extras are written it has nothing to do."""
    from fgpo_lib import pipeline

    monkeypatch.setattr(pipeline, "ROOT", tmp_path)
    monkeypatch.setattr(pipeline, "TABLES", tmp_path / "tables")
    engine = PrecomputeEngine(PrecomputeSpec("genehop", "records", questions=4, extras=True), cache=tmp_path / "c.sqlite")
    engine.run(progress=False)  # 8 tools, at most 4 a subset: the All-Tools cell is no cell of the grid
    engine.build_table().save(tmp_path / "tables" / "genehop__records.npz")
    assert [what for what, _ in pipeline.precompute_commands()] == ["genehop__records: every cell is done; its extras (all_tools) remain"]
    assert "--extras" in pipeline.precompute_commands()[0][1]
    engine.run_extras(progress=False)
    engine.build_table().save(tmp_path / "tables" / "genehop__records.npz")
    assert pipeline.precompute_commands() == []


def test_a_small_partial_table_waits_outside_the_book(tmp_path, monkeypatch):
    """A committed table still being computed (4-tool or 163-subset) enters the study once it holds
    MIN_PARTIAL_QUESTIONS questions; before that a setting without another table is pending and says how far it has got."""
    from fgpo_lib.study import runner

    engine = PrecomputeEngine(PrecomputeSpec("genehop", "records", questions=90, tools=LIBRARIES["genehop"]), cache=tmp_path / "c.sqlite")
    engine.run(progress=False)
    full = engine.build_table()
    from fgpo_lib import paths

    monkeypatch.setattr(paths, "TABLES_DIR", tmp_path)  # table_path's folder, read at each call
    path = tmp_path / "genehop__qwen2.5-coder-1.5b__4tools.npz"
    build = tmp_path / "build"
    build.mkdir()
    for n, enters in ((runner.MIN_PARTIAL_QUESTIONS - 1, False), (runner.MIN_PARTIAL_QUESTIONS, True)):
        part = full.select(range(n))
        part.provenance.update(complete=False, sample_size=100)
        part.save(path)
        got = runner.library_tables("genehop", "qwen2.5-coder-1.5b", build, tmp_path / "c.sqlite")
        assert ("4 tools" in got) == enters
        assert runner._too_small(path) == ("" if enters else f"{n} of 100 questions computed so far")
    full.provenance.update(complete=True)
    full.select(range(10)).save(path)  # a complete table (a small sample) always enters
    assert "4 tools" in runner.library_tables("genehop", "qwen2.5-coder-1.5b", build, tmp_path / "c.sqlite")
    # the same rule for a 163-subset table still being computed: its 8-tool section waits, the 4-tool one runs
    eight = tmp_path / "genehop__qwen2.5-coder-1.5b.npz"
    for n, complete, enters in ((runner.MIN_PARTIAL_QUESTIONS - 1, False, False), (runner.MIN_PARTIAL_QUESTIONS, True, True)):
        part = full.select(range(n))
        part.provenance.update(complete=complete, sample_size=runner.MIN_PARTIAL_QUESTIONS)
        part.save(eight)
        got = runner.library_tables("genehop", "qwen2.5-coder-1.5b", build, tmp_path / "c.sqlite")
        assert ("8 tools" in got) == enters and "4 tools" in got


def test_the_book_never_computes_an_llm_cell(tmp_path, monkeypatch):
    """``make book`` reads an LLM's tables from ``tables/`` only: with none committed, every LLM setting has no table
    (it is listed as pending) and no cell cache is even opened."""
    from fgpo_lib.reasoners.registry import REASONERS
    from fgpo_lib.study import runner

    from fgpo_lib import paths

    monkeypatch.setattr(paths, "TABLES_DIR", tmp_path / "committed")  # table_path's folder, read at each call
    (tmp_path / "committed").mkdir()
    build, cache = tmp_path / "build", tmp_path / "cells.sqlite"
    build.mkdir()
    llms = [name for name, entry in REASONERS.items() if entry.kind != "reader"]
    assert {"smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"} <= set(llms)
    for reasoner in llms:
        assert runner.library_tables("genehop", reasoner, build, cache) == {}
    assert not cache.exists() and not any(build.iterdir())
