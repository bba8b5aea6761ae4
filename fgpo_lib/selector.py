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
from .selector_folder import FORMAT_NAME, FORMAT_VERSION, SelectorError, read_consistently, read_selector_doc, write_selector_folder  # noqa: F401  (the format names are part of this module's interface)
from .subsets import SubsetSpace

#: the kinds of selector: ``lm``'s code lives with the language-model policy and is imported by name when used (as
#: the reasoner registry's targets are), so this module sits below :mod:`fgpo_lib.lm_policy`
KINDS = {"linear": None, "lm": "fgpo_lib.lm_policy.selector"}


def _kind_module(kind: str):
    import importlib

    return importlib.import_module(KINDS[kind])
#: fixed texts whose features fingerprint a featurizer (a changed featurizer gives other features of them)
PROBE_TEXTS = ("Which gene is SNP rs1217074595 associated with?", "What is the GC content of ACGTTGCA?", "Is it raining in Oslo today?", "")


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
    settings = spec.get("settings") or {}
    if not isinstance(settings, dict):
        raise SelectorError(f"{folder}: field featurizer.settings must be an object, got {type(settings).__name__}")
    try:
        feat = FEATURIZERS[name](**settings)
        fingerprint = featurizer_fingerprint(feat)
    except Exception as exc:  # noqa: BLE001 - a missing model package, bad settings: named
        raise SelectorError(f"{folder}: its featurizer {name!r} cannot be built here from its settings {settings} ({type(exc).__name__}: {exc})") from None
    if fingerprint != spec.get("fingerprint"):
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

            x = torch.as_tensor(np.asarray(self._featurizer()(questions), np.float32))
            with torch.no_grad():
                return torch.softmax(self.policy(x).double(), dim=-1).numpy()
        return _kind_module("lm").lm_probabilities(self, questions)

    def _featurizer(self):
        """The linear selector's featurizer, built on first use."""
        if self._featurize is None:
            from .features import FEATURIZERS

            self._featurize = FEATURIZERS[self.featurizer["name"]](**(self.featurizer.get("settings") or {}))
        return self._featurize

    @property
    def subset_names(self) -> list[str]:
        """The columns of :meth:`probabilities`: each subset's ``'+'``-joined tool names (``''``: no tool)."""
        return self.space.labels()

    def predicted_rewards(self, questions: Sequence[str]) -> np.ndarray | None:
        """``(len(questions), n_subsets)``: each subset's predicted reward, for a reference selector (its ridge
        predictions: the policy's logits times its temperature); None for a selector that predicts no reward."""
        if self.kind != "linear" or self.provenance.get("method") != "reference":
            return None
        import torch

        temperature = float(((self.provenance.get("config") or {}).get("reference") or {}).get("temperature", 0.05))
        x = torch.as_tensor(np.asarray(self._featurizer()(_texts(questions)), np.float32))
        with torch.no_grad():
            return self.policy(x).double().numpy() * temperature

    def choices(self, questions: Sequence[str], max_tools: int | None = None, threshold: float = 0.0, fallback: Sequence[str] | None = None) -> np.ndarray:
        """``(len(questions),)``: each question's chosen subset, as a canonical index: the most probable one, within
        ``max_tools`` tools, or ``fallback`` where that probability is below ``threshold`` (:mod:`fgpo_lib.selector_rule`)."""
        from .selector_rule import choose, rule_from

        return choose(self.probabilities(questions), self.space, rule_from(max_tools, threshold, fallback))[0]

    def select(self, questions: Sequence[str], max_tools: int | None = None, threshold: float = 0.0, fallback: Sequence[str] | None = None) -> list[tuple[str, ...]]:
        """The tools to call for each question, by name in canonical order (:meth:`choices`)."""
        return [self.space.names_of(int(s)) for s in self.choices(questions, max_tools, threshold, fallback)]

    def explain(self, questions: Sequence[str], max_tools: int | None = None, threshold: float = 0.0, fallback: Sequence[str] | None = None, top: int = 3) -> list[dict]:
        """Per question, the choice and why (:func:`fgpo_lib.selector_rule.explain`): its policy probability (not a
        chance of being right), the runner-up subsets, each tool's marginal probability, the expected tools and, for a
        reference selector, the predicted rewards."""
        from .selector_rule import explain, rule_from

        return explain(self.probabilities(questions), self.space, rule_from(max_tools, threshold, fallback), top, self.predicted_rewards(questions))

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
        """Write the folder (module doc) whole or not at all (:func:`~fgpo_lib.selector_folder.write_selector_folder`):
        the weights and ``selector.json`` with every file's sha256."""

        def write_files(staging: Path) -> None:
            if self.kind == "linear":
                from safetensors.torch import save_file

                save_file({k: v.detach().contiguous() for k, v in self.policy.state_dict().items()}, str(staging / "weights.safetensors"))
            else:
                _kind_module("lm").save_adapter(self, staging)

        return write_selector_folder(folder, write_files, self.to_json())

    @classmethod
    def load(cls, folder: str | Path, tools: Sequence[str] | None = None) -> "Selector":
        """Read a folder written by :meth:`save` (module doc); every problem is a :class:`SelectorError` naming it.
        ``tools``: the agent's tool names, in any order; a selector trained on other tools is refused, naming both."""
        folder = Path(folder)
        return read_consistently(folder, lambda: cls._load_once(folder, tools))

    @classmethod
    def _load_once(cls, folder: Path, tools: Sequence[str] | None) -> "Selector":
        doc = read_selector_doc(folder, KINDS)
        if tools is not None:
            check_tools(doc["space"]["tool_names"], tools, folder)
        try:
            space = SubsetSpace.from_dict(doc["space"])
        except Exception as exc:  # noqa: BLE001
            raise SelectorError(f"{folder / 'selector.json'}: malformed subset space ({exc})") from None
        if doc["kind"] == "lm":
            return _kind_module("lm").load_lm_selector(cls, folder, doc, space)
        return cls._load_linear(folder, doc, space)

    @classmethod
    def _load_linear(cls, folder: Path, doc: dict, space: SubsetSpace) -> "Selector":
        import torch
        from safetensors.torch import load_file

        from .policy import PARAMETERIZATIONS, SubsetPolicy

        shape = doc.get("policy")
        if not isinstance(shape, dict) or not isinstance(shape.get("n_features"), int) or isinstance(shape.get("n_features"), bool) or shape["n_features"] < 1:
            raise SelectorError(f"{folder / 'selector.json'}: field policy.n_features must be a whole number >= 1")
        if shape.get("parameterization") not in PARAMETERIZATIONS:
            raise SelectorError(f"{folder / 'selector.json'}: field policy.parameterization must be one of {', '.join(PARAMETERIZATIONS)}, got {shape.get('parameterization')!r}")
        if not isinstance(shape.get("hidden", 0), int) or isinstance(shape.get("hidden", 0), bool) or shape.get("hidden", 0) < 0:
            raise SelectorError(f"{folder / 'selector.json'}: field policy.hidden must be a whole number >= 0")
        if not isinstance(doc.get("featurizer"), dict):
            raise SelectorError(f"{folder / 'selector.json'}: field featurizer must be an object")
        feat = _featurizer_from_spec(doc["featurizer"], folder)
        weights = folder / "weights.safetensors"
        if not weights.is_file():
            raise SelectorError(f"{folder}: no weights.safetensors; the folder is incomplete")
        try:
            policy = SubsetPolicy(int(shape["n_features"]), space, shape["parameterization"], int(shape.get("hidden", 0)))
            state = load_file(str(weights))
        except Exception as exc:  # noqa: BLE001 - wrong shapes, truncated file
            raise SelectorError(f"{weights}: does not hold this selector's policy ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})") from None
        check_weights(state, weights)
        try:
            policy.load_state_dict({k: torch.as_tensor(v) for k, v in state.items()})
        except Exception as exc:  # noqa: BLE001 - other names or shapes
            raise SelectorError(f"{weights}: does not hold this selector's policy ({type(exc).__name__}: {str(exc).splitlines()[0][:200]})") from None
        if np.asarray(feat(list(PROBE_TEXTS[:1]))).shape[1] != int(shape["n_features"]):
            raise SelectorError(f"{folder}: its featurizer gives other feature dimensions than its weights take")
        policy.eval()
        return cls(space, "linear", doc.get("provenance") or {}, featurizer=doc["featurizer"], policy=policy, _featurize=feat)


def check_tools(saved: Sequence[str], tools: Sequence[str], folder) -> None:
    """A selector trained on the tools ``saved`` used in an agent whose tools are ``tools`` (any order): the same
    names, or a :class:`SelectorError` naming both lists."""
    if isinstance(tools, str) or not all(isinstance(t, str) for t in tools):
        raise SelectorError(f"tools must be a list of tool names, got {tools!r}")
    if sorted(saved) != sorted(tools):
        raise SelectorError(f"{folder}: this selector chooses among the tools {', '.join(saved)}, but the agent's tools are {', '.join(tools)}: "
                            "a selector of another agent; train one on this agent's reward table")


def check_weights(state: dict, path) -> None:
    """Every tensor of a selector's weights is floating point and finite, or a :class:`SelectorError` naming it."""
    import torch

    for name, tensor in state.items():
        t = torch.as_tensor(tensor)
        if not t.is_floating_point():
            raise SelectorError(f"{path}: tensor {name!r} holds {t.dtype} values, not floating point; the file is not a trained selector's")
        if not bool(torch.isfinite(t).all()):
            raise SelectorError(f"{path}: tensor {name!r} holds NaN or infinite values; the selector cannot give probabilities (retrain it)")


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
