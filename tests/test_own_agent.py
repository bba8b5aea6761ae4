"""A user's own agent through the library (issue #43): the worked example's module (examples/travel_desk) through
fgpo precompute with a Python-callable reasoner and with a real local OpenAI-compatible server (llama_cpp.server on
a shipped GGUF), a trained selector saved, loaded and used on questions no table holds, and the frontier drawn."""

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from fgpo_lib import RewardTable, Selector, TrainConfig, train

from test_user_errors import ROOT, fails, run

BENCH = "examples.travel_desk.agent:BENCHMARK"
ANSWER = "examples.travel_desk.agent:answer"
TABLE = ROOT / "examples" / "travel_desk" / "table__qwen2.5-coder-0.5b.npz"
NEW_QUESTIONS = ["Which country is Lima in?", "How far is it from Nairobi to Paris, in kilometres (great circle, to the nearest 100)?",
                 "When it is 05:00 UTC, what time is it in Toronto (standard time, 24-hour clock)?"]


@pytest.fixture(scope="module")
def callable_table(tmp_path_factory):
    out = tmp_path_factory.mktemp("agent") / "t.npz"
    code, _, err = run(["precompute", "--benchmark", BENCH, "--reasoner", ANSWER, "--quiet", "--out", out, "--cache", out.with_suffix(".sqlite")])
    assert code == 0, err
    return out


def test_the_callable_reasoner_fills_every_cell_and_verify_table_re_derives_them(callable_table):
    t = RewardTable.load(callable_table)
    assert t.n_questions == 52 and t.n_subsets == 16 and t.tool_names == ("atlas", "clock", "distance", "census")
    assert t.provenance["benchmark"] == BENCH and t.provenance["reasoner"] == ANSWER
    # the extractive reader is right exactly when the task's tool is in the subset
    need = {"country": "atlas", "local time": "clock", "distance": "distance", "larger city": "census"}
    for i, task in enumerate(t.tasks):
        has = t.space.masks[:, t.tool_names.index(need[task])]
        assert np.array_equal(t.rewards[i] == 1, has), t.question_ids[i]
    code, out, err = run(["verify-table", callable_table, "--sample", 30, "--extras", 0, "--strict"])
    assert code == 0 and "30 of 30" in out, out + err


def test_a_module_that_cannot_be_imported_or_lacks_a_part_is_named(tmp_path):
    fails(["questions", "--benchmark", "no_such_module_xyz:BENCHMARK"], "no_such_module_xyz", "cannot be imported")
    fails(["questions", "--benchmark", "examples.travel_desk.agent:NOPE"], "no attribute 'NOPE'")
    fails(["questions", "--benchmark", "examples.travel_desk.agent:TOOLS"], "not an fgpo_lib.agent.AgentBenchmark")
    fails(["precompute", "--benchmark", BENCH, "--reasoner", "examples.travel_desk.agent:NOPE", "--out", tmp_path / "t.npz", "--cache", tmp_path / "c.sqlite"],
          "--reasoner", "NOPE")
    from fgpo_lib.agent import AgentBenchmark, BenchmarkError

    with pytest.raises(BenchmarkError, match="tools"):
        AgentBenchmark("x", [], [], lambda a, g: 1.0)


def test_a_selector_from_the_cli_picks_tools_for_questions_no_table_holds(callable_table, tmp_path):
    sel = tmp_path / "sel"
    code, out, err = run(["train", "--table", callable_table, "--reward", "eq1", "--steps", 300, "--save-selector", sel])
    assert code == 0 and "saved the selector" in out, err
    code, out, err = run(["select", sel, *[a for q in NEW_QUESTIONS for a in ("--question", q)]])
    assert code == 0, err
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["question"] for line in lines] == NEW_QUESTIONS
    assert [line["tools"] for line in lines] == [["atlas"], ["distance"], ["clock"]]  # under Eq. 1's parsimony: the one tool needed
    assert all(0 < line["probability"] <= 1 for line in lines)


def test_selector_load_gives_the_probabilities_and_the_records_choices(callable_table, tmp_path):
    """Python path: the selector of a run, saved and loaded, gives identical probabilities, and on the table's own
    test questions the run record's choices."""
    table = RewardTable.load(callable_table)
    for cfg in (TrainConfig(steps=60, seed=1), TrainConfig(method="reference"), TrainConfig(method="sft", steps=40, featurizer="constant")):
        keep = {}
        record = train(table, cfg, keep=keep)
        sel = Selector.from_training(table, cfg, keep, record)
        folder = sel.save(tmp_path / cfg.method)
        again = Selector.load(folder)
        questions = NEW_QUESTIONS + [table.questions[r] for r in table.split_index("test")]
        assert np.array_equal(sel.probabilities(questions), again.probabilities(questions))
        test = [table.questions[r] for r in table.split_index("test")]
        assert list(again.choices(test)) == record["per_question"]["test"]["greedy_subset"]
        assert again.provenance["table_content_hash"] == table.content_hash() and again.provenance["method"] == cfg.method


def test_a_selector_folder_that_cannot_be_used_is_named(callable_table, tmp_path):
    table = RewardTable.load(callable_table)
    keep = {}
    cfg = TrainConfig(steps=5)
    record = train(table, cfg, keep=keep)
    folder = Selector.from_training(table, cfg, keep, record).save(tmp_path / "s")
    meta = json.loads((folder / "selector.json").read_text())
    for change, match in (({"version": 99}, "format version 99"), ({"featurizer": {**meta["featurizer"], "fingerprint": "0" * 64}}, "other features"),
                          ({"featurizer": {**meta["featurizer"], "name": "nope"}}, "'nope'")):
        bad = tmp_path / f"bad{len(list(tmp_path.iterdir()))}"
        bad.mkdir()
        (bad / "weights.safetensors").write_bytes((folder / "weights.safetensors").read_bytes())
        (bad / "selector.json").write_text(json.dumps({**meta, **change}))
        fails(["select", bad, "--question", "x"], str(bad), match)
    fails(["select", tmp_path, "--question", "x"], "not a selector folder")
    fails(["train", "--table", callable_table, "--method", "uniform", "--save-selector", tmp_path / "u"], "trains no policy")


def test_the_frontier_plots_the_example_and_keeps_the_chosen_selector(callable_table, tmp_path):
    plot, sel = tmp_path / "f.png", tmp_path / "sel"
    code, out, err = run(["frontier", "--table", callable_table, "--lambdas", "0,0.5,2", "--steps", 100, "--plot", plot, "--save-selector", sel, "--max-tools", 1.5])
    assert code == 0, err
    assert plot.stat().st_size > 10_000 and "Reference (ridge)" in out and "gap_recovered" in out
    assert (sel / "selector.json").exists()
    fails(["frontier", "--table", callable_table, "--save-selector", tmp_path / "s2"], "--max-tools or --target-accuracy")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _server(model: Path, alias: str, port: int):
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", alias, "--n_threads", "1", "--n_ctx", "2048",
                             "--host", "127.0.0.1", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(240):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError("llama_cpp.server exited")
            time.sleep(0.5)
    proc.kill()
    raise RuntimeError("llama_cpp.server did not start")


@pytest.mark.slow
def test_the_example_through_a_real_local_openai_compatible_server(tmp_path):
    """llama_cpp.server serving the shipped SmolLM2 GGUF: a few cells through openai-http with the benchmark's own
    instructions, cached (a second run computes none), and re-derived live by verify-table."""
    from fgpo_lib.weights import smollm2_path

    port = _free_port()
    proc = _server(Path(smollm2_path()), "smollm2", port)
    try:
        kwargs = json.dumps({"base_url": f"http://127.0.0.1:{port}", "model": "smollm2", "concurrency": 1})
        argv = ["precompute", "--benchmark", BENCH, "--reasoner", "openai-http", "--reasoner-kwargs", kwargs, "--questions", 4, "--tools", "atlas,clock",
                "--quiet", "--out", tmp_path / "t.npz", "--cache", tmp_path / "c.sqlite"]
        code, out, err = run(argv)
        assert code == 0 and "computed 16 cells (0 failed)" in out, out + err
        t = RewardTable.load(tmp_path / "t.npz")
        assert t.provenance["reasoner"] == "openai-http" and t.provenance["model_sha256"].startswith(f"remote:http://127.0.0.1:{port}/smollm2:")
        assert t.answers is not None and (t.answers != "").all()
        code, out, _ = run(argv)
        assert "computed 0 cells" in out
        code, out, err = run(["verify-table", tmp_path / "t.npz", "--sample", 4, "--extras", 0])
        assert code == 0 and "4 of 4" in out, out + err
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.mark.slow
def test_the_committed_example_table_re_derives_live_on_its_server():
    """The book's table (Qwen2.5-Coder-0.5B behind llama_cpp.server, port 8765 as its provenance names): a few of its
    cells computed again live agree with it."""
    t = RewardTable.load(TABLE)
    kwargs = t.provenance["reasoner_kwargs"]
    port = int(kwargs["base_url"].rsplit(":", 1)[1])
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            pytest.skip(f"port {port} is taken by another process")
    except OSError:
        pass
    from fgpo_lib.weights import QWEN25_CODER_05B

    proc = _server(Path(QWEN25_CODER_05B.path()), kwargs["model"], port)
    try:
        code, out, err = run(["verify-table", TABLE, "--sample", 6, "--extras", 0])
        assert code == 0 and "6 of 6" in out, out + err
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_the_readmes_quick_start_runs_verbatim(tmp_path, monkeypatch):
    """The README's Quick start block, run as written in a folder that holds the repository's examples."""
    import re

    readme = (ROOT / "README.md").read_text()
    block = re.search(r"## Quick start \(Python\).*?```python\n(.*?)```", readme, re.S).group(1)
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    exec(compile(block, "README.md", "exec"), {})
    assert (tmp_path / "my_selector" / "selector.json").exists()


@pytest.mark.slow
def test_the_readmes_protein_table_numbers_come_from_its_command(tmp_path):
    """The README's sentence on the protein table names a command and what it prints (the tie, FGPO's and GRPO's
    reasoner calls): running that command gives those numbers."""
    import re

    readme = " ".join((ROOT / "README.md").read_text().split())
    sentence = re.search(r"`(fgpo compare --table protein\.npz[^`]*)` has FGPO, GRPO and the oracle tie at ([0-9.]+):.*?"
                         r"each of the ([0-9,]+) training cells once, GRPO asks for ([0-9,]+) sampled cells", readme)
    command, tie, fgpo_calls, grpo_calls = sentence.groups()
    fgpo = [sys.executable, "-m", "fgpo_lib.cli"]
    subprocess.run([*fgpo, "example-table", "--out", "protein.npz"], cwd=tmp_path, check=True, capture_output=True)
    out = subprocess.run([*fgpo, *command.split()[1:]], cwd=tmp_path, check=True, capture_output=True, text=True).stdout
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.split() and line.split()[0] in ("fgpo", "grpo", "oracle-best")}
    assert {rows[m][1] for m in rows} == {tie} and len(rows) == 3
    assert (rows["fgpo"][-2], rows["grpo"][-2]) == (fgpo_calls, grpo_calls)
