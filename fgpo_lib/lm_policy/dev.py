"""Dev selection of a LoRA policy: the measures of every dev point, the best checkpoint kept in memory, and the test
evaluation of the selected one (the run record's ``test``).

A checkpoint is the adapter's trainable tensors (a few MB), copied when the dev score beats every earlier one (ties:
the earlier, as the linear protocol chooses). The untrained step 0 is no candidate, so a tie never reports the initial
policy as a trained one. At the end the best checkpoint is restored and evaluated on test under both decodings.

Dev sets are small (42 to 71 questions), so later checkpoints often tie the best dev score. The default rule
(``tie_break="first"``) keeps the first of them. ``tie_break="expected"`` breaks a tie by the exact expected reward
of ``q`` on the dev questions, ``mean_x sum_S q(S|x) r(x,S)`` (``dev_expected_reward``, recorded at every point
under either rule): FGPO's own objective, which varies continuously where the argmax score moves in steps of one
question. It is a choice made after the first main runs (the diagnostic below showed later ties routing on test),
so the chapter reports it beside the main runs, never in place of the rule fixed before them.

Two diagnostics beside the selection, not part of it. The last trained checkpoint that ties the best dev score and
was not selected is kept too, and :meth:`DevSelector.last_tie_test` scores its test choices (candidate scoring), so a
record says whether a later tie would have routed differently on test. Under ``tie_break="expected"`` the first
checkpoint with the best dev score (the ``"first"`` rule's selection) is kept as well, and
:meth:`DevSelector.first_rule_test` scores it, so one run compares the two rules on the same training.
"""

from __future__ import annotations

import time

import numpy as np

from ..metrics import entropy, zero_variance_prob
from .data import empirical_entropy, grpo_reward_values, score_choices
from .evaluate import candidate_distribution, closed_form_dead_generation, dev_measures, generated_choices, sampled_candidate_mass
from .resume import restore, trainable_state


#: what a dev point measures: ``full`` (both decodings and every diagnostic below) or ``scoring`` (candidate scoring
#: alone: the score, ``q``'s entropy and top mass and the routing measures; no generation, about a tenth of the cost)
DEV_MEASURES = ("full", "scoring")
#: how a tie on the best dev score is broken (module doc): the earlier checkpoint, or the higher exact expected dev reward
TIE_BREAKS = ("first", "expected")


def selection_key(point: dict, tie_break: str) -> tuple[float, ...]:
    """What a dev point is ranked by (higher is better): its dev score, then, with ``tie_break="expected"``, its exact
    expected dev reward. A later point replaces the selected one only when its key is strictly greater, so under
    ``"first"`` a tie keeps the earlier checkpoint."""
    return (point["dev_score"], point["dev_expected_reward"]) if tie_break == "expected" else (point["dev_score"],)


class DevSelector:
    """Keeps the best dev checkpoint; ``curve`` holds one point per evaluation.

    Every point measures, under candidate scoring on the dev questions: the score, the entropy of ``q`` and its top
    mass, and whether the policy routes: the number of distinct argmax subsets over the dev questions
    (``dev_distinct_subsets``) and the share of them on the most-picked one (``dev_top_share``), so that a collapse
    onto one subset is visible on the curve. With ``measures="full"`` (the default) it also measures free generation:
    its score, its format-failure rate and the entropy of the greedy generated subsets across the dev questions (a
    collapse onto one string drives it to 0); the closed-form dead-group probability of a group of ``group_size``
    drawn from ``q`` (:func:`fgpo_lib.metrics.zero_variance_prob`, reward classes of the table's raw score, which are
    the differential reward's classes too); the closed-form dead-group probability of a group of ``group_size``
    *sampled completions* (the paper's P_dead under the generation-induced distribution,
    :func:`closed_form_dead_generation`); the mean log-probability of the answer tag's opening tokens after the prompt
    (``tag_logp``, :func:`~fgpo_lib.lm_policy.evaluate.shared_prefix_logprob`); and the chance that a completion
    sampled at temperature 1 begins with a candidate string (:func:`~fgpo_lib.lm_policy.evaluate.sampled_candidate_mass`).

    Args:
        decoding: ``"scoring"`` (candidate scoring, FGPO's and SFT's) or ``"generation"`` (GRPO's own decoding): the
            score the checkpoint is selected on. ``"generation"`` needs ``measures="full"``.
        measures: one of :data:`DEV_MEASURES`.
        temperature: the listwise softmax's temperature of ``q`` (the argmax does not depend on it).
        tie_break: one of :data:`TIE_BREAKS` (module doc).
    """

    def __init__(self, model, tokenizer, table, dev_rows, decoding: str, length_norm: bool = True, max_new_tokens: int = 16, group_size: int = 6,
                 measures: str = "full", temperature: float = 1.0, tie_break: str = "first") -> None:
        if measures not in DEV_MEASURES or (decoding == "generation" and measures != "full"):
            raise ValueError(f"dev measures {measures!r} with decoding {decoding!r}: use one of {DEV_MEASURES}, and 'full' to select on generation")
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"tie break {tie_break!r}: use one of {TIE_BREAKS}")
        self.model, self.tokenizer, self.table, self.rows = model, tokenizer, table, np.asarray(dev_rows)
        self.decoding, self.length_norm, self.max_new_tokens, self.group_size = decoding, length_norm, max_new_tokens, group_size
        self.measures, self.temperature, self.tie_break = measures, temperature, tie_break
        self.best_key: tuple[float, ...] = (-np.inf,)  # the selected point's selection_key; its first entry is the dev score
        self.best_step, self.best_state = None, None
        self.last_tie_step, self.last_tie_state = None, None  # the last trained point with the best dev score (module doc)
        self.first_step, self.first_state = None, None  # the first trained point with the best dev score: rule "first"'s selection
        self.values = grpo_reward_values(table)
        self.curve: list[dict] = []
        self.started = time.time()

    @property
    def best(self) -> float:
        """The selected checkpoint's dev score (points; -inf before the first trained point)."""
        return self.best_key[0]

    def __call__(self, step: int, extra: dict | None = None) -> None:
        if self.measures == "full":
            q, masses, tags = dev_measures(self.model, self.tokenizer, self.table, self.rows, self.length_norm, self.temperature)
        else:
            q = candidate_distribution(self.model, self.tokenizer, self.table, self.rows, self.length_norm, self.temperature)
        scoring = score_choices(self.table, self.rows, list(q.argmax(1)))
        point = {"step": step, "q_entropy": float(entropy(q).mean()), "q_top_mass": float(q.max(1).mean()),
                 "dev_score_scoring": float(np.mean(scoring["scores"])), "dev_expected_reward": float((q * self.table.rewards[self.rows]).sum(1).mean()),
                 "dev_distinct_subsets": scoring["distinct_subsets"], "dev_top_share": scoring["top_subset_share"]}
        if self.measures == "full":
            choices, _ = generated_choices(self.model, self.tokenizer, self.table, self.rows, self.max_new_tokens)
            generation = score_choices(self.table, self.rows, choices)
            point |= {"dev_score_generation": float(np.mean(generation["scores"])), "dev_format_failures": generation["format_failures"],
                      "dev_format_failure_rate": generation["format_failures"] / max(1, len(self.rows)), "generated_entropy": empirical_entropy(choices),
                      "closed_form_dead": float(zero_variance_prob(q, self.table.rewards[self.rows], self.group_size).mean()),
                      "closed_form_tokenizations": "own+apart",  # how generation_masses counts a candidate (earlier records: "own" only)
                      "closed_form_dead_generation": float(closed_form_dead_generation(masses, self.values[self.rows], self.group_size).mean()),
                      "sampled_candidate_mass": sampled_candidate_mass(masses), "tag_logp": float(tags.mean())}
        point = {"step": step, "seconds": time.time() - self.started, "dev_score": point[f"dev_score_{self.decoding}"], **point, **(extra or {})}
        self.curve.append(point)
        self._select(point)

    def _select(self, point: dict) -> None:
        """Keep ``point``'s checkpoint (the model as it is now) if it beats the selected one (:func:`selection_key`);
        else, if it ties the best dev score, as the last tie (the diagnostic)."""
        step = point["step"]
        if step > 0 and selection_key(point, self.tie_break) > self.best_key:
            new_score = point["dev_score"] > self.best  # a new best dev score: rule "first"'s selection too
            self.best_key, self.best_step, self.best_state = selection_key(point, self.tie_break), step, trainable_state(self.model)
            self.last_tie_step, self.last_tie_state = None, None
            if new_score:  # the same checkpoint, shared (kept only where it can differ from the selection)
                self.first_step, self.first_state = step, self.best_state if self.tie_break != "first" else None
        elif step > 0 and point["dev_score"] == self.best:
            self.last_tie_step, self.last_tie_state = step, trainable_state(self.model)

    def _checkpoint_test(self, step: int, state: dict, rows, length_norm: bool, temperature: float) -> dict:
        """Checkpoint ``state`` (of update ``step``) scored on ``rows`` by candidate scoring: ``{"step", "scoring"}``
        (:func:`~fgpo_lib.lm_policy.data.score_choices`). Leaves the model at the best checkpoint."""
        restore(self.model, state)
        rows = np.asarray(rows)
        q = candidate_distribution(self.model, self.tokenizer, self.table, rows, length_norm, temperature)
        out = {"step": step, "scoring": score_choices(self.table, rows, list(q.argmax(1)))}
        restore(self.model, self.best_state)
        return out

    def last_tie_test(self, rows, length_norm: bool = True, temperature: float = 1.0) -> dict | None:
        """The last checkpoint tying the best dev score, scored on ``rows`` (:meth:`_checkpoint_test`), or None when
        no later point tied."""
        if self.last_tie_state is None:
            return None
        return self._checkpoint_test(self.last_tie_step, self.last_tie_state, rows, length_norm, temperature)

    def first_rule_test(self, rows, length_norm: bool = True, temperature: float = 1.0) -> dict | None:
        """Under ``tie_break="expected"``, what rule ``"first"`` selects, scored on ``rows`` (:meth:`_checkpoint_test`);
        None under ``"first"`` (the selection itself) and when the first checkpoint is unknown (a partial state saved
        before this diagnostic existed, resumed before a new best dev score)."""
        if self.tie_break == "first" or self.first_state is None:
            return None
        return self._checkpoint_test(self.first_step, self.first_state, rows, length_norm, temperature)

    def state(self) -> dict:
        """What a resumed run needs: the curve and the best checkpoint so far."""
        return {"curve": self.curve, "best": self.best, "best_key": self.best_key, "best_step": self.best_step, "best_state": self.best_state,
                "last_tie_step": self.last_tie_step, "last_tie_state": self.last_tie_state, "first_step": self.first_step, "first_state": self.first_state,
                "elapsed": time.time() - self.started}

    def load_state(self, held: dict) -> None:
        self.curve, self.best_step, self.best_state = list(held["curve"]), held["best_step"], held["best_state"]
        # a partial state saved before the tie break existed was selected on the dev score alone (tie_break "first")
        self.best_key = tuple(held.get("best_key", (held["best"],)))
        # a partial state saved before the diagnostic existed has no tie: the diagnostic then starts at the resume
        self.last_tie_step, self.last_tie_state = held.get("last_tie_step"), held.get("last_tie_state")
        # likewise the first rule's checkpoint: unknown until the next new best dev score (first_rule_test then says None)
        self.first_step, self.first_state = held.get("first_step"), held.get("first_state")
        self.started = time.time() - held["elapsed"]  # a point's seconds continue across the sessions of a resumed run


def evaluate_on_test(model, tokenizer, table, rows, length_norm: bool = True, max_new_tokens: int = 16, temperature: float = 1.0) -> dict:
    """Both decodings on ``rows``: ``{"scoring": ..., "generation": ...}`` of :func:`~fgpo_lib.lm_policy.data.score_choices`
    (each with its routing measures), with the question ids, ``q``'s entropy and top mass (at ``temperature``), and
    the generated texts."""
    rows = np.asarray(rows)
    q = candidate_distribution(model, tokenizer, table, rows, length_norm, temperature)
    scoring = score_choices(table, rows, list(q.argmax(1)))
    choices, texts = generated_choices(model, tokenizer, table, rows, max_new_tokens)
    generation = score_choices(table, rows, choices)
    return {"question_ids": [table.question_ids[r] for r in rows], "scoring": scoring, "generation": {**generation, "texts": texts},
            "q_entropy": float(entropy(q).mean()), "q_top_mass": float(q.max(1).mean()), "near_uniform": near_uniform(q)}


#: ``q`` is near uniform when its mean top probability is below this many times the uniform one (1 / n_subsets)
NEAR_UNIFORM_FACTOR = 2.0


def near_uniform(q: np.ndarray) -> bool:
    """Whether a policy's ``q: (n_questions, n_subsets)`` is near uniform: its mean top probability below
    :data:`NEAR_UNIFORM_FACTOR` / n_subsets. Its argmax then rests on small score differences (a short run's)."""
    return bool(q.max(1).mean() < NEAR_UNIFORM_FACTOR / q.shape[1])
