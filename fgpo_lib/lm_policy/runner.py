"""One language-model arm run end to end, its record, and a record re-scored on another reasoner's table.

:data:`LM_ARMS` is the arm registry of the policy (name -> :class:`LMArm`); ``fgpo lm-train`` and the
chapter derive from it. A record (what ``fgpo lm-train --out`` writes, and ``records/lm_policy/`` holds)::

    {"arm", "table": {path, content_hash, reasoner, benchmark}, "backbone": backbone_provenance(...),
     "splits": {"train"|"dev"|"test": question ids}, "seed", "created", "format_warmup": {config, steps, seconds} or None,
     ...the trainer's record: "config", "curve", "selected_step", "train_seconds", "reasoner_calls",
     "test": {"question_ids", "scoring", "generation", "q_entropy", "q_top_mass"}}

:func:`rescore` is the paper's transfer design: the same policy's test choices (under both decodings), scored on
another table of the same library for the questions both hold.
"""

from __future__ import annotations

import datetime as _dt
import sys
from dataclasses import fields, replace
from pathlib import Path

import numpy as np
import torch

from ..outputs import write_record
from ..table import RewardTable
from .data import LMPolicyError, check_table, lm_splits, score_choices
from .arms import ARM_LABELS, LM_ARMS, LMArm  # noqa: F401  (part of this module's interface)
from .resume import RunCheckpoint
from .warmup import FormatWarmup, format_warmup, shared_warm_start

#: the two decodings a record holds, in its ``test`` (module doc): candidate scoring and free generation
DECODINGS = ("scoring", "generation")
def arm_config(arm: str, settings: dict):
    """The arm's settings dataclass from ``settings`` (its field names); an unknown arm or field is a named error."""
    if arm not in LM_ARMS:
        raise LMPolicyError(f"unknown arm {arm!r}; use one of {', '.join(LM_ARMS)}")
    cls = LM_ARMS[arm].settings
    names = {f.name for f in fields(cls)}
    unknown = sorted(set(settings) - names)
    if unknown:
        raise LMPolicyError(f"arm {arm!r} has no setting {', '.join(map(repr, unknown))}; it has {', '.join(sorted(names))}")
    return cls(**settings)


def adapter_dir(out: str | Path) -> Path:
    """Where a run whose record is ``out`` keeps its trained adapter: ``records/lm_policy/X.json`` ->
    ``records/lm_policy/X.adapter/`` (peft's ``save_pretrained`` folder)."""
    out = Path(out)
    return out.with_name(out.stem + ".adapter")


def load_adapter(model, folder: str | Path) -> dict:
    """Copy the LoRA weights of a peft adapter folder (``save_pretrained``) into ``model``'s adapter (same rank and
    targets); returns ``{"path", "sha256"}`` of its weights file. A missing or foreign folder is a named error."""
    from peft.utils import set_peft_model_state_dict
    from safetensors.torch import load_file

    from ..weights import file_sha256

    weights = Path(folder) / "adapter_model.safetensors"
    if not weights.is_file():
        raise LMPolicyError(f"{folder}: no adapter_model.safetensors there; give the .adapter folder of a finished run")
    try:
        result = set_peft_model_state_dict(model, load_file(str(weights)))
    except RuntimeError as exc:  # a tensor of another shape
        raise LMPolicyError(f"{folder}: its adapter does not fit this backbone's LoRA ({str(exc).splitlines()[0]})") from None
    if getattr(result, "unexpected_keys", None):
        raise LMPolicyError(f"{folder}: its adapter does not fit this backbone's LoRA ({len(result.unexpected_keys)} tensors of another name)")
    return {"path": str(folder), "sha256": file_sha256(weights)}


def run_lm_arm(table_path: str, arm: str, settings: dict | None = None, backbone: str = "smollm2-135m", dtype: str | None = "float32",
               max_train: int = 0, split_seed: int = 0, progress: bool = False, warmup: FormatWarmup = FormatWarmup(), out: str | Path | None = None,
               init_adapter: str | Path | None = None, device: str = "cpu", keep: dict | None = None) -> dict:
    """Load the backbone, add a fresh LoRA adapter, give it the answer-format warm start (``warmup.epochs`` > 0; the
    arm's seed draws it) or start it from another run's trained adapter (``init_adapter``, e.g. the SFT arm's), train
    ``arm`` on ``table_path``'s fixed split, return the record. ``device``: ``cpu``, ``cuda`` or ``auto``
    (:func:`~fgpo_lib.lm_policy.model.resolve_device`); ``dtype`` None: float32 on the CPU, bfloat16 on a GPU.
    ``keep``: a dict this call fills with the trained ``model`` and ``tokenizer`` (the dev-selected checkpoint), for a
    :class:`~fgpo_lib.selector.Selector`.

    With ``out`` the record is also written there, the trained adapter beside it (:func:`adapter_dir`), and the run
    is resumable: it keeps its partial state in ``<out>.partial/`` (:mod:`.resume`), resumes from it when it is
    started again with the same settings, and deletes it once the record is written."""
    from dataclasses import asdict

    from .model import backbone_provenance, check_backbone, default_dtype, load_backbone, resolve_device, with_lora

    cfg = arm_config(arm, settings or {})
    check_backbone(backbone)
    device = resolve_device(device)
    dtype = dtype or default_dtype(device)
    table = RewardTable.load(table_path)
    check_table(table)
    splits = lm_splits(table, max_train=max_train, seed=split_seed)
    checkpoint = None
    if out is not None:
        identity = {"table": table.content_hash(), "arm": arm, "config": asdict(cfg), "backbone": backbone, "dtype": dtype, "max_train": max_train,
                    "split_seed": split_seed, "format_warmup": asdict(replace(warmup, seed=cfg.seed))}
        if init_adapter is not None:
            identity["init_adapter"] = str(init_adapter)
        checkpoint = RunCheckpoint(f"{out}.partial", identity, config_defaults=asdict(type(cfg)()))
    torch.manual_seed(cfg.seed)
    model, tokenizer = load_backbone(backbone, dtype, device)
    model = with_lora(model).eval()
    warm = checkpoint.load_warm(model) if checkpoint else None
    if warm is not None:
        print(f"resuming the partial run in {checkpoint.folder}", file=sys.stderr)
    elif init_adapter is not None:
        warm = {"init_adapter": load_adapter(model, init_adapter)}
        if checkpoint:
            checkpoint.save_warm(model, warm)
    elif warmup.epochs > 0:
        shared = shared_warm_start(out, {"table": table.content_hash(), "backbone": backbone, "dtype": dtype, "device": device, "max_train": max_train,
                                         "split_seed": split_seed, "format_warmup": asdict(replace(warmup, seed=cfg.seed))})
        warm = shared.load_warm(model) if shared is not None else None
        if warm is None:
            warm = format_warmup(model, tokenizer, table, splits["train"], replace(warmup, seed=cfg.seed), progress)
            if shared is not None:
                shared.save_warm(model, warm)
        if checkpoint:
            checkpoint.save_warm(model, warm)
    rec = LM_ARMS[arm].train(model, tokenizer, table, splits, cfg, progress=progress, checkpoint=checkpoint)
    rec = {"arm": arm, "seed": cfg.seed, "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
           "table": {"path": str(table_path), "content_hash": table.content_hash(), "reasoner": table.provenance.get("reasoner"), "benchmark": table.provenance.get("benchmark"),
                     "tools": list(table.tool_names)},
           "backbone": backbone_provenance(backbone, dtype, device), "splits": {k: [table.question_ids[r] for r in v] for k, v in splits.items()}, "format_warmup": warm, **rec}
    if out is not None:
        path = Path(out)
        path.parent.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(str(adapter_dir(path)))
        write_record(path, rec, "lm-train", sort_keys=False)
        checkpoint.finish()
    if keep is not None:
        keep.update(model=model, tokenizer=tokenizer, dtype=dtype, device=device)
    return rec


def record_tools(record: dict, source: str = "the record") -> tuple[str, ...]:
    """The tool library a record's policy chose from: its ``table.tools``, or (records made before the field) the
    tools of the training table its path names, when that file's content hash is the record's."""
    block = record.get("table") if isinstance(record.get("table"), dict) else {}
    if isinstance(block.get("tools"), list):
        return tuple(block["tools"])
    from ..paths import ROOT

    path = ROOT / str(block.get("path", ""))
    if block.get("path") and path.is_file():
        trained = RewardTable.load(path)
        if trained.content_hash() == block.get("content_hash"):
            return trained.tool_names
    raise LMPolicyError(f"{source}: names no tool library (table.tools), and its training table {block.get('path')!r} is not here to read it from")


def check_record(record, source: str = "the record") -> dict:
    """A run record as :func:`rescore` reads it, checked where it is read: its ``test`` block, each decoding's
    ``choices`` (a whole-number subset index or null per test question) and ``question_ids`` (texts). A malformed
    record is an :class:`LMPolicyError` naming the file and the field."""
    if not isinstance(record, dict) or not isinstance(record.get("test"), dict):
        raise LMPolicyError(f"{source}: not a run record of fgpo lm-train (no 'test' object)")
    test = record["test"]
    qids = test.get("question_ids")
    if not isinstance(qids, list) or not all(isinstance(q, str) for q in qids):
        raise LMPolicyError(f"{source}: field test.question_ids must be a list of question ids, got {type(qids).__name__}")
    for decoding in DECODINGS:
        block = test.get(decoding)
        if not isinstance(block, dict):
            raise LMPolicyError(f"{source}: field test.{decoding} is missing; a record of fgpo lm-train holds both decodings ({', '.join(DECODINGS)})")
        choices = block.get("choices")
        if not isinstance(choices, list) or not all(c is None or (isinstance(c, int) and not isinstance(c, bool)) for c in choices):
            raise LMPolicyError(f"{source}: field test.{decoding}.choices must be a list of subset indices (whole numbers) or nulls")
        if len(choices) != len(qids):
            raise LMPolicyError(f"{source}: field test.{decoding}.choices has {len(choices)} entries for {len(qids)} test questions")
    return record


def rescore(record: dict, table: RewardTable, source: str = "the record") -> dict:
    """The record's test choices scored on ``table`` (same library), for the questions both hold: per decoding,
    ``{"question_ids", "scores", "sizes", "format_failures"}`` (a format failure scores the no-tool cell). A record
    of another library, or with a choice outside the table's subsets, is a named error."""
    check_table(table)
    check_record(record, source)
    tools = record_tools(record, source)
    if tuple(tools) != tuple(table.tool_names):
        raise LMPolicyError(f"{source}: its policy chose among subsets of {', '.join(tools)}, but the table's tools are {', '.join(table.tool_names)}: another library")
    test = record["test"]
    row_of = {q: i for i, q in enumerate(table.question_ids)}
    shared = [(k, row_of[q]) for k, q in enumerate(test["question_ids"]) if q in row_of]
    if not shared:
        raise LMPolicyError("the table holds none of the record's test questions")
    rows = [r for _, r in shared]
    out = {}
    for decoding in DECODINGS:
        choices = [test[decoding]["choices"][k] for k, _ in shared]
        out_of_range = [c for c in choices if c is not None and not 0 <= c < table.n_subsets]
        if out_of_range:
            raise LMPolicyError(f"{source}: test.{decoding} chose subset {out_of_range[0]}, outside the table's subsets 0..{table.n_subsets - 1}")
        scored = score_choices(table, rows, choices)
        out[decoding] = {"question_ids": [table.question_ids[r] for r in rows], **{k: scored[k] for k in ("scores", "sizes", "format_failures")}}
    return out


def mean_score(scores) -> float:
    return 100 * float(np.mean(scores)) if len(scores) else float("nan")


__all__ = ["ARM_LABELS", "DECODINGS", "LMArm", "LM_ARMS", "arm_config", "check_record", "mean_score", "record_tools", "rescore", "run_lm_arm"]
