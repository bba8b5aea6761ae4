"""Nothing lost, nothing crashes: one regression test per input a new user fed the command line (issue #22).

A bad input's test asserts three things: the exit code (2), no traceback, and a message naming the offending flag,
file or row. The resume test runs the README's resume command on a committed LLM table with a fresh cache.
"""

import contextlib
import io
import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fgpo_lib import RewardTable
from fgpo_lib.cli import main
from fgpo_lib.commands.score import read_predictions
from fgpo_lib.genomics.benchmarks import load_benchmark
from fgpo_lib.table import RewardTableError

ROOT = Path(__file__).resolve().parents[1]


def run(argv):
    """``(exit code, stdout, stderr)`` of ``fgpo argv``; never a traceback."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code
    assert "Traceback" not in err.getvalue() + out.getvalue()
    return code, out.getvalue(), err.getvalue()


def fails(argv, *names):
    """Assert ``fgpo argv`` exits 2 with a message naming every one of ``names``; return the message."""
    code, _, err = run(argv)
    assert code == 2, err
    for name in names:
        assert name in err, (name, err)
    return err


@pytest.fixture(scope="module")
def small_table(tmp_path_factory):
    path = tmp_path_factory.mktemp("t") / "t.npz"
    assert run(["example-table", "--out", path, "--questions", 12])[0] == 0
    return path


# --- 1. data loss: the README's resume command ------------------------------------------------------------------------
@pytest.mark.slow
def test_resume_of_a_committed_llm_table_on_a_fresh_cache_keeps_everything(tmp_path):
    """Same rewards, answers, extras and provenance; of the provenance only ``seeded_from`` (which names the copy)
    and ``code_version`` (the code that assembled the file) may change."""
    src = ROOT / "tables" / "genehop__qwen2.5-coder-0.5b__4tools.npz"
    copy = tmp_path / src.name
    shutil.copy(src, copy)
    code, out, err = run(["precompute", "--benchmark", "genehop", "--reasoner", "qwen2.5-coder-0.5b", "--tools", "four", "--quiet",
                          "--resume-from", copy, "--out", copy, "--cache", tmp_path / "fresh.sqlite"])
    assert code == 0, err
    a, b = RewardTable.load(src), RewardTable.load(copy)
    assert np.array_equal(a.rewards, b.rewards) and a.question_ids == b.question_ids
    assert np.array_equal(a.answers, b.answers)
    assert json.dumps(a.extras, sort_keys=True) == json.dumps(b.extras, sort_keys=True)
    assert np.array_equal(np.isnan(a.seconds), np.isnan(b.seconds)) and np.allclose(np.nan_to_num(a.seconds), np.nan_to_num(b.seconds))
    for k, v in a.provenance.items():
        if k not in ("seeded_from", "code_version"):
            assert b.provenance[k] == v, k


def test_precompute_refuses_to_overwrite_a_table_that_holds_more(tmp_path):
    out = tmp_path / "t.npz"
    base = ["precompute", "--benchmark", "genehop", "--reasoner", "records", "--quiet", "--cache", tmp_path / "c.sqlite", "--out", out]
    assert run([*base, "--questions", 4, "--extras"])[0] == 0
    before = out.read_bytes()
    fails([*base, "--questions", 2], "--out", "answers", "--force")  # a smaller sample written over the larger table
    assert out.read_bytes() == before
    assert run([*base, "--questions", 2, "--force"])[0] == 0 and RewardTable.load(out).n_questions == 2


# --- 2. tracebacks that were still reachable -------------------------------------------------------------------------
@pytest.mark.parametrize("reasoner,kwargs,names", [
    ("records", '{"foo": 1}', ["'foo'", "records"]),
    ("openai-http", "{}", ["'base_url'", "needs"]),
    ("openai-http", '{"base_url": 5}', ["'base_url'", "str"]),
    ("bm25", '{"k1": "high"}', ["'k1'", "float"]),
])
def test_reasoner_kwargs_are_checked_against_the_reasoners_signature(tmp_path, reasoner, kwargs, names):
    err = fails(["precompute", "--benchmark", "genehop", "--reasoner", reasoner, "--reasoner-kwargs", kwargs, "--out", tmp_path / "t.npz",
                 "--cache", tmp_path / "c.sqlite", "--quiet"], *names)
    assert "accepts" in err and not (tmp_path / "t.npz").exists()


def _truncated_sqlite(path: Path) -> Path:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (x)")
    db.executemany("INSERT INTO t VALUES (?)", [("x" * 500,)] * 200)
    db.commit()
    db.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    return path


@pytest.mark.parametrize("kind", ["text file", "truncated sqlite", "directory", "read-only place"])
def test_a_bad_cell_cache_is_a_named_error(tmp_path, kind):
    cache = {"text file": lambda: (tmp_path / "c.txt").write_text("not a database\n" * 100) and tmp_path / "c.txt",
             "truncated sqlite": lambda: _truncated_sqlite(tmp_path / "c.sqlite"),
             "directory": lambda: tmp_path,
             "read-only place": lambda: Path("/proc/fgpo-cache/c.sqlite")}[kind]()
    fails(["precompute", "--benchmark", "genehop", "--reasoner", "records", "--questions", 2, "--cache", cache, "--out", tmp_path / "t.npz", "--quiet"], "--cache", str(cache))


@pytest.mark.parametrize("lines,names", [
    (['{"question": ["a"], "prediction": "x"}'], ["line 1", "'question'", "list"]),
    (['{"question": {"a": 1}, "prediction": "x"}'], ["line 1", "'question'", "dict"]),
    (['{"qid": "genehop/snp-gene-function/000", "prediction": null}'], ["line 1", "'prediction'", "null"]),
    (['{"qid": "genehop/snp-gene-function/000", "prediction": "x"}', '{"qid": "genehop/snp-gene-function/000", "prediction": "y"}'], ["line 2", "line 1"]),
    ([], ["no predictions"]),
    (["[1, 2]"], ["line 1", "JSON object"]),
])
def test_score_reads_only_well_formed_predictions(tmp_path, lines, names):
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(lines) + ("\n" if lines else ""))
    fails(["score", "--benchmark", "genehop", "--predictions", path], str(path), *names)


@pytest.mark.parametrize("meta,field", [
    (["not", "a", "dict"], "meta must be a JSON object"),
    ({"space": {"n_tools": 2, "max_size": 2, "min_size": 0, "tool_names": ["a", "b"]}, "question_ids": "q0", "split": ["train"], "reward_range": [0, 1]}, "'question_ids'"),
    ({"space": {"n_tools": 2, "max_size": 2, "min_size": 0, "tool_names": ["a", "b"]}, "question_ids": ["q0"], "tasks": 5, "split": ["train"], "reward_range": [0, 1]}, "'tasks'"),
    ({"space": {"n_tools": 2, "max_size": 2, "min_size": 0, "tool_names": ["a", "b"]}, "question_ids": ["q0"], "split": "train", "reward_range": [0, 1]}, "'split'"),
    ({"space": {"n_tools": 2, "max_size": 2, "min_size": 0, "tool_names": ["a", "b"]}, "question_ids": ["q0"], "split": ["train"], "reward_range": "0-1"}, "'reward_range'"),
    ({"space": "four tools", "question_ids": ["q0"], "split": ["train"], "reward_range": [0, 1]}, "'space'"),
])
def test_npz_meta_of_the_wrong_types_is_a_named_error(tmp_path, meta, field):
    path = tmp_path / "t.npz"
    if isinstance(meta, dict):
        meta = {"format": "fgpo-reward-table", "version": 1, "questions": None, "tasks": None, "provenance": {}, **meta}
    np.savez(path, rewards=np.zeros((1, 4), np.float32), meta=np.array(json.dumps(meta)))
    with pytest.raises(RewardTableError, match=str(path).replace(".", r"\.")) as exc:
        RewardTable.load(path)
    assert field in str(exc.value)


@pytest.mark.parametrize("argv,flag", [
    (["train", "--table", "{t}", "--group-size", "1000000000"], "--group-size"),
    (["train", "--table", "{t}", "--steps", str(10**19)], "--steps"),
    (["train", "--table", "{t}", "--hidden", "1000000000"], "--hidden"),
    (["train", "--table", "{t}", "--seed", str(2**64)], "--seed"),
    (["example-table", "--out", "{d}/x.npz", "--questions", str(10**11)], "--questions"),
    (["compare", "--table", "{t}", "--seeds", "0,0"], "--seeds"),
    (["precompute", "--benchmark", "genehop", "--reasoner", "records", "--workers", "100000", "--out", "{d}/x.npz"], "--workers"),
    (["precompute", "--benchmark", "genehop", "--reasoner", "records", "--tools", ",", "--out", "{d}/x.npz", "--cache", "{d}/c.sqlite"], "--tools"),
    (["precompute", "--benchmark", "genehop", "--reasoner", "records", "--reasoner-kwargs", "not json", "--out", "{d}/x.npz"], "--reasoner-kwargs"),
    (["coverage", "--benchmark", "genehop", "--max-size", "0"], "--max-size"),
    (["train", "--table", "{t}", "--out", ""], "--out"),
    (["train", "--table", "{t}", "--out", "{t}/run.json"], "--out"),
    (["compare", "--table", "{t}", "--out", "{t}/run.json"], "--out"),
    (["example-table", "--out", "{d}"], "--out"),
])
def test_out_of_range_counts_and_bad_flags_name_the_flag(small_table, tmp_path, argv, flag):
    fails([a.format(t=small_table, d=tmp_path) for a in argv], flag)
    assert not list(tmp_path.glob("*tmp*")) and not (tmp_path / "x.npz").exists()


# --- 3. silently wrong -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("tools", [["a"], ["a", "b"]])
def test_a_dataframe_nan_in_tools_is_the_empty_subset(tmp_path, tools):
    csv = tmp_path / "t.csv"
    labels = [""] + ["+".join(c) for n in range(1, len(tools) + 1) for c in __import__("itertools").combinations(tools, n)]
    pd.DataFrame({"question_id": ["q"] * len(labels), "tools": labels, "reward": np.linspace(0, 1, len(labels))}).to_csv(csv, index=False)
    table = RewardTable.from_long(pd.read_csv(csv))  # pandas reads '' as NaN
    assert table.tool_names == tuple(tools) and "nan" not in table.space.labels()
    assert table.rewards[0, table.space.index_of([])] == 0.0


def test_a_dead_endpoint_is_named_before_any_cell(tmp_path):
    import socket

    with socket.socket() as s:  # a port with no server
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    kwargs = json.dumps({"base_url": f"http://127.0.0.1:{port}", "retries": 0, "timeout": 2})
    fails(["precompute", "--benchmark", "genehop", "--reasoner", "openai-http", "--reasoner-kwargs", kwargs, "--questions", 2,
           "--out", tmp_path / "t.npz", "--cache", tmp_path / "c.sqlite", "--quiet"], f"127.0.0.1:{port}", "is the server running")
    assert not (tmp_path / "t.npz").exists()


def test_a_dry_run_whose_pilot_failed_estimates_nothing(tmp_path, bad_server):
    kwargs = json.dumps({"base_url": bad_server("500"), "retries": 0, "timeout": 2})
    err = fails(["precompute", "--benchmark", "genehop", "--reasoner", "openai-http", "--reasoner-kwargs", kwargs, "--questions", 2, "--pilot", 1,
                 "--dry-run", "--out", tmp_path / "t.npz", "--cache", tmp_path / "c.sqlite", "--quiet"], "--dry-run", "failed", "no estimate")
    assert "0.00 h" not in err


def test_complex_rewards_in_an_npz_are_refused(tmp_path, small_table):
    table = RewardTable.load(small_table)
    path = tmp_path / "c.npz"
    np.savez(path, rewards=table.rewards.astype(np.complex64), meta=np.array(json.dumps(table._meta())))
    with pytest.raises(RewardTableError, match="'rewards' must hold real numbers"):
        RewardTable.load(path)


def test_a_save_that_fails_leaves_no_temporary_file(tmp_path, small_table):
    fails(["example-table", "--out", tmp_path], "--out")
    with pytest.raises(RewardTableError, match="is a directory"):
        RewardTable.load(small_table).save(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_train_says_what_each_figure_means(small_table):
    code, out, _ = run(["train", "--table", small_table, "--method", "fgpo", "--steps", 0])
    assert code == 0
    assert "dead-group probability at G=8" in out and "FGPO does not sample" in out
    assert "reads whole, however many steps" in out


def test_precompute_help_says_how_a_sample_is_drawn():
    code, out, _ = run(["precompute", "--help"])
    out = " ".join(out.split())
    assert code == 0 and "at least one per task" in out and "--force" in out


def test_coverage_names_the_best_subset_where_no_single_tool_reaches():
    from fgpo_lib.genomics.coverage import coverage_table

    table = coverage_table("genehop", max_size=2)
    none_alone = table[table["best_single_tool_%"] == 0]
    assert (none_alone["best_single_tool"] == "no tool alone").all()
    assert (table.loc[table["reachable_%"] > 0, "best_subset_%"] > 0).all()
    assert not (table["best_single_tool"] == "none").any()


# --- 4. messages that name nothing -----------------------------------------------------------------------------------
def test_an_empty_csv_is_named(tmp_path):
    path = tmp_path / "e.csv"
    path.write_text("question_id,tools,reward\n")
    fails(["train", "--table", path], str(path), "no rows")


def test_a_text_file_named_npz_is_named_without_pickle_advice(tmp_path):
    path = tmp_path / "t.npz"
    path.write_text("question_id,tools,reward\n")
    err = fails(["train", "--table", path], str(path), "not a NumPy .npz archive")
    assert "pickle" not in err


def test_an_unknown_tool_in_a_csv_is_suspected_by_name(tmp_path):
    path = tmp_path / "t.csv"
    rows = [("q", lbl, 0.5) for lbl in ["", "blast", "gene_search", "blast+gene_search"]] + [("q", "blsat", 0.5)]
    pd.DataFrame(rows, columns=["question_id", "tools", "reward"]).to_csv(path, index=False)
    fails(["train", "--table", path], str(path), "'blsat' a misspelt or unknown tool")


# --- fuzz: the loaders find only the project's own errors ------------------------------------------------------------
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=400), suffix=st.sampled_from([".npz", ".csv", ".parquet"]))
def test_random_bytes_give_a_named_table_error(tmp_path_factory, data, suffix):
    path = tmp_path_factory.mktemp("b") / f"t{suffix}"
    path.write_bytes(data)
    try:
        RewardTable.load(path)
    except RewardTableError as exc:
        assert str(path) in str(exc)


_json = st.recursive(st.none() | st.booleans() | st.integers(-3, 5) | st.floats(allow_nan=True) | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6)
_META_FIELDS = ["space", "question_ids", "questions", "tasks", "split", "reward_range", "provenance", "extras", "format", "version"]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=st.sampled_from(_META_FIELDS), value=_json, drop=st.booleans())
def test_mutated_meta_gives_a_named_table_error(tmp_path_factory, field, value, drop):
    from fgpo_lib.examples import protein_structure_table

    table = protein_structure_table(n_questions=3, seed=0)
    meta = table._meta()
    if drop:
        meta.pop(field)
    else:
        meta[field] = value
    path = tmp_path_factory.mktemp("m") / "t.npz"
    np.savez(path, rewards=table.rewards, meta=np.array(json.dumps(meta)))
    try:
        RewardTable.load(path)
    except RewardTableError as exc:
        assert str(path) in str(exc)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.one_of(_json.map(json.dumps), st.text(max_size=30)), max_size=4))
def test_the_score_reader_finds_only_named_errors(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("p") / "p.jsonl"
    path.write_text("\n".join(lines))
    try:
        read_predictions(path, load_benchmark("genehop"))
    except ValueError as exc:
        assert str(path) in str(exc)
