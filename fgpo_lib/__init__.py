"""fgpo: exact tool-subset policy optimization (FGPO) against sampled GRPO, over precomputed reward tables.

The public names below load on first use (PEP 562), so that ``import fgpo_lib`` and the command line start at once:
torch, pandas and the rest are imported by the modules that need them, when they are needed. ``fgpo_lib.train`` is
the training *function* (as ``from fgpo_lib import train`` gives it), although a submodule of the same name defines
it: the package keeps the function when the submodule is imported (:class:`_Package`).
"""

import sys


def _quiet_interrupt_while_starting() -> None:
    """Under the ``fgpo`` command, a Ctrl-C while the command line is still importing ends with one line and exit
    130, not an import's traceback; :func:`fgpo_lib.cli.main` gives Ctrl-C back to Python once it runs. Nothing has
    been written then. Not for ``import fgpo_lib`` in a notebook or script.

    The command is ``bin/fgpo``, a shell launcher that ignores Ctrl-C while Python itself starts (no Python code runs
    then, so nothing else can keep its traceback away) and says in ``FGPO_START_SIGINT`` whether Ctrl-C was ignored
    before it (``ignored``: nohup, a background job; it stays so). Started some other way with ``sys.argv[0]`` named
    ``fgpo`` (a wrapper pip wrote), Python's own handler is replaced the same way."""
    import os
    import signal

    def stop(signum, frame):
        os.write(2, b"fgpo: interrupted while starting; nothing was written\n")
        os._exit(130)

    stop.fgpo_starting = True
    launched = os.environ.pop("FGPO_START_SIGINT", None)  # not passed on to the reasoners' and workers' processes
    handler = signal.getsignal(signal.SIGINT)
    orig = list(getattr(sys, "orig_argv", []))
    as_module = any(a == "-m" and b == "fgpo_lib.cli" for a, b in zip(orig, orig[1:]))  # python -m fgpo_lib.cli, while the package loads
    if (launched == "default" and handler is signal.SIG_IGN) or (
            launched is None and (os.path.basename(sys.argv[0] if sys.argv else "") == "fgpo" or as_module) and handler is signal.default_int_handler):
        signal.signal(signal.SIGINT, stop)
    from .markers import mark

    mark("starting")


_quiet_interrupt_while_starting()

import types  # noqa: E402
from importlib import import_module  # noqa: E402

from ._version import __version__

#: public name -> the module that defines it
_EXPORTS = {
    "RewardTable": "table", "RewardTableError": "table", "SubsetSpace": "subsets", "SubsetSpaceError": "subsets",
    "SubsetPolicy": "policy", "TrainConfig": "train", "train": "train", "Selector": "selector", "train_selector": "selector",
}


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fgpo_lib' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


class _Package(types.ModuleType):
    """The package's module type: importing a submodule whose name is a public function's (``train``) does not
    replace the function with the module (the module stays in ``sys.modules``)."""

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, types.ModuleType) and _EXPORTS.get(name) == name:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package

__all__ = ["RewardTable", "RewardTableError", "Selector", "SubsetPolicy", "SubsetSpace", "SubsetSpaceError", "TrainConfig", "train", "train_selector",
           "__version__"]
