"""The selection call: a reasoner picks its own tools from their names and one-line descriptions ("Tools w/ Desc").

The LLM sees the question and the library's tools (name: description, in canonical order), with two worked examples
(the demonstration questions of the reasoner's prompt, :mod:`fgpo_lib.reasoners.prompts`, and the tools their
answers used),
and replies with tool names separated by commas, or ``none``. :func:`parse_selection` turns the reply into a subset:
every library tool named in it (whole word, case-insensitive, ``-`` or space accepted for ``_``), in canonical
order; ``()`` for an explicit "none"; ``None`` when the reply names no tool and does not say none (recorded as
unparseable, never guessed).
"""

from __future__ import annotations

import hashlib
import re

from .prompts import PROMPTS, check_prompt, demonstrations

SELECTION_VERSION = "select-v1"
#: the genomics prompt's selection instructions (every prompt's: :data:`fgpo_lib.reasoners.prompts.PROMPTS`)
SELECTION_SYSTEM = PROMPTS["genomics"].selection_system


def render_selection_user(question: str, tools: list[tuple[str, str]]) -> str:
    listing = "\n".join(f"- {name}: {desc}" for name, desc in tools)
    return f"Question: {question}\nTools:\n{listing}\nTools to call:"


def selection_demos(tools: list[tuple[str, str]], prompt: str = "genomics") -> list[tuple[str, str]]:
    """``(user text, reply)`` of the prompt's two worked examples over ``tools``; a demo's reply names the tools its
    answer used that are offered, or ``none``."""
    names = {n for n, _ in tools}
    out = []
    for (question, _, _), chosen in zip(demonstrations(prompt), check_prompt(prompt).demo_tools):
        reply = ", ".join(t for t in chosen if t in names) or "none"
        out.append((render_selection_user(question, tools), reply))
    return out


def selection_chatml(question: str, tools: list[tuple[str, str]], prompt: str = "genomics") -> str:
    parts = [f"<|im_start|>system\n{check_prompt(prompt).selection_system}<|im_end|>\n"]
    for user, reply in selection_demos(tools, prompt):
        parts.append(f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n{reply}<|im_end|>\n")
    parts.append(f"<|im_start|>user\n{render_selection_user(question, tools)}<|im_end|>\n<|im_start|>assistant\n")
    return "".join(parts)


def selection_raw(question: str, tools: list[tuple[str, str]], prompt: str = "genomics") -> str:
    demos = "\n\n".join(f"{user} {reply}" for user, reply in selection_demos(tools, prompt))
    return f"{check_prompt(prompt).selection_system}\n\n{demos}\n\n{render_selection_user(question, tools)}"


def selection_sha256(prompt: str = "genomics") -> str:
    """The selection prompt's hash (in a selection cell's cache label and a table's extras)."""
    probe = selection_chatml("{question}", [("{name}", "{description}")], prompt) + selection_raw("{question}", [("{name}", "{description}")], prompt)
    return hashlib.sha256(f"{SELECTION_VERSION}\x00{probe}".encode()).hexdigest()


def parse_selection(text: str, library: tuple[str, ...]) -> tuple[str, ...] | None:
    """The tools of ``library`` named in ``text``, in library order; ``()`` for "none"; ``None`` if unparseable."""
    low = (text or "").lower()
    chosen = tuple(t for t in library if re.search(rf"(?<![\w-]){re.sub('_', '[_ -]', re.escape(t))}(?![\w-])", low))
    if chosen:
        return chosen
    if re.match(r"\W*(none|no tools?|no tool calls?|nothing)\b", low):
        return ()
    return None
