"""The policy's prompt, its candidate answers, and the parser of a generated answer: one of each, for every arm.

The tools appear as **anonymous slots** (``0: tool type 1 (A)``): no name and no description, so whatever routing a
trained policy learns comes from the reward, not from the text (the paper's policy prompt; its "Tools w/ Desc"
baseline is the one that reads names and descriptions). The answer is the chosen slots' indices, ascending and
comma-separated, inside ``<answer></answer>``; an empty ``<answer></answer>`` calls no tool. Candidate ``s`` is subset
``s`` of the library's :class:`~fgpo_lib.subsets.SubsetSpace`, in its canonical order.

An output that :func:`parse_answer` cannot read (no answer tags, an index out of range, a repeated index, a subset
outside the space) is a **format failure**: ``None``. The chapter states how each arm scores it.
"""

from __future__ import annotations

import re

from ..subsets import SubsetSpace

SYSTEM = (
    "You choose the tools an agent should run before a frozen expert answers a question about a DNA sequence. "
    "There are {n} tools, numbered 0 to {last}."
)
INSTRUCTION = (
    "Reply with the numbers of the tools that help answer it, ascending and separated by commas, inside "
    "<answer></answer>, and nothing else. Reply <answer></answer> if no tool is needed."
)
_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S)


def slots(n: int) -> str:
    """The anonymous tool list: ``0: tool type 1 (A)`` per line."""
    return "\n".join(f"{i}: tool type {i + 1} ({chr(ord('A') + i)})" for i in range(n))


def build_prompt(question: str, n_tools: int) -> str:
    """The prompt text of one question over a library of ``n_tools`` tools (a chat template, if any, wraps it)."""
    return f"{SYSTEM.format(n=n_tools, last=n_tools - 1)}\nTools:\n{slots(n_tools)}\nQuestion: {question}\n{INSTRUCTION}"


def candidate_pieces(indices) -> tuple[str, str, str]:
    """The answer string of a subset in its three pieces: opening tag, indices, closing tag (``"<answer>", "0,2",
    "</answer>"``; the middle is empty for no tool)."""
    return "<answer>", ",".join(str(i) for i in sorted(indices)), "</answer>"


def candidate(indices) -> str:
    """The answer string of a subset given by tool indices: ``<answer>0,2</answer>``; ``<answer></answer>`` for none."""
    return "".join(candidate_pieces(indices))


def candidates(space: SubsetSpace) -> list[str]:
    """The answer string of every subset of ``space``, in its canonical order: ``(n_subsets,)``."""
    return [candidate(space.tools_of(s)) for s in range(space.n_subsets)]


def parse_answer(text: str, space: SubsetSpace) -> int | None:
    """The canonical subset index a generated answer names, or ``None`` for a format failure (module doc). The first
    ``<answer>...</answer>`` counts; spaces around the indices are ignored."""
    m = _ANSWER.search(text or "")
    if m is None:
        return None
    body = m.group(1).strip()
    if not body:
        return space.index_of([]) if space.has_empty else None
    parts = [p.strip() for p in body.split(",")]
    if not all(re.fullmatch(r"\d+", p) for p in parts):
        return None
    idx = [int(p) for p in parts]
    if len(set(idx)) != len(idx) or any(i >= space.n_tools for i in idx):
        return None
    try:
        return space.index_of(idx)
    except KeyError:  # a subset the space leaves out (too large, or outside a candidate set)
        return None
