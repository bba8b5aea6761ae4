"""`RewardTable`: the reward of every (question, tool subset) pair, with its split and provenance.

Array convention
----------------
``rewards: (n_questions, n_subsets) float32``; row ``q`` is question ``question_ids[q]``, column ``s`` is subset ``s``
of ``space`` in its canonical order (see :mod:`fgpo_lib.subsets`). Every reward lies in ``reward_range``; no NaN.

File format (``.npz``, format version 1)
-----------------------------------------
One compressed NumPy archive (``numpy.savez_compressed``) with two entries:

* ``rewards``: the float32 array above;
* ``meta``: a 0-d string array holding one JSON object::

      {"format": "fgpo-reward-table", "version": 1,
       "space": {"n_tools", "max_size", "min_size", "tool_names"[, "subsets": [label, ...] for a candidate set]},
       "question_ids": [...], "questions": [...], "tasks": [...] | null,
       "split": ["train" | "test", ...], "reward_range": [lo, hi], "provenance": {...},
       "extras": {name: {"kind": "cell" | "selection", "subsets": [label | null, ...], "answers": [...],
                         "rewards": [float | null, ...], ...}, ...}}

and two optional entries:

* ``answers``: ``(n_questions, n_subsets)`` unicode array, the reasoner's raw answer of every cell (tables made by
  ``fgpo precompute``), so a table can be re-scored under another rule without recomputing a cell;
* ``seconds``: ``(n_questions, n_subsets)`` float32, the wall seconds spent computing each cell (its question's batch
  time shared among the batch's cells), NaN where not known (cells made before tables kept it). A table resumed on
  another machine carries them, so its cost survives the machine.

``extras`` (optional) holds per-question cells outside the subset space: ``all_tools`` (kind ``cell``: every tool of
the library in one call, even past ``max_size``) and ``selection`` (kind ``selection``: the reasoner's own pick of
tools, its raw reply in ``answers``, the parsed subset in ``subsets`` or null when unparseable, and that subset's
reward). Each list in an extra has one entry per question, in row order. A checkpoint of ``fgpo precompute`` written
while the extras are still being computed holds those done so far under ``partial_all_tools`` and
``partial_selection``, null for a question not done yet; readers use only the whole extras, and a resume seeds both.

Long format (CSV or Parquet, by file suffix)
--------------------------------------------
One row per cell: ``question_id,tools,reward``, where ``tools`` is the ``+``-joined tool names of the subset in any
order and ``''`` is the empty subset. Optional columns ``question``, ``task`` and ``split`` must be constant per
question. Rows are numbered from 1, not counting the header: row ``r`` is line ``r + 1`` of a CSV file. Errors name
the file, the row and the column.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from .splits import stratified_split  # noqa: F401  (part of this module's interface)
from .subsets import SubsetSpace, SubsetSpaceError

FORMAT_NAME = "fgpo-reward-table"
FORMAT_VERSION = 1
SPLITS = ("train", "test")


class RewardTableError(ValueError):
    """A reward table (in memory or on disk) that breaks the format; the message names the file, row and column."""


@dataclass
class RewardTable:
    """Rewards of every subset for every question.

    Attributes:
        rewards: ``(n_questions, n_subsets) float32`` reward of subset ``s`` (canonical order) for question ``q``.
        question_ids: ``n_questions`` unique ids.
        space: the :class:`SubsetSpace`; its ``tool_names`` are the table's tools.
        questions: question texts (inputs to featurizers); defaults to the ids.
        tasks: optional task label per question.
        split: ``(n_questions,)`` ``'train'``/``'test'``; defaults to :func:`stratified_split` (30% test).
        reward_range: declared ``(lo, hi)``; every reward must lie inside.
        provenance: free-form JSON-serializable dict: where the rewards came from (reasoner, model hash,
            prompt hash, data hash, code version, ...).
        answers: optional ``(n_questions, n_subsets) str`` raw answer of every cell.
        seconds: optional ``(n_questions, n_subsets) float32`` wall seconds spent computing each cell; NaN if unknown.
        extras: optional per-question cells outside the subset space (module doc): ``name -> dict`` whose list
            values have one entry per question.
    """

    rewards: np.ndarray
    question_ids: list[str]
    space: SubsetSpace
    questions: list[str] | None = None
    tasks: list[str] | None = None
    split: np.ndarray | None = None
    reward_range: tuple[float, float] = (0.0, 1.0)
    provenance: dict = field(default_factory=dict)
    answers: np.ndarray | None = None
    extras: dict = field(default_factory=dict)
    seconds: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.rewards = np.asarray(self.rewards, dtype=np.float32)
        self.question_ids = [str(q) for q in self.question_ids]
        self.questions = list(self.question_ids) if self.questions is None else [str(q) for q in self.questions]
        self.tasks = None if self.tasks is None else [str(t) for t in self.tasks]
        if self.split is None:
            self.split = stratified_split(self.question_ids, self.tasks)
        self.split = np.asarray(self.split).astype(str)
        self.reward_range = (float(self.reward_range[0]), float(self.reward_range[1]))
        if self.answers is not None:
            self.answers = np.asarray(self.answers).astype(str)
        if self.seconds is not None:
            self.seconds = np.asarray(self.seconds, dtype=np.float32)
        self.extras = dict(self.extras or {})
        self.validate()

    # --- validation -----------------------------------------------------------------------------------------------
    def validate(self, source: str = "reward table") -> None:
        """Raise :class:`RewardTableError` naming ``source`` if anything is inconsistent."""
        n_q = len(self.question_ids)
        if self.rewards.ndim != 2 or self.rewards.shape != (n_q, self.space.n_subsets):
            raise RewardTableError(
                f"{source}: rewards has shape {self.rewards.shape}, expected ({n_q} questions, {self.space.n_subsets} subsets)"
            )
        if len(set(self.question_ids)) != n_q:
            seen: set[str] = set()
            dup = next(q for q in self.question_ids if q in seen or seen.add(q))
            raise RewardTableError(f"{source}: duplicate question id {dup!r}")
        for name, values in (("questions", self.questions), ("tasks", self.tasks), ("split", self.split)):
            if values is not None and len(values) != n_q:
                raise RewardTableError(f"{source}: {name} has {len(values)} entries for {n_q} questions")
        if self.answers is not None and self.answers.shape != self.rewards.shape:
            raise RewardTableError(f"{source}: answers has shape {self.answers.shape}, expected {self.rewards.shape}")
        if self.seconds is not None and self.seconds.shape != self.rewards.shape:
            raise RewardTableError(f"{source}: seconds has shape {self.seconds.shape}, expected {self.rewards.shape}")
        if self.seconds is not None and (self.seconds < 0).any():  # NaN (unknown) compares False
            q, c = np.argwhere(self.seconds < 0)[0]
            raise RewardTableError(f"{source}: seconds is negative for question {self.question_ids[q]!r}, subset {self.space.label(c)!r}")
        for name, extra in self.extras.items():
            if not isinstance(extra, dict):
                raise RewardTableError(f"{source}: extra {name!r} must be a JSON object")
            for key, values in extra.items():
                if isinstance(values, list) and len(values) != n_q:
                    raise RewardTableError(f"{source}: extra {name!r}, field {key!r} has {len(values)} entries for {n_q} questions")
        bad_split = sorted(set(self.split.tolist()) - set(SPLITS))
        if bad_split:
            raise RewardTableError(f"{source}: split values must be 'train' or 'test', found {bad_split}")
        lo, hi = self.reward_range
        if not lo <= hi:
            raise RewardTableError(f"{source}: reward_range {self.reward_range} has lo > hi")
        nan = np.argwhere(np.isnan(self.rewards))
        if len(nan):
            q, s = nan[0]
            raise RewardTableError(f"{source}: reward is NaN for question {self.question_ids[q]!r}, subset {self.space.label(s)!r}")
        out = np.argwhere((self.rewards < lo) | (self.rewards > hi))
        if len(out):
            q, s = out[0]
            raise RewardTableError(
                f"{source}: reward {self.rewards[q, s]} for question {self.question_ids[q]!r}, subset "
                f"{self.space.label(s)!r} is outside the declared reward range [{lo}, {hi}]"
            )

    # --- shape and views ------------------------------------------------------------------------------------------
    @property
    def n_questions(self) -> int:
        return len(self.question_ids)

    @property
    def n_subsets(self) -> int:
        return self.space.n_subsets

    @property
    def tool_names(self) -> tuple[str, ...]:
        return self.space.tool_names

    def split_index(self, split: str) -> np.ndarray:
        """Row indices ``(n,) int64`` of ``'train'``, ``'test'`` or ``'all'`` questions."""
        if split == "all":
            return np.arange(self.n_questions)
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; use 'train', 'test' or 'all'")
        return np.flatnonzero(self.split == split)

    def select(self, rows: Sequence[int] | np.ndarray) -> "RewardTable":
        """A new table with only ``rows``, in that order."""
        rows = np.asarray(rows, dtype=np.int64)
        return RewardTable(
            rewards=self.rewards[rows],
            question_ids=[self.question_ids[i] for i in rows],
            space=self.space,
            questions=[self.questions[i] for i in rows],
            tasks=None if self.tasks is None else [self.tasks[i] for i in rows],
            split=self.split[rows],
            reward_range=self.reward_range,
            provenance=dict(self.provenance),
            answers=None if self.answers is None else self.answers[rows],
            seconds=None if self.seconds is None else self.seconds[rows],
            extras={k: {f: [v[i] for i in rows] if isinstance(v, list) else v for f, v in e.items()} for k, e in self.extras.items()},
        )

    def select_subsets(self, columns: Sequence[int] | np.ndarray) -> "RewardTable":
        """A new table over only the subsets ``columns`` (canonical indices of :attr:`space`), a candidate-set table
        with the same tools; its columns keep the canonical order. Extras are dropped: their cells were answered with
        subsets this table no longer holds."""
        cols = np.unique(np.asarray(columns, dtype=np.int64))
        if not len(cols) or cols[0] < 0 or cols[-1] >= self.n_subsets:
            raise ValueError(f"subset columns must lie in 0..{self.n_subsets - 1}, got {list(columns)[:5]}")
        space = SubsetSpace(self.space.n_tools, tool_names=self.space.tool_names,
                            candidates=tuple(tuple(np.flatnonzero(self.space.masks[c]).tolist()) for c in cols))
        return RewardTable(
            rewards=self.rewards[:, cols], question_ids=list(self.question_ids), space=space, questions=list(self.questions),
            tasks=None if self.tasks is None else list(self.tasks), split=self.split.copy(), reward_range=self.reward_range,
            provenance=dict(self.provenance), answers=None if self.answers is None else self.answers[:, cols],
            seconds=None if self.seconds is None else self.seconds[:, cols],
        )

    def content_hash(self) -> str:
        """sha256 of rewards, ids, tools and split: equal hashes mean equal training inputs."""
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(self.rewards).tobytes())
        h.update(json.dumps([self.question_ids, list(self.tool_names), self.split.tolist(), self.space.to_dict()]).encode())
        return h.hexdigest()

    # --- npz format -----------------------------------------------------------------------------------------------
    def _meta(self) -> dict:
        return {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "space": self.space.to_dict(),
            "question_ids": self.question_ids,
            "questions": self.questions,
            "tasks": self.tasks,
            "split": self.split.tolist(),
            "reward_range": list(self.reward_range),
            "provenance": self.provenance,
            "extras": self.extras,
        }

    def save(self, path: str | Path) -> Path:
        """Write the ``.npz`` format (module doc), atomically (:func:`fgpo_lib.files.atomic_write`: a temporary file
        of this process in the same folder, then a rename), so a kill or a full disk leaves the old file whole."""
        from .files import atomic_write

        path = Path(path)
        if path.is_dir():
            raise RewardTableError(f"{path}: is a directory; give a file path for the table")
        if path.suffix.lower() != ".npz":
            raise RewardTableError(f"{path}: a reward table is written as .npz (RewardTable.load reads a file by its suffix); give a path ending in .npz")
        arrays = {"rewards": self.rewards, "meta": np.array(json.dumps(self._meta(), sort_keys=True))}
        if self.answers is not None:
            arrays["answers"] = self.answers
        if self.seconds is not None:
            arrays["seconds"] = self.seconds
        return atomic_write(path, lambda tmp: np.savez_compressed(tmp, **arrays), suffix=".tmp.npz")

    @classmethod
    def load(cls, path: str | Path, subsets: str | None = None, tool_names: Sequence[str] | None = None) -> "RewardTable":
        """Read a table written by :meth:`save` (``.npz``, whose space it stores) or a long CSV/Parquet file
        (:meth:`from_long`, with ``subsets``: ``'observed'`` for a candidate set of the subsets in the file, and
        ``tool_names``: the tools in canonical order)."""
        path = Path(path)
        if not path.exists():
            raise RewardTableError(f"{path}: no such file")
        if path.is_dir():
            raise RewardTableError(f"{path}: is a directory, not a reward table file")
        if path.suffix.lower() in (".csv", ".parquet", ".pq"):
            return cls.from_long(path, subsets=subsets, tool_names=tool_names)
        if subsets is not None or tool_names is not None:
            raise RewardTableError(f"{path}: subsets and tool_names apply to a long .csv/.parquet table; an .npz table stores its own")
        try:
            with np.load(path, allow_pickle=False) as z:
                if "rewards" not in z.files or "meta" not in z.files:
                    raise RewardTableError(f"{path}: not an fgpo reward table (needs entries 'rewards' and 'meta', found {z.files})")
                rewards = z["rewards"]
                meta = json.loads(str(z["meta"]))
                answers = z["answers"] if "answers" in z.files else None
                seconds = z["seconds"] if "seconds" in z.files else None
        except RewardTableError:
            raise
        except Exception as exc:  # zipfile, pickle, JSON errors
            if "pickle" in str(exc).lower() or isinstance(exc, (OSError, EOFError)) and "zip" not in str(exc).lower():
                exc = "not a NumPy .npz archive (an fgpo table is written by `fgpo precompute` or RewardTable.save)"
            raise RewardTableError(f"{path}: cannot read as an fgpo .npz reward table: {exc}") from None
        _check_meta(meta, rewards, answers, seconds, path)
        if meta.get("format") != FORMAT_NAME or meta.get("version") != FORMAT_VERSION:
            raise RewardTableError(f"{path}: format {meta.get('format')!r} version {meta.get('version')!r}, expected {FORMAT_NAME!r} version {FORMAT_VERSION}")
        try:
            space = SubsetSpace.from_dict(meta["space"])
            table = cls.__new__(cls)
            table.rewards = np.asarray(rewards, dtype=np.float32)
            table.question_ids = [str(q) for q in meta["question_ids"]]
            table.space = space
            table.questions = meta["questions"]
            table.tasks = meta["tasks"]
            table.split = np.asarray(meta["split"]).astype(str)
            table.reward_range = tuple(meta["reward_range"])
            table.provenance = meta["provenance"]
            table.answers = None if answers is None else np.asarray(answers).astype(str)
            table.seconds = None if seconds is None else np.asarray(seconds, dtype=np.float32)
            table.extras = dict(meta.get("extras") or {})
        except (KeyError, TypeError, ValueError) as exc:
            raise RewardTableError(f"{path}: malformed metadata: {exc!r}") from exc
        table.validate(source=str(path))
        return table

    # --- long CSV / Parquet ---------------------------------------------------------------------------------------
    def to_long(self, path: str | Path | None = None) -> pd.DataFrame:
        """Long form ``question_id,tools,reward[,question,task,split]``; written to ``path`` (CSV or Parquet) if given."""
        q_idx = np.repeat(np.arange(self.n_questions), self.n_subsets)
        s_idx = np.tile(np.arange(self.n_subsets), self.n_questions)
        labels = np.array(self.space.labels(), dtype=object)
        df = pd.DataFrame(
            {
                "question_id": np.array(self.question_ids, dtype=object)[q_idx],
                "tools": labels[s_idx],
                "reward": self.rewards.reshape(-1),
                "question": np.array(self.questions, dtype=object)[q_idx],
                "split": self.split[q_idx],
            }
        )
        if self.tasks is not None:
            df["task"] = np.array(self.tasks, dtype=object)[q_idx]
        if path is not None:
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            if path.suffix.lower() in (".parquet", ".pq"):
                df.to_parquet(path, index=False)
            else:
                df.to_csv(path, index=False)
        return df

    @classmethod
    def from_long(
        cls,
        source: str | Path | pd.DataFrame,
        tool_names: Sequence[str] | None = None,
        max_size: int | None = None,
        min_size: int | None = None,
        reward_range: tuple[float, float] = (0.0, 1.0),
        provenance: dict | None = None,
        subsets: str | Sequence[str] | None = None,
    ) -> "RewardTable":
        """Build a table from the long format (module doc).

        Args:
            source: a ``.csv``/``.parquet`` path or a DataFrame.
            tool_names: the tools in canonical order; unknown names in ``tools`` are errors. If ``None``, the
                sorted set of names found.
            max_size, min_size: the subset space; default to the largest and smallest subset sizes found.
            reward_range: declared ``(lo, hi)``; rewards outside are errors.
            subsets: ``None``: every subset of the sizes (each question needs them all); ``"observed"``: a candidate
                set of exactly the subsets in the file (:class:`~fgpo_lib.subsets.SubsetSpace` ``candidates``);
                a list of labels: that candidate set (a row with another subset is an error). Every question needs
                every subset of the space either way.
        """
        name = "<DataFrame>" if isinstance(source, pd.DataFrame) else str(source)
        tool_names, reward_range = _check_long_arguments(name, tool_names, max_size, min_size, reward_range, provenance, subsets)
        df = _read_long(source)
        dups = sorted({str(c) for c in df.columns[df.columns.duplicated()]})
        if dups:
            raise RewardTableError(f"{name}: column{'s' if len(dups) > 1 else ''} {', '.join(map(repr, dups))} given twice; each column must appear once")
        for col in ("question_id", "tools", "reward"):
            if col not in df.columns:
                raise RewardTableError(f"{name}: missing column {col!r} (found {list(df.columns)})")
        if df.empty:
            raise RewardTableError(f"{name}: no rows; a long table needs one row per (question, subset) cell: question_id,tools,reward")
        if "question" not in df.columns:
            import warnings

            warnings.warn(f"{name}: no 'question' column, so each question's id is used as its text, which the featurizers read to route; "
                          "add a question column (question_id,tools,reward,question[,task,split])", UserWarning, stacklevel=2)
        tools_col = df["tools"].where(df["tools"].notna(), "").astype(str).str.strip().tolist()  # NaN: the empty subset
        split_names = {lbl: [p.strip() for p in lbl.split("+")] if lbl else [] for lbl in set(tools_col)}
        for r, lbl in enumerate(tools_col, start=1):
            if "" in split_names[lbl]:
                raise RewardTableError(f"{name}: row {r}, column 'tools': empty tool name in {lbl!r} (tools are '+'-joined names; '' alone is the empty subset)")
        inferred = tool_names is None
        if inferred:
            tool_names = sorted({t for parts in split_names.values() for t in parts})
            if not tool_names:
                raise RewardTableError(f"{name}: every row's 'tools' is empty (the empty subset), so the table names no tool; a long table needs a row "
                                       "for every subset of its tools, each a '+'-joined list of tool names")
        known = set(tool_names)
        for r, lbl in enumerate(tools_col, start=1):
            parts = split_names[lbl]
            for t in parts:
                if t not in known:
                    raise RewardTableError(f"{name}: row {r}, column 'tools': unknown tool {t!r} in {lbl!r}; known tools: {list(tool_names)}")
            if len(set(parts)) != len(parts):
                raise RewardTableError(f"{name}: row {r}, column 'tools': a tool appears twice in {lbl!r}")
        sizes = {lbl: len(p) for lbl, p in split_names.items()}
        if subsets is not None:
            if isinstance(subsets, str) and subsets != "observed":
                raise RewardTableError(f"{name}: subsets must be 'observed' or a list of '+'-joined labels, got {subsets!r}")
            chosen = tools_col if subsets == "observed" else list(subsets)
            try:
                space = SubsetSpace.from_labels(tuple(tool_names), _distinct_subsets(chosen))
            except SubsetSpaceError as exc:
                raise RewardTableError(f"{name}: {exc}") from None
        else:
            max_size = max(sizes.values()) if max_size is None else max_size
            min_size = min(sizes.values()) if min_size is None else min_size
            if max_size > len(tool_names):
                raise RewardTableError(f"{name}: max_size {max_size} is more than the table's {len(tool_names)} tools")
            try:
                space = SubsetSpace(len(tool_names), max_size, min_size, tuple(tool_names))
            except SubsetSpaceError as exc:
                raise RewardTableError(f"{name}: {exc}") from None
        col_index = {}
        for r, lbl in enumerate(tools_col, start=1):
            if lbl not in col_index:
                if space.is_full and not space.min_size <= sizes[lbl] <= space.max_size:
                    raise RewardTableError(f"{name}: row {r}, column 'tools': subset {lbl!r} has {sizes[lbl]} tools, outside this table's sizes {space.min_size}..{space.max_size}")
                try:
                    col_index[lbl] = space.index_of(split_names[lbl])
                except KeyError:
                    raise RewardTableError(f"{name}: row {r}, column 'tools': subset {lbl!r} is not in the candidate set {space.labels()}") from None
        reward = pd.to_numeric(df["reward"], errors="coerce").to_numpy(dtype=np.float64)
        raw_reward = df["reward"].tolist()
        lo, hi = float(reward_range[0]), float(reward_range[1])
        for r in np.flatnonzero(np.isnan(reward)):
            raise RewardTableError(f"{name}: row {r + 1}, column 'reward': {raw_reward[r]!r} is missing, NaN or not a number")
        for r in np.flatnonzero((reward < lo) | (reward > hi)):
            raise RewardTableError(f"{name}: row {r + 1}, column 'reward': {reward[r]} is outside the declared reward range [{lo}, {hi}]")
        qids = df["question_id"].astype(str).tolist()
        q_order = list(dict.fromkeys(qids))
        q_row = {q: i for i, q in enumerate(q_order)}
        space.check_table_fits(len(q_order))  # clear error before allocating a table that cannot fit
        rewards = np.full((len(q_order), space.n_subsets), np.nan, dtype=np.float32)
        first_row = np.zeros((len(q_order), space.n_subsets), dtype=np.int64)
        for r, (q, lbl) in enumerate(zip(qids, tools_col), start=1):
            i, s = q_row[q], col_index[lbl]
            if first_row[i, s]:
                raise RewardTableError(f"{name}: row {r}, columns 'question_id','tools': duplicates row {first_row[i, s]} (question {q!r}, tools {lbl!r})")
            first_row[i, s] = r
            rewards[i, s] = reward[r - 1]
        missing = np.argwhere(first_row == 0)
        if len(missing):
            i, s = missing[0]
            hint = ""
            if inferred:  # a misspelt tool makes a space too large for the rows: name the rarest tools
                rows_of = {t: sum(t in split_names[lbl] for lbl in tools_col) for t in tool_names}
                rare = [t for t in tool_names if rows_of[t] < max(rows_of.values())]
                hint = f"; the tools were taken from the file ({', '.join(f'{t!r} in {rows_of[t]} rows' for t in tool_names)})" + (
                    f": is {rare[0]!r} a misspelt or unknown tool? Pass tool_names (--tool-names) to name the tools" if rare else "")
            if subsets is None:
                hint += ("; if the file holds only some subsets on purpose (a candidate set), pass subsets='observed' (fgpo --subsets observed): "
                         "the table's subsets are then exactly those in the file")
            raise RewardTableError(
                f"{name}: missing cell: no row for question {q_order[i]!r} with tools {space.label(s)!r} "
                f"(columns 'question_id','tools'); {len(missing)} cells missing in all, every question needs all {space.n_subsets} subsets{hint}"
            )
        per_q = {}
        for col in ("question", "task", "split"):
            if col in df.columns:
                per_q[col] = _constant_per_question(df[col].astype(str).tolist(), qids, q_row, name, col)
        return cls(
            rewards=rewards,
            question_ids=q_order,
            space=space,
            questions=per_q.get("question"),
            tasks=per_q.get("task"),
            split=per_q.get("split"),
            reward_range=(lo, hi),
            provenance=dict(provenance or {}),
        )

    def __repr__(self) -> str:
        n_train = int((self.split == "train").sum())
        return (
            f"RewardTable({self.n_questions} questions ({n_train} train), {self.n_subsets} subsets of tools "
            f"{list(self.tool_names)}, mean reward {self.rewards.mean():.3f})"
        )


def _check_long_arguments(name: str, tool_names, max_size, min_size, reward_range, provenance, subsets):
    """:meth:`RewardTable.from_long`'s keyword arguments checked before the file is read: ``(tool_names, reward_range)``
    normalised, or a :class:`RewardTableError` naming the argument."""
    import math

    def bad(arg: str, want: str, got) -> RewardTableError:
        return RewardTableError(f"{name}: {arg} must be {want}, got {type(got).__name__} {str(got)[:60]!r}")

    if tool_names is not None:
        if isinstance(tool_names, str) or not all(isinstance(t, str) and t.strip() and "+" not in t for t in tool_names):
            raise bad("tool_names", "a list of tool names (non-empty, without '+')", tool_names)
        tool_names = [t.strip() for t in tool_names]
        if len(set(tool_names)) != len(tool_names):
            raise RewardTableError(f"{name}: tool_names names a tool twice: {sorted(t for t in set(tool_names) if tool_names.count(t) > 1)}")
        if not tool_names:
            raise bad("tool_names", "a non-empty list of tool names", tool_names)
    for arg, value in (("max_size", max_size), ("min_size", min_size)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            raise bad(arg, "a whole number >= 0 or None", value)
    if max_size is not None and min_size is not None and min_size > max_size:
        raise RewardTableError(f"{name}: min_size {min_size} is more than max_size {max_size}")
    try:
        lo, hi = (float(v) for v in reward_range)
    except (TypeError, ValueError):
        raise bad("reward_range", "a pair (lo, hi) of numbers", reward_range) from None
    if not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
        raise bad("reward_range", "a pair (lo, hi) of finite numbers with lo <= hi", reward_range)
    if provenance is not None and not isinstance(provenance, dict):
        raise bad("provenance", "a dict", provenance)
    if subsets is not None and subsets != "observed" and (isinstance(subsets, str) or not isinstance(subsets, (list, tuple)) or not all(isinstance(x, str) for x in subsets)):
        raise bad("subsets", "None, 'observed' or a list of '+'-joined subset labels", subsets)
    return tool_names, (lo, hi)


def _distinct_subsets(labels) -> list[str]:
    """Labels naming distinct subsets (``'b+a'`` and ``'a+b'`` are one), in first-seen order."""
    seen, out = set(), []
    for lbl in labels:
        key = frozenset(p.strip() for p in str(lbl).split("+")) if str(lbl).strip() else frozenset()
        if key not in seen:
            seen.add(key)
            out.append(str(lbl))
    return out


def _is_list_of(value, kinds, nullable: bool = False) -> bool:
    return (nullable and value is None) or (isinstance(value, list) and all(isinstance(v, kinds) and not isinstance(v, bool) for v in value))


def _check_meta(meta, rewards: np.ndarray, answers, seconds, path: Path) -> None:
    """The ``.npz`` format's schema (module doc), checked before anything is built from it: every field of the right
    JSON type, every array of a real (or text) dtype. Raises :class:`RewardTableError` naming the file and field."""
    def bad(field: str, want: str, got) -> RewardTableError:
        return RewardTableError(f"{path}: meta field {field!r} must be {want}, got {type(got).__name__} {str(got)[:60]!r}")

    if not isinstance(meta, dict):
        raise RewardTableError(f"{path}: meta must be a JSON object, got {type(meta).__name__}")
    space = meta.get("space")
    if not isinstance(space, dict):
        raise bad("space", "an object {n_tools, max_size, min_size, tool_names}", space)
    for k in ("n_tools", "max_size", "min_size"):
        if k in space and (not isinstance(space[k], int) or isinstance(space[k], bool)):
            raise bad(f"space.{k}", "an integer", space[k])
    if not _is_list_of(space.get("tool_names"), str, nullable=True):
        raise bad("space.tool_names", "a list of tool names", space.get("tool_names"))
    if not _is_list_of(space.get("subsets"), str, nullable=True):
        raise bad("space.subsets", "a list of '+'-joined subset labels or null", space.get("subsets"))
    checks = (("question_ids", (str, int), False, "a list of ids"), ("questions", str, True, "a list of texts or null"),
              ("tasks", str, True, "a list of task labels or null"), ("split", str, False, "a list of 'train'/'test'"))
    for name, kinds, nullable, want in checks:
        if not _is_list_of(meta.get(name), kinds, nullable):
            raise bad(name, want, meta.get(name))
    rr = meta.get("reward_range")
    if not (_is_list_of(rr, (int, float)) and len(rr) == 2 and all(np.isfinite(rr))):
        raise bad("reward_range", "[lo, hi], two finite numbers", rr)
    if not isinstance(meta.get("provenance", {}), dict):
        raise bad("provenance", "an object", meta.get("provenance"))
    if not isinstance(meta.get("extras") or {}, dict):
        raise bad("extras", "an object", meta.get("extras"))
    for name, arr, kinds in (("rewards", rewards, "biuf"), ("seconds", seconds, "biuf"), ("answers", answers, "U")):
        if arr is not None and arr.dtype.kind not in kinds:
            want = "text" if kinds == "U" else "real numbers"
            raise RewardTableError(f"{path}: entry {name!r} must hold {want}, found dtype {arr.dtype}")


def extra_scores(extra: dict) -> np.ndarray:
    """An extra's per-question scores ``(n_questions,)``: its ``rewards``, with 0 where a selection call was
    unparseable (stored as null: no subset was called, so nothing was answered)."""
    return np.array([0.0 if r is None else float(r) for r in extra["rewards"]])


def _read_long(source: str | Path | pd.DataFrame) -> pd.DataFrame:
    if isinstance(source, pd.DataFrame):
        return source.reset_index(drop=True)
    path = Path(source)
    if not path.exists():
        raise RewardTableError(f"{path}: no such file")
    try:
        if path.suffix.lower() in (".parquet", ".pq"):
            df = pd.read_parquet(path)
            if "tools" in df.columns:
                df["tools"] = df["tools"].fillna("")
            return df
        # keep_default_na=False: '' in `tools` is the empty subset, not a missing value
        return pd.read_csv(path, dtype={"question_id": str, "tools": str}, keep_default_na=False)
    except Exception as exc:
        raise RewardTableError(f"{path}: cannot read as CSV/Parquet: {exc}") from exc


def _constant_per_question(values: list[str], qids: list[str], q_row: dict[str, int], name: str, col: str) -> list[str]:
    out: list[str | None] = [None] * len(q_row)
    for r, (q, v) in enumerate(zip(qids, values), start=1):
        i = q_row[q]
        if out[i] is None:
            out[i] = v
        elif out[i] != v:
            raise RewardTableError(f"{name}: row {r}, column {col!r}: {v!r} differs from {out[i]!r} given earlier for question {q!r}")
    return out  # type: ignore[return-value]
