"""How long ``fgpo select`` takes on a saved language-model selector, and what it prints on standard error.

Builds a selector around SmolLM2-135M (the study's policy backbone, its GGUF from PyPI) with a fresh LoRA adapter
(training does not change the load), saves it, then runs ``fgpo select DIR --question ...`` several times in new
processes: the first converts the GGUF once into the backbone cache (``fgpo_lib.lm_policy.model.CONVERTED_CACHE``),
the later ones read the cache. Prints each call's wall seconds, the bytes it wrote on standard error, and whether its
choice and probabilities equal those of the first call (the cache holds the same tensors).

    python benchmarks/bench_select.py [--calls 3] [--fresh]      # --fresh: empty this backbone's cache first
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FGPO = Path(sys.executable).parent / "fgpo"


def build_selector(folder: Path) -> str:
    """A SmolLM2 LoRA selector over the GeneRegion 4-tool library, saved in ``folder``; returns the GGUF's sha256."""
    from fgpo_lib.lm_policy.model import backbone_identity, load_backbone, with_lora
    from fgpo_lib.lm_policy.selector import lm_selector
    from fgpo_lib.table import RewardTable

    table = RewardTable.load(ROOT / "tables" / "generegion__qwen2.5-coder-0.5b__4tools.npz")
    model, tok = load_backbone("smollm2-135m")
    ident = backbone_identity("smollm2-135m")
    lm_selector(table.space, with_lora(model).eval(), tok, ident).save(folder)
    return ident["sha256"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--fresh", action="store_true", help="remove this backbone's converted cache first (the first call then converts)")
    args = ap.parse_args()
    from fgpo_lib.lm_policy.model import CONVERTED_CACHE

    with tempfile.TemporaryDirectory() as tmp:
        sel = Path(tmp) / "sel"
        sha = build_selector(sel)
        if args.fresh:
            for folder in CONVERTED_CACHE.glob(f"{sha[:32]}-*"):
                shutil.rmtree(folder)
        first = None
        for call in range(1, args.calls + 1):
            t = time.perf_counter()
            done = subprocess.run([str(FGPO), "select", str(sel), "--question", "Which kind of region is ACGTTGCAACGT?"], capture_output=True, text=True, cwd=tmp)
            seconds = time.perf_counter() - t
            row = json.loads(done.stdout) if done.returncode == 0 else None
            first = first or row
            print(f"call {call}: {seconds:.1f} s, exit {done.returncode}, {len(done.stderr.encode())} bytes on stderr, "
                  f"same choice and probabilities as call 1: {row == first}" + (f"\n  stderr: {done.stderr.strip()[:300]}" if done.stderr else ""))


if __name__ == "__main__":
    main()
