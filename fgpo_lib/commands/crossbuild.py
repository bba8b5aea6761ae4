"""``fgpo cross-build``: how a committed LLM table's cells re-derive under this machine's llama.cpp build (one record
per table in ``--out-dir``), or, with ``--controls``, the negative controls of that check."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..validation import nonneg_int, positive_int


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("table", nargs="+", help="reward tables (.npz) made by fgpo precompute")
    p.add_argument("--cells", type=positive_int, default=100, help="random cells re-derived per table (default 100: a 95%% interval of about +-4 points at 95%% agreement)")
    p.add_argument("--extras", type=nonneg_int, default=20, help="questions whose extra cells (All-Tools, selection call) are re-derived (default 20)")
    p.add_argument("--seed", type=nonneg_int, default=1, help="sample seed (default 1; the live test uses 0)")
    p.add_argument("--out-dir", default="records/crossbuild", help="where the records go (default records/crossbuild); a table already measured with this build is skipped")
    p.add_argument("--controls", type=nonneg_int, default=0, metavar="N", help="instead: the negative controls, N cells of each table re-derived with a wrong model and with a wrong prompt, judged by the live test's rule (records in OUT_DIR/controls/)")


def run(args: argparse.Namespace) -> int:
    from ..crossbuild import CONTROLS, file_sha256, load_records, measure, negative_control
    from ..files import atomic_write_json
    from ..reasoners.llm import llama_backend

    out_dir = Path(args.out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise ValueError(f"--out-dir {out_dir}: is a file, not a folder")
    done = load_records(out_dir) if out_dir.is_dir() else {}
    live = llama_backend()
    if args.controls:
        for path in map(Path, args.table):
            for control in CONTROLS:
                rec = negative_control(path, control, args.controls, args.seed, done)
                atomic_write_json(out_dir / "controls" / f"{path.stem}__{control}.json", rec)
                print(f"{path.stem}, control {control}: {rec['agree']}/{rec['checked']} agree; the rule asks {rec['rule_k']}: {'PASSES (cell agreement is blind to it)' if rec['passes'] else 'fails, as it must'}", flush=True)
        return 0
    for path in map(Path, args.table):
        old = done.get(path.stem)
        if old and old["table_sha256"] == file_sha256(path) and old["live_backend"] == live and old["cells"]["checked"] >= args.cells:
            print(f"{path.stem}: measured already ({old['cells']['agree']}/{old['cells']['checked']} cells)")
            continue
        rec = measure(path, args.cells, args.extras, args.seed)
        atomic_write_json(out_dir / f"{path.stem}.json", rec)
        c, e = rec["cells"], rec["extras"]
        print(f"{path.stem} ({rec['table_build']} -> {rec['live_build']}): cells {c['agree']}/{c['checked']} [{c['interval'][0]:.3f}, {c['interval'][1]:.3f}], "
              f"extras {e['agree']}/{e['checked']}, {rec['seconds']:.0f} s", flush=True)
    return 0
