"""The canonical order of every genomics tool, and a library (a set of tool names) put in it: a subset of a library
runs its tools in this order, so it gives a reasoner the same prompt in every library that holds it."""

from __future__ import annotations

from .region_tools import REGION_TOOL_ORDER
from .tools import TOOL_ORDER
from .tools_extra import EXTRA_TOOL_ORDER

#: every tool, in canonical order: the 8, the 12 of :mod:`fgpo_lib.genomics.tools_extra`, then GeneRegion's 4
ALL_TOOL_ORDER = TOOL_ORDER + EXTRA_TOOL_ORDER + REGION_TOOL_ORDER


def library_tools(tools) -> tuple[str, ...]:
    """``tools`` (any order) as a library in canonical order; an error names any unknown or repeated tool."""
    tools = tuple(tools)
    unknown = [t for t in tools if t not in ALL_TOOL_ORDER]
    if unknown:
        raise ValueError(f"unknown tools {unknown}; the tools are {', '.join(ALL_TOOL_ORDER)}")
    if len(set(tools)) != len(tools):
        raise ValueError(f"a tool appears twice in the library {list(tools)}")
    if not tools:
        raise ValueError("a library needs at least one tool")
    return tuple(t for t in ALL_TOOL_ORDER if t in tools)
