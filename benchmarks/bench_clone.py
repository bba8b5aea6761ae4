"""How much a clone of this repository downloads and keeps: a full clone, ``git clone --depth 1`` and ``git clone
--filter=blob:none``, each from this checkout's HEAD over ``file://`` (the same objects a server sends), its ``.git``
folder and the whole clone in MB.

    python benchmarks/bench_clone.py

The history holds training state committed before it left git (issue: training state out of git), so a full
clone is much larger than its working tree; the two other forms download only what HEAD needs.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def size_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def main() -> None:
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    forms = {"full clone": [], "--depth 1": ["--depth", "1"], "--filter=blob:none": ["--filter=blob:none"]}
    with tempfile.TemporaryDirectory() as tmp:
        for name, flags in forms.items():
            out = Path(tmp) / name.strip("-").replace("=", "_").replace(" ", "_").replace(":", "_")
            # upload-pack serves a filter only where allowed: as GitHub does, allowed here for this one clone
            subprocess.run(["git", "clone", "-q", "--no-local", "--upload-pack", "git -c uploadpack.allowFilter=true upload-pack", *flags, f"file://{ROOT}", str(out)],
                           check=True)
            print(f"{name:<20} at {head}: .git {size_mb(out / '.git'):.0f} MB, the whole clone {size_mb(out):.0f} MB")


if __name__ == "__main__":
    main()
