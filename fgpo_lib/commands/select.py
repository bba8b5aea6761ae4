"""``fgpo select``: the tools a saved selector picks for new questions, and why, one JSON line per question.

    fgpo select DIR --question "Is it raining in Oslo?"
    fgpo select DIR --questions Q.jsonl --tools weather,maps,clock --out choices.jsonl
    fgpo select DIR --questions Q.jsonl --max-tools 1 --threshold 0.6 --fallback weather,maps

Each line is ``{"question", "tools", "probability", "fell_back", "alternatives", "tool_probabilities",
"expected_tools"}`` (``"qid"`` too where the input had one, ``"predicted_reward"`` for a reference selector):
:func:`fgpo_lib.selector_rule.explain`. ``probability`` is the policy's probability of the chosen subset, how strongly
it prefers that subset, not the chance that the answer is right.
"""

from __future__ import annotations

import argparse
import json
import sys

from ..validation import _ranged, nonneg_int

probability = _ranged(float, 0, 1, what="a probability from 0 to 1")


def tool_list(text: str) -> list[str]:
    """argparse type: comma-separated tool names; ``none`` is the empty subset."""
    if text.strip().lower() == "none":
        return []
    names = [t.strip() for t in text.split(",")]
    if not text.strip() or any(not n for n in names):
        raise argparse.ArgumentTypeError(f"expected comma-separated tool names (or none), got {text!r}")
    return names


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("selector", help="a selector folder (fgpo train / lm-train --save-selector DIR)")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--question", action="append", metavar="TEXT", help="a question text (repeatable)")
    src.add_argument("--questions", metavar="Q.jsonl", help='JSONL, one {"question": text} per line (a "qid" is passed through); fgpo questions writes such a file')
    p.add_argument("--tools", type=tool_list, metavar="A,B,C", help="your agent's tool names: a selector trained on other tools is refused")
    p.add_argument("--max-tools", type=nonneg_int, metavar="B", help="choose only among subsets of at most B tools")
    p.add_argument("--threshold", type=probability, default=0.0, metavar="P", help="below this policy probability of its choice, take --fallback "
                   "(fgpo calibrate picks P for a target average of tools or accuracy; default 0: never)")
    p.add_argument("--fallback", type=tool_list, metavar="A,B", help="the subset an unsure selector calls (default: the largest subset within --max-tools, All-Tools without it)")
    p.add_argument("--top", type=nonneg_int, default=3, help="runner-up subsets listed per question (default 3)")
    p.add_argument("--out", help="write the JSON lines to this file instead of standard output")


def read_questions(path: str) -> list[dict]:
    """``[{"question", ["qid"]}]`` from a JSONL file (:func:`fgpo_lib.jsonl.read_json_objects`)."""
    from ..jsonl import read_json_objects

    out = []
    for n, rec in read_json_objects(path, "--questions"):
        if not isinstance(rec.get("question"), str):
            raise ValueError(f"--questions {path}: line {n}: expected a JSON object with a \"question\" text")
        out.append({k: rec[k] for k in ("qid", "question") if k in rec})
    if not out:
        raise ValueError(f"--questions {path}: no questions in the file")
    return out


def run(args: argparse.Namespace) -> int:
    from ..outputs import write_text
    from ..selector import Selector

    if args.out is None and sys.stdout is None:
        raise ValueError("standard output is closed, so the choices would be lost; give --out FILE")
    if args.fallback is not None and args.threshold == 0:
        raise ValueError("--fallback is taken only below --threshold; give --threshold P too")
    items = read_questions(args.questions) if args.questions else [{"question": q} for q in args.question]
    selector = Selector.load(args.selector, tools=args.tools)
    try:
        rows = selector.explain([it["question"] for it in items], args.max_tools, args.threshold, args.fallback, args.top)
    except ValueError as exc:  # a budget no subset fits, a fallback outside the space
        raise ValueError(f"{exc}") from None
    lines = "".join(json.dumps({**it, **row}) + "\n" for it, row in zip(items, rows))
    if args.out is not None:
        write_text(args.out, lines, "select", "jsonl")
        print(f"wrote {len(rows)} choices to {args.out}", file=sys.stderr)
    else:
        sys.stdout.write(lines)
        sys.stdout.flush()
    return 0
