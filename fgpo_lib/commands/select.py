"""``fgpo select``: the tools a saved selector picks for new questions, one JSON line per question.

    fgpo select DIR --question "Is it raining in Oslo?"
    fgpo select DIR --questions Q.jsonl          # one {"question": text} (or {"qid", "question"}) per line

Each output line is ``{"question", "tools": [names], "probability"}`` (``"qid"`` too where the input had one):
the argmax subset of the selector's policy and that subset's probability.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("selector", help="a selector folder (fgpo train / lm-train --save-selector DIR)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--question", action="append", metavar="TEXT", help="a question text (repeatable)")
    src.add_argument("--questions", metavar="Q.jsonl", help='JSONL, one {"question": text} per line (a "qid" is passed through); fgpo questions writes such a file')


def read_questions(path: Path) -> list[dict]:
    """``[{"question", ["qid"]}]`` from a JSONL file; a bad line is a ``ValueError`` naming the file and line."""
    if not path.is_file():
        raise ValueError(f"--questions {path}: no such file")
    try:
        lines = path.read_text().splitlines()
    except UnicodeDecodeError as exc:
        raise ValueError(f"--questions {path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    out = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"--questions {path}: line {n}: not valid JSON ({exc}); expected {{\"question\": text}}") from None
        if not isinstance(rec, dict) or not isinstance(rec.get("question"), str):
            raise ValueError(f"--questions {path}: line {n}: expected a JSON object with a \"question\" text")
        out.append({k: rec[k] for k in ("qid", "question") if k in rec})
    if not out:
        raise ValueError(f"--questions {path}: no questions in the file")
    return out


def run(args: argparse.Namespace) -> int:
    from ..selector import Selector

    items = read_questions(Path(args.questions)) if args.questions else [{"question": q} for q in args.question]
    selector = Selector.load(args.selector)
    probs = selector.probabilities([it["question"] for it in items])
    for it, p in zip(items, probs):
        s = int(p.argmax())
        print(json.dumps({**it, "tools": list(selector.space.names_of(s)), "probability": round(float(p[s]), 6)}))
    return 0
