"""A policy's choices under the two decodings the paper compares.

* **Candidate scoring**: ``argmax_S q(S|x)`` over every candidate (:func:`~fgpo_lib.lm_policy.candidate_scores.candidate_scores`),
  never a format failure.
* **Free generation**: greedy decoding of at most ``max_new_tokens`` tokens, read by the one parser; an unreadable
  output is a format failure (``None``), scored as :mod:`~fgpo_lib.lm_policy.data` states.

Also the distribution ``q`` itself, for the entropy and the mass on the top subset, and the log-probability of the
candidates' **shared opening tokens** (the ``<answer>`` tag) after the prompt: under Eq. 4's per-token mean, lowering
that shared log-probability raises the longer candidates' scores (:mod:`~fgpo_lib.lm_policy.candidate_scores`), so FGPO can
push it down, and free generation then loses the tag. Shapes: ``q: (n_rows, n_subsets)``.
"""

from __future__ import annotations

import numpy as np
import torch

from ..metrics import dead_prob
from .data import candidate_token_ids, candidate_token_variants, prompt_text
from .prompt import parse_answer
from .candidate_scores import candidate_scores, candidate_token_logps, reduce_scores


@torch.no_grad()
def candidate_distribution(model, tokenizer, table, rows, length_norm: bool = True, temperature: float = 1.0) -> np.ndarray:
    """``q: (len(rows), n_subsets)``: the softmax of the candidates' scores (divided by ``temperature``, the listwise
    softmax's; 1 is Eq. 4's) for each row's question."""
    cands = candidate_token_ids(tokenizer, table)
    pad = tokenizer.pad_token_id or 0
    out = []
    for r in rows:
        ids = tokenizer(prompt_text(tokenizer, table.questions[r], table.space.n_tools), add_special_tokens=False, return_tensors="pt")["input_ids"][0]
        out.append(torch.softmax(candidate_scores(model, ids, cands, length_norm, pad).float().cpu() / temperature, -1).double().numpy())
    return np.stack(out) if out else np.zeros((0, table.n_subsets))


def shared_prefix(candidate_ids: list[list[int]]) -> list[int]:
    """The longest run of leading token ids every candidate shares (the opening tag's tokens)."""
    prefix = list(candidate_ids[0])
    for c in candidate_ids[1:]:
        n = next((i for i, (a, b) in enumerate(zip(prefix, c)) if a != b), min(len(prefix), len(c)))
        prefix = prefix[:n]
    return prefix


@torch.no_grad()
def shared_prefix_logprob(model, tokenizer, table, rows) -> np.ndarray:
    """``(len(rows),)``: the log-probability of the candidates' shared opening tokens right after each row's prompt
    (0 when the candidates share no leading token)."""
    return dev_measures(model, tokenizer, table, rows)[2]


@torch.no_grad()
def generation_masses(model, tokenizer, table, rows) -> np.ndarray:
    """``(len(rows), n_subsets + 1)``: the chance that a completion sampled at temperature 1 begins with each
    candidate string, summed over the token sequences that write it (:func:`~fgpo_lib.lm_policy.data.candidate_token_variants`;
    each one's probability is the exponent of its summed token log-probabilities after the prompt), and in the last
    column the rest, every completion that begins otherwise. The parser reads the first answer tag, so a completion
    that begins with a candidate names its subset; the rest are mostly format failures (the few that put text before
    a valid tag, or write a candidate through yet other tokens, are counted there too)."""
    return dev_measures(model, tokenizer, table, rows)[1]


def sampled_candidate_mass(masses: np.ndarray) -> float:
    """The mean over rows of the chance that a completion sampled at temperature 1 begins with a candidate string:
    one minus the last column of ``masses: (n_rows, n_subsets + 1)`` (:func:`generation_masses`); NaN for no rows.
    GRPO's share of parseable samples, up to the few that write a candidate through other tokens."""
    return float(1 - masses[:, -1].mean()) if len(masses) else float("nan")


@torch.no_grad()
def dev_measures(model, tokenizer, table, rows, length_norm: bool = True, temperature: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q, masses, tag_logp)`` of :func:`candidate_distribution` (at ``temperature``), :func:`generation_masses` and
    :func:`shared_prefix_logprob` from one shared-prompt pass per row over every token sequence of every candidate
    (each candidate's own sequence comes first among its variants): a dev evaluation's three measures without
    running the prompt three times."""
    variants = candidate_token_variants(tokenizer, table)
    flat = [v for vs in variants for v in vs]
    owner = torch.as_tensor([s for s, vs in enumerate(variants) for _ in vs])
    own = torch.as_tensor([flat.index(vs[0]) for vs in variants])
    n_prefix = len(shared_prefix([vs[0] for vs in variants]))
    pad = tokenizer.pad_token_id or 0
    qs, masses, tags = [], [], []
    for r in rows:
        ids = tokenizer(prompt_text(tokenizer, table.questions[r], table.space.n_tools), add_special_tokens=False, return_tensors="pt")["input_ids"][0]
        token_logp, mask = (t.float().cpu() for t in candidate_token_logps(model, ids, flat, pad))
        qs.append(torch.softmax(reduce_scores(token_logp[own], mask[own], length_norm) / temperature, -1).double().numpy())
        p = torch.zeros(table.n_subsets, dtype=torch.float64).index_add_(0, owner, reduce_scores(token_logp, mask, False).double().exp()).numpy()
        masses.append(np.append(p, max(0.0, 1.0 - p.sum())))
        tags.append(float(token_logp[own[0], :n_prefix].sum()))
    if not qs:
        return np.zeros((0, table.n_subsets)), np.zeros((0, table.n_subsets + 1)), np.zeros(0)
    return np.stack(qs), np.stack(masses), np.asarray(tags)


@torch.no_grad()
def generated_choices(model, tokenizer, table, rows, max_new_tokens: int = 16) -> tuple[list, list[str]]:
    """Greedy generation for each row: ``(choices (subset index or None), texts)``."""
    choices, texts = [], []
    for r in rows:
        enc = tokenizer(prompt_text(tokenizer, table.questions[r], table.space.n_tools), add_special_tokens=False, return_tensors="pt").to(model.device)
        out = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tokenizer.pad_token_id or 0)
        text = tokenizer.decode(out[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)
        texts.append(text)
        choices.append(parse_answer(text, table.space))
    return choices, texts


def closed_form_dead_generation(masses: np.ndarray, values: np.ndarray, group_size: int) -> np.ndarray:
    """``(n_rows,)``: the chance that ``group_size`` sampled completions all get the same GRPO reward, ``sum_v w_v^G``
    over the reward classes ``v``. ``masses, values: (n_rows, n_outcomes)``: each outcome's probability
    (:func:`generation_masses`) and its reward
    (:func:`~fgpo_lib.lm_policy.data.grpo_reward_values`); outcomes of equal reward form one class."""
    out = []
    for m, v in zip(np.asarray(masses, np.float64), np.asarray(values, np.float64)):
        _, cls = np.unique(v, return_inverse=True)
        out.append(dead_prob(np.bincount(cls.ravel(), weights=m), group_size))
    return np.asarray(out)
