"""The LoRA policy as a selector (issue #43), on a tiny real transformers model saved as a local Hugging Face model
folder (the backbone kind a user with their own model gives): ``fgpo lm-train --backbone DIR --save-selector S``,
then ``Selector.load(S)`` gives the record's test choices and the same probabilities, and a changed backbone is a
named error."""

import json

import numpy as np
import pytest

from fgpo_lib import Selector

from test_lm_arms import _model, _table, _tokenizer
from test_user_errors import fails, run


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lmsel")
    tok = _tokenizer()
    base = _model(tok, lora=False)
    backbone = tmp / "backbone"
    base.save_pretrained(backbone)
    tok.save_pretrained(backbone)
    table = _table(40)
    table.save(tmp / "t.npz")
    code, out, err = run(["lm-train", "--table", tmp / "t.npz", "--arm", "fgpo", "--backbone", backbone, "--device", "auto", "--format-warmup", 0,
                          "--set", "epochs=1", "--set", "batch_questions=4", "--set", "eval_every=2", "--set", "lr=0.01", "--set", "dev_measures=scoring",
                          "--out", tmp / "r.json", "--save-selector", tmp / "sel"])
    assert code == 0, err
    record = json.loads((tmp / "r.json").read_text())
    assert ("q is near uniform" in err) == record["test"]["near_uniform"], err  # lm-train says so when it is
    return tmp, table, record


def test_the_saved_lm_selector_gives_the_records_choices(trained):
    tmp, table, record = trained
    sel = Selector.load(tmp / "sel")
    assert sel.kind == "lm" and sel.provenance["method"] == "lm-fgpo"
    row = {q: i for i, q in enumerate(table.question_ids)}
    questions = [table.questions[row[q]] for q in record["test"]["question_ids"]]
    assert list(sel.choices(questions)) == record["test"]["scoring"]["choices"]
    again = Selector.load(tmp / "sel")
    assert np.array_equal(sel.probabilities(questions), again.probabilities(questions))
    assert (tmp / "r.adapter" / "adapter_model.safetensors").exists()  # the run's adapter is kept beside its record


def test_select_runs_the_lm_selector_from_the_command_line(trained):
    tmp, _, _ = trained
    code, out, err = run(["select", tmp / "sel", "--question", "Which region is ACGT99?"])
    assert code == 0, err
    line = json.loads(out)
    assert set(line["tools"]) <= {"composition", "knn"} and 0 < line["probability"] <= 1


def test_a_changed_backbone_is_named(trained, tmp_path):
    tmp, _, _ = trained
    import shutil

    copy = tmp_path / "sel"
    shutil.copytree(tmp / "sel", copy)
    meta = json.loads((copy / "selector.json").read_text())
    meta["lm"]["backbone"]["sha256"] = "0" * 64
    (copy / "selector.json").write_text(json.dumps(meta))
    fails(["select", copy, "--question", "x"], str(copy), "not the")


def test_lm_train_help_shows_device_and_a_local_backbone(capsys):
    code, out, _ = run(["lm-train", "--help"])
    assert "--device" in out and "auto" in out and "Hugging Face model folder" in out
    assert "`" not in out and ":class:" not in out


def test_the_device_choice(monkeypatch):
    """auto is the GPU where torch sees one, else the CPU; cuda without a GPU is a named error; a GPU's default
    dtype is bfloat16 (this machine has no GPU: the GPU branch is checked by pretending torch sees one)."""
    import torch

    from fgpo_lib.lm_policy.model import default_dtype, resolve_device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == "cpu" and resolve_device("cpu") == "cpu"
    with pytest.raises(ValueError, match="no GPU"):
        resolve_device("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda" and default_dtype("cuda") == "bfloat16" and default_dtype("cpu") == "float32"
    fails(["lm-train", "--table", "x.npz", "--arm", "fgpo", "--device", "tpu", "--out", "r.json"], "--device")
