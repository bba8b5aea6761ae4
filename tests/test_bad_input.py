"""Property-based: malformed reward tables and malformed numeric flags end in a named error, never a traceback, and
nothing is written."""

import contextlib
import io
import string

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fgpo_lib import RewardTable
from fgpo_lib.cli import main
from fgpo_lib.table import RewardTableError

TOOLS = ["a", "b", "c"]
LABELS = ["", "a", "b", "c", "a+b", "a+c", "b+c", "a+b+c"]

cell_value = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=32),
    st.sampled_from(["", "nan", "x", "1e400", "-0.5", "2", " ", "None"]),
    st.integers(-3, 3),
)
tools_value = st.one_of(st.sampled_from(LABELS), st.sampled_from(["d", "a+a", "a++b", "+", "b+a", "a + b", "A"]))


@st.composite
def long_frames(draw) -> pd.DataFrame:
    """A long table that is mostly well formed, with random defects: bad cells, unknown or repeated tools,
    duplicated or missing rows, dropped columns, inconsistent per-question columns."""
    n_q = draw(st.integers(1, 3))
    rows = [{"question_id": f"q{i}", "tools": lbl, "reward": 0.5, "split": "train"} for i in range(n_q) for lbl in LABELS]
    for _ in range(draw(st.integers(0, 4))):
        r = draw(st.integers(0, len(rows) - 1))
        col = draw(st.sampled_from(["question_id", "tools", "reward", "split"]))
        rows[r][col] = draw({"reward": cell_value, "tools": tools_value, "split": st.sampled_from(["train", "test", "dev", ""]), "question_id": st.sampled_from(["q0", "q1", "", "q9"])}[col])
    if draw(st.booleans()):
        rows.pop(draw(st.integers(0, len(rows) - 1)))
    df = pd.DataFrame(rows)
    if draw(st.integers(0, 9)) == 0:
        df = df.drop(columns=[draw(st.sampled_from(["question_id", "tools", "reward"]))])
    return df


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(df=long_frames())
def test_from_long_gives_a_table_or_a_named_error(df):
    try:
        table = RewardTable.from_long(df, tool_names=TOOLS)
    except RewardTableError as exc:
        assert str(exc).startswith("<DataFrame>:")
        return
    assert np.isfinite(table.rewards).all() and ((0 <= table.rewards) & (table.rewards <= 1)).all()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(df=long_frames())
def test_fgpo_train_on_a_malformed_csv_names_the_error_and_writes_nothing(df, tmp_path_factory):
    d = tmp_path_factory.mktemp("csv")
    path, out = d / "t.csv", d / "run.json"
    df.to_csv(path, index=False)
    code, err = _run(["train", "--table", str(path), "--steps", "2", "--out", str(out)])
    if code == 0:
        assert out.exists()
    else:
        assert code == 2 and "fgpo train: error:" in err and "t.csv" in err and not out.exists()


# --- numeric flags -----------------------------------------------------------------------------------------------------
#: every numeric flag of every subcommand, with the other arguments the subcommand needs
NUMERIC_FLAGS = [
    (cmd, flag)
    for cmd, flags in {
        "train": ["--steps", "--lr", "--batch-questions", "--group-size", "--hidden", "--eval-every", "--seed", "--entropy-coef", "--kl-coef", "--subsets-per-update", "--temperature", "--num-iterations", "--epsilon", "--beta", "--dpo-beta", "--top-m", "--n-samples", "--set-size", "--entropy-bonus", "--dynamic-sampling", "--skip-dead", "--replay", "--candidate-tools"],
        "compare": ["--seeds", "--steps", "--group-size"],
        "example-table": ["--questions", "--seed"],
        "verify-table": ["--sample", "--seed"],
        "precompute": ["--questions", "--sample-seed", "--max-size", "--workers", "--pilot", "--checkpoint-every"],
        "coverage": ["--max-size"],
        "study": ["--workers"],
        "plan": ["--tools", "--max-size", "--questions", "--seconds-per-call", "--group-size", "--steps"],
    }.items()
    for flag in flags
]
#: what each subcommand needs besides the flag under test; every output path lies in the test's folder
BASE = {
    "train": ["--table", "{table}", "--out", "{out}"],
    "compare": ["--table", "{table}", "--out", "{out}"],
    "example-table": ["--out", "{out}"],
    "verify-table": ["{table}"],
    "precompute": ["--benchmark", "genehop", "--reasoner", "records", "--cache", "{dir}/c.sqlite", "--out", "{out}", "--quiet"],
    "coverage": ["--benchmark", "genehop", "--markdown", "{out}"],
    "study": ["--book-dir", "{dir}/book"],
    "plan": ["--tools", "8", "--max-size", "4", "--questions", "10", "--seconds-per-call", "1"],
}
malformed_number = st.one_of(
    st.integers(max_value=-1).map(str),
    st.floats(max_value=-1e-6, allow_nan=False).map(repr),
    st.sampled_from(["nan", "inf", "-inf", "", "1.5.2", "0x", "--", "None", "1e", "one", ","]),
    st.text(alphabet=string.ascii_letters + " ;:!", min_size=1, max_size=8),
)


def _run(argv):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse: usage line and exit 2
            code = exc.code
    text = err.getvalue()
    assert "Traceback" not in text
    return code, text


@pytest.fixture(scope="module")
def table_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("table") / "t.npz"
    assert main(["example-table", "--out", str(path), "--questions", "20"]) == 0
    return path


@pytest.mark.parametrize("cmd,flag", NUMERIC_FLAGS, ids=[f"{c} {f}" for c, f in NUMERIC_FLAGS])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=malformed_number)
def test_malformed_numeric_flags_give_a_named_error_and_write_nothing(cmd, flag, value, table_path, tmp_path_factory):
    d = tmp_path_factory.mktemp("flag")
    out = d / "out.json"
    argv = [cmd, *(a.format(table=table_path, out=out, dir=d) for a in BASE[cmd]), f"{flag}={value}"]
    code, err = _run(argv)
    assert code == 2, (argv, err)
    assert "error:" in err and (flag in err or flag.lstrip("-").replace("-", "_") in err), err
    assert sorted(p.name for p in d.iterdir()) == [], "nothing may be written"
