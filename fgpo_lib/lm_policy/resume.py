"""A run of ``fgpo lm-train`` that is killed loses nothing it had saved: it resumes from its last dev checkpoint.

The run's partial state lives in a folder beside its record, ``<record>.partial/`` (``records/lm_policy/X.json`` ->
``records/lm_policy/X.json.partial/``), and is deleted once the record is written:

* ``identity.json``: what the run is (table hash, arm settings, backbone, dtype, split, warm start). A partial folder
  of another run is a named error, never silently reused. An arm setting added to the code after the run began
  is the same run where it is at its default (the folder's identity lacks it, and the default trains as before).
* ``warm.pt``: the adapter right after the answer-format warm start, and the warm start's record.
* ``arm.pt``: the arm's state at its last dev point: the adapter, the optimizer and schedule, the data order, the
  random state, the dev curve and best checkpoint, the reward function's counters, and the seconds spent so far.
  FGPO's loop writes it itself; the TRL arms write TRL's own checkpoint (``trl/``) and this file beside it.

The folder is training state and git ignores it (``.gitignore``; ``tests/test_repository.py`` checks): it is about
35 MB for a SmolLM2-135M run (four copies of the 1.8M-parameter adapter in float32: the current one, Adam's two
moments and the best checkpoint, plus the warm start's), not less, since a resumed run must equal an uninterrupted one.
A run that cannot finish on its machine keeps it there; where nothing else outlives the machine, its exact state may be
committed once (``git add -f``) and removed from the tree when the run finishes.

A resumed run continues from that step with the same data order and random state, so FGPO's result equals an
uninterrupted run's; the TRL arms resume through the trainer's ``resume_from_checkpoint``. Writes are atomic (a
temporary file, then a rename), so a kill during a write leaves the previous checkpoint whole.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import torch

from .data import LMPolicyError


def trainable_state(model) -> dict:
    """The adapter's trainable tensors, copied."""
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def restore(model, state: dict) -> None:
    """Copy ``state`` (:func:`trainable_state`) into the model's parameters."""
    params = dict(model.named_parameters())
    for n, t in state.items():
        params[n].data.copy_(t)


def _atomic_save(obj, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


class RunCheckpoint:
    """The partial state of one run (module doc). ``identity``: a JSON-able dict that names the run."""

    def __init__(self, folder: str | Path, identity: dict, config_defaults: dict | None = None) -> None:
        """``config_defaults``: the arm settings' defaults, which fill a setting that ``identity.json``'s
        ``config`` lacks (module doc)."""
        self.folder = Path(folder)
        self.identity = json.loads(json.dumps(identity))
        ident = self.folder / "identity.json"
        if ident.exists():
            try:
                held = json.loads(ident.read_text())
            except json.JSONDecodeError:
                raise LMPolicyError(f"{ident} is not readable JSON; delete {self.folder} to start the run afresh") from None
            if isinstance(held.get("config"), dict) and config_defaults:
                held["config"] = {**json.loads(json.dumps(config_defaults)), **held["config"]}
            if held != self.identity:
                diff = sorted(k for k in set(held) | set(self.identity) if held.get(k) != self.identity.get(k))
                raise LMPolicyError(f"{self.folder} holds a partial run with other settings ({', '.join(diff)}); "
                                    f"rerun with that run's settings to resume it, or delete the folder to start afresh")
        else:
            self.folder.mkdir(parents=True, exist_ok=True)
            ident.write_text(json.dumps(self.identity, indent=1, sort_keys=True) + "\n")

    @property
    def trl_dir(self) -> Path:
        """Where a TRL arm writes the trainer's own checkpoints."""
        return self.folder / "trl"

    def _load(self, name: str):
        path = self.folder / name
        if not path.exists():
            return None
        try:
            return torch.load(path, weights_only=False)
        except Exception as exc:  # a truncated or foreign file: say which, and how to go on
            raise LMPolicyError(f"{path} cannot be read ({type(exc).__name__}: {exc}); delete it to redo that part of the run") from None

    def save_warm(self, model, record: dict) -> None:
        _atomic_save({"adapter": trainable_state(model), "record": record}, self.folder / "warm.pt")

    def load_warm(self, model) -> dict | None:
        """Restore the warm-started adapter into ``model`` and return the warm start's record, or ``None``."""
        held = self._load("warm.pt")
        if held is None:
            return None
        restore(model, held["adapter"])
        return held["record"]

    def save_arm(self, state: dict) -> None:
        _atomic_save(state, self.folder / "arm.pt")

    def load_arm(self) -> dict | None:
        return self._load("arm.pt")

    def trl_settings(self, eval_every: int) -> dict:
        """A TRL config's saving settings for this run: TRL's own checkpoint every ``eval_every`` steps in
        :attr:`trl_dir`, the last two kept (a kill between TRL's save and :meth:`save_trl_state` leaves a whole one)."""
        return {"save_strategy": "steps", "save_steps": eval_every, "save_total_limit": 2, "output_dir": str(self.trl_dir)}

    def save_trl_state(self, step: int, state: dict) -> None:
        """This run's state beside TRL's checkpoint of ``step``."""
        _atomic_save(state, self.trl_dir / f"checkpoint-{step}" / "arm.pt")

    def load_trl_state(self) -> tuple[str | None, dict | None]:
        """``(TRL checkpoint folder, this run's state)`` of the newest TRL checkpoint that has both, or ``(None, None)``."""
        done = sorted((p for p in self.trl_dir.glob("checkpoint-*") if (p / "arm.pt").exists()), key=lambda p: int(p.name.split("-")[-1]))
        if not done:
            return None, None
        return str(done[-1]), self._load(str(done[-1].relative_to(self.folder) / "arm.pt"))

    def finish(self) -> None:
        """The record is written: drop the partial state."""
        shutil.rmtree(self.folder, ignore_errors=True)
