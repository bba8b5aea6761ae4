"""``fgpo ondemand``: the sampled estimators with every cell an on-demand LLM call, on 12 to 20 tools
(:mod:`fgpo_lib.ondemand`), written to ``records/scaling_llm/``."""

from __future__ import annotations


def add_arguments(ap) -> None:
    """The flags of ``fgpo ondemand``."""
    from ..genomics.benchmarks import BENCHMARKS
    from ..genomics.libraries import LARGE_LIBRARIES
    from ..paths import CELL_CACHE, ONDEMAND_RECORDS
    from ..reasoners.registry import REASONERS
    from ..scaling_estimators import ON_DEMAND
    from ..validation import positive_int

    ap.add_argument("--benchmark", required=True, choices=list(BENCHMARKS), help="the built-in benchmark")
    ap.add_argument("--reasoner", required=True, choices=list(REASONERS), help="the reasoner of --table, whose larger library's cells are computed on demand")
    ap.add_argument("--table", required=True, help="the committed 8-tool (163-subset) table of this benchmark and reasoner")
    ap.add_argument("--tools", type=positive_int, default=20, choices=[n for n in LARGE_LIBRARIES if n > 8], help="the larger library whose cells are computed on demand (default 20)")
    ap.add_argument("--estimators", nargs="+", default=list(ON_DEMAND), choices=list(ON_DEMAND), metavar="NAME", help=f"the sampled estimators to run (default all: {', '.join(ON_DEMAND)})")
    ap.add_argument("--reasoner-kwargs", default="{}", help="JSON, e.g. '{\"n_threads\": 1}'")
    ap.add_argument("--cache", default=str(CELL_CACHE), help="the SQLite cell cache (default ~/.cache/fgpo/cells.sqlite)")
    ap.add_argument("--out-dir", default=str(ONDEMAND_RECORDS), help="where the run records go (default records/scaling_llm)")


def run(args) -> int:
    from ..ondemand import run as run_on_demand_command

    return run_on_demand_command(args)
