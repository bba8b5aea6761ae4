"""Speed of the language-model policy on this CPU: what one FGPO update and one GRPO step cost, before any run.

    python benchmarks/bench_lm_policy.py [--benchmark generegion] [--backbone smollm2-135m] [--dtypes float32,bfloat16] [--questions 3] [--skip-naive]

For each dtype it loads the backbone from its GGUF with a fresh LoRA adapter (r16, q/k/v/o), builds the policy
prompt of real questions of ``--benchmark`` (chat template; a GeneRegion prompt holds its sequence, so it is
the longest), and times, per question:

* FGPO: the 16 candidates scored and the loss backpropagated, with the shared prompt
  (:func:`fgpo_lib.lm_policy.candidate_scores.candidate_scores`) and naively (each candidate its own sequence), checking that
  the two scores agree;
* GRPO: ``generate`` of G = 6 completions of at most 12 tokens at temperature 1, and the share of them that
  :func:`~fgpo_lib.lm_policy.prompt.parse_answer` reads (the untrained policy's format rate);
* a GRPO step of TRL's ``GRPOTrainer`` itself (the arm's settings: 4 questions x G = 6 completions of at most 16
  tokens), on the benchmark's Qwen2.5-Coder-0.5B 4-tool table, timed over ``--grpo-steps`` steps (0: skip).

* a dev evaluation of ``--questions`` questions, with every measure (both decodings, the generation masses, the
  dead-group closed forms) and with candidate scoring alone (``dev_measures="scoring"``, what the routing search's
  runs use), and the prompt pass with every position's logits against the last one's (``logits_to_keep=1``, what
  the scoring uses now; the scores are the same);
* with ``--grpo-steps``, a GRPO step with gradient checkpointing on (the arm's setting) and off.

It prints seconds per question, tokens per second, the speedup of shared-prompt scoring, the largest score
difference between the two, the format rate and the seconds per GRPO step. Whether a dtype's results agree with the
first one's: the first question's 16 candidate scores (largest difference, same argmax) and the FGPO loss's gradient
norm on the adapter (the adapter is seeded, so every dtype starts from the same one), and each GRPO step's gradient
norm as TRL logs it (zero when every group is dead, as for an untrained policy whose completions rarely parse, so
it says little about the dtype); and GRPO's gradient on fixed data: 6 completions of the first question sampled
once (under the first dtype, seeded), with fixed advantages, their per-token log-probabilities and the gradient of
the policy-gradient surrogate -sum_i A_i mean_t log pi(token_t) (norm, cosine to the first dtype's). Threads: torch's default unless
``--threads``. ``--skip-naive`` times the shared-prompt scoring alone: the naive reference holds 16 full sequences'
logits, several GB for a 152k-token vocabulary (Qwen2.5-Coder-0.5B as the backbone).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    ap.add_argument("--benchmark", default="generegion")
    ap.add_argument("--backbone", default="smollm2-135m")
    ap.add_argument("--dtypes", default="float32,bfloat16")
    ap.add_argument("--questions", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--grpo-steps", type=int, default=2)
    ap.add_argument("--skip-naive", action="store_true", help="time the shared-prompt scoring only (no naive reference, no speedup)")
    args = ap.parse_args()
    import torch

    from fgpo_lib.genomics.benchmarks import load_benchmark
    from fgpo_lib.lm_policy.model import load_backbone, with_lora
    from fgpo_lib.lm_policy.prompt import build_prompt, candidates, parse_answer
    from fgpo_lib.lm_policy.candidate_scores import candidate_scores, expected_reward_loss, naive_candidate_scores
    from fgpo_lib.subsets import SubsetSpace

    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch threads: {torch.get_num_threads()}")
    space = SubsetSpace(4)
    questions = [q.text for q in load_benchmark(args.benchmark)[: args.questions]]
    rewards = torch.linspace(0, 1, space.n_subsets)
    first: dict[str, tuple] = {}
    fixed, surrogate = None, {}
    for dtype in args.dtypes.split(","):
        t0 = time.perf_counter()
        model, tok = load_backbone(args.backbone, dtype)
        torch.manual_seed(0)
        model = with_lora(model)
        print(f"\n{args.backbone} {dtype}: loaded in {time.perf_counter() - t0:.1f} s; trainable parameters {sum(p.numel() for p in model.parameters() if p.requires_grad):,}")
        cand = [tok(c, add_special_tokens=False)["input_ids"] for c in candidates(space)]
        times = {"shared": [], "naive": [], "generate": []}
        worst, tokens, parsed = 0.0, {"shared": 0, "naive": 0}, 0
        for text in questions:
            chat = tok.apply_chat_template([{"role": "user", "content": build_prompt(text, 4)}], tokenize=False, add_generation_prompt=True)
            prompt = torch.tensor(tok(chat, add_special_tokens=False)["input_ids"])
            scores = {}
            for name, fn in (("shared", candidate_scores), ("naive", naive_candidate_scores))[: 1 if args.skip_naive else 2]:
                model.zero_grad()
                t = time.perf_counter()
                s = fn(model, prompt, cand, True, tok.pad_token_id)
                expected_reward_loss(s, rewards, 0.03).backward()
                times[name].append(time.perf_counter() - t)
                scores[name] = s.detach()
                if name == "shared" and text is questions[0]:
                    first[dtype] = (s.detach().float(), float(torch.sqrt(sum((p.grad.float() ** 2).sum() for p in model.parameters() if p.grad is not None))))
                    if fixed is None:
                        torch.manual_seed(0)
                        with torch.no_grad():
                            out = model.generate(prompt[None].repeat(6, 1), attention_mask=torch.ones(6, len(prompt), dtype=torch.long), do_sample=True,
                                                 temperature=1.0, top_k=0, top_p=1.0, max_new_tokens=12, pad_token_id=tok.pad_token_id)
                        fixed = out[:, len(prompt):]
                    surrogate[dtype] = surrogate_gradient(model, prompt, fixed, torch.tensor([1.0, -1.0, 0.5, -0.5, 0.25, -0.25]))
            tokens["shared"] += len(prompt) + sum(len(c) for c in cand)
            tokens["naive"] += sum(len(prompt) + len(c) for c in cand)
            if not args.skip_naive:
                worst = max(worst, float((scores["shared"] - scores["naive"]).abs().max()))
            t = time.perf_counter()
            with torch.no_grad():
                out = model.generate(prompt[None].repeat(6, 1), attention_mask=torch.ones(6, len(prompt), dtype=torch.long), do_sample=True, temperature=1.0,
                                     top_k=0, top_p=1.0, max_new_tokens=12, pad_token_id=tok.pad_token_id)
            times["generate"].append(time.perf_counter() - t)
            parsed += sum(parse_answer(tok.decode(o[len(prompt):], skip_special_tokens=True), space) is not None for o in out)
        n = len(questions)
        for name in ("shared",) if args.skip_naive else ("shared", "naive"):
            print(f"FGPO update per question, {name} scoring: {sum(times[name]) / n:.2f} s ({tokens[name] / sum(times[name]):.0f} tokens/s forward+backward)")
        if not args.skip_naive:
            print(f"shared-prompt speedup: {sum(times['naive']) / sum(times['shared']):.2f}x; largest score difference {worst:.2e}")
        print(f"GRPO generation, 6 completions x 12 tokens: {sum(times['generate']) / n:.2f} s per question; {parsed} of {6 * n} completions parse")
        print(f"FGPO step of 16 questions: about {16 * sum(times['shared']) / n:.0f} s")
        (ref_scores, ref_norm), (dt_scores, dt_norm) = first[next(iter(first))], first[dtype]
        print(f"agreement with {next(iter(first))} on the first question: largest candidate-score difference {float((dt_scores - ref_scores).abs().max()):.2e}, "
              f"same argmax {bool(dt_scores.argmax() == ref_scores.argmax())}; FGPO gradient norm {dt_norm:.4g} (against {ref_norm:.4g})")
        (ref_logp, ref_grad), (dt_logp, dt_grad) = surrogate[next(iter(surrogate))], surrogate[dtype]
        print(f"GRPO's gradient on 6 fixed completions: largest per-token log-probability difference {float((dt_logp - ref_logp).abs().max()):.2e}, "
              f"gradient norm {float(dt_grad.norm()):.4g} (against {float(ref_grad.norm()):.4g}), cosine {float(torch.nn.functional.cosine_similarity(dt_grad, ref_grad, dim=0)):.4f}")
        dev_full, dev_scoring, keep_all, keep_last = dev_eval_seconds(model, tok, args.benchmark, args.questions)
        print(f"dev evaluation of {args.questions} questions: every measure {dev_full:.1f} s, candidate scoring alone {dev_scoring:.1f} s "
              f"({dev_full / max(dev_scoring, 1e-9):.1f}x); prompt pass with every position's logits {keep_all:.2f} s, the last one's {keep_last:.2f} s per question")
        if args.grpo_steps:
            for ckpt in (True, False):
                seconds, norms = grpo_step_seconds(model, tok, args.benchmark, args.grpo_steps, ckpt)
                print(f"GRPO step of TRL's GRPOTrainer (4 questions x G = 6), gradient checkpointing {'on' if ckpt else 'off'}: "
                      f"{seconds:.1f} s; gradient norm per step {', '.join(f'{g:.3g}' for g in norms)}")


def surrogate_gradient(model, prompt, completions, advantages):
    """``(token_logp (n_completions * L,), gradient (n_adapter_params,))``: each completion token's log-probability
    after ``prompt`` (completions: ``(n_completions, L)`` token ids) and the adapter's gradient of
    -sum_i advantages[i] * mean_t token_logp[i, t], GRPO's policy-gradient surrogate at ratio 1."""
    import torch

    model.zero_grad()
    logps = []
    for c in completions:
        seq = torch.cat([prompt, c])[None]
        logp = torch.log_softmax(model(input_ids=seq).logits[0, len(prompt) - 1 : -1].float(), dim=-1)
        logps.append(logp.gather(1, c[:, None])[:, 0])
    (-sum(a * lp.mean() for a, lp in zip(advantages, logps))).backward()
    grad = torch.cat([p.grad.float().reshape(-1) for p in model.parameters() if p.grad is not None])
    return torch.cat([lp.detach() for lp in logps]), grad


def dev_eval_seconds(model, tok, benchmark: str, n: int) -> tuple[float, float, float, float]:
    """Seconds of a dev evaluation of ``n`` questions with every measure and with candidate scoring alone, and per
    question the prompt pass with every position's logits and with the last one's."""
    import torch

    from fgpo_lib.lm_policy.data import prompt_text
    from fgpo_lib.lm_policy.dev import DevSelector
    from fgpo_lib.table import RewardTable

    table = RewardTable.load(Path(__file__).resolve().parents[1] / "tables" / f"{benchmark}__qwen2.5-coder-0.5b__4tools.npz")
    out = []
    for measures in ("full", "scoring"):
        dev = DevSelector(model, tok, table, list(range(n)), "scoring", measures=measures)
        t = time.perf_counter()
        dev(0)
        out.append(time.perf_counter() - t)
    ids = [tok(prompt_text(tok, table.questions[r], 4), add_special_tokens=False, return_tensors="pt")["input_ids"] for r in range(n)]
    for keep in (0, 1):
        t = time.perf_counter()
        with torch.no_grad():
            for i in ids:
                model(input_ids=i, use_cache=True, logits_to_keep=keep)
        out.append((time.perf_counter() - t) / n)
    return tuple(out)


def grpo_step_seconds(model, tok, benchmark: str, steps: int, checkpointing: bool = True) -> tuple[float, list[float]]:
    """Seconds per optimizer step of TRL's GRPOTrainer with the GRPO arm's settings, on ``benchmark``'s training table,
    and each step's gradient norm as TRL logs it."""
    import tempfile

    from datasets import Dataset
    from trl import GRPOTrainer

    from fgpo_lib.lm_policy.data import prompt_text
    from fgpo_lib.lm_policy.grpo_arm import TableReward
    from fgpo_lib.lm_policy.grpo_arm import LMGRPOConfig, grpo_args
    from fgpo_lib.table import RewardTable

    table = RewardTable.load(Path(__file__).resolve().parents[1] / "tables" / f"{benchmark}__qwen2.5-coder-0.5b__4tools.npz")
    cfg, rows = LMGRPOConfig(), range(4 * steps)
    data = Dataset.from_dict({"prompt": [prompt_text(tok, table.questions[r], 4) for r in rows], "question_id": [table.question_ids[r] for r in rows]})
    with tempfile.TemporaryDirectory() as out:
        args = grpo_args(cfg, out, steps)
        args.gradient_checkpointing = checkpointing
        trainer = GRPOTrainer(model=model, reward_funcs=[TableReward(table)], args=args, train_dataset=data, processing_class=tok)
        t = time.perf_counter()
        trainer.train()
        seconds = (time.perf_counter() - t) / steps
        return seconds, [float(h["grad_norm"]) for h in trainer.state.log_history if "grad_norm" in h]


if __name__ == "__main__":
    main()
