"""``fgpo score``: free-text predictions scored on a built-in benchmark, per task (``--rules official``: GeneGPT's
own evaluate.py rule where it has one)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    from ..genomics.benchmarks import BENCHMARKS

    p.add_argument("--benchmark", required=True, choices=list(BENCHMARKS), help="the built-in benchmark")
    p.add_argument("--predictions", required=True, help='JSONL, one {"question": text (or "qid": id), "prediction": text} per line, each question once; '
                   "fgpo questions --benchmark NAME prints every question's exact text and id")
    p.add_argument("--rules", choices=("lenient", "official"), default="lenient", help="lenient: our answer extractor; official: GeneGPT's evaluate.py (case-sensitive, exact)")


def read_predictions(path: Path, questions, benchmark: str = "the benchmark") -> dict[str, str]:
    """``fgpo score``'s input: JSONL, one ``{"question" (or "qid"): text, "prediction": text}`` object per line, a
    question at most once. Returns ``{question text or qid: prediction}``; raises ``ValueError`` naming the file and
    line of the first bad record (and both lines of a repeated question)."""
    from ..jsonl import read_json_objects

    known = {q.text for q in questions} | {q.qid for q in questions}
    predictions, line_of = {}, {}
    want = 'a JSON object {"question": text (or "qid": id), "prediction": text}'
    for n, rec in read_json_objects(path, "--predictions"):
        field = "qid" if rec.get("qid") is not None else "question"
        key, pred = rec.get(field), rec.get("prediction")
        if not isinstance(key, str):
            raise ValueError(f"{path}: line {n}: {field!r} must be a text, got {type(key).__name__ if key is not None else 'nothing'}; expected {want}")
        if not isinstance(pred, str):
            raise ValueError(f"{path}: line {n}: 'prediction' must be a text, got {'null' if pred is None else type(pred).__name__}; "
                             "leave a question out instead (it scores 0, counted as missing)")
        if key not in known:
            raise ValueError(f"{path}: line {n}: question {key[:80]!r} is not in benchmark {benchmark!r}; `fgpo questions --benchmark {benchmark}` prints the exact texts and ids")
        if key in line_of:
            raise ValueError(f"{path}: line {n}: question {key[:80]!r} was already given on line {line_of[key]}; give each question once")
        predictions[key], line_of[key] = pred, n
    if not predictions:
        raise ValueError(f"{path}: no predictions (the file has no JSON lines); expected, one per line, {want}")
    return predictions


def run(args: argparse.Namespace) -> int:
    from ..genomics.benchmarks import load_benchmark
    from ..genomics.scoring import score_predictions

    questions = load_benchmark(args.benchmark)
    predictions = read_predictions(Path(args.predictions), questions, args.benchmark)
    table = score_predictions(questions, predictions, args.rules)
    print(f"{args.benchmark}, {args.rules} rules")
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    return 0
