"""Nothing lost, round three (issue #44): files a command must never destroy, settings checked before any work,
records and tables validated where they are read, and no internal error or traceback for any input of the audit.

Every bad input asserts the exit code (2), no traceback, and a message naming the file, flag or field; every
destroyed-file case asserts the file is byte-for-byte what it was.
"""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fgpo_lib import RewardTable
from fgpo_lib.table import RewardTableError

from test_user_errors import ROOT, fails, run

FGPO = [sys.executable, "-m", "fgpo_lib.cli"]
RECORD = ROOT / "records" / "lm_policy" / "geneseq__fgpo__s0.json"


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    path = tmp_path_factory.mktemp("t") / "t.npz"
    assert run(["example-table", "--out", path, "--questions", 24])[0] == 0
    return path


# --- data lost -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("command", [["train", "--steps", 2], ["compare", "--methods", "uniform", "--seeds", 0, "--steps", 2]])
def test_an_output_that_is_the_input_table_is_refused_before_any_work(table, command):
    before = table.read_bytes()
    fails([command[0], "--table", table, *command[1:], "--out", table], "--out", "--table", "replace the input")
    assert table.read_bytes() == before


def test_lm_eval_never_writes_over_its_record_or_table(tmp_path):
    record = tmp_path / "r.json"
    record.write_bytes(RECORD.read_bytes())
    fails(["lm-eval", record, "--table", ROOT / "tables" / "geneseq__smollm2-135m__4tools.npz", "--out", record], "--out", "record")
    assert record.read_bytes() == RECORD.read_bytes()


def _limited(limit_bytes: int):
    """A child process whose files may not grow past ``limit_bytes`` (ulimit -f), the write failing with EFBIG."""
    import resource

    def setup():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
    return setup


@pytest.mark.slow
@pytest.mark.parametrize("command", ["train", "compare"])
def test_a_record_rewritten_on_a_full_disk_leaves_the_old_one_valid(table, tmp_path, command):
    out = tmp_path / "run.json"
    argv = [command, "--table", str(table), "--steps", "2", "--out", str(out)] + (["--methods", "fgpo", "--seeds", "0"] if command == "compare" else [])
    assert run(argv)[0] == 0
    before = out.read_bytes()
    proc = subprocess.run([*FGPO, *argv], capture_output=True, text=True, preexec_fn=_limited(len(before) // 2), cwd=ROOT)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and str(out) in proc.stderr, proc.stderr
    assert out.read_bytes() == before and json.loads(before)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "a temporary file was left behind"


@pytest.mark.slow
def test_a_table_rewritten_on_a_full_disk_leaves_the_old_one_valid(tmp_path):
    out = tmp_path / "t.npz"
    assert run(["example-table", "--out", out, "--questions", 2000])[0] == 0
    before = out.read_bytes()
    proc = subprocess.run([*FGPO, "example-table", "--out", str(out), "--questions", "2000", "--seed", "1"], capture_output=True, text=True,
                          preexec_fn=_limited(8192), cwd=ROOT)
    assert proc.returncode == 2 and str(out) in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert out.read_bytes() == before and RewardTable.load(out).n_questions == 2000


def test_an_output_on_a_device_is_named(table):
    fails(["train", "--table", table, "--steps", 1, "--out", "/dev/full"], "/dev/full", "not a regular file")


def test_precompute_never_replaces_another_reasoners_table_of_equal_size(tmp_path):
    out, cache = tmp_path / "A.npz", tmp_path / "c.sqlite"
    base = ["precompute", "--benchmark", "genehop", "--questions", 4, "--quiet", "--cache", cache, "--out", out]
    assert run([*base, "--reasoner", "bm25"])[0] == 0
    before = out.read_bytes()
    fails([*base, "--reasoner", "records"], "--out", "another table", "reasoner 'bm25' -> 'records'", "--force")
    assert out.read_bytes() == before
    assert run([*base, "--reasoner", "records", "--force"])[0] == 0


@pytest.mark.slow
def test_a_resume_that_computes_no_cell_leaves_every_array_identical(tmp_path):
    """The committed table with both extras (All-Tools and the selection call): rewards, answers and seconds with
    their dtypes, and the extras as JSON (exact floats, nulls kept), identical after an in-place resume."""
    src = ROOT / "tables" / "genehop__smollm2-135m__4tools.npz"
    a = RewardTable.load(src)
    assert {"all_tools", "selection"} <= set(a.extras)
    copy = tmp_path / src.name
    copy.write_bytes(src.read_bytes())
    code, _, err = run(["precompute", "--benchmark", "genehop", "--reasoner", "smollm2-135m", "--tools", "four", "--extras", "--quiet",
                        "--resume-from", copy, "--out", copy, "--cache", tmp_path / "fresh.sqlite"])
    assert code == 0, err
    b = RewardTable.load(copy)
    for name in ("rewards", "answers", "seconds"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype, name
        assert np.array_equal(x, y, equal_nan=name == "seconds"), name
    assert json.dumps(a.extras, sort_keys=True) == json.dumps(b.extras, sort_keys=True)


@pytest.mark.slow
def test_two_precomputes_on_one_output_never_blame_the_workers(tmp_path):
    out = tmp_path / "t.npz"
    argv = [*FGPO, "precompute", "--benchmark", "genehop", "--reasoner", "records", "--questions", "6", "--checkpoint-every", "1", "--quiet", "--out", str(out)]
    procs = [subprocess.Popen([*argv, "--cache", str(tmp_path / f"c{i}.sqlite")], stderr=subprocess.PIPE, text=True, cwd=ROOT) for i in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode in (0, 2) and "worker processes" not in err and "Traceback" not in err, err
    assert RewardTable.load(out).n_questions == 6


# --- silent wrong results --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("edit,names", [
    (lambda r: r["test"]["scoring"]["choices"].__setitem__(0, -1), ["subset -1", "outside"]),
    (lambda r: r["test"]["scoring"]["choices"].__setitem__(0, 1.5), ["test.scoring.choices", "whole numbers"]),
    (lambda r: r["test"]["scoring"]["choices"].__setitem__(0, True), ["test.scoring.choices"]),
    (lambda r: r["test"]["scoring"].__setitem__("choices", "0,1"), ["test.scoring.choices"]),
    (lambda r: r["test"]["scoring"]["choices"].pop(), ["test.scoring.choices", "entries for"]),
    (lambda r: r["test"].__setitem__("question_ids", 7), ["test.question_ids"]),
    (lambda r: r["test"]["generation"].__setitem__("choices", ["a"] * len(r["test"]["question_ids"])), ["test.generation.choices"]),
    (lambda r: r["test"].pop("generation"), ["test.generation", "missing"]),
])
def test_lm_eval_names_a_malformed_record(tmp_path, edit, names):
    rec = json.loads(RECORD.read_text())
    edit(rec)
    path = tmp_path / "r.json"
    path.write_text(json.dumps(rec))
    fails(["lm-eval", path, "--table", ROOT / "tables" / "geneseq__smollm2-135m__4tools.npz"], str(path), *names)


def test_lm_eval_refuses_a_table_of_another_library_and_a_table_as_the_record():
    fails(["lm-eval", RECORD, "--table", ROOT / "tables" / "geneseq__smollm2-135m.npz"], "another library")
    table = ROOT / "tables" / "geneseq__smollm2-135m__4tools.npz"
    fails(["lm-eval", table, "--table", table], str(table), "not a run record", "not UTF-8")


@pytest.mark.parametrize("setting,names", [
    ("epochs=nan", ["epochs", "finite"]), ("epochs=inf", ["epochs", "finite"]), ("epochs=-1", ["epochs"]), ("lr=-1", ["lr"]), ("lr=nan", ["lr"]),
    ("eval_every=0", ["eval_every"]), ("batch_questions=0", ["batch_questions"]), ("reward=bogus", ["reward", "bogus"]), ("beta=nan", ["beta"]),
    ("format_weight=-3", ["format_weight"]), ("length_norm=ture", ["length_norm", "ture"]), ("objective=x", ["objective"]),
])
def test_lm_train_checks_every_setting_before_the_backbone_loads(tmp_path, setting, names):
    t0 = time.perf_counter()
    fails(["lm-train", "--table", ROOT / "tables" / "geneseq__qwen2.5-coder-0.5b__4tools.npz", "--arm", "fgpo", "--set", setting, "--out", tmp_path / "r.json"], *names)
    assert time.perf_counter() - t0 < 30  # no backbone was loaded


def test_lm_train_checks_its_output_before_the_backbone_loads(tmp_path):
    fails(["lm-train", "--table", ROOT / "tables" / "geneseq__qwen2.5-coder-0.5b__4tools.npz", "--arm", "fgpo", "--out", tmp_path], "--out", "directory")
    fails(["lm-train", "--table", ROOT / "tables" / "geneseq__qwen2.5-coder-0.5b__4tools.npz", "--arm", "fgpo", "--out", tmp_path / "r.csv"], "--out", ".json")


def test_scaling_takes_a_reader_only_and_a_sample_with_test_questions(tmp_path):
    fails(["scaling", "--benchmark", "genehop", "--reasoner", "qwen2.5-coder-0.5b"], "--reasoner", "invalid choice")
    fails(["scaling", "--benchmark", "genehop", "--reasoner", "records", "--questions", 1, "--cache", tmp_path / "c.sqlite", "--out-dir", tmp_path],
          "--questions 1", "no test question")


@pytest.mark.parametrize("argv", [["precompute", "--benchmark", "genehop", "--reasoner", "records", "--out", "{tmp}/x.csv"],
                                  ["example-table", "--out", "{tmp}/x.csv"]])
def test_a_table_written_under_another_suffix_is_refused(tmp_path, argv):
    fails([a.format(tmp=tmp_path) if isinstance(a, str) else a for a in argv], "--out", ".npz")
    assert not (tmp_path / "x.csv").exists()


def test_flags_that_do_not_apply_are_errors_not_ignored(table, tmp_path):
    fails(["train", "--table", table, "--subsets", "observed", "--steps", 1], "--subsets", ".npz")
    fails(["precompute", "--benchmark", "genehop", "--reasoner", "records", "--tools", "composition,knn", "--out", tmp_path / "t.npz"],
          "--tools", "'composition'", "not tools of benchmark 'genehop'")


# --- internal errors that were reachable -----------------------------------------------------------------------------
def test_a_prior_that_is_not_an_object_is_a_flag_error(table):
    fails(["train", "--table", table, "--prior", "[1,2]"], "--prior", "JSON object")


def _with_provenance(src: Path, dst: Path, **changes) -> Path:
    t = RewardTable.load(src)
    t.provenance = {**t.provenance, **changes}
    t.save(dst)
    return dst


@pytest.mark.slow
@pytest.mark.parametrize("changes,names", [({"reasoner_kwargs": [1, 2]}, ["reasoner_kwargs", "object"]), ({"max_size": "four"}, ["max_size", "whole number"]),
                                           ({"benchmark": "geneseq"}, ["genehop/", "not a question of benchmark 'geneseq'"])])
def test_verify_table_names_a_provenance_it_cannot_use(tmp_path, changes, names):
    path = _with_provenance(ROOT / "tables" / "genehop__qwen2.5-coder-0.5b__4tools.npz", tmp_path / "t.npz", **changes)
    fails(["verify-table", path, "--sample", 1, "--extras", 0], *names)


@pytest.mark.slow
def test_ondemand_names_reasoner_kwargs_that_are_not_an_object(tmp_path):
    path = _with_provenance(ROOT / "tables" / "geneturing__gemma3-270m.npz", tmp_path / "t.npz", reasoner_kwargs=[1])
    fails(["ondemand", "--benchmark", "geneturing", "--reasoner", "gemma3-270m", "--table", path, "--out-dir", tmp_path], "reasoner_kwargs", "object")


def test_a_full_disk_under_the_cell_cache_is_named(tmp_path):
    from fgpo_lib.precompute import CellCache, PrecomputeError

    cache = CellCache(tmp_path / "c.sqlite")

    class Full:
        def __enter__(self):
            return self

        def __exit__(self, *a):
            return False

        def executemany(self, *a):
            raise sqlite3.OperationalError("database or disk is full")

    cache.db = Full()
    with pytest.raises(PrecomputeError, match=r"c\.sqlite.*disk is full"):
        cache.put([("k", "q", "", "r", "a", 1.0, "ok", "", 0.1)])


@pytest.mark.slow
@pytest.mark.parametrize("edit,names", [(lambda e: e["selection"].pop("key_label"), ["'selection'", "key_label"]),
                                        (lambda e: e["selection"].__setitem__("rewards", ["x"] * len(e["selection"]["rewards"])), ["'selection'", "rewards"])])
def test_a_resume_source_with_malformed_extras_is_named(tmp_path, edit, names):
    t = RewardTable.load(ROOT / "tables" / "genehop__smollm2-135m__4tools.npz")
    edit(t.extras)
    src = tmp_path / "src.npz"
    t.save(src)
    fails(["precompute", "--benchmark", "genehop", "--reasoner", "smollm2-135m", "--tools", "four", "--resume-from", src, "--out", tmp_path / "o.npz",
           "--cache", tmp_path / "c.sqlite", "--quiet"], str(src), *names)


@pytest.mark.slow
@pytest.mark.parametrize("content,names", [("{not json", ["not a cross-build record", "JSON"]), ('{"cells": {}}', ["not a complete cross-build record"])])
def test_cross_build_names_a_broken_record_in_its_folder(tmp_path, content, names):
    (tmp_path / "geneturing__smollm2-135m.json").write_text(content)
    fails(["cross-build", ROOT / "tables" / "geneturing__smollm2-135m.npz", "--out-dir", tmp_path], "geneturing__smollm2-135m.json", *names)


def test_a_csv_of_only_the_empty_subset_is_named(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("question_id,tools,reward\nq1,,1\nq2,,0\n")
    fails(["train", "--table", path], str(path), "names no tool")


def test_a_markdown_path_under_a_file_is_refused_before_the_work(tmp_path, table):
    t0 = time.perf_counter()
    fails(["coverage", "--benchmark", "genehop", "--markdown", f"{table}/c.md"], "--markdown", "is a file")
    assert time.perf_counter() - t0 < 20


def _ctrl_c_as_in_a_terminal():
    """In the child: Ctrl-C's default disposition, as a terminal gives it. A pytest-xdist worker ignores SIGINT, and a
    child inherits that: Python then never raises KeyboardInterrupt, and a Ctrl-C test would pass by testing nothing."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


# --- Ctrl-C at any moment (each test waits for the child's own "ready" marker, never a fixed delay) --------------------
INSTALLED = Path(sys.executable).parent / "fgpo"  # the command pip installed from bin/fgpo


def _start_marked(argv: list, tmp_path: Path, preexec=None, env: dict | None = None) -> tuple[subprocess.Popen, Path]:
    """Start ``argv`` with ``FGPO_READY_FILE`` set: the child writes each stage it reaches there (``starting``: the
    package has loaded; ``running``: the command's work begins; others of its own)."""
    marks = tmp_path / f"ready-{time.monotonic_ns()}.txt"
    proc = subprocess.Popen([str(a) for a in argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "FGPO_READY_FILE": str(marks), **(env or {})}, preexec_fn=preexec or _ctrl_c_as_in_a_terminal)
    return proc, marks


def _wait_for(proc: subprocess.Popen, marks: Path, stage: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while stage not in (marks.read_text().split() if marks.exists() else []):
        assert proc.poll() is None, f"the command ended (exit {proc.returncode}) before it reached {stage!r}: {proc.stderr.read()}"
        assert time.monotonic() < deadline, f"no {stage!r} marker in {timeout} s"
        time.sleep(0.005)


@pytest.mark.slow
@pytest.mark.parametrize("stage,after", [("starting", 0.0), ("starting", 0.02), ("starting", 0.1), ("running", 0.0), ("running", 0.2)])
def test_ctrl_c_at_any_moment_prints_no_traceback(table, tmp_path, stage, after):
    """A Ctrl-C while the command line imports (after ``starting``) or while it works (after ``running``) ends in one
    line and 130: never a traceback, never exit 0 (a lost Ctrl-C). ``compare --steps 400`` outlasts every moment."""
    proc, marks = _start_marked([*FGPO, "compare", "--table", table, "--steps", "400", "--seeds", "0,1,2"], tmp_path)
    _wait_for(proc, marks, stage)
    time.sleep(after)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert "Traceback" not in err, err
    # 130, or killed by the SIGINT that Python re-raises when an interrupt reaches its shutdown (a shell shows both
    # as 130); never 0, which would mean the Ctrl-C was lost
    assert proc.returncode in (130, -signal.SIGINT), (proc.returncode, err)


@pytest.mark.slow
def test_ctrl_c_in_the_installed_commands_first_milliseconds_prints_no_traceback(table, tmp_path):
    """Through the installed launcher, a Ctrl-C while Python itself starts (before any fgpo code: Python's own
    handler would print an import traceback there, and no marker can be written) is ignored or ends the command in
    one line, whatever the moment; once the command runs (its marker), the Ctrl-C stops it."""
    assert INSTALLED.read_text().startswith("#!/bin/sh"), "the installed fgpo is not bin/fgpo: reinstall the package"
    # any outcome but a traceback is right here; the command is one that ends soon once it runs (its --help: the same
    # launcher, interpreter start and fgpo entry point), as an ignored Ctrl-C lets it run to its end
    for delay in (0.0, 0.005, 0.01, 0.02, 0.03, 0.05, 0.08, 0.12):
        proc = subprocess.Popen([str(INSTALLED), "compare", "--help"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT, preexec_fn=_ctrl_c_as_in_a_terminal)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=300)
        assert "Traceback" not in err, (delay, err)
        # ignored while Python starts (0), one line and 130 once fgpo runs, or the launcher killed before it ran (-2)
        assert proc.returncode in (0, 130, -signal.SIGINT), (delay, proc.returncode, err)
    proc, marks = _start_marked([INSTALLED, "compare", "--table", table, "--steps", "4000", "--seeds", "0"], tmp_path)
    _wait_for(proc, marks, "running")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130 and "Traceback" not in err, (proc.returncode, err)


@pytest.mark.slow
def test_the_installed_command_keeps_ctrl_c_ignored_when_started_so(table, tmp_path):
    """Started with Ctrl-C ignored (nohup, a background job), the command stays so: the launcher says it."""
    proc, marks = _start_marked([INSTALLED, "compare", "--table", table, "--steps", "4000", "--seeds", "0"], tmp_path,
                                preexec=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    _wait_for(proc, marks, "running")
    proc.send_signal(signal.SIGINT)
    time.sleep(1.0)  # outcome-independent of load: an ignored Ctrl-C leaves it running however long we look
    running = proc.poll() is None
    proc.terminate()
    _, err = proc.communicate(timeout=120)
    assert running and "interrupted" not in err, (proc.returncode, err)
    assert proc.returncode == 143 and "terminated" in err, (proc.returncode, err)  # SIGTERM: one line, 128 + 15


def _main_with_command(monkeypatch, name: str, run) -> tuple[int, float]:
    """``cli.main([name])`` with ``run`` registered as the command ``name``, under Python's own Ctrl-C handler (a
    terminal's Python; an xdist worker ignores SIGINT): its exit status and seconds. Asserts the handler is put back."""
    import types

    from fgpo_lib import cli

    mod = types.ModuleType(f"fgpo_test_{name.replace('-', '_')}_command")
    mod.add_arguments, mod.run = (lambda parser: None), run
    monkeypatch.setitem(sys.modules, mod.__name__, mod)
    monkeypatch.setitem(cli.COMMANDS, name, cli.Command(mod.__name__, f"the test command {name}"))
    held = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        started = time.monotonic()
        status = cli.main([name])
        seconds = time.monotonic() - started
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, held)
    return status, seconds


def test_an_interrupt_a_library_turns_into_its_own_error_is_still_an_interrupt(monkeypatch, capsys):
    """NumPy interrupted while it imports can raise ``ImportError: Error importing numpy ...`` with no
    KeyboardInterrupt in its chain (seen in CI, Ctrl-C 50 ms after start). The command line still reports the Ctrl-C (130), not an internal error (3),
    and puts Python's handler back when it returns."""

    def run(args):
        caught = False
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)
        except KeyboardInterrupt:
            caught = True
        if caught:  # raised outside the handler, as from C: nothing in its chain says Ctrl-C
            raise ImportError("Error importing numpy: you should not try to import numpy from its source directory")
        return 0

    assert _main_with_command(monkeypatch, "numpy-like", run)[0] == 130
    assert "interrupted" in capsys.readouterr().err


def test_ctrl_c_inside_an_import_comes_once_the_import_is_over(monkeypatch, capsys, tmp_path):
    """A Ctrl-C while a command imports a module is not raised inside the import (NumPy interrupted there, 80 ms after
    start, once printed "ImportError: _multiarray_umath failed to import" and crashed the interpreter in CI): the
    import finishes, and the Ctrl-C ends the command right after it (130)."""
    (tmp_path / "fgpo_test_slow_import.py").write_text(
        "import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\nfor _ in range(20):\n    time.sleep(0.01)\nDONE = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "fgpo_test_slow_import", raising=False)

    def run(args):
        import fgpo_test_slow_import  # noqa: F401
        time.sleep(5)  # the Ctrl-C, delivered again after the import, ends this
        return 0

    status, seconds = _main_with_command(monkeypatch, "importing", run)
    assert status == 130
    assert seconds < 4, "the Ctrl-C was not delivered again after the import"
    assert sys.modules["fgpo_test_slow_import"].DONE  # the import ran to its end
    assert "interrupted" in capsys.readouterr().err


def test_a_ctrl_c_deferred_by_an_import_is_not_lost_when_the_command_ends_first(monkeypatch, capsys, tmp_path):
    """A short command (``select``, ``table-info``) can end before a Ctrl-C deferred by an import is raised again: it
    still ends as interrupted (130), never exit 0 as if nothing had come."""
    (tmp_path / "fgpo_test_quick_import.py").write_text("import os, signal\nos.kill(os.getpid(), signal.SIGINT)\nDONE = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "fgpo_test_quick_import", raising=False)

    def run(args):
        import fgpo_test_quick_import  # noqa: F401
        return 0  # before the deferred Ctrl-C comes again

    assert _main_with_command(monkeypatch, "quick", run)[0] == 130
    assert "interrupted" in capsys.readouterr().err


def test_what_a_ctrl_c_leaves_half_built_fails_silently_at_exit():
    """A Ctrl-C inside an object's ``__init__`` (a tqdm bar: seen in CI, 1.5 s in) leaves an object whose ``__del__``
    fails when collected; after the command's one line, Python must not print that as a traceback."""
    code = ("import os, signal, sys, time, types\nfrom fgpo_lib import cli\n"
            "class HalfBuilt:\n    def __init__(self):\n        os.kill(os.getpid(), signal.SIGINT)\n        time.sleep(5)\n        self.ready = True\n"
            "    def __del__(self):\n        self.ready\n"
            "keep = []\nmod = types.ModuleType('half_built_command')\nmod.add_arguments = lambda parser: None\n"
            "def run(args):\n    keep.append(HalfBuilt.__new__(HalfBuilt))\n    keep[-1].__init__()\n    return 0\n"
            "mod.run = run\nsys.modules[mod.__name__] = mod\ncli.COMMANDS['half-built'] = cli.Command(mod.__name__, 'x')\nsys.exit(cli.main(['half-built']))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT, preexec_fn=_ctrl_c_as_in_a_terminal)
    assert done.returncode == 130 and "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert "interrupted" in done.stderr


def test_ctrl_c_while_the_command_line_imports_is_one_line_and_a_library_import_keeps_pythons_handler():
    """Under the ``fgpo`` command (``sys.argv[0]``), a Ctrl-C between ``import fgpo_lib`` and the command's own
    handling ends with one line and exit 130; ``import fgpo_lib`` anywhere else leaves Python's KeyboardInterrupt."""
    code = "import os, signal, sys, time\n{argv}import fgpo_lib\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(5)\nprint('not interrupted')"
    cli = subprocess.run([sys.executable, "-c", code.format(argv="sys.argv[0] = '/somewhere/bin/fgpo'\n")], capture_output=True, text=True, timeout=60,
                         preexec_fn=_ctrl_c_as_in_a_terminal)
    assert (cli.returncode, cli.stderr) == (130, "fgpo: interrupted while starting; nothing was written\n")
    lib = subprocess.run([sys.executable, "-c", code.format(argv="")], capture_output=True, text=True, timeout=60, preexec_fn=_ctrl_c_as_in_a_terminal)
    assert lib.returncode == -signal.SIGINT and lib.stderr.rstrip().endswith("KeyboardInterrupt")  # Python re-raises SIGINT on exit


# --- the Python API ----------------------------------------------------------------------------------------------------
LONG = pd.DataFrame({"question_id": ["a", "a", "b", "b"], "tools": ["", "x", "", "x"], "reward": [0.0, 1.0, 1.0, 0.0]})


@pytest.mark.parametrize("kwargs,source,match", [
    ({}, pd.concat([LONG, LONG[["reward"]]], axis=1), "'reward' given twice"),
    ({}, pd.concat([LONG, LONG[["question_id"]]], axis=1), "'question_id' given twice"),
    ({"reward_range": (0,)}, LONG, "reward_range"), ({"subsets": 5}, LONG, "subsets"), ({"provenance": "text"}, LONG, "provenance"),
    ({"tool_names": ["x", "x"]}, LONG, "tool_names"), ({"max_size": 9}, LONG, "max_size"), ({"min_size": 2, "max_size": 1}, LONG, "min_size"),
])
def test_from_long_names_every_bad_argument(kwargs, source, match):
    with pytest.raises(RewardTableError, match=match):
        RewardTable.from_long(source, **kwargs)


@pytest.mark.parametrize("kwargs,match", [({"prior": [1]}, "prior"), ({"steps": 10.5}, "steps"), ({"grpo": "x"}, "grpo"), ({"seed": True}, "seed")])
def test_train_config_checks_its_fields_at_once(kwargs, match):
    from fgpo_lib import TrainConfig

    with pytest.raises(ValueError, match=match):
        TrainConfig(**kwargs)


_columns = st.lists(st.sampled_from(["question_id", "tools", "reward", "question", "task", "split", "extra"]), min_size=0, max_size=6)
_cell = st.one_of(st.text(max_size=4), st.integers(-3, 3), st.floats(allow_nan=True), st.none(), st.booleans())
_kwargs = st.fixed_dictionaries({}, optional={
    "tool_names": st.one_of(st.none(), st.lists(st.text(max_size=3), max_size=3), st.text(max_size=3)),
    "max_size": st.one_of(st.none(), st.integers(-1, 4), st.floats(), st.text(max_size=1)),
    "min_size": st.one_of(st.none(), st.integers(-1, 4)),
    "reward_range": st.one_of(st.tuples(st.floats(), st.floats()), st.tuples(st.integers()), st.text(max_size=2), st.none()),
    "provenance": st.one_of(st.none(), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2), st.text(max_size=2), st.integers()),
    "subsets": st.one_of(st.none(), st.just("observed"), st.text(max_size=3), st.integers(), st.lists(st.text(max_size=3), max_size=3)),
})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(columns=_columns, rows=st.lists(st.lists(_cell, min_size=7, max_size=7), max_size=6), kwargs=_kwargs)
def test_from_long_on_any_dataframe_gives_a_table_or_a_named_error(columns, rows, kwargs):
    """Any DataFrame (duplicated columns included) and any keyword arguments: a table, or a RewardTableError."""
    frame = pd.DataFrame([r[: len(columns)] for r in rows], columns=columns) if columns else pd.DataFrame(index=range(len(rows)))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            table = RewardTable.from_long(frame, **kwargs)
        except RewardTableError:
            return
    assert table.n_questions >= 1 and np.isfinite(table.rewards).all()


# --- the remote reasoner's cache key -----------------------------------------------------------------------------------
def test_the_remote_reasoners_key_follows_what_the_server_serves():
    """Two servers answering to one model name with other /v1/models entries give two keys; a server without
    /v1/models gives a key that says it is unverified; a dead endpoint is a named error."""
    import threading
    from http.server import HTTPServer

    from conftest import QuietJSONHandler

    from fgpo_lib.reasoners import ReasonerError, make_reasoner

    served = {"entry": {"id": "m", "object": "model", "owned_by": "a.gguf"}}

    class Handler(QuietJSONHandler):
        def do_GET(self):  # noqa: N802
            if served["entry"] is None:
                self.send_error(404)
                return
            self.reply(200, json.dumps({"object": "list", "data": [served["entry"]]}).encode())

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"
    try:
        key = lambda: make_reasoner("openai-http", base_url=url, model="m").fingerprint()["model_sha256"]  # noqa: E731
        first = key()
        served["entry"] = {"id": "m", "object": "model", "owned_by": "b.gguf"}
        assert key() != first and first.startswith(f"remote:{url}/m:")
        served["entry"] = None
        assert key().endswith(":unverified")
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(ReasonerError, match="cannot reach"):
        make_reasoner("openai-http", base_url=f"http://127.0.0.1:{server.server_port}", model="m").fingerprint()


# --- round four: the small cases of the audit ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def selector_dir(table, tmp_path_factory):
    folder = tmp_path_factory.mktemp("s") / "sel"
    assert run(["train", "--table", table, "--steps", 5, "--save-selector", folder])[0] == 0
    return folder


def test_a_question_with_a_raw_line_separator_is_one_question(selector_dir, tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text('{"question": "Which tool\u2028for this?"}\n{"question": "And\u2029this?"}\n', encoding="utf-8")
    code, out, err = run(["select", selector_dir, "--questions", path])
    assert code == 0, err
    assert [json.loads(line)["question"] for line in out.splitlines()] == ["Which tool\u2028for this?", "And\u2029this?"]


def test_questions_from_standard_input_and_a_process_substitution(selector_dir):
    piped = subprocess.run([*FGPO, "select", str(selector_dir), "--questions", "/dev/stdin"], input='{"question": "Which tool?"}\n',
                           capture_output=True, text=True, cwd=ROOT)
    assert piped.returncode == 0 and json.loads(piped.stdout)["question"] == "Which tool?", piped.stderr
    sub = subprocess.run(["bash", "-c", f"{sys.executable} -m fgpo_lib.cli select {selector_dir} --questions <(echo '{{\"question\": \"Which?\"}}')"],
                         capture_output=True, text=True, cwd=ROOT)
    assert sub.returncode == 0 and json.loads(sub.stdout)["question"] == "Which?", sub.stderr


def test_select_with_standard_output_closed_is_an_error_not_a_silent_exit(selector_dir, tmp_path):
    closed = subprocess.run(["bash", "-c", f"{sys.executable} -m fgpo_lib.cli select {selector_dir} --question 'Which?' >&-"], capture_output=True, text=True, cwd=ROOT)
    assert closed.returncode == 2 and "standard output is closed" in closed.stderr and "--out" in closed.stderr, closed.stderr
    out = tmp_path / "c.jsonl"
    kept = subprocess.run(["bash", "-c", f"{sys.executable} -m fgpo_lib.cli select {selector_dir} --question 'Which?' --out {out} >&-"], capture_output=True, text=True, cwd=ROOT)
    assert kept.returncode == 0 and json.loads(out.read_text())["question"] == "Which?", kept.stderr


@pytest.mark.parametrize("argv,names", [(["--target-accuracy", "-1", "--save-selector", "s"], ["--target-accuracy", "must be >= 0"]),
                                        (["--plot", ""], ["--plot", "empty"])])
def test_frontier_refuses_an_accuracy_outside_0_1_and_an_empty_plot_path(table, argv, names):
    fails(["frontier", "--table", table, *argv], *names)


@pytest.mark.slow
def test_the_launcher_follows_a_link_and_needs_nothing_from_path(tmp_path):
    link = tmp_path / "bin" / "fgpo"
    link.parent.mkdir()
    link.symlink_to(INSTALLED)
    for env in ({**os.environ, "PATH": str(link.parent) + os.pathsep + os.environ.get("PATH", "")}, {"PATH": ""}, {}):
        done = subprocess.run([str(link), "plan", "--tools", "4", "--max-size", "4", "--questions", "10", "--seconds-per-call", "1"],
                              capture_output=True, text=True, cwd=tmp_path, env=env)
        assert done.returncode == 0 and "subsets" in done.stdout, (env, done.returncode, done.stderr)


def test_a_selector_saved_over_another_on_a_full_disk_leaves_the_old_one_whole(table, selector_dir, tmp_path):
    """Under ``ulimit -f 1`` (no file over 1 KB) a save over an existing selector fails while it writes its weights
    (safetensors' own error, named) and the folder there before is whole: same files, same bytes, and it loads."""
    import shutil

    sel = tmp_path / "sel"
    shutil.copytree(selector_dir, sel)
    before = {p.name: p.read_bytes() for p in sel.iterdir()}
    done = subprocess.run(["bash", "-c", f"ulimit -f 1; {sys.executable} -m fgpo_lib.cli train --table {table} --steps 3 --seed 5 --save-selector {sel}"],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 2 and "cannot write the selector" in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert {p.name: p.read_bytes() for p in sel.iterdir()} == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "the staging folder was left behind"
    from fgpo_lib.selector import Selector

    Selector.load(sel)


def test_tool_names_that_are_one_text_are_refused_not_read_as_letters(selector_dir, tmp_path):
    import shutil

    from fgpo_lib.selector import Selector, SelectorError

    sel = tmp_path / "sel"
    shutil.copytree(selector_dir, sel)
    doc = json.loads((sel / "selector.json").read_text())
    doc["space"]["tool_names"] = "wxyz"
    (sel / "selector.json").write_text(json.dumps(doc))
    with pytest.raises(SelectorError, match="space.tool_names must be a list"):
        Selector.load(sel)
