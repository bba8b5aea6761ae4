"""``fgpo verify-table``: random cells of a precomputed table re-evaluated live with the reasoner its provenance
names (and its extra cells), against the table."""

from __future__ import annotations

import argparse

from ..validation import nonneg_int, positive_int, seed_int


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("table", help="a reward table (.npz) made by fgpo precompute")
    p.add_argument("--sample", type=positive_int, default=20, help="cells to re-evaluate (default 20)")
    p.add_argument("--extras", type=nonneg_int, default=5, help="questions whose extra cells (All-Tools, selection call) to re-evaluate; 0: none")
    p.add_argument("--seed", type=seed_int, default=0, help="sample seed (default 0)")
    p.add_argument("--strict", action="store_true", help="exit 1 unless every cell agrees")


def run(args: argparse.Namespace) -> int:
    from ..table import RewardTable
    from ..verify import table_reasoner, table_spec, verify_extras, verify_table

    table = RewardTable.load(args.table)
    table_spec(table)  # a provenance this code cannot use is named before any model loads
    reasoner = table_reasoner(table)
    res = verify_table(table, args.sample, args.seed, reasoner)
    print(f"{args.table}: {res['agree']} of {res['checked']} re-evaluated cells agree ({100 * res['agree'] / max(res['checked'], 1):.1f}%)")
    for qid, subset, old, new in res["disagreements"][:20]:
        print(f"  differs: {qid} / {subset!r}: table {old}, live {new}")
    extra = verify_extras(table, args.extras, args.seed, reasoner)
    if extra["checked"]:
        print(f"extra cells (All-Tools, selection call) of {min(args.extras, table.n_questions)} questions: {extra['agree']} of {extra['checked']} agree")
        for qid, name, old, new in extra["disagreements"][:20]:
            print(f"  differs: {qid} / {name}: table {old!r}, live {new!r}")
    elif table.extras and args.extras:
        print("extra cells: none of the kinds this code re-derives")
    everything = res["agree"] == res["checked"] and extra["agree"] == extra["checked"]
    return 0 if everything or not args.strict else 1
