"""Illustrative and synthetic reward tables: clearly labelled, never mistaken for measured data.

* :func:`protein_structure_table`: the book's worked example, after the paper's illustration. An agent with 4 tools
  over a protein-structure database answers questions with 15 non-empty tool subsets. One tool is safe but
  mediocre; one pair of tools is better than anything else, though each of its tools alone is poor.
* :func:`synthetic_table`: a genomics-shaped table of any size (tasks, a relevant tool or pair per task,
  distractors that mislead), for speed benchmarks before real tables exist.

Both draw binary rewards (a frozen reasoner is right or wrong) from stated per-subset success probabilities with a
seeded generator, and record that in ``provenance["kind"] = "illustrative"`` / ``"synthetic"``.
"""

from __future__ import annotations

import numpy as np

from .subsets import SubsetSpace
from .table import RewardTable, stratified_split

PROTEIN_TOOLS = ("keyword_search", "sequence_search", "structure_fetch", "literature_search")

#: Success probability of the frozen reasoner with each subset (names sorted in canonical tool order).
PROTEIN_SUCCESS = {
    ("keyword_search",): 0.60,
    ("sequence_search",): 0.05,
    ("structure_fetch",): 0.05,
    ("literature_search",): 0.10,
    ("keyword_search", "sequence_search"): 0.60,
    ("keyword_search", "structure_fetch"): 0.60,
    ("keyword_search", "literature_search"): 0.55,
    ("sequence_search", "structure_fetch"): 0.90,
    ("sequence_search", "literature_search"): 0.05,
    ("structure_fetch", "literature_search"): 0.05,
    ("keyword_search", "sequence_search", "structure_fetch"): 0.60,
    ("keyword_search", "sequence_search", "literature_search"): 0.55,
    ("keyword_search", "structure_fetch", "literature_search"): 0.55,
    ("sequence_search", "structure_fetch", "literature_search"): 0.40,
    ("keyword_search", "sequence_search", "structure_fetch", "literature_search"): 0.55,
}

_PROTEINS = ("hemoglobin", "myoglobin", "lysozyme", "insulin", "ubiquitin", "calmodulin", "rhodopsin", "actin", "tubulin", "ferritin", "trypsin", "kinesin")
_TEMPLATES = (
    "Which PDB entry gives the highest-resolution structure of human {p} bound to its ligand?",
    "What fold class does the closest solved homolog of {p} variant {i} belong to?",
    "Which residues line the active site in the solved structure of {p} isoform {i}?",
)


def protein_structure_table(n_questions: int = 200, seed: int = 0, test_fraction: float = 0.3) -> RewardTable:
    """The worked example's illustrative table: ``(n_questions, 15)`` binary rewards over 4 tools.

    Each question draws one difficulty ``u_q ~ U(0, 1)`` from ``default_rng(seed)``, and ``R(q, S) = 1`` iff
    ``u_q < PROTEIN_SUCCESS[S]``: marginally ``R(q, S) ~ Bernoulli(PROTEIN_SUCCESS[S])``, and a question that an
    unreliable subset answers is also answered by every more reliable one. About 10% of questions are answered by
    no subset (constant reward) and 30% only by the pair ``sequence_search+structure_fetch``. Whenever
    ``keyword_search`` is called, the reasoner follows its output (success 0.55-0.60 whatever else is called).
    """
    space = SubsetSpace(4, min_size=1, tool_names=PROTEIN_TOOLS)
    p = np.array([PROTEIN_SUCCESS[space.names_of(s)] for s in range(space.n_subsets)])
    rng = np.random.default_rng(seed)
    difficulty = rng.random((n_questions, 1))  # one draw per question, shared by its subsets
    rewards = (difficulty < p).astype(np.float32)
    questions = [_TEMPLATES[i % len(_TEMPLATES)].format(p=_PROTEINS[(i // len(_TEMPLATES)) % len(_PROTEINS)], i=i) for i in range(n_questions)]
    tasks = [f"template{i % len(_TEMPLATES)}" for i in range(n_questions)]
    return RewardTable(
        rewards=rewards,
        question_ids=[f"protein-{i:04d}" for i in range(n_questions)],
        space=space,
        questions=questions,
        tasks=tasks,
        split=stratified_split([f"protein-{i:04d}" for i in range(n_questions)], tasks, test_fraction, seed),
        provenance={"kind": "illustrative", "generator": "fgpo_lib.examples.protein_structure_table", "seed": seed, "success_probabilities": {"+".join(k): v for k, v in PROTEIN_SUCCESS.items()}},
    )


def synthetic_table(n_questions: int = 600, n_tools: int = 8, max_size: int = 4, n_tasks: int = 9, seed: int = 0) -> RewardTable:
    """A synthetic genomics-shaped table ``(n_questions, n_subsets)`` with binary rewards.

    Each task has a relevant tool set (one tool, or a pair for every third task). A subset that holds the relevant
    set succeeds with probability ``p = 0.9 * 0.8 ** n_distractors`` (extra tools mislead the reasoner); a subset
    that holds part of it with 0.15; otherwise 0.02. As in :func:`protein_structure_table`, each question draws one
    difficulty ``u_q ~ U(0, 1)`` from ``default_rng(seed)`` and ``R(q, S) = 1`` iff ``u_q < p(q, S)``, so the
    relevant set alone is a best subset of every question and a policy that recognises the task can match
    oracle-best.
    """
    space = SubsetSpace(n_tools, max_size=max_size)
    rng = np.random.default_rng(seed)
    relevant = []
    for t in range(n_tasks):
        k = 2 if t % 3 == 2 else 1
        relevant.append(np.zeros(n_tools, bool))
        relevant[-1][rng.choice(n_tools, size=k, replace=False)] = True
    tasks = np.arange(n_questions) % n_tasks
    rel = np.stack(relevant)[tasks]  # (n_q, n_tools)
    hits = space.masks[None, :, :] & rel[:, None, :]  # (n_q, n_s, n_tools)
    n_hit = hits.sum(axis=2)
    n_rel = rel.sum(axis=1, keepdims=True)
    distractors = space.sizes[None, :] - n_hit
    p = np.where(n_hit == n_rel, 0.9 * 0.8**distractors, np.where(n_hit > 0, 0.15, 0.02))
    rewards = (rng.random((n_questions, 1)) < p).astype(np.float32)
    genes = ("BRCA1", "TP53", "EGFR", "PSMB10", "CFTR", "APOE", "MYC", "KRAS", "HBB", "LMNA")
    questions = [f"task {t}: question {i} about gene {genes[(i * 7) % len(genes)]}" for i, t in enumerate(tasks)]
    return RewardTable(
        rewards=rewards,
        question_ids=[f"q{i:05d}" for i in range(n_questions)],
        space=space,
        questions=questions,
        tasks=[f"task{t}" for t in tasks],
        provenance={"kind": "synthetic", "generator": "fgpo_lib.examples.synthetic_table", "seed": seed, "n_tasks": n_tasks},
    )
