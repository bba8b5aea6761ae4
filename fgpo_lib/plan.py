"""``fgpo plan``: what a tool library costs before anything is computed.

For ``n_tools`` tools, subsets of at most ``max_size``, ``questions`` questions and a reasoner that takes
``seconds_per_call`` per (question, subset) cell: the subset count, the reward table's memory, the full precompute time,
and the budget of a GRPO run of ``steps`` full-batch updates with groups of ``group_size`` (``steps x questions x G``
calls), with the ratio of the two. The recommendation: full enumeration when the table costs no more than the GRPO
budget; otherwise partial enumeration at about GRPO's budget, naming the estimator the scaling chapter's committed
runs found cheapest among those that matched full FGPO in every setting (:func:`fgpo_lib.scaling.recommend`).
"""

from __future__ import annotations

from dataclasses import dataclass

from .subsets import BYTES_PER_CELL, MAX_TOOLS, available_memory_bytes, count_subsets, format_bytes


@dataclass(frozen=True)
class Plan:
    n_tools: int
    max_size: int
    questions: int
    seconds_per_call: float
    group_size: int = 8
    steps: int = 200

    def __post_init__(self) -> None:
        for name in ("n_tools", "questions", "group_size", "steps"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if not 1 <= self.n_tools <= MAX_TOOLS:
            raise ValueError(f"n_tools must be between 1 and {MAX_TOOLS}, got {self.n_tools}")
        if not 0 <= self.max_size <= self.n_tools:
            raise ValueError(f"max_size must be between 0 and the number of tools ({self.n_tools}), got {self.max_size}")
        if not self.seconds_per_call > 0:
            raise ValueError(f"seconds_per_call must be positive, got {self.seconds_per_call}")

    @property
    def subsets(self) -> int:
        return count_subsets(self.n_tools, self.max_size)

    @property
    def cells(self) -> int:
        return self.questions * self.subsets

    @property
    def table_bytes(self) -> int:
        return self.cells * BYTES_PER_CELL

    @property
    def grpo_calls(self) -> int:
        return self.steps * self.questions * self.group_size

    def check_fits(self, available: int | None = None) -> None:
        have = available_memory_bytes() if available is None else available
        if self.table_bytes > have:
            raise ValueError(f"the reward table ({self.cells:,} cells, {format_bytes(self.table_bytes)}) does not fit in the {format_bytes(have)} of memory available; lower --max-size or --questions")

    def recommendation(self) -> str:
        ratio = self.cells / self.grpo_calls
        if ratio <= 1:
            return f"full FGPO: the whole table costs {ratio:.2f}x the GRPO budget, and its gradient is exact"
        from .scaling import recommend

        measured = recommend(self.n_tools)
        return (
            f"partial enumeration at about the GRPO budget (the whole table costs {ratio:.1f}x it): "
            + (measured or "k-subset FGPO, sum-and-sample or candidate sets (no scaling runs committed to say which)")
        )

    def report(self) -> str:
        hours = lambda calls: calls * self.seconds_per_call / 3600  # noqa: E731
        return "\n".join(
            [
                f"subsets of at most {self.max_size} of {self.n_tools} tools: {self.subsets:,}",
                f"reward table: {self.questions:,} questions x {self.subsets:,} subsets = {self.cells:,} cells, {format_bytes(self.table_bytes)} as float32",
                f"full precompute at {self.seconds_per_call:g} s per call: {hours(self.cells):,.2f} CPU-hours",
                f"GRPO, {self.steps} full-batch updates x G = {self.group_size}: {self.grpo_calls:,} calls, {hours(self.grpo_calls):,.2f} CPU-hours (table / GRPO = {self.cells / self.grpo_calls:.2f})",
                f"recommended: {self.recommendation()}",
            ]
        )
