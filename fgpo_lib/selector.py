"""`Selector`: a trained tool selector you can save, load and use in your own agent on questions no table holds.

    from fgpo_lib import Selector

    sel = Selector.load("my_selector/")
    sel.select(["Is it raining in Oslo?"])            # -> [("weather",)]   the tools to call, by name
    sel.probabilities(["Is it raining in Oslo?"])     # -> (1, n_subsets)    pi(S | question), canonical order

``fgpo train ... --save-selector DIR`` and ``fgpo lm-train ... --save-selector DIR`` write one; ``fgpo select DIR
--question TEXT`` (or ``--questions Q.jsonl``) uses one from the command line.

Two kinds, one folder format (``selector.json`` plus weights):

* ``linear``: the linear (or one-hidden-layer) head of :mod:`fgpo_lib.train` on a named featurizer
  (:mod:`fgpo_lib.features`): ``weights.safetensors`` holds the :class:`~fgpo_lib.policy.SubsetPolicy`'s tensors;
  the featurizer's name, settings and fingerprint (a hash of its features of fixed probe texts) are in the JSON.
* ``lm``: the LoRA language-model policy (:mod:`fgpo_lib.lm_policy`): ``adapter/`` is peft's ``save_pretrained``
  folder, and the backbone is named by its identity (its file's sha256); it selects by candidate scoring (the argmax
  of Eq. 4's scores over every candidate answer).

Every selector carries its provenance: the training table's content hash, the method and its config, the checkpoint
(dev-selected or final), the library version and when it was made. Loading a folder of another format version, or
whose featurizer or backbone is missing here or computes something else, is a :class:`SelectorError` naming it.

Array convention: ``probabilities: (n_questions, n_subsets)`` in the canonical order of the selector's
:class:`~fgpo_lib.subsets.SubsetSpace`; ``select`` gives each question's argmax subset as a tuple of tool names.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from ._version import __version__
from .subsets import SubsetSpace

FORMAT_NAME = "fgpo-selector"
FORMAT_VERSION = 1
#: the kinds of selector: ``lm``'s code lives with the language-model policy and is imported by name when used (as
#: the reasoner registry's targets are), so this module sits below :mod:`fgpo_lib.lm_policy`
KINDS = {"linear": None, "lm": "fgpo_lib.lm_policy.selector"}


def _kind_module(kind: str):
    import importlib

    return importlib.import_module(KINDS[kind])
#: fixed texts whose features fingerprint a featurizer (a changed featurizer gives other features of them)
PROBE_TEXTS = ("Which gene is SNP rs1217074595 associated with?", "What is the GC content of ACGTTGCA?", "Is it raining in Oslo today?", "")


class SelectorError(ValueError):
    """A selector folder that cannot be saved, loaded or used, named (its path and what is wrong)."""


def featurizer_fingerprint(featurizer) -> str:
    """sha256 of the featurizer's features of :data:`PROBE_TEXTS`, rounded to 5 decimals (a stable identity)."""
    feats = np.round(np.asarray(featurizer(list(PROBE_TEXTS)), np.float64), 5)
    return hashlib.sha256(np.ascontiguousarray(feats).tobytes() + str(feats.shape).encode()).hexdigest()


def _featurizer_spec(name) -> dict:
    """The JSON that rebuilds a named featurizer: ``{"name", "settings", "fingerprint"}``."""
    from dataclasses import asdict, is_dataclass

    from .features import FEATURIZERS, make_featurizer

    if not isinstance(name, str) or name not in FEATURIZERS:
        raise SelectorError(f"a selector saves a named featurizer ({', '.join(FEATURIZERS)}), got {name!r}; train with TrainConfig.featurizer set to one of them")
    feat = make_featurizer(name)
    settings = asdict(feat) if is_dataclass(feat) else {}
    return {"name": name, "settings": settings, "fingerprint": featurizer_fingerprint(feat)}


def _featurizer_from_spec(spec: dict, folder: Path):
    from .features import FEATURIZERS

    name = spec.get("name")
    if name not in FEATURIZERS:
        raise SelectorError(f"{folder}: its featurizer {name!r} is not one this library has ({', '.join(FEATURIZERS)})")
    try:
        feat = FEATURIZERS[name](**(spec.get("settings") or {}))
    except Exception as exc:  # noqa: BLE001 - a missing model package, bad settings: named
        raise SelectorError(f"{folder}: its featurizer {name!r} cannot be built here ({type(exc).__name__}: {exc})") from None
    if featurizer_fingerprint(feat) != spec.get("fingerprint"):
        raise SelectorError(f"{folder}: its featurizer {name!r} computes other features here than when it was saved (another version of its model "
                            "or code), so its weights do not apply; retrain the selector here")
    return feat


@dataclass
class Selector:
    """A trained selector (module doc). Build one with :meth:`from_training`, :meth:`from_lm` or :meth:`load`."""

    space: SubsetSpace
    kind: str
    provenance: dict = field(default_factory=dict)
    featurizer: dict | None = None
    """``linear``: ``{"name", "settings", "fingerprint"}`` of the featurizer."""
    policy: object | None = None
    """``linear``: the :class:`~fgpo_lib.policy.SubsetPolicy`."""
    lm: dict | None = None
    """``lm``: ``{"backbone": identity, "length_norm", "temperature", "model", "tokenizer"}`` (model loaded lazily)."""
    _featurize: object = field(default=None, repr=False)

    # --- use -------------------------------------------------------------------------------------------------------
    @property
    def tool_names(self) -> tuple[str, ...]:
        return self.space.tool_names

    def probabilities(self, questions: Sequence[str]) -> np.ndarray:
        """``(len(questions), n_subsets)``: the policy's distribution over subsets for each question text."""
        questions = _texts(questions)
        if not questions:
            return np.zeros((0, self.space.n_subsets))
        if self.kind == "linear":
            import torch

            if self._featurize is None:
                from .features import FEATURIZERS

                self._featurize = FEATURIZERS[self.featurizer["name"]](**(self.featurizer.get("settings") or {}))
            x = torch.as_tensor(np.asarray(self._featurize(questions), np.float32))
            with torch.no_grad():
                return torch.softmax(self.policy(x).double(), dim=-1).numpy()
        return _kind_module("lm").lm_probabilities(self, questions)

    def choices(self, questions: Sequence[str]) -> np.ndarray:
        """``(len(questions),)``: each question's argmax subset, as a canonical index."""
        return self.probabilities(questions).argmax(axis=1)

    def select(self, questions: Sequence[str]) -> list[tuple[str, ...]]:
        """The tools to call for each question: its argmax subset, as tool names in canonical order."""
        return [self.space.names_of(int(s)) for s in self.choices(questions)]

    # --- build ------------------------------------------------------------------------------------------------------
    @classmethod
    def from_training(cls, table, config, keep: dict, record: dict | None = None) -> "Selector":
        """The selector of one :func:`fgpo_lib.train.train` run, from its ``keep`` dict (the policy it trained)."""
        from dataclasses import asdict

        from .algos.registry import METHODS

        if METHODS[config.method].family == "baseline":
            raise SelectorError(f"method {config.method!r} is an untrained reference policy: it trains no policy to save as a selector")
        if not keep or "policy" not in keep:
            raise SelectorError("no trained policy was kept: pass keep={} to train()")
        policy = keep["policy"]
        prov = {"kind": "linear", "method": config.method, "config": json.loads(json.dumps(asdict(config), default=str)), "checkpoint": keep.get("checkpoint", "final"),
                "table_content_hash": table.content_hash(), "table_provenance": table.provenance, "fgpo_version": __version__,
                "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
        if record is not None:
            prov["run_created"] = record.get("created")
        return cls(table.space, "linear", prov, featurizer=_featurizer_spec(config.featurizer), policy=policy)

    # --- files -------------------------------------------------------------------------------------------------------
    def to_json(self) -> dict:
        doc = {"format": FORMAT_NAME, "version": FORMAT_VERSION, "kind": self.kind, "space": self.space.to_dict(), "provenance": self.provenance}
        if self.kind == "linear":
            doc |= {"featurizer": self.featurizer, "policy": {"parameterization": self.policy.parameterization, "n_features": _n_features(self.policy),
                                                              "hidden": _hidden(self.policy)}}
        else:
            doc |= {"lm": {k: v for k, v in self.lm.items() if k not in ("model", "tokenizer")}}
        return doc

    def save(self, folder: str | Path) -> Path:
        """Write the folder (module doc): ``selector.json`` and the weights, each atomically."""
        from .files import atomic_write, atomic_write_json

        folder = check_selector_dir(folder)
        folder.mkdir(parents=True, exist_ok=True)
        if self.kind == "linear":
            from safetensors.torch import save_file

            tensors = {k: v.detach().contiguous() for k, v in self.policy.state_dict().items()}
            atomic_write(folder / "weights.safetensors", lambda tmp: save_file(tensors, str(tmp)))
        else:
            _kind_module("lm").save_adapter(self, folder)
        atomic_write_json(folder / "selector.json", self.to_json())
        return folder

    @classmethod
    def load(cls, folder: str | Path) -> "Selector":
        """Read a folder written by :meth:`save` (module doc); every problem is a :class:`SelectorError` naming it."""
        folder = Path(folder)
        meta_path = folder / "selector.json"
        if not meta_path.is_file():
            raise SelectorError(f"{folder}: not a selector folder (no selector.json); fgpo train --save-selector DIR writes one")
        try:
            doc = json.loads(meta_path.read_text())
        except (ValueError, UnicodeDecodeError) as exc:
            raise SelectorError(f"{meta_path}: not readable JSON ({exc})") from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
            raise SelectorError(f"{meta_path}: not an fgpo selector (format {doc.get('format') if isinstance(doc, dict) else None!r})")
        if doc.get("version") != FORMAT_VERSION:
            raise SelectorError(f"{meta_path}: selector format version {doc.get('version')!r}; this library reads version {FORMAT_VERSION}")
        if doc.get("kind") not in KINDS:
            raise SelectorError(f"{meta_path}: unknown selector kind {doc.get('kind')!r}; known: {', '.join(KINDS)}")
        try:
            space = SubsetSpace.from_dict(doc["space"])
        except Exception as exc:  # noqa: BLE001
            raise SelectorError(f"{meta_path}: malformed subset space ({exc})") from None
        if doc["kind"] == "lm":
            return _kind_module("lm").load_lm_selector(cls, folder, doc, space)
        return cls._load_linear(folder, doc, space)

    @classmethod
    def _load_linear(cls, folder: Path, doc: dict, space: SubsetSpace) -> "Selector":
        import torch
        from safetensors.torch import load_file

        from .policy import SubsetPolicy

        feat = _featurizer_from_spec(doc.get("featurizer") or {}, folder)
        shape = doc.get("policy") or {}
        weights = folder / "weights.safetensors"
        if not weights.is_file():
            raise SelectorError(f"{folder}: no weights.safetensors; the folder is incomplete")
        try:
            policy = SubsetPolicy(int(shape["n_features"]), space, shape["parameterization"], int(shape.get("hidden", 0)))
            state = load_file(str(weights))
            policy.load_state_dict({k: torch.as_tensor(v) for k, v in state.items()})
        except Exception as exc:  # noqa: BLE001 - wrong shapes, truncated file
            raise SelectorError(f"{weights}: does not hold this selector's policy ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})") from None
        if np.asarray(feat(list(PROBE_TEXTS[:1]))).shape[1] != int(shape["n_features"]):
            raise SelectorError(f"{folder}: its featurizer gives other feature dimensions than its weights take")
        policy.eval()
        return cls(space, "linear", doc.get("provenance") or {}, featurizer=doc["featurizer"], policy=policy, _featurize=feat)


def train_selector(table, config=None, **train_kwargs) -> tuple["Selector", dict]:
    """``(selector, run record)``: :func:`fgpo_lib.train.train` on ``table`` with ``config`` (default
    ``TrainConfig()``), and the selector of the policy it trained (the dev-selected checkpoint where ``splits`` give a
    dev split, else the final one)."""
    from .train import TrainConfig, train

    config = TrainConfig() if config is None else config
    keep: dict = {}
    record = train(table, config, keep=keep, **train_kwargs)
    return Selector.from_training(table, config, keep, record), record


def _n_features(policy) -> int:
    body = policy.body
    return int(body[0].in_features) if hasattr(body, "__getitem__") else int(policy.head.in_features)


def _hidden(policy) -> int:
    body = policy.body
    return int(body[0].out_features) if hasattr(body, "__getitem__") else 0


def _texts(questions) -> list[str]:
    if isinstance(questions, str):
        raise SelectorError("give a list of question texts, not one string (select([text]))")
    out = list(questions)
    bad = [q for q in out if not isinstance(q, str)]
    if bad:
        raise SelectorError(f"every question must be a text, got {type(bad[0]).__name__} {bad[0]!r}")
    return out


def check_selector_dir(folder: str | Path) -> Path:
    """``folder`` as a selector to write, checked before any training: not a file, and not a folder holding anything
    but a selector (a save never mixes its files with others')."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise SelectorError(f"--save-selector {folder}: is a file; give a folder (it is created)")
    if folder.is_dir() and any(folder.iterdir()) and not (folder / "selector.json").exists():
        raise SelectorError(f"--save-selector {folder}: a folder holding other files; give a new or empty folder, or a selector's folder to replace it")
    parent = folder.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise SelectorError(f"--save-selector {folder}: {parent} is a file, not a folder")
    return folder
