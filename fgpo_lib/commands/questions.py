"""``fgpo questions``: a benchmark's questions as JSONL (qid, task, split, exact text): the keys ``fgpo score`` takes,
and a ``--questions`` file ``fgpo select`` reads."""

from __future__ import annotations

import argparse
import json


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--benchmark", required=True, help="a built-in benchmark (geneturing, genehop, geneseq, generegion) or yours as module:attribute")
    p.add_argument("--split", choices=("all", "train", "test"), default="all", help="which questions (default all)")


def run(args: argparse.Namespace) -> int:
    from ..agent import benchmark_questions

    for q in benchmark_questions(args.benchmark):
        if args.split in ("all", q.split):
            print(json.dumps({"qid": q.qid, "task": q.task, "split": q.split, "question": q.text}))
    return 0
