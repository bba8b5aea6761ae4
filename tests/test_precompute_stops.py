"""Parallel precompute stops, and a user's code that fails is the user's error: tested on a user's agent written here.

Ctrl-C and SIGTERM reach the worker processes: the questions finished so far are cached, the rest cancelled, the
command exits within seconds (130 or 143), says what it kept, counted, and leaves no process behind; a reasoner that
blocks is cut by ``--cell-timeout``. Each signal is sent once the child's own marker says a question is cached
(``FGPO_READY_FILE``), never after a fixed delay.
"""

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fgpo_lib import cli

INSTALLED = Path(sys.executable).parent / "fgpo"

AGENT = '''
import sys, time
from fgpo_lib.agent import AgentBenchmark, AgentQuestion, AgentTool

QS = [AgentQuestion(f"q{i}", f"What is {i} plus {i}?", str(2 * i)) for i in range(30)]
TOOLS = [AgentTool("adder", "adds two numbers", lambda q: "the sum is known"), AgentTool("noise", "says nothing", lambda q: "nothing")]
BENCHMARK = AgentBenchmark("stops", QS, TOOLS, lambda a, g: float(a.strip() == g))

def slow(question, outputs):
    time.sleep(0.3)
    return "0"

def blocks(question, outputs):
    time.sleep(3600)
    return "0"

def exits(question, outputs):
    sys.exit(7)

def boom(q):
    raise RuntimeError("unit server down")

BAD_TOOL = AgentBenchmark("bad-tool", QS[:3], [AgentTool("units", "converts units", boom), AgentTool("noise", "nothing", lambda q: "n")], lambda a, g: 1.0)
NONE_TOOL = AgentBenchmark("none-tool", QS[:3], [AgentTool("units", "converts units", lambda q: None)], lambda a, g: 1.0)

def bad_score(answer, gold):
    raise ZeroDivisionError("the scorer divided by zero")

BAD_SCORER = AgentBenchmark("bad-scorer", QS[:3], TOOLS, bad_score)

def no_questions():
    raise OSError("questions.csv is missing")

BAD_QUESTIONS = AgentBenchmark("bad-questions", no_questions, TOOLS, lambda a, g: 1.0)
'''


@pytest.fixture
def agent(tmp_path, monkeypatch):
    name = f"stop_agent_{os.getpid()}_{time.monotonic_ns()}"
    (tmp_path / f"{name}.py").write_text(AGENT)
    (tmp_path / "exits_on_import.py").write_text("import sys\nsys.exit(0)\n")
    monkeypatch.chdir(tmp_path)
    return name


def _precompute(agent: str, tmp_path: Path, reasoner: str, *extra, bench: str = "BENCHMARK") -> tuple[subprocess.Popen, Path]:
    marks = tmp_path / "ready.txt"
    marks.unlink(missing_ok=True)
    argv = [str(INSTALLED), "precompute", "--benchmark", f"{agent}:{bench}", "--reasoner", f"{agent}:{reasoner}", "--cache", str(tmp_path / "cells.sqlite"),
            "--out", str(tmp_path / "t.npz"), "--quiet", *extra]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env={**os.environ, "FGPO_READY_FILE": str(marks)},
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    return proc, marks


def _wait_for(proc, marks: Path, stage: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while stage not in (marks.read_text() if marks.exists() else ""):
        assert proc.poll() is None, f"ended before {stage!r}: {proc.communicate()[1]}"
        assert time.monotonic() < deadline
        time.sleep(0.01)


def _processes_of(agent: str) -> list[str]:
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if agent in line and "ps -eo" not in line]


@pytest.mark.slow
@pytest.mark.parametrize("sig,code,word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_parallel_precompute_stops_within_seconds_keeps_what_it_finished_and_leaves_no_process(agent, tmp_path, sig, code, word):
    proc, marks = _precompute(agent, tmp_path, "slow", "--workers", "2")
    _wait_for(proc, marks, "first question cached")
    sent = time.monotonic()
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert time.monotonic() - sent < 10, "the workers were left to run the remaining questions"
    assert proc.returncode == code and "Traceback" not in err, (proc.returncode, err)
    cached = sqlite3.connect(tmp_path / "cells.sqlite").execute("select count(*) from cells").fetchone()[0]
    assert f"{word}; {cached:,} cells of" in err, (cached, err)  # what it kept, counted, is what the cache holds
    assert cached % 4 == 0 and cached >= 4  # whole questions (4 subsets each), the first at least
    time.sleep(0.5)
    assert not _processes_of(agent), _processes_of(agent)


@pytest.mark.slow
def test_a_reasoner_that_blocks_never_hangs_the_command(agent, tmp_path):
    proc, marks = _precompute(agent, tmp_path, "blocks", "--workers", "2")
    _wait_for(proc, marks, "running")
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "0 cells of 0 questions" in err, err
    time.sleep(0.5)
    assert not _processes_of(agent)
    proc, _ = _precompute(agent, tmp_path, "blocks", "--questions", "1", "--cell-timeout", "0.2")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and "took longer than 0.2 s (--cell-timeout)" in err and "What is" in err, err


def test_a_tool_that_raises_or_returns_no_text_fails_its_cells_named(agent, tmp_path, capsys):
    assert cli.main(["precompute", "--benchmark", f"{agent}:BAD_TOOL", "--reasoner", f"{agent}:slow", "--cache", str(tmp_path / "c.sqlite"),
                     "--out", str(tmp_path / "t.npz"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "tool 'units'" in err and f"{agent}.boom" in err and "What is 0 plus 0?" in err and "RuntimeError: unit server down" in err, err
    failed = sqlite3.connect(tmp_path / "c.sqlite").execute("select subset, status from cells").fetchall()
    assert {s for s, st in failed if st == "failed"} == {"units", "units+noise"} and {s for s, st in failed if st == "ok"} == {"", "noise"}
    assert cli.main(["precompute", "--benchmark", f"{agent}:NONE_TOOL", "--reasoner", f"{agent}:slow", "--cache", str(tmp_path / "c2.sqlite"),
                     "--out", str(tmp_path / "t2.npz"), "--quiet"]) == 2
    assert "returned NoneType, not text" in capsys.readouterr().err


@pytest.mark.parametrize("bench,reasoner,names", [
    ("BAD_SCORER", "slow", ["the scorer of benchmark 'bad-scorer'", "bad_score", "question 'q", "ZeroDivisionError"]),
    ("BAD_QUESTIONS", "slow", ["questions() of benchmark 'bad-questions'", "no_questions", "OSError: questions.csv is missing"]),
    ("BENCHMARK", "exits", ["sys.exit(7)", ":exits'", "What is"]),
])
def test_a_users_code_that_fails_is_a_named_error_never_an_internal_one(agent, tmp_path, capsys, bench, reasoner, names):
    code = cli.main(["precompute", "--benchmark", f"{agent}:{bench}", "--reasoner", f"{agent}:{reasoner}", "--questions", "1",
                     "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "t.npz"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "internal error" not in err, err
    for name in names:
        assert name in err, (name, err)


def test_a_module_that_calls_sys_exit_while_imported_is_named(agent, capsys):
    assert cli.main(["precompute", "--benchmark", "exits_on_import:B", "--reasoner", "bm25", "--out", "t.npz"]) == 2
    err = capsys.readouterr().err
    assert "module 'exits_on_import' cannot be imported (it called sys.exit(0))" in err, err
