"""The harness that finds the next way to lose a file before a user does, instead of a list of cases.

* **Every output flag of every subcommand** (read from the subcommand table, so a new command or flag is covered, or
  this test fails until it is): an existing file of each kind at that path is refused, byte for byte unchanged,
  unless this command wrote it (then the pre-run check lets it be replaced).
* **Every writer**, killed at seeded random moments (SIGKILL and SIGTERM) while it rewrites one file or folder over
  and over, leaves the old version or the new one, never a mix; after SIGTERM, no temporary file either.
* **A fuzzer** over ``selector.json`` and the selector's weights: loading gives a named ``SelectorError`` or a
  selector whose probabilities are finite, never another exception.
"""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from fgpo_lib import cli
from fgpo_lib.outputs import KINDS, check_output, stamp, write_record, write_text

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


# --- the existing files of each kind ----------------------------------------------------------------------------------
def _example_table(path: Path) -> None:
    from fgpo_lib.examples import protein_structure_table

    saved = protein_structure_table(n_questions=40, seed=0).save(path.with_name(path.name + ".npz"))
    saved.rename(path)


def _precompute_table(path: Path) -> None:
    path.write_bytes((ROOT / "tables" / "genehop__smollm2-135m__4tools.npz").read_bytes())


def _png(path: Path, software: str | None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(1, 1))
    ax.plot([0, 1])
    fig.savefig(path, format="png", metadata={"Software": software} if software else None)
    plt.close(fig)


#: name -> (writer of such a file at a path, the stamp it carries or None)
EXISTING = {
    "a reward table of fgpo precompute": (_precompute_table, stamp("precompute")),
    "an example table": (_example_table, stamp("example-table")),
    "a run record of fgpo train": (lambda p: write_record(p, {"final": {}}, "train"), stamp("train")),
    "a summary of fgpo compare": (lambda p: write_record(p, {"rows": []}, "compare"), stamp("compare")),
    "a run record of fgpo lm-train": (lambda p: write_record(p, {"test": {}}, "lm-train"), stamp("lm-train")),
    "scores of fgpo lm-eval": (lambda p: write_record(p, {"scores": {}}, "lm-eval"), stamp("lm-eval")),
    "a JSON file of the user's": (lambda p: p.write_text('{"notes": 1}\n'), None),
    "a text file of the user's": (lambda p: p.write_text("my notes\n"), None),
    "a figure of fgpo frontier": (lambda p: _png(p, stamp("frontier")), stamp("frontier")),
    "a figure of the user's": (lambda p: _png(p, None), None),
    "a Markdown table of fgpo coverage": (lambda p: write_text(p, "| a |\n", "coverage", "markdown"), stamp("coverage")),
    "choices of fgpo select": (lambda p: p.write_text('{"question": "q", "tools": []}\n'), stamp("select")),
}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """The input files a command's argv names (a table, a record), made once."""
    folder = tmp_path_factory.mktemp("inputs")
    table = folder / "table.npz"
    _example_table(table)
    record = folder / "record.json"
    write_record(record, {"test": {}}, "lm-train")
    return {"table": table, "record": record, "selector": folder / "selector"}


def _argv(command: str, inp: dict) -> list[str]:
    """The smallest command line of ``command`` without its outputs (the harness adds them)."""
    table, record, selector = str(inp["table"]), str(inp["record"]), str(inp["selector"])
    return {
        "train": ["train", "--table", table],
        "compare": ["compare", "--table", table, "--methods", "fgpo", "--seeds", "0"],
        "frontier": ["frontier", "--table", table],
        "select": ["select", selector, "--question", "Which tool?"],
        "calibrate": ["calibrate", selector, "--table", table, "--target-tools", "1"],
        "example-table": ["example-table"],
        "precompute": ["precompute", "--benchmark", "genehop", "--reasoner", "bm25"],
        "coverage": ["coverage", "--benchmark", "genehop"],
        "cross-build": ["cross-build", table],
        "scaling": ["scaling", "--benchmark", "genehop", "--reasoner", "bm25"],
        "ondemand": ["ondemand", "--benchmark", "genehop", "--reasoner", "smollm2-135m", "--table", table],
        "lm-train": ["lm-train", "--table", table, "--arm", "fgpo", "--out", str(inp["record"].with_name("new_record.json"))],
        "lm-eval": ["lm-eval", record, "--table", table],
        "study": ["study"],
    }[command]


OUTPUTS = [(name, out) for name, cmd in cli.COMMANDS.items() for out in cmd.outputs]


def test_the_harness_covers_every_output_of_the_subcommand_table(inputs):
    assert OUTPUTS, "the subcommand table declares no outputs"
    for name, _ in OUTPUTS:
        _argv(name, inputs)  # a KeyError here: a new command with outputs, give it its smallest command line above


def _suffix(kind: str) -> str:
    return (KINDS[kind][1] or ("",))[0] or ".txt"


@pytest.mark.parametrize("command,output", OUTPUTS, ids=[f"{n} {o.flag}" for n, o in OUTPUTS])
def test_an_existing_file_of_every_kind_is_refused_unless_this_command_wrote_it(tmp_path, inputs, capsys, command, output):
    for kind, (make, owner) in EXISTING.items():
        folder = KINDS[output.kind][1] is None
        path = tmp_path / f"{len(kind)}_{abs(hash(kind)) % 10_000}{'' if folder else _suffix(output.kind)}"
        make(path)
        before = path.read_bytes()
        if not folder and owner == stamp(command):
            check_output(command, output.flag, path, output.kind)  # this command's own file: it may replace it
            continue
        code = cli.main([*_argv(command, inputs), output.flag, str(path)])
        err = capsys.readouterr().err
        assert code == 2, (command, output.flag, kind, err)
        assert output.flag in err and "Traceback" not in err, err
        assert path.read_bytes() == before, f"{command} {output.flag} changed {kind}"


@pytest.mark.parametrize("command", [n for n, c in cli.COMMANDS.items() if any(o.kind == "selector" for o in c.outputs)])
def test_a_folder_fgpo_did_not_write_is_never_a_selector_output_even_with_force(tmp_path, inputs, capsys, command):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "selector.json").write_text('{"format": "someone-else"}\n')
    (folder / "weights.safetensors").write_bytes(b"not ours")
    extra = ["--max-tools", "2"] if command == "frontier" else []
    code = cli.main([*_argv(command, inputs), *extra, "--save-selector", str(folder), "--force"])
    assert code == 2 and "not a selector fgpo wrote" in capsys.readouterr().err
    assert (folder / "weights.safetensors").read_bytes() == b"not ours"


def test_two_outputs_of_one_command_never_overlap(tmp_path, inputs, capsys):
    code = cli.main([*_argv("train", inputs), "--out", str(tmp_path / "sel" / "weights.json"), "--save-selector", str(tmp_path / "sel")])
    assert code == 2 and "one output would replace the other" in capsys.readouterr().err
    assert not (tmp_path / "sel").exists()


# --- every writer, killed at random moments -----------------------------------------------------------------------------
#: writer name -> Python source that defines write(version) writing version 0 or 1 of the target at TARGET
WRITERS = {
    "record": "from fgpo_lib.outputs import write_record\ndef write(v): write_record(TARGET, {'version': v, 'pad': 'x' * 200_000 * (v + 1)}, 'train')",
    "markdown": "from fgpo_lib.outputs import write_text\ndef write(v): write_text(TARGET, ('| %d |\\n' % v) * 50_000 * (v + 1), 'coverage', 'markdown')",
    "jsonl": "from fgpo_lib.outputs import write_text\ndef write(v): write_text(TARGET, '{\"question\": \"q%d\", \"tools\": []}\\n' % v * 20_000 * (v + 1), 'select', 'jsonl')",
    "table": ("from fgpo_lib.examples import protein_structure_table\nT = [protein_structure_table(n_questions=3000, seed=s) for s in (0, 1)]\n"
              "def write(v): T[v].save(TARGET)"),
    "selector": ("from fgpo_lib import RewardTable, TrainConfig, train_selector\nfrom fgpo_lib.examples import protein_structure_table\n"
                 "S = [train_selector(protein_structure_table(n_questions=60, seed=s), TrainConfig(method='fgpo', steps=2, seed=s, featurizer='text'))[0] for s in (0, 1)]\n"
                 "def write(v): S[v].save(TARGET)"),
}
CHILD = """
import sys
from fgpo_lib.errors import install_terminate_handler
TARGET = sys.argv[1]
{writer}
install_terminate_handler()
write(0); write(1)
print("ready", flush=True)
v = 0
while True:
    write(v); v = 1 - v
"""


def _versions(name: str, target: Path, tmp_path: Path) -> list:
    """What each version of the writer's target reads as (bytes, or a selector's weights digest)."""
    out = []
    for v in (0, 1):
        one = tmp_path / f"v{v}{target.suffix}"
        subprocess.run([PY, "-c", CHILD.split("install_terminate_handler()")[0].format(writer=WRITERS[name]) + f"\nwrite({v})", str(one)], check=True, cwd=ROOT)
        out.append(_read(name, one))
    return out


def _writer(name: str, tmp_path: Path) -> str:
    """The writer a killed child runs: a selector's two versions are the folders :func:`_versions` trained, loaded
    and saved again (the same files, byte for byte), so that a round does not train two selectors first."""
    if name != "selector":
        return WRITERS[name]
    return f"from fgpo_lib.selector import Selector\nS = [Selector.load({str(tmp_path / 'v0')!r}), Selector.load({str(tmp_path / 'v1')!r})]\ndef write(v): S[v].save(TARGET)"


def _read(name: str, target: Path):
    if name == "selector":
        from fgpo_lib.selector import Selector

        sel = Selector.load(target)  # whole, or this raises
        return json.loads((target / "selector.json").read_text())["files"]
    return target.read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("name", list(WRITERS))
def test_a_writer_killed_at_any_moment_leaves_the_old_or_the_new_never_a_mix(tmp_path, name):
    target = tmp_path / ("sel" if name == "selector" else f"out{ {'record': '.json', 'table': '.npz'}.get(name, '.txt') }")
    versions = _versions(name, target, tmp_path)
    assert versions[0] != versions[1]
    rng = random.Random(f"kill-{name}")
    for round_ in range(9):
        sig = signal.SIGTERM if round_ % 3 == 0 else signal.SIGKILL
        proc = subprocess.Popen([PY, "-c", CHILD.format(writer=_writer(name, tmp_path)), str(target)], stdout=subprocess.PIPE, cwd=ROOT, text=True)
        assert proc.stdout.readline().strip() == "ready"  # the child's own marker: the file holds a whole version now
        time.sleep(rng.uniform(0, 0.4))
        proc.send_signal(sig)
        proc.wait(timeout=60)
        assert _read(name, target) in versions, f"round {round_}: a mix after {sig.name}"
        if sig == signal.SIGTERM:
            leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
            assert not leftovers, f"round {round_}: SIGTERM left {leftovers}"
        for p in tmp_path.iterdir():  # SIGKILL cannot be caught: its hidden temporary is removed by hand
            if p.name.startswith("."):
                subprocess.run(["rm", "-rf", str(p)])


@pytest.mark.slow
def test_two_processes_saving_one_selector_folder_never_mix_it(tmp_path):
    target = tmp_path / "sel"
    versions = _versions("selector", target, tmp_path)
    script = CHILD.format(writer=_writer("selector", tmp_path)).replace("v = 0\nwhile True:", "v = int(sys.argv[2])\nfor _ in range(6):")
    procs = [subprocess.Popen([PY, "-c", script, str(target), str(v)], stdout=subprocess.DEVNULL, cwd=ROOT) for v in (0, 1)]
    deadline = time.time() + 120
    seen = set()
    while any(p.poll() is None for p in procs) and time.time() < deadline:
        try:
            seen.add(json.dumps(_read("selector", target), sort_keys=True))
        except Exception as exc:  # noqa: BLE001 - a read between the two renames of the fallback path is "absent", never a mix
            # named, never a mix: a reader that a save overlapped reads again (selector_folder.read_consistently)
            assert "not a selector folder" in str(exc) or "no such" in str(exc).lower() or "during each of" in str(exc), exc
        time.sleep(0.05)
    assert all(p.wait(timeout=60) == 0 for p in procs)
    assert _read("selector", target) in versions
    assert seen <= {json.dumps(v, sort_keys=True) for v in versions}


# --- the fuzzer over a selector folder -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def saved_selector(tmp_path_factory):
    from fgpo_lib import TrainConfig, train_selector
    from fgpo_lib.examples import protein_structure_table

    folder = tmp_path_factory.mktemp("fuzz") / "sel"
    train_selector(protein_structure_table(n_questions=60, seed=0), TrainConfig(method="fgpo", steps=2, seed=0, featurizer="text"))[0].save(folder)
    return folder


def _load_named_or_finite(folder: Path) -> None:
    from fgpo_lib.selector import Selector, SelectorError

    try:
        sel = Selector.load(folder)
    except SelectorError:
        return
    probs = sel.probabilities(["Which structure tool?", ""])
    assert np.isfinite(probs).all() and np.allclose(probs.sum(1), 1)
    json.dumps(sel.explain(["Which structure tool?"]), allow_nan=False)


JSON_VALUES = [None, True, 0, -1, 1.5, float("nan"), "", "wxyz", [], ["a"], [1, 2], {}, {"n_tools": "4"}, "1", 10**30]


def _paths(doc, prefix=()):
    """Every path to a value in a JSON document."""
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, (*prefix, i))


def test_a_fuzzer_over_selector_json_gives_only_named_errors(saved_selector, tmp_path):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    original = json.loads((saved_selector / "selector.json").read_text())
    paths = [p for p in _paths(original) if p]

    @settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(paths), st.sampled_from(JSON_VALUES), st.booleans())
    def check(path, value, delete):
        import shutil

        folder = tmp_path / "f"
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(saved_selector, folder)
        doc = json.loads(json.dumps(original))
        node = doc
        for key in path[:-1]:
            node = node[key]
        if delete and isinstance(node, dict):
            node.pop(path[-1], None)
        else:
            node[path[-1]] = value
        (folder / "selector.json").write_text(json.dumps(doc))
        _load_named_or_finite(folder)

    check()


def test_a_fuzzer_over_the_weights_gives_only_named_errors(saved_selector, tmp_path):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    weights = (saved_selector / "weights.safetensors").read_bytes()

    @settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.tuples(st.integers(0, len(weights) - 1), st.integers(0, 255)), min_size=1, max_size=8), st.integers(0, len(weights)), st.booleans())
    def check(flips, cut, refresh_manifest):
        import shutil

        from fgpo_lib.selector_folder import file_sha256

        folder = tmp_path / "w"
        shutil.rmtree(folder, ignore_errors=True)
        shutil.copytree(saved_selector, folder)
        data = bytearray(weights)
        for at, byte in flips:
            data[at] = byte
        (folder / "weights.safetensors").write_bytes(bytes(data[:cut]))
        if refresh_manifest:  # a hand-edited folder whose manifest was updated too: the weights' own checks must hold
            doc = json.loads((folder / "selector.json").read_text())
            doc["files"]["weights.safetensors"] = file_sha256(folder / "weights.safetensors")
            (folder / "selector.json").write_text(json.dumps(doc))
        _load_named_or_finite(folder)

    check()


def test_nan_integer_and_foreign_weights_are_each_a_named_error(saved_selector, tmp_path):
    import shutil

    import torch
    from safetensors.torch import load_file, save_file

    from fgpo_lib.selector import Selector, SelectorError
    from fgpo_lib.selector_folder import file_sha256

    state = load_file(str(saved_selector / "weights.safetensors"))
    cases = {"NaN or infinite": {k: v.fill_(float("nan")) for k, v in dict(state).items()},
             "not floating point": {k: v.to(torch.int64) for k, v in state.items()}}
    for message, tensors in cases.items():
        folder = tmp_path / message.replace(" ", "_")
        shutil.copytree(saved_selector, folder)
        save_file(tensors, str(folder / "weights.safetensors"))
        doc = json.loads((folder / "selector.json").read_text())
        doc["files"]["weights.safetensors"] = file_sha256(folder / "weights.safetensors")
        (folder / "selector.json").write_text(json.dumps(doc))
        with pytest.raises(SelectorError, match=message):
            Selector.load(folder)
    copied = tmp_path / "copied"
    shutil.copytree(saved_selector, copied)
    save_file({k: v + 1 for k, v in load_file(str(saved_selector / "weights.safetensors")).items()}, str(copied / "weights.safetensors"))
    with pytest.raises(SelectorError, match="not the file this selector was saved with"):
        Selector.load(copied)


def test_a_read_that_a_save_overlapped_is_done_again_and_one_no_save_overlapped_is_kept(tmp_path):
    """:func:`read_consistently`: a read during which the folder was replaced (a save) is read again; a read's own
    error, with no save meanwhile, is raised at once."""
    from fgpo_lib.selector_folder import SelectorError, read_consistently

    folder = tmp_path / "sel"
    folder.mkdir()
    calls = []

    def read_while_saved_once():
        calls.append(1)
        if len(calls) == 1:  # a save lands mid-read: a new directory takes the path, and this read saw a mix
            staging = tmp_path / "staging"
            staging.mkdir()
            (staging / "v").write_text("2")
            folder.rename(tmp_path / "old")
            staging.rename(folder)
            raise SelectorError("weights.safetensors is not the file this selector was saved with")
        return (folder / "v").read_text()

    assert read_consistently(folder, read_while_saved_once) == "2" and len(calls) == 2

    def broken():
        calls.append(1)
        raise SelectorError("broken for good")

    calls.clear()
    with pytest.raises(SelectorError, match="broken for good"):
        read_consistently(folder, broken)
    assert len(calls) == 1


def test_a_signal_during_a_cleanup_waits_for_its_end_and_is_not_lost():
    """:class:`signals_deferred`: a SIGINT sent inside the block is raised right after it, not inside; a signal
    handled before the deferral was in place (Python runs a handler at the next bytecode, so one that arrived just
    before the block can still raise as it starts: the kill harness above met it) is what :func:`run_to_end` is for:
    it runs the interrupted cleanup again, then raises the signal's exception once."""
    from fgpo_lib.errors import run_to_end, signals_deferred

    done = []
    with pytest.raises(KeyboardInterrupt):
        with signals_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # Python would run the handler here, mid-cleanup
            done.append("cleaned")
    assert done == ["cleaned"]

    calls = []

    def cleanup():
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt  # as a signal handled before the deferral was in place

    with pytest.raises(KeyboardInterrupt):
        run_to_end(cleanup)
    assert len(calls) == 2
