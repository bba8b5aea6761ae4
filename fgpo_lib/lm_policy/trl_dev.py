"""TRL's trainers with the policy's dev selection: a callback that evaluates the dev questions every ``eval_every``
steps (and saves this run's state beside TRL's own checkpoint), the trainer's resume, and the best checkpoint
restored at the end. FGPO's own loop does the same without TRL (:mod:`.fgpo_arm`)."""

from __future__ import annotations

import time

from .dev import DevSelector
from .resume import RunCheckpoint, restore


def train_with_dev(trainer, dev: DevSelector, steps: int, eval_every: int, extra=None, checkpoint: RunCheckpoint | None = None, counters=None) -> float:
    """Run a TRL trainer with a dev evaluation (and checkpoint) every ``eval_every`` steps and at the last, then
    restore the best checkpoint; ``extra() -> dict`` adds fields to each dev point. Returns the training seconds
    (over every session of a resumed run).

    With a ``checkpoint`` (:mod:`.resume`; the trainer's config must carry its ``trl_settings(eval_every)``), each
    TRL checkpoint gets this run's ``arm.pt`` beside it: the dev selector's state, the seconds so far and
    ``counters.get()`` (the arm's own counters, e.g. the reward function's); a run that finds one resumes from it
    through the trainer's ``resume_from_checkpoint``, and ``counters.set`` restores them."""
    from transformers import TrainerCallback

    model = dev.model
    resume_from, held = checkpoint.load_trl_state() if checkpoint else (None, None)
    before = 0.0
    if held is not None:
        dev.load_state(held["dev"])
        if counters is not None:
            counters.set(held["counters"])
        before = held["seconds"]
    started = time.time()

    class DevCheckpoints(TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            if state.global_step % eval_every == 0 or state.global_step == steps:
                model.eval()
                dev(state.global_step, extra() if extra else None)
                model.train()

        def on_save(self, args, state, control, **kw):
            if checkpoint is not None:
                checkpoint.save_trl_state(state.global_step, {"dev": dev.state(), "counters": counters.get() if counters is not None else None,
                                                              "seconds": before + time.time() - started})

    trainer.add_callback(DevCheckpoints())
    model.eval()
    if not resume_from:
        dev(0)
    trainer.train(resume_from_checkpoint=resume_from)
    seconds = before + time.time() - started
    if dev.best_state is not None:
        restore(model, dev.best_state)
    model.eval()
    return seconds
