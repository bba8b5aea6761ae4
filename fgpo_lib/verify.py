"""Live re-derivation of a precomputed table: its cells and its extra cells evaluated again and compared.

A committed table is only as good as the claim that the code here, with the reasoner in its provenance, gives the
same cells. :func:`verify_table` re-evaluates random cells of the subset grid, with no cache, in the same order the
engine used (trie order within a question, so an LLM reuses the same prompt prefixes). :func:`verify_extras` does
the same for the extra cells (:mod:`fgpo_lib.table`): the **All-Tools** cell (every tool of the library in one call)
and the **selection call**, whose parsed subset is the "Tools w/ Desc" baseline.

Both refuse, with the field named, a table whose reasoner, prompt or tools differ from this code's: its cells could
not be re-derived, and a disagreement would mean nothing. Agreement is exact for rewards (to 1e-6) and for the parsed
selection (the same tools); the selection's raw text may differ in what the parser ignores.
"""

from __future__ import annotations

import numpy as np

from .agent import resolve_benchmark
from .precompute import PrecomputeError, PrecomputeSpec, evaluate_question, selection_menu
from .reasoners import Reasoner, make_reasoner
from .reasoners.selection import parse_selection, selection_sha256
from .table import RewardTable


def table_reasoner(table: RewardTable) -> Reasoner:
    """The reasoner named in ``table``'s provenance, built once to pass to both :func:`verify_table` and
    :func:`verify_extras` (each would otherwise load the model and hash its file again)."""
    prov = table.provenance
    if "reasoner" not in prov:
        raise ValueError("table provenance has no 'reasoner': it was not made by fgpo precompute")
    return make_reasoner(prov["reasoner"], **_reasoner_kwargs(prov))


def _reasoner_kwargs(prov: dict) -> dict:
    kwargs = prov.get("reasoner_kwargs") or {}
    if not isinstance(kwargs, dict):
        raise ValueError(f"the table's provenance field 'reasoner_kwargs' must be an object of reasoner settings, got {type(kwargs).__name__} {str(kwargs)[:60]}")
    return kwargs


def _spec_and_reasoner(table: RewardTable, reasoner: Reasoner | None) -> tuple[PrecomputeSpec, Reasoner]:
    """The precompute spec of ``table`` and its reasoner, after checking that this code can re-derive its cells."""
    prov = table.provenance
    for k in ("benchmark", "reasoner", "tools_version"):
        if k not in prov:
            raise ValueError(f"table provenance has no {k!r}: it was not made by fgpo precompute")
    spec = table_spec(table)
    mine = spec.bench.tools_version(table.tool_names)
    if prov["tools_version"] != mine:
        raise ValueError(f"table tools version {prov['tools_version']} differs from this code's {mine}")
    reasoner = reasoner or table_reasoner(table)
    fp = reasoner.fingerprint()
    if fp["model_sha256"] != prov.get("model_sha256") or fp["prompt_sha256"] != prov.get("prompt_sha256"):
        raise ValueError("the reasoner's model file or prompt template differs from the table's provenance")
    return spec, reasoner


def verify_table(table: RewardTable, sample: int, seed: int = 0, reasoner: Reasoner | None = None) -> dict:
    """Re-evaluate ``sample`` random cells of ``table``'s grid ``(n_questions, n_subsets)`` live (no cache) with the
    reasoner in its provenance.

    Returns ``{"checked", "agree", "disagreements": [(qid, subset label, table reward, live reward), ...], "live":
    {(row, subset index): live reward}}``.
    Raises ``ValueError`` for a table whose tools version, model file or prompt differs from this code's.
    """
    spec, reasoner = _spec_and_reasoner(table, reasoner)
    return rederive_cells(table, spec, reasoner, sample, seed)


def table_spec(table: RewardTable) -> PrecomputeSpec:
    """The precompute spec of ``table`` (its benchmark, reasoner, settings, sizes and library) from its provenance."""
    prov = table.provenance
    max_size = prov.get("max_size", 4)
    if isinstance(max_size, bool) or not isinstance(max_size, int):
        raise ValueError(f"the table's provenance field 'max_size' must be a whole number, got {max_size!r}")
    return PrecomputeSpec(prov["benchmark"], prov["reasoner"], _reasoner_kwargs(prov), max_size, tools=table.tool_names)


def _questions(table: RewardTable, spec: PrecomputeSpec) -> dict:
    """The benchmark's questions by id; a table question the benchmark lacks is a named error (a table of another
    benchmark, or a provenance that was edited)."""
    questions = {q.qid: q for q in resolve_benchmark(spec.benchmark).questions()}
    missing = [q for q in table.question_ids if q not in questions]
    if missing:
        raise ValueError(f"the table's question {missing[0]!r} (and {len(missing) - 1} more) is not a question of benchmark {spec.benchmark!r} "
                         "named in its provenance: a table of another benchmark, or an edited provenance")
    return questions


def rederive_cells(table: RewardTable, spec: PrecomputeSpec, reasoner: Reasoner, sample: int, seed: int = 0) -> dict:
    """:func:`verify_table`'s comparison without its provenance checks: ``sample`` random cells of ``table``
    evaluated by ``reasoner`` under ``spec``. Only a negative control calls it directly, with a reasoner the table
    was *not* made with, to show what the check catches."""
    questions = _questions(table, spec)
    rng = np.random.default_rng(seed)
    cells = rng.choice(table.n_questions * table.n_subsets, size=min(sample, table.n_questions * table.n_subsets), replace=False)
    by_q: dict[int, list[int]] = {}
    for c in sorted(int(c) for c in cells):
        by_q.setdefault(c // table.n_subsets, []).append(c % table.n_subsets)
    agree, bad, values = 0, [], {}
    order = {s: i for i, s in enumerate(table.space.trie_order().tolist())}
    for row, subs in by_q.items():
        q = questions[table.question_ids[row]]
        subs = sorted(subs, key=order.get)  # the same evaluation order as precompute
        for s, _, live, status, err in evaluate_question(spec, q, subs, reasoner):
            if status != "ok":
                raise PrecomputeError(f"live evaluation of {q.qid} / {table.space.label(s)!r} failed: {err}")
            values[(row, s)] = live
            if abs(live - float(table.rewards[row, s])) < 1e-6:
                agree += 1
            else:
                bad.append((q.qid, table.space.label(s), float(table.rewards[row, s]), live))
    return {"checked": len(cells), "agree": agree, "disagreements": bad, "live": values}


def verify_extras(table: RewardTable, sample: int, seed: int = 0, reasoner: Reasoner | None = None) -> dict:
    """Re-derive the extra cells of ``sample`` random questions live: the All-Tools cell's reward, and the selection
    call's parsed subset (``None`` where the table recorded it unparseable).

    Returns ``{"checked", "agree", "disagreements": [(qid, extra name, table value, live value), ...]}``; a table
    without extras checks nothing. Raises ``ValueError`` as :func:`verify_table` does, and for selection calls made
    with another selection prompt than this code's.
    """
    extras = {k: v for k, v in table.extras.items() if k in ("all_tools", "selection")}
    if not extras or sample <= 0:
        return {"checked": 0, "agree": 0, "disagreements": []}
    spec, reasoner = _spec_and_reasoner(table, reasoner)
    if "selection" in extras:
        made_with = str(extras["selection"].get("key_label", "")).split(":")[1:2]
        mine = selection_sha256(spec.reasoner_kwargs.get("prompt", "genomics"))[:16]
        if made_with != [mine]:
            raise ValueError(f"the table's selection calls used selection prompt {made_with[0] if made_with else '?'!r}, not this code's {mine!r}")
    questions = _questions(table, spec)
    rows = sorted(np.random.default_rng(seed).choice(table.n_questions, size=min(sample, table.n_questions), replace=False).tolist())
    compared = []  # (qid, extra name, table value, live value, whether they agree)
    for row in rows:
        q = questions[table.question_ids[row]]
        if "all_tools" in extras:
            label = extras["all_tools"]["subsets"][row]
            (_, _, live, status, err), = evaluate_question(spec, q, [tuple(label.split("+"))], reasoner)
            if status != "ok":
                raise PrecomputeError(f"live evaluation of {q.qid} / All-Tools failed: {err}")
            old = float(extras["all_tools"]["rewards"][row])
            compared.append((q.qid, "all_tools", old, live, abs(live - old) < 1e-6))
        if "selection" in extras:
            live = parse_selection(reasoner.select_tools(q.text, selection_menu(table.tool_names, spec.benchmark)), table.tool_names)
            live_label = None if live is None else "+".join(live)
            old = extras["selection"]["subsets"][row]
            compared.append((q.qid, "selection", old, live_label, live_label == old))
    return {"checked": len(compared), "agree": sum(c[-1] for c in compared), "disagreements": [c[:-1] for c in compared if not c[-1]]}
