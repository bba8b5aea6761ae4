"""Reasoner speed in the precompute engine: calls per second for each reasoner, and for the LLMs the speed-up of
prefix reuse over naive prompting (timed on every 4th subset: a naive call costs the same in any order), with the
agreement of their answers.

    .venv/bin/python benchmarks/bench_precompute.py [--questions 2] [--reasoners bm25,minilm,...]   (default: every
    built-in reasoner of the registry but the HTTP one)

Each reasoner evaluates all 163 subsets (8 tools, at most 4) of GeneTuring questions (one per task, in task order;
the LLMs take the first --questions of them) in trie order, through the engine's per-question path, without the cell
cache. The LLMs also report cells per second over the 16 subsets of GeneTuring's 4-tool library.
"""

from __future__ import annotations

import argparse
import time

from fgpo_lib.genomics.benchmarks import load_benchmark
from fgpo_lib.precompute import PrecomputeSpec, evaluate_question
from fgpo_lib.genomics.libraries import LIBRARIES
from fgpo_lib.reasoners import REASONERS, make_reasoner


def questions(n: int):
    qs, seen = [], set()
    for q in load_benchmark("geneturing"):
        if q.task not in seen:
            seen.add(q.task)
            qs.append(q)
    return qs[:n]


def run(reasoner, qs, spec):
    order = spec.space().trie_order().tolist()
    t0 = time.perf_counter()
    answers = []
    for q in qs:
        answers += [r[1] for r in evaluate_question(spec, q, order, reasoner)]
    return time.perf_counter() - t0, answers


def main() -> None:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=2)
    ap.add_argument("--reasoners", default=",".join(n for n, e in REASONERS.items() if e.kind != "http"))
    args = ap.parse_args()
    qs = questions(args.questions)
    for name in args.reasoners.split(","):
        spec = PrecomputeSpec("geneturing", name)
        reasoner = make_reasoner(name)
        n = len(qs) * spec.space().n_subsets
        if REASONERS[name].kind != "llm":
            warm = load_benchmark("geneturing")[-1]  # a question not measured: loads the model, leaves no cached embedding
            run(reasoner, [warm], spec)
            rq = questions(9)  # readers are fast: one question per task
            n = len(rq) * spec.space().n_subsets
            secs, _ = run(reasoner, rq, spec)
            print(f"{name:<13} {n / secs:9.1f} calls/s  ({n} calls in {secs:.1f} s)")
            continue
        four = PrecomputeSpec("geneturing", name, tools=LIBRARIES["geneturing"])
        secs4, answers4 = run(reasoner, qs, four)
        print(f"{name:<13} {len(answers4) / secs4:9.2f} calls/s over the 4-tool library's 16 subsets ({len(answers4)} calls in {secs4:.1f} s)")
        reasoner.prompt_tokens = reasoner.evaluated_tokens = 0
        secs, reuse_answers = run(reasoner, qs, spec)
        tokens, evaluated = reasoner.prompt_tokens, reasoner.evaluated_tokens
        # naive prompting costs the same per call in any order: time every 4th subset of the trie order
        order = spec.space().trie_order().tolist()
        naive = make_reasoner(name, reuse_prefix=False)
        t0, naive_answers, reuse_sample = time.perf_counter(), [], []
        for i, q in enumerate(qs):
            sample = order[::4]
            naive_answers += [r[1] for r in evaluate_question(spec, q, sample, naive)]
            by_subset = dict(zip(order, reuse_answers[i * len(order) : (i + 1) * len(order)]))
            reuse_sample += [by_subset[s] for s in sample]
        naive_per_call = (time.perf_counter() - t0) / len(naive_answers)
        agree = sum(a == b for a, b in zip(reuse_sample, naive_answers))
        print(
            f"{name:<13} {n / secs:9.2f} calls/s with prefix reuse ({n} calls), {1 / naive_per_call:.2f} naive ({len(naive_answers)} calls): "
            f"{naive_per_call * n / secs:.2f}x faster; prompt tokens evaluated {evaluated:,} vs {tokens:,} naive "
            f"({tokens / max(evaluated, 1):.2f}x fewer); answers identical with and without reuse in {agree}/{len(naive_answers)}"
        )


if __name__ == "__main__":
    main()
