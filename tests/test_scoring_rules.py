"""GeneGPT's official scoring rule (``--rules official``) against hand-worked cases, beside our lenient rule."""

import json

import pytest

from fgpo_lib.cli import main
from fgpo_lib.genomics.scoring import OFFICIAL_TASKS, official_score, score

CASES = [
    # task, prediction, gold, official, lenient
    ("Gene disease association", "Answer: SLC4A1, ATP6V0A4", "SLC4A1, ATP6V0A4", 1.0, 1.0),
    ("Gene disease association", "SLC4A1, atp6v0a4", "SLC4A1, ATP6V0A4", 0.5, 1.0),  # case-only mismatch: official misses it
    ("Gene disease association", "SLC4A1,ATP6V0A4", "SLC4A1, ATP6V0A4", 0.0, 1.0),  # split on ", " only: one item, no gold member
    ("Gene disease association", "ATP6V0A4", "SLC4A1, ATP6V0A4", 0.5, 0.5),
    ("Gene alias", "PSMB10", "PSMB10", 1.0, 1.0),
    ("Gene alias", "psmb10", "PSMB10", 0.0, 1.0),  # case-only mismatch
    ("Gene alias", "The official symbol is PSMB10.", "PSMB10", 0.0, 1.0),  # no extraction in the official rule
    ("SNP location", "Answer: 8", "chr8", 1.0, 1.0),  # last word, 'chr' added
    ("Gene location", "chromosome chr8", "chr8", 1.0, 1.0),
    ("Protein-coding genes", "Answer: Yes", "TRUE", 1.0, 1.0),
    ("Protein-coding genes", "No", "NA", 1.0, 1.0),
    ("Multi-species DNA aligment", "Answer: Danio rerio", "zebrafish", 1.0, 1.0),
    ("Multi-species DNA aligment", "danio rerio", "zebrafish", 0.0, 1.0),
    ("Human genome DNA aligment", "chr15:91950805-91951129", "chr15:91950805-91951129", 1.0, 1.0),
    ("Human genome DNA aligment", "chr15:1-2", "chr15:91950805-91951129", 0.5, 0.5),
    ("Human genome DNA aligment", "Chr15:1-2", "chr15:91950805-91951129", 0.0, 0.5),
    ("Disease gene location", "21q22.3, 5q31", ("21q22.3",), 1.0, 1.0),
]


@pytest.mark.parametrize("task,prediction,gold,official,lenient", CASES)
def test_official_and_lenient_rules_by_hand(task, prediction, gold, official, lenient):
    assert score(task, prediction, gold, rules="official") == official
    assert official_score(task, prediction, gold) == official
    assert score(task, prediction, gold) == lenient


def test_tasks_without_an_official_rule_use_ours():
    assert "GC content" not in OFFICIAL_TASKS
    assert score("GC content", "GC is 51.23%", "51.2", rules="official") == score("GC content", "GC is 51.23%", "51.2")
    with pytest.raises(ValueError, match="no official rule"):
        official_score("GC content", "51.2", "51.2")
    with pytest.raises(ValueError, match="unknown rules 'strict'"):
        score("Gene alias", "A", "A", rules="strict")


def test_fgpo_score_rules_flag(tmp_path, capsys):
    from fgpo_lib.genomics.benchmarks import load_benchmark

    q = next(q for q in load_benchmark("geneturing") if q.task == "Gene alias")
    preds = tmp_path / "p.jsonl"
    preds.write_text(json.dumps({"question": q.text, "prediction": str(q.answer).lower()}) + "\n")
    rows = {}
    for rules in ("official", "lenient"):
        assert main(["score", "--benchmark", "geneturing", "--predictions", str(preds), "--rules", rules]) == 0
        out = capsys.readouterr().out
        assert f"{rules} rules" in out
        rows[rules] = next(line for line in out.splitlines() if line.strip().startswith("Gene alias"))
    expected = 1 / sum(q2.task == "Gene alias" for q2 in load_benchmark("geneturing"))
    assert rows["official"].split()[-1] == "0.0000" and float(rows["lenient"].split()[-1]) == pytest.approx(expected, abs=1e-4)
