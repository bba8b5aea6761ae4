import json

import numpy as np
import pytest

from fgpo_lib import TrainConfig, train
from fgpo_lib.cli import main
from fgpo_lib.examples import protein_structure_table, synthetic_table


@pytest.fixture(scope="module")
def protein():
    return protein_structure_table(n_questions=120, seed=0)


def test_fgpo_finds_the_pair_and_grpo_collapses_from_a_safe_prior(protein):
    """The worked example in miniature: start at 95% on the safe tool, minibatches of 8 questions."""
    common = dict(steps=60, lr=0.05, batch_questions=8, prior={"keyword_search": 0.95}, eval_every=60, parameterization="flat")
    pair = protein.space.index_of(["sequence_search", "structure_fetch"])
    fg = train(protein, TrainConfig(method="fgpo", **common))
    gr = train(protein, TrainConfig(method="grpo", **common))
    fg_sizes = set(fg["per_question"]["test"]["greedy_size"])
    assert fg_sizes == {2}
    assert fg["final"]["test"]["greedy_reward"] == pytest.approx(float(np.mean(protein.rewards[protein.split_index("test"), pair])))
    assert gr["final"]["test"]["greedy_size"] == 1.0  # still the safe tool
    assert fg["final"]["test"]["greedy_reward"] > gr["final"]["test"]["greedy_reward"] + 0.15
    assert fg["final"]["reasoner_calls"] == len(protein.split_index("train")) * 15
    assert gr["final"]["reasoner_calls"] == 60 * 8 * 8 and gr["final"]["unique_reasoner_calls"] < gr["final"]["reasoner_calls"]


def test_baselines(protein):
    uni = train(protein, TrainConfig(method="uniform"))
    best = train(protein, TrainConfig(method="oracle-best"))
    test = protein.split_index("test")
    assert uni["final"]["test"]["expected_reward"] == pytest.approx(float(protein.rewards[test].mean()))
    assert best["final"]["test"]["greedy_reward"] == pytest.approx(float(protein.rewards[test].max(1).mean()))
    assert uni["final"]["optimizer_steps"] == 0 and len(uni["curves"]) == 1


def test_every_option_runs_and_is_deterministic():
    t = synthetic_table(n_questions=60, n_tools=5, max_size=3, n_tasks=3)
    for cfg in (
        TrainConfig(method="fgpo", steps=5, batch_questions=16, parameterization="flat", hidden=8, fgpo={"entropy_coef": 0.01, "kl_coef": 0.1}),
        TrainConfig(method="grpo", steps=5, batch_questions=16, featurizer="constant", grpo={"num_iterations": 2, "beta": 0.04, "scale_rewards": "batch"}),
    ):
        a, b = train(t, cfg), train(t, cfg)
        a.pop("created"), b.pop("created")
        assert a == b


def test_cli_train_same_seed_same_run_json(tmp_path, capsys):
    table = tmp_path / "protein.npz"
    assert main(["example-table", "--out", str(table), "--questions", "60"]) == 0
    outs = []
    for name in ("a", "b", "c"):
        seed = "1" if name != "c" else "2"
        out = tmp_path / f"{name}.json"
        assert main(["train", "--table", str(table), "--method", "grpo", "--seed", seed, "--steps", "10", "--out", str(out)]) == 0
        run = json.loads(out.read_text())
        run.pop("created")
        outs.append(run)
    assert outs[0] == outs[1]
    assert outs[0] != outs[2]  # a different seed samples differently
    out = tmp_path / "prior.json"
    assert main(["train", "--table", str(table), "--method", "fgpo", "--steps", "0", "--parameterization", "flat", "--prior", '{"keyword_search": 0.9}', "--out", str(out)]) == 0
    assert max(json.loads(out.read_text())["subset_probs"]["train"]) == pytest.approx(0.9)
    assert {"config", "curves", "final", "per_question", "table"} <= set(outs[0])


def test_cli_compare_prints_a_table_with_cis(tmp_path, capsys):
    table = tmp_path / "protein.npz"
    main(["example-table", "--out", str(table), "--questions", "60"])
    capsys.readouterr()
    assert main(["compare", "--table", str(table), "--methods", "fgpo,grpo,uniform,oracle-best", "--seeds", "0,1", "--steps", "5", "--out", str(tmp_path / "c.json")]) == 0
    out = capsys.readouterr().out
    for m in ("fgpo", "grpo", "uniform", "oracle-best"):
        assert f"\n{m} " in out
    assert "95% CI" in out
    rows = json.loads((tmp_path / "c.json").read_text())["rows"]
    assert all(r["ci_lo"] <= r["greedy_reward"] <= r["ci_hi"] for r in rows)


def test_cli_reports_bad_table_clearly(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("question_id,tools,reward\nq0,,0\nq0,gene_search,2\n")
    assert main(["train", "--table", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.csv: row 2, column 'reward': 2.0 is outside the declared reward range" in err


def test_fgpo_help_lists_every_stage_and_the_pipeline_dry_run_computes_nothing(capsys):
    """One command line: scaling and ondemand are subcommands, and ``fgpo pipeline --dry-run`` prints each stage."""
    from fgpo_lib.cli import main
    from fgpo_lib.pipeline import STAGES

    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(cmd in out for cmd in ("scaling", "ondemand", "pipeline", "cross-build", "questions"))
    assert main(["pipeline", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert [line.split(":")[0] for line in out.splitlines() if line.startswith("stage ")] == [f"stage {s}" for s in STAGES]
    assert main(["pipeline", "--dry-run", "--stages", "nope"]) == 2


def test_every_help_is_plain_text_with_a_line_for_every_flag():
    """No --help of any subcommand shows Sphinx markup (backticks, :class:) and every flag has a help line;
    train's help lists every method of the registry with its one-line summary, and groups its flags by method."""
    import contextlib
    import io

    from fgpo_lib.algos.registry import METHODS as REGISTRY
    from fgpo_lib.cli import COMMANDS, build_parser

    for name in [None, *COMMANDS]:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
            main(["--help"] if name is None else [name, "--help"])
        text = out.getvalue()
        assert "`" not in text and ":class:" not in text and ":func:" not in text, (name, text)
        if name is None:
            continue
        parser = build_parser(name)
        sub = next(a for a in parser._actions if a.dest == "command").choices[name]
        missing = [a.option_strings for a in sub._actions if a.option_strings and a.help is None]
        assert not missing, (name, missing)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(out.getvalue().split())
    for method, entry in REGISTRY.items():
        assert f"{method}: {' '.join(entry.summary.split())}" in text, method
    assert "--help-all" in text and "--entropy-coef" not in text and "lambda = 0.10" in text  # short: the common flags, Eq. 1's lambda stated
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["train", "--help-all"])
    full = " ".join(out.getvalue().split())
    assert "fgpo settings" in full and "tpo settings" in full and "--entropy-coef" in full and "--tpo-eta" in full
