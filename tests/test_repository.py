"""The repository stays light: no tracked file over 5 MB, and a run's training state is ignored by git.

Training state (adapters, optimizer moments, warm starts: 7 to 28 MB a file) once made up 98.5% of the history; a
clone downloads all of it. These tests read git's own index, so they fail on the commit that adds such a file."""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_TRACKED_BYTES = 5 * 1024 * 1024


def _git(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)


pytestmark = pytest.mark.skipif(_git("rev-parse", "--git-dir").returncode != 0, reason="not a git checkout (a source archive has no index to check)")


def test_no_tracked_file_is_over_5_mb():
    files = [f for f in _git("ls-files", "-z").stdout.split("\0") if f]
    assert files, "git ls-files listed nothing"
    heavy = {f: (ROOT / f).stat().st_size for f in files if (ROOT / f).is_file() and (ROOT / f).stat().st_size > MAX_TRACKED_BYTES}
    assert not heavy, f"tracked files over 5 MB (training state or data belongs outside git): {heavy}"


@pytest.mark.parametrize("inside", ["arm.pt", "warm.pt", "identity.json", "trl/checkpoint-20/optimizer.pt"])
def test_a_runs_partial_folder_is_ignored(inside):
    path = f"records/lm_policy/geneseq__fgpo__s9.json.partial/{inside}"
    assert _git("check-ignore", "-q", "--no-index", path).returncode == 0, f"{path} would be tracked"
    assert _git("check-ignore", "-q", "--no-index", "records/lm_policy/geneseq__fgpo__s9.json").returncode == 1, "a run record must stay tracked"


def test_the_committed_table_of_contents_is_the_full_builds():
    """``book/_toc.yml`` is committed (``jupyter-book build book`` finds it on a fresh clone) and equals what a full
    build writes from the chapter registry and the committed tables (fgpo_lib.study.runner.committed_toc)."""
    from fgpo_lib.study.runner import committed_toc

    assert (ROOT / "book" / "_toc.yml").read_text() == committed_toc(), "regenerate book/_toc.yml from fgpo_lib.study.runner.committed_toc()"
    assert _git("check-ignore", "-q", "--no-index", "book/_toc.yml").returncode == 1, "book/_toc.yml must be tracked"
