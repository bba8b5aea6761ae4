"""The LoRA policy as a :class:`~fgpo_lib.selector.Selector` (kind ``lm``): its adapter, its backbone's identity, and
candidate scoring (the argmax of Eq. 4's scores over every candidate answer of the library).

The folder holds ``selector.json`` and ``adapter/`` (peft's ``save_pretrained``). The backbone is not copied: the
JSON names it (a registry name, or a local Hugging Face model folder) with its identity (the sha256 of its weights
file or files), and loading checks that the backbone found here is that one; a missing or different backbone is a
:class:`~fgpo_lib.selector.SelectorError`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..selector import SelectorError


def lm_selector(space, model, tokenizer, backbone: dict, length_norm: bool = True, temperature: float = 1.0, provenance: dict | None = None):
    """A :class:`~fgpo_lib.selector.Selector` around a trained peft model (kept in memory; :meth:`save` writes it)."""
    from ..selector import Selector

    return Selector(space, "lm", provenance or {}, lm={"backbone": backbone, "length_norm": bool(length_norm), "temperature": float(temperature),
                                                       "model": model, "tokenizer": tokenizer})


def record_selector(table, record: dict, keep: dict):
    """The selector of one ``fgpo lm-train`` run: its trained model (``keep`` of :func:`~fgpo_lib.lm_policy.runner.run_lm_arm`),
    the backbone's identity, the arm's candidate scoring (its ``length_norm`` and ``temperature``) and the run's
    provenance."""
    from .._version import __version__
    from .model import backbone_identity

    cfg = record.get("config", {})
    prov = {"kind": "lm", "method": f"lm-{record['arm']}", "config": cfg, "checkpoint": f"dev-selected step {record.get('selected_step')}",
            "table_content_hash": table.content_hash(), "table_provenance": table.provenance, "fgpo_version": __version__, "run_created": record.get("created")}
    sel = lm_selector(table.space, keep["model"], keep["tokenizer"], backbone_identity(record["backbone"]["backbone"]), cfg.get("length_norm", True),
                      cfg.get("temperature", 1.0), prov)
    sel.lm |= {"dtype": keep.get("dtype", "float32"), "device": "cpu"}
    return sel


def lm_probabilities(selector, questions: list[str]) -> np.ndarray:
    """``(n, n_subsets)``: ``q`` of each question under the selector's adapter (candidate scoring)."""
    import torch

    from .data import prompt_text
    from .candidate_scores import candidate_scores

    lm = selector.lm
    model, tok = lm["model"], lm["tokenizer"]
    cands = [tok(c, add_special_tokens=False)["input_ids"] for c in _candidates(selector.space)]
    out = []
    with torch.no_grad():
        for text in questions:
            ids = tok(prompt_text(tok, text, selector.space.n_tools), add_special_tokens=False, return_tensors="pt")["input_ids"][0].to(model.device)
            scores = candidate_scores(model, ids, cands, lm["length_norm"], tok.pad_token_id or 0)
            out.append(torch.softmax(scores.float() / lm["temperature"], -1).double().cpu().numpy())
    return np.stack(out)


def _candidates(space) -> list[str]:
    from .prompt import candidates

    return candidates(space)


def save_adapter(selector, folder: Path) -> None:
    """The adapter into ``folder/adapter`` (peft's ``save_pretrained``); ``folder`` is the new folder that
    :func:`~fgpo_lib.selector_folder.write_selector_folder` puts in place once it is whole."""
    selector.lm["model"].save_pretrained(str(folder / "adapter"))


def load_lm_selector(cls, folder: Path, doc: dict, space):
    """A selector of kind ``lm`` from its folder: the backbone found here (checked against the identity saved), a
    fresh adapter of the saved settings, and the saved adapter's weights."""
    from .model import backbone_identity, load_policy_backbone, with_lora
    from .runner import load_adapter

    lm = doc.get("lm") or {}
    saved = lm.get("backbone") or {}
    name = saved.get("backbone")
    if not name:
        raise SelectorError(f"{folder}: its selector.json names no backbone")
    try:
        here = backbone_identity(name)
    except (ValueError, OSError) as exc:
        raise SelectorError(f"{folder}: its backbone {name!r} is not available here ({exc})") from None
    if here.get("sha256") != saved.get("sha256"):
        raise SelectorError(f"{folder}: its backbone {name!r} here has sha256 {here.get('sha256', '?')[:16]}..., not the {str(saved.get('sha256'))[:16]}... it was trained on")
    if not (folder / "adapter" / "adapter_model.safetensors").is_file():
        raise SelectorError(f"{folder}: no adapter/adapter_model.safetensors; the folder is incomplete")
    from safetensors.torch import load_file

    from ..selector import check_weights

    try:
        check_weights(load_file(str(folder / "adapter" / "adapter_model.safetensors")), folder / "adapter" / "adapter_model.safetensors")
    except SelectorError:
        raise
    except Exception as exc:  # noqa: BLE001 - a truncated or foreign file
        raise SelectorError(f"{folder}/adapter/adapter_model.safetensors: not a readable adapter ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})") from None
    model, tok = load_policy_backbone(name, lm.get("dtype", "float32"), lm.get("device", "cpu"), sha256=here.get("sha256"))
    model = with_lora(model).eval()
    try:
        load_adapter(model, folder / "adapter")
    except ValueError as exc:
        raise SelectorError(str(exc)) from None
    return cls(space, "lm", doc.get("provenance") or {}, lm={**lm, "model": model, "tokenizer": tok})
