"""Coverage: which questions could be answered from the tool outputs of at least one subset.

A question is *reachable* from a text (tool outputs) when the text holds evidence that would earn a nonzero score
under the task's rule (:mod:`fgpo_lib.genomics.scoring`), and *fully reachable* when it would earn full credit. By
answer type (:data:`fgpo_lib.genomics.scoring.ANSWER_TYPE`): the gold symbol, species name or sequence string as a
word; ``chromosome N`` for a chromosome; for an alignment, ``chromosome N`` (0.5) and also ``start-end`` (full); for a
list, one gold item (all of them for full); the gene's own record for a protein-coding question; the start of the
gold text for a function; for a multiple-choice question, the gold option's text among those a tool output names
(full: named first, as ``knn`` names its plurality label first). A guess can score on a multiple-choice question
without any evidence; coverage counts evidence only.

Per task, :func:`coverage_table` reports the share reachable (and fully reachable) by some subset of at most
``max_size`` tools, by the best single tool, and by no subset.
"""

from __future__ import annotations

import re

import pandas as pd
from tqdm import tqdm

from ..subsets import SubsetSpace
from .benchmarks import Question, load_benchmark
from .scoring import ANSWER_TYPE, SPECIES, normalize
from .benchmarks import BENCHMARKS
from .generegion import named_options
from .tools import candidate_names, render_outputs, run_subset
from .tools_extra import make_all_tools


def _word(term: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(term)}(?![\w-])", text, re.I) is not None


def reachable(q: Question, text: str, full: bool = False) -> bool:
    """Whether ``text`` (tool outputs) holds the evidence for a nonzero (``full``: full-credit) score (module doc)."""
    kind = ANSWER_TYPE.get(q.task, "text")
    gold = q.answer
    if kind in ("symbol", "dna", "protein"):
        return _word(str(gold), text) if kind == "symbol" else str(gold) in text
    if kind == "chromosome":
        return _word(f"chromosome {str(gold)[3:]}", text)
    if kind == "yesno":
        names = candidate_names(q.text)
        return any(re.search(rf"Gene \d+: {re.escape(n)},", text) for n in names)
    if kind == "species":
        return any(_word(name, text) for name in SPECIES[str(gold)])
    if kind == "alignment":
        chrom, _, span = str(gold).partition(":")
        return _word(f"chromosome {chrom[3:]}", text) and (span in text or not full)
    if kind in ("gene_list", "locus_list"):
        items = gold if isinstance(gold, tuple) else tuple(x.strip() for x in str(gold).split(","))
        found = [_word(i, text) for i in items if i]
        return all(found) if full else any(found)
    if kind == "number":
        return f"GC {gold}%" in text
    if kind == "choice":
        named = named_options(text)
        return bool(named) and (named[0] == gold if full else gold in named)
    if kind == "integer":
        return (f"length {gold} nt" if q.task == "Sequence length" else f"longest ORF (forward, ATG to stop): {gold} codons") in text
    if kind == "enzymes":
        if gold == "none":
            return "no cuts" in text
        cuts = text.split("cuts:", 1)[1] if "cuts:" in text else ""
        return all(_word(e, cuts.split("|")[0]) for e in str(gold).split(", "))
    return normalize(str(gold))[:40] in normalize(text)


def reachability(questions: list[Question], space: SubsetSpace, progress: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two ``(n_questions, n_subsets)`` boolean DataFrames: reachable, and fully reachable, from each subset's outputs."""
    tools = make_all_tools()
    some, full = [], []
    for q in tqdm(questions, desc="coverage", disable=not progress):
        cache: dict = {}
        texts = [render_outputs(run_subset(tools, space.names_of(s), q.text, cache)) for s in range(space.n_subsets)]
        some.append([reachable(q, t) for t in texts])
        full.append([reachable(q, t, full=True) for t in texts])
    index, columns = [q.qid for q in questions], space.labels()
    return pd.DataFrame(some, index=index, columns=columns), pd.DataFrame(full, index=index, columns=columns)


def coverage_table(benchmark: str, max_size: int = 4, progress: bool = False) -> pd.DataFrame:
    """Per task and overall: questions, % reachable by some subset, best single tool and its %, the best subset and
    its % (a task may need a combination: gene_record reads the ids that gene_search finds), % by no subset."""
    if max_size < 1:
        raise ValueError(f"--max-size {max_size}: coverage compares single tools and subsets, so it needs --max-size of at least 1")
    questions = load_benchmark(benchmark)
    library = BENCHMARKS[benchmark].tools
    space = SubsetSpace(len(library), max_size=min(max_size, len(library)), tool_names=library)
    reach, full = reachability(questions, space, progress)
    singles = [space.label(space.index_of([t])) for t in library]
    tasks = pd.Series([q.task for q in questions], index=reach.index)
    rows = []
    for task, idx in list(tasks.groupby(tasks, sort=False).groups.items()) + [("all", reach.index)]:
        r = reach.loc[idx]
        single = r[singles].mean()
        rows.append(
            {
                "task": task,
                "questions": len(r),
                "reachable_%": 100 * r.any(axis=1).mean(),
                "fully_reachable_%": 100 * full.loc[idx].any(axis=1).mean(),
                "best_single_tool": single.idxmax() if single.max() > 0 else "no tool alone",
                "best_single_tool_%": 100 * single.max(),
                "best_subset": r.mean().idxmax() or "(no tool)",
                "best_subset_%": 100 * r.mean().max(),
                "no_subset_%": 100 * (~r.any(axis=1)).mean(),
            }
        )
    return pd.DataFrame(rows)
