"""What every language-model arm reads from a reward table: a fixed split, the prompts, the candidates, GRPO's
reward values (whose lookup, :class:`~fgpo_lib.lm_policy.grpo_arm.TableReward`, is in GRPO's file), and the score of
a choice.

**The split** (:func:`lm_splits`): one fixed, task-stratified train/dev/test split per table, not cross-fitting (a
language model cannot be trained 5 x 3 times on this CPU budget). Test is the table's own test split; dev is a
seeded, task-stratified share of its training questions; train may be cut to a task-stratified sample
(``max_train``) to fit the budget.

**Format failures** (an output :func:`~fgpo_lib.lm_policy.prompt.parse_answer` cannot read): the agent called no
tool, so the reasoner answered alone. Evaluation scores it as the question's no-tool cell; GRPO's reward gives it
``r_fmt = 0`` and ``r_diff = 0`` (nothing changed from the no-tool answer), so a reward of 0.

Array convention: rows index the table; ``rewards: (n_questions, n_subsets)``; candidates in canonical subset order.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from .errors import LMPolicyError  # noqa: F401  (part of this module's interface)

from ..rewards import RewardSpec
from ..table import RewardTable, stratified_split
from .prompt import build_prompt, candidate_pieces, candidates, parse_answer


def lm_splits(table: RewardTable, dev_fraction: float = 0.2, max_train: int = 0, seed: int = 0) -> dict[str, np.ndarray]:
    """``{"train", "dev", "test"}`` row indices (module doc)."""
    def split(rows: np.ndarray, fraction: float, seed: int) -> np.ndarray:  # stratified_split over these rows
        tasks = None if table.tasks is None else [table.tasks[r] for r in rows]
        return stratified_split([table.question_ids[r] for r in rows], tasks, test_fraction=fraction, seed=seed)

    train, test = table.split_index("train"), table.split_index("test")
    inner = split(train, dev_fraction, seed)
    dev, train = train[inner == "test"], train[inner == "train"]
    if max_train and len(train) > max_train:
        train = train[split(train, 1 - max_train / len(train), seed + 1) == "train"]
    for name, rows in (("train", train), ("dev", dev), ("test", test)):
        if len(rows) == 0:
            raise LMPolicyError(f"the split has no {name} questions ({table.n_questions} questions in the table); a language-model arm needs train, dev and test questions")
    return {"train": train, "dev": dev, "test": test}


def check_table(table: RewardTable) -> None:
    """A named error for a table the arms cannot use: every arm's prompt offers 'no tool', GRPO's reward compares
    with it, and a format failure is scored as it."""
    if not table.space.has_empty:
        raise LMPolicyError("the table has no empty subset (no-tool cell): the policy's answer <answer></answer> and GRPO's differential reward need it")


def prompt_text(tokenizer, question: str, n_tools: int) -> str:
    """The one prompt of every arm, inside the tokenizer's chat template when it has one (a generation prompt added)."""
    text = build_prompt(question, n_tools)
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template([{"role": "user", "content": text}], tokenize=False, add_generation_prompt=True)
    return text + "\n"


def candidate_token_ids(tokenizer, table: RewardTable) -> list[list[int]]:
    """Token ids of every candidate answer (no special tokens), canonical order."""
    return [tokenizer(c, add_special_tokens=False)["input_ids"] for c in candidates(table.space)]


def candidate_token_variants(tokenizer, table: RewardTable) -> list[list[list[int]]]:
    """For every candidate (canonical order), the distinct token sequences that write its string: the tokenizer's own
    and the one that tokenizes the tags and the indices apart. They differ where a merge spans a boundary: SmolLM2
    writes ``<answer></answer>`` as ``< answer ></ answer >`` but can generate it as ``< answer > </ answer >``."""
    out = []
    for s in range(table.n_subsets):
        pieces = candidate_pieces(table.space.tools_of(s))
        whole = tokenizer("".join(pieces), add_special_tokens=False)["input_ids"]
        apart = [t for piece in pieces if piece for t in tokenizer(piece, add_special_tokens=False)["input_ids"]]
        out.append([whole] if apart == whole else [whole, apart])
    return out


def grpo_reward_values(table: RewardTable) -> np.ndarray:
    """``(n_questions, n_subsets + 1)``: GRPO's reward of a completion naming each subset, ``0.95 r_diff + 0.05``
    (:class:`TableReward`), and in the last column that of a format failure, 0."""
    values = RewardSpec("differential").apply(table.rewards, table.space)
    return np.concatenate([values, np.zeros((table.n_questions, 1), values.dtype)], axis=1)


def empirical_entropy(outcomes: list) -> float:
    """Entropy (nats) of the empirical distribution of ``outcomes``, compared by their text (``None``, a format
    failure, is an outcome of its own)."""
    _, counts = np.unique([str(o) for o in outcomes], return_counts=True)
    p = counts / counts.sum()
    return float(-(p * np.log(p)).sum())


def best_candidates(table: RewardTable, rows: np.ndarray) -> list[int]:
    """Each row's best subset (ties: the lowest canonical index, the smallest), the SFT arm's target."""
    return [int(np.argmax(table.rewards[r])) for r in rows]


def score_choices(table: RewardTable, rows: np.ndarray, choices: list) -> dict:
    """Raw score and tools of each row's choice; a ``None`` choice (format failure) is scored as the no-tool cell."""
    empty = table.space.index_of([])
    cols = [empty if c is None else int(c) for c in choices]
    scores = table.rewards[np.asarray(rows), cols].astype(float)
    return {"scores": scores.tolist(), "sizes": table.space.sizes[cols].tolist(), "choices": [None if c is None else int(c) for c in choices],
            "format_failures": int(sum(c is None for c in choices)), **routing_measures(cols)}


def routing_measures(choices) -> dict:
    """Whether a policy routes: ``{"distinct_subsets", "top_subset_share"}`` of its chosen subsets over a set of
    questions (the number of different subsets it picks, and the share of questions on its most-picked one). A
    policy that picks one subset for every question has 1 and 1.0."""
    counts = Counter(int(c) for c in choices)
    return {"distinct_subsets": len(counts), "top_subset_share": float(max(counts.values()) / len(choices)) if counts else 0.0}
