"""LLM runtimes on this CPU: llama.cpp on the quantized GGUF file (what the precompute engine uses) against
transformers loading the *same* GGUF file, dequantized to bf16 and run in padded batches.

    .venv/bin/python benchmarks/bench_llm_backends.py [--models smollm2-135m,gemma3-270m] [--batch 32] [--every 4]

Prompts: the reasoner's real prompts for every ``--every``-th subset (trie order) of the first GeneTuring question;
llama.cpp with prefix reuse answers all 163 subsets in trie order, as the engine does. For each model it prints

* prompt processing, tokens/s: llama.cpp evaluating each prompt from an empty KV cache, against one transformers
  forward pass per padded batch of ``--batch`` prompts (pad tokens not counted), for each of ``--dtypes``;
* answers/s end to end (prompt + greedy answer of at most the reasoner's ``max_tokens``, 16): llama.cpp naive,
  llama.cpp with prefix reuse, transformers batched ``generate``; and how many transformers answers equal llama.cpp's (same tokens, but the
  arithmetic differs: llama.cpp multiplies quantized blocks, transformers dequantized weights).

transformers reads GGUF through the ``gguf`` and ``accelerate`` packages (in requirements.txt). Threads: 2 for both runtimes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from fgpo_lib.genomics.benchmarks import load_benchmark
from fgpo_lib.precompute import PrecomputeSpec, subset_prompts
from fgpo_lib.reasoners.llm import BUILTIN_MODELS, STOP_STRINGS, LlamaCppReasoner


def cut_at_stop(text: str) -> str:
    """The answer as llama.cpp returns it: text before the first stop string, stripped."""
    for stop in STOP_STRINGS:
        text = text.split(stop, 1)[0]
    return text.strip()


def llama_prompt_rate(reasoner: LlamaCppReasoner, prompts: list[str]) -> tuple[float, int]:
    """Tokens/s of prompt evaluation from an empty KV cache; total tokens."""
    toks = [reasoner.llm.tokenize(p.encode(), add_bos=True, special=True) for p in prompts]
    t0 = time.perf_counter()
    for t in toks:
        reasoner.llm.reset()
        reasoner.llm.eval(t)
    n = sum(map(len, toks))
    return n / (time.perf_counter() - t0), n


def timed_answers(reasoner: LlamaCppReasoner, items: list[tuple[str, list[str]]]) -> tuple[float, list[str]]:
    t0 = time.perf_counter()
    answers = [reasoner.answer(*item) for item in items]
    return time.perf_counter() - t0, answers


def transformers_model(path: Path, dtype: torch.dtype):
    """Tokenizer and model that transformers reads from the GGUF file at ``path``."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = str(path.parent), path.name
    tok = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    tok.padding_side = "left"
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=dtype).eval()
    return tok, model


@torch.inference_mode()
def transformers_rates(tok, model, prompts: list[str], batch: int, max_new_tokens: int) -> tuple[float, float, list[str]]:
    """(prompt tokens/s of the forward pass, seconds for batched greedy generation, answers)."""
    fwd_tokens, fwd_secs, gen_secs, answers = 0, 0.0, 0.0, []
    for i in range(0, len(prompts), batch):
        enc = tok(prompts[i : i + batch], return_tensors="pt", padding=True)  # BOS as the GGUF says, like llama.cpp
        t0 = time.perf_counter()
        model(**enc)
        fwd_secs += time.perf_counter() - t0
        fwd_tokens += int(enc["attention_mask"].sum())
        t0 = time.perf_counter()
        out = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tok.pad_token_id)
        gen_secs += time.perf_counter() - t0
        new = out[:, enc["input_ids"].shape[1] :]
        answers += [cut_at_stop(tok.decode(row, skip_special_tokens=False)) for row in new]
    return fwd_tokens / fwd_secs, gen_secs, answers


def main() -> None:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=",".join(BUILTIN_MODELS))
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--every", type=int, default=8, help="measure every k-th subset of the trie order")
    ap.add_argument("--dtypes", default="bfloat16,float32", help="transformers compute dtypes to measure")
    args = ap.parse_args()
    torch.set_num_threads(2)
    spec = PrecomputeSpec("geneturing", "smollm2-135m")
    q = load_benchmark("geneturing")[0]
    order = spec.space().trie_order().tolist()
    all_items = subset_prompts(spec, q, order)
    items = all_items[:: args.every]
    for name in args.models.split(","):
        naive = LlamaCppReasoner(name, reuse_prefix=False)
        prompts = [naive.prompt(*item) for item in items]
        llama_tps, n_tokens = llama_prompt_rate(naive, prompts)
        naive_secs, naive_answers = timed_answers(naive, items)
        reuse = LlamaCppReasoner(name, reuse_prefix=True)
        reuse_secs, _ = timed_answers(reuse, all_items)
        max_tokens = naive.max_tokens  # transformers gets the same answer cap
        del naive, reuse
        print(
            f"{name}: {len(items)} prompts, {n_tokens:,} tokens\n"
            f"  llama.cpp (GGUF as stored): prompt processing {llama_tps:7.0f} tokens/s | answers naive {len(items) / naive_secs:5.2f}/s, "
            f"with prefix reuse {len(all_items) / reuse_secs:5.2f}/s (all {len(all_items)} subsets in trie order)"
        )
        for dtype in args.dtypes.split(","):
            tok, model = transformers_model(BUILTIN_MODELS[name].weights(), getattr(torch, dtype))
            hf_tps, hf_secs, hf_answers = transformers_rates(tok, model, prompts, args.batch, max_tokens)
            agree = sum(a == b for a, b in zip(hf_answers, naive_answers))
            print(
                f"  transformers {dtype}, batch {args.batch}: prompt processing {hf_tps:7.0f} tokens/s ({hf_tps / llama_tps:.2f}x llama.cpp) | "
                f"answers with batched generate {len(items) / hf_secs:5.2f}/s | answers equal to llama.cpp's {agree}/{len(items)}"
            )
            del tok, model


if __name__ == "__main__":
    main()
