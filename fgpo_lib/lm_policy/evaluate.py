"""A policy's choices under the two decodings the paper compares.

* **Candidate scoring**: ``argmax_S q(S|x)`` over every candidate (:func:`~fgpo_lib.lm_policy.scoring.candidate_scores`),
  never a format failure.
* **Free generation**: greedy decoding of at most ``max_new_tokens`` tokens, read by the one parser; an unreadable
  output is a format failure (``None``), scored as :mod:`~fgpo_lib.lm_policy.data` states.

Also the distribution ``q`` itself, for the entropy and the mass on the top subset. Shapes: ``q: (n_rows, n_subsets)``.
"""

from __future__ import annotations

import numpy as np
import torch

from .data import candidate_token_ids, prompt_text
from .prompt import parse_answer
from .scoring import candidate_scores


@torch.no_grad()
def candidate_distribution(model, tokenizer, table, rows, length_norm: bool = True) -> np.ndarray:
    """``q: (len(rows), n_subsets)``: the softmax of the candidates' scores for each row's question."""
    cands = candidate_token_ids(tokenizer, table)
    pad = tokenizer.pad_token_id or 0
    out = []
    for r in rows:
        ids = tokenizer(prompt_text(tokenizer, table.questions[r], table.space.n_tools), add_special_tokens=False, return_tensors="pt")["input_ids"][0]
        out.append(torch.softmax(candidate_scores(model, ids, cands, length_norm, pad), -1).double().numpy())
    return np.stack(out) if out else np.zeros((0, table.n_subsets))


@torch.no_grad()
def generated_choices(model, tokenizer, table, rows, max_new_tokens: int = 16) -> tuple[list, list[str]]:
    """Greedy generation for each row: ``(choices (subset index or None), texts)``."""
    choices, texts = [], []
    for r in rows:
        enc = tokenizer(prompt_text(tokenizer, table.questions[r], table.space.n_tools), add_special_tokens=False, return_tensors="pt")
        out = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id or 0)
        text = tokenizer.decode(out[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)
        texts.append(text)
        choices.append(parse_answer(text, table.space))
    return choices, texts

