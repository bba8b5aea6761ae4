"""The precompute engine: once per cell, resumable after kill -9, failures recorded, tables verified live."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from fgpo_lib import RewardTable
from fgpo_lib.cli import main
from fgpo_lib.precompute import PrecomputeEngine, PrecomputeError, PrecomputeSpec
from fgpo_lib.reasoners import Reasoner, ReasonerError, make_reasoner
from fgpo_lib.reasoners.http import OpenAIHTTPReasoner
from fgpo_lib.reasoners.llm import LlamaCppReasoner, smollm2_path
from fgpo_lib.verify import verify_table


def test_reader_table_has_provenance_and_verifies(tmp_path):
    spec = PrecomputeSpec("genehop", "bm25", questions=10)
    engine = PrecomputeEngine(spec, cache=tmp_path / "c.sqlite")
    counts = engine.run(progress=False)
    assert counts["computed"] == 10 * 163 and counts["failed"] == 0
    assert engine.run(progress=False)["computed"] == 0  # once per cell: nothing left to do
    table = engine.build_table()
    for key in ("model_sha256", "prompt_sha256", "data_sha256", "code_version", "tools_version"):
        assert table.provenance[key]
    assert {t for t in table.tasks} == {"Disease gene location", "SNP gene function"}
    res = verify_table(table, 25, seed=1)
    assert res["checked"] == 25 and res["agree"] == 25


def _count(db):
    try:
        with sqlite3.connect(db, timeout=5) as c:
            return c.execute("SELECT COUNT(*) FROM cells").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def test_kill_9_halfway_then_resume_gives_the_identical_table(tmp_path):
    # a stratified sample of 90 of GeneTuring's 450 questions (14,670 cells): the kill lands after 3,000 of them
    args = ["--benchmark", "geneturing", "--reasoner", "records", "--questions", "90", "--quiet"]
    ref = tmp_path / "ref.npz"
    assert main(["precompute", *args, "--cache", str(tmp_path / "ref.sqlite"), "--out", str(ref)]) == 0
    db, out = tmp_path / "run.sqlite", tmp_path / "run.npz"
    cmd = [sys.executable, "-m", "fgpo_lib.cli", "precompute", *args, "--cache", str(db), "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while _count(db) < 3000 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.02)
    assert proc.poll() is None, "precompute finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    done = _count(db)
    n = RewardTable.load(ref).n_questions
    assert 0 < done < n * 163 and done % 163 == 0  # whole questions only: a question is one transaction
    assert not out.exists()
    assert subprocess.run(cmd, capture_output=True).returncode == 0
    assert _count(db) == n * 163  # nothing lost, nothing duplicated
    a, b = RewardTable.load(ref), RewardTable.load(out)
    assert np.array_equal(a.rewards, b.rewards) and a.question_ids == b.question_ids and a.provenance == b.provenance


class FlakyReasoner(Reasoner):
    """A user's reasoner that returns a non-text answer for GC-content questions until fixed."""

    name = "flaky"

    def __init__(self):
        self.broken = True
        self.inner = make_reasoner("records")

    def answer(self, question, tool_outputs):
        if self.broken and "GC content" in question and tool_outputs:
            return None
        return self.inner.answer(question, tool_outputs)


def test_malformed_answers_are_failed_cells_not_zeros(tmp_path):
    flaky = FlakyReasoner()
    engine = PrecomputeEngine(PrecomputeSpec("geneseq", "records", questions=12), cache=tmp_path / "c.sqlite", reasoner=flaky)
    counts = engine.run(progress=False)
    assert counts["failed"] == 2 * 162  # two GC questions, every subset but the empty one
    with pytest.raises(PrecomputeError, match="malformed answer: expected text, got NoneType"):
        engine.build_table()
    flaky.broken = False
    assert engine.run(progress=False)["computed"] == 2 * 162  # only the failed cells are retried
    assert engine.build_table().rewards.shape == (12, 163)


@pytest.mark.parametrize("mode,message", [("500", "HTTP 500 from .* after 3 tries"), ("slow", "timeout after 0.2 s .* after 3 tries"), ("nochoices", "malformed response")])
def test_http_failures_become_failed_cells(tmp_path, bad_server, mode, message):
    url = bad_server(mode)
    r = OpenAIHTTPReasoner(url, timeout=0.2, retries=2, backoff=0.01, concurrency=2)
    with pytest.raises(ReasonerError, match=message):
        r.answer("Which gene is SNP rs1217074595 associated with?", ["[snp_lookup] No items found."])
    engine = PrecomputeEngine(PrecomputeSpec("genehop", "openai-http", questions=2, max_size=1), cache=tmp_path / "c.sqlite", reasoner=r)
    counts = engine.run(progress=False)
    assert counts["failed"] == counts["computed"] == 2 * 9
    with pytest.raises(PrecomputeError, match="failed"):
        engine.build_table()


def test_missing_and_corrupt_model_files(tmp_path):
    with pytest.raises(ReasonerError, match="does not exist"):
        LlamaCppReasoner(model=None, model_path=tmp_path / "nope.gguf", chat=True)
    pytest.importorskip("llama_cpp")
    bad = tmp_path / "corrupt.gguf"
    bad.write_bytes(b"GGUF" + os.urandom(4096))
    with pytest.raises(ReasonerError, match="corrupt.gguf is not a readable GGUF file"):
        LlamaCppReasoner(model=None, model_path=bad, chat=True)
    truncated = tmp_path / "truncated.gguf"  # a real header, then the file ends inside the tensor data
    with open(smollm2_path(), "rb") as fh:
        truncated.write_bytes(fh.read(4 << 20))
    with pytest.raises(ReasonerError, match="cannot load model file .*truncated.gguf"):
        LlamaCppReasoner(model=None, model_path=truncated, chat=True)


def test_unknown_reasoner_and_table_info(tmp_path, capsys):
    with pytest.raises(ValueError, match="unknown reasoner 'gpt-9'"):
        make_reasoner("gpt-9")
    out = tmp_path / "t.npz"
    assert main(["precompute", "--benchmark", "geneseq", "--reasoner", "records", "--questions", "12", "--cache", str(tmp_path / "c.sqlite"), "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["table-info", str(out)]) == 0
    text = capsys.readouterr().out
    for line in ("mean reward:", "constant reward over all subsets:", "best single subset:", "oracle-best mean", "mean reward by subset size: 0: 0.0000",
                 f"cost: {12 * 163:,} of {12 * 163:,} cells timed"):
        assert line in text
    two = tmp_path / "t2.npz"
    RewardTable.load(out).select(range(6)).save(two)
    assert main(["table-info", str(out), str(two)]) == 0  # several tables: one markdown row each
    rows = [r for r in capsys.readouterr().out.splitlines() if r.startswith("| t")]
    assert [r.split("|")[1].strip() for r in rows] == ["table", "t", "t2"]
    assert "| 12 of 12 " in rows[1] and "| 6 of 12 " in rows[2]


def test_table_info_counts_the_extra_cells(three_tool_table, tmp_path, capsys):
    """The All-Tools mean and the selection calls (two of four unparseable, scored 0), against hand-computed values,
    in table-info's text and in its one-row-per-table form; a table without extras shows neither."""
    t = three_tool_table
    t.extras = {
        "all_tools": {"kind": "cell", "subsets": ["gene_search+snp_lookup+blast"] * 4, "answers": [""] * 4, "rewards": [1.0, 0.0, 0.5, 1.0]},
        "selection": {"kind": "selection", "subsets": ["snp_lookup", None, None, "gene_search+blast"],
                      "answers": ["snp_lookup", "no", "EcoRI", "gene_search, blast"], "rewards": [1.0, None, None, 1.0]},
    }
    path = t.save(tmp_path / "x.npz")
    assert main(["table-info", str(path)]) == 0
    text = capsys.readouterr().out
    assert "All-Tools cell (every tool in one call): mean 0.6250" in text  # (1 + 0 + 0.5 + 1) / 4
    assert "selection calls: 4, 2 unparseable; mean of their picks 0.5000" in text  # (1 + 0 + 0 + 1) / 4
    plain = RewardTable.load(path)
    plain.extras = {}
    assert main(["table-info", str(path), str(plain.save(tmp_path / "y.npz"))]) == 0
    rows = [r for r in capsys.readouterr().out.splitlines() if r.startswith("| x") or r.startswith("| y")]
    assert [r.split("|")[-2].strip() for r in rows] == ["2 of 4", ""]  # the last column: selection unparseable


def test_cell_times_survive_a_new_machine(tmp_path):
    """A table keeps each cell's wall time and raw answer; a resume on a new machine (an empty cache seeded from the table) carries
    them into the next table, and a table made before tables kept times reports its cost as unknown."""
    from fgpo_lib.table_info import cost_info

    spec = PrecomputeSpec("genehop", "records", questions=4)
    first = PrecomputeEngine(spec, cache=tmp_path / "first.sqlite")
    first.run(progress=False)
    table = first.build_table()
    assert table.seconds.shape == table.rewards.shape and (table.seconds > 0).all()
    path = table.save(tmp_path / "t.npz")
    moved = PrecomputeEngine(PrecomputeSpec("genehop", "records", questions=8), cache=tmp_path / "new.sqlite")
    moved.seed_from_table(RewardTable.load(path))
    moved.run(progress=False)
    grown = moved.build_table()
    rows = [grown.question_ids.index(q) for q in table.question_ids]
    assert np.array_equal(grown.seconds[rows], table.seconds)  # carried, not re-timed (seeding evaluates nothing)
    assert np.isfinite(grown.seconds).all()
    info = cost_info(grown)
    assert info["timed_cells"] == 8 * 163 and info["seconds"] == pytest.approx(float(grown.seconds.sum()), rel=1e-5)
    assert grown.answers is not None and (grown.answers[rows] == table.answers).all()
    table.seconds = table.answers = None  # an older table: no times, no raw answers
    table.save(path)
    old = PrecomputeEngine(spec, cache=tmp_path / "old.sqlite")
    old.seed_from_table(RewardTable.load(path))
    rebuilt = old.build_table()
    assert np.isnan(rebuilt.seconds).all() and cost_info(rebuilt) == {}
    assert rebuilt.answers is None  # unknown answers are not written as empty ones


def test_local_processes_and_a_local_dask_cluster_give_the_serial_table(tmp_path):
    from distributed import Client, LocalCluster

    spec = PrecomputeSpec("genehop", "records", questions=8)
    serial = PrecomputeEngine(spec, cache=tmp_path / "serial.sqlite")
    serial.run(progress=False)
    procs = PrecomputeEngine(spec, cache=tmp_path / "procs.sqlite")
    procs.run(workers=2, progress=False)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None) as cluster, Client(cluster) as client:
        dask = PrecomputeEngine(spec, cache=tmp_path / "dask.sqlite")
        counts = dask.run(executor=client.get_executor(), progress=False)
    assert counts["computed"] == 8 * 163
    ref = serial.build_table().rewards
    assert np.array_equal(procs.build_table().rewards, ref) and np.array_equal(dask.build_table().rewards, ref)


def test_grpo_on_demand_oracle_goes_through_the_cache(tmp_path):
    from fgpo_lib import TrainConfig, train
    from fgpo_lib.precompute import EngineOracle

    spec = PrecomputeSpec("genehop", "records", questions=6)
    full = PrecomputeEngine(spec, cache=tmp_path / "full.sqlite")
    full.run(progress=False)
    table = full.build_table()
    lazy = PrecomputeEngine(spec, cache=tmp_path / "lazy.sqlite")
    oracle = EngineOracle(lazy)
    cfg = TrainConfig(method="grpo", steps=4, group_size=4)
    run = train(table, cfg, oracle=oracle)
    ref = train(table, cfg)
    run.pop("created"), ref.pop("created")
    assert run == ref  # same rewards from the live oracle as from the table
    assert oracle.calls == 4 * 4 * len(table.split_index("train"))
    assert lazy.cache.count() == oracle.unique_calls < oracle.calls  # only the sampled cells were evaluated


def _open_cache(path):
    from fgpo_lib.precompute import CellCache

    CellCache(path).close()
    return 1


def test_a_new_cache_opened_by_several_processes_at_once(tmp_path):
    """The study builds reader tables in parallel into one new cache: switching it to WAL must not fail on the lock."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(4) as pool:
        for i in range(5):
            assert sum(pool.map(_open_cache, [str(tmp_path / f"c{i}.sqlite")] * 8)) == 8
