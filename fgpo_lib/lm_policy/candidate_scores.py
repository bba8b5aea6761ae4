"""Candidate scoring: the log-probability of every candidate answer after the prompt, in one batched pass that
computes the prompt once (the paper's Eq. 4).

How it departs from the textbook "score each candidate as its own sequence": the prompt's forward pass runs once,
its key/value cache is repeated for the candidates (``DynamicCache.batch_repeat_interleave``), and every candidate is
scored from that cache in one right-padded batch. Both passes stay in the autograd graph, so the gradient of any loss
of the scores reaches the prompt's computation too: it is the exact gradient of the naive computation
(:func:`naive_candidate_scores`, kept as the reference the tests and ``benchmarks/bench_lm_policy.py`` compare with).
For 16 candidates of 5-13 tokens after an 88-token prompt that is about 88 + 16 x 9 token positions instead of
16 x 97.

Every tensor is made on the model's device (CPU or GPU). Array convention: ``prompt_ids: (P,)`` token ids; ``candidate_ids``: one list of token ids per candidate (no BOS);
the result ``(n_candidates,)``: per-token mean log-probability (``length_norm=True``, Eq. 4) or the sum.
"""

from __future__ import annotations

import torch


def reduce_scores(token_logp: torch.Tensor, mask: torch.Tensor, length_norm: bool) -> torch.Tensor:
    """``(C,)``: the per-token mean (``length_norm``, Eq. 4) or the sum of each candidate's token log-probabilities."""
    total = (token_logp * mask).sum(1)
    return total / mask.sum(1) if length_norm else total


def _pad(candidate_ids: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``(ids (C, L) long, mask (C, L) float)``, right-padded with ``pad_id``."""
    if not candidate_ids or min(len(c) for c in candidate_ids) == 0:
        raise ValueError("every candidate needs at least one token")
    width = max(len(c) for c in candidate_ids)
    ids = torch.full((len(candidate_ids), width), pad_id, dtype=torch.long)
    mask = torch.zeros(len(candidate_ids), width)
    for i, c in enumerate(candidate_ids):
        ids[i, : len(c)] = torch.as_tensor(c, dtype=torch.long)
        mask[i, : len(c)] = 1.0
    return ids, mask


def candidate_scores(model, prompt_ids: torch.Tensor, candidate_ids: list[list[int]], length_norm: bool = True, pad_id: int = 0) -> torch.Tensor:
    """``(n_candidates,)`` scores of the candidates after the prompt (module doc), differentiable."""
    return reduce_scores(*candidate_token_logps(model, prompt_ids, candidate_ids, pad_id), length_norm)


def candidate_token_logps(model, prompt_ids: torch.Tensor, candidate_ids: list[list[int]], pad_id: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """``(token_logp (C, L), mask (C, L))``: each candidate token's log-probability after the prompt and the
    candidate's earlier tokens, from the shared-prompt pass (module doc); reduce with :func:`reduce_scores`."""
    device = model.device
    prompt_ids = torch.as_tensor(prompt_ids, dtype=torch.long).reshape(1, -1).to(device)
    n_prompt = prompt_ids.shape[1]
    out = model(input_ids=prompt_ids, use_cache=True, logits_to_keep=1)  # only the last position's logits are read
    first = torch.log_softmax(out.logits[0, -1].float(), dim=-1)  # (V,): the first candidate token's distribution
    ids, mask = (t.to(device) for t in _pad(candidate_ids, pad_id))
    n_cand, width = ids.shape
    cache = out.cache
    cache.batch_repeat_interleave(n_cand)
    attention = torch.cat([torch.ones(n_cand, n_prompt, device=device), mask], dim=1)
    positions = (n_prompt + torch.arange(width, device=device)).expand(n_cand, width)
    rest = model(input_ids=ids, cache=cache, attention_mask=attention, position_ids=positions, use_cache=False)
    logp = torch.log_softmax(rest.logits.float(), dim=-1)  # (C, L, V): position t predicts token t + 1
    token_logp = torch.cat([first[ids[:, :1]], logp[:, :-1].gather(2, ids[:, 1:, None])[..., 0]], dim=1)  # (C, L)
    return token_logp, mask


def naive_candidate_scores(model, prompt_ids: torch.Tensor, candidate_ids: list[list[int]], length_norm: bool = True, pad_id: int = 0) -> torch.Tensor:
    """The reference: each candidate as its own full sequence (prompt + candidate), scored one by one."""
    prompt_ids = torch.as_tensor(prompt_ids, dtype=torch.long).reshape(-1)
    n_prompt = prompt_ids.numel()
    scores = []
    for c in candidate_ids:
        seq = torch.cat([prompt_ids, torch.as_tensor(c, dtype=torch.long)])[None]
        logp = torch.log_softmax(model(input_ids=seq).logits[0].float(), dim=-1)  # (P + len(c), V)
        token_logp = logp[n_prompt - 1 : -1].gather(1, seq[0, n_prompt:, None])[:, 0]
        scores.append(token_logp.mean() if length_norm else token_logp.sum())
    return torch.stack(scores)


def format_anchor(sequence_logps: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
    """``sum_S q(S|x) log p(y_S | x)`` with ``q = softmax(scores)`` held fixed: minus the cross-entropy from FGPO's
    candidate distribution to the generator. ``sequence_logps: (n_candidates,)``, each candidate's summed token
    log-probability (``length_norm=False``); ``scores: (n_candidates,)``, the scores ``q`` is the softmax of.

    FGPO's ``q`` is normalised over the candidates, so its objective never asks the policy to *write* a candidate;
    the FGPO arm's ``format_weight`` adds this term so that free generation follows ``q`` (a departure from the
    paper). Its gradient on the opening tokens that every candidate shares is 1, whatever ``q`` is. Why not
    ``log sum_S p(y_S|x)``, the chance of writing any candidate: its gradient on a candidate is that candidate's share
    of the generator's mass, so it raises whichever candidate the generator already writes most (the short empty
    answer, early on), and under Eq. 4 that raises the candidate's ``q`` too: it pulls the policy to No-Tool."""
    return (torch.softmax(scores.detach(), dim=-1) * sequence_logps).sum()


def expected_reward_loss(scores: torch.Tensor, rewards: torch.Tensor, entropy_coef: float) -> torch.Tensor:
    """FGPO's loss on one question: ``-(sum_S q(S) r(S) + entropy_coef H(q))``, ``q = softmax(scores)`` over every
    candidate (Eq. 2 with Eq. 5's entropy bonus, the paper's beta). ``scores, rewards: (n_candidates,)``. The linear
    head's loss is :func:`fgpo_lib.algos.fgpo.fgpo_loss` with the same ``entropy_coef``; on the same logits the two
    are one function: this calls it (tests/test_lm_policy.py checks both against a hand computation)."""
    from ..algos.fgpo import fgpo_loss

    return fgpo_loss(scores, rewards, entropy_coef)
