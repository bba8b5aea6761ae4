"""A user's own code, imported and called by the library: an error in it is the user's, named, never a traceback.

The bottom layer: it imports nothing of the library, so that every layer above (the agent interface, the reasoners,
the genomics libraries) can load a user's module through it.

* :func:`import_object` loads ``module:attribute`` (``--benchmark mypkg.agent:BENCHMARK``, ``--reasoner
  mypkg.agent:answer``). A module that fails to import, or that calls ``sys.exit()`` while it is imported, is a
  :class:`UserCodeError` naming the module.
* :func:`call_user` calls a function of the user's (a scorer, ``questions()``, a tool) and turns any exception it
  raises, ``SystemExit`` included, into a :class:`UserCodeError` naming the module, the object and the question.

The command line exits 2 with the message (:mod:`fgpo_lib.cli`). A tool or reasoner that fails on one cell is not a
:class:`UserCodeError`: the precompute engine records that cell as failed with the same message and goes on.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Callable


class UserCodeError(ValueError):
    """The user's module or function failed; the message names the module, the object and the question."""


class BenchmarkError(UserCodeError):
    """A ``--benchmark`` that cannot be used, named: an unknown name, a module that does not import, a missing part."""


def describe(exc: BaseException) -> str:
    """``Type: message`` of an exception, ``sys.exit(code)`` for a ``SystemExit``."""
    if isinstance(exc, SystemExit):
        return f"it called sys.exit({exc.code!r})"
    return f"{type(exc).__name__}: {exc}"


def import_object(path: str, what: str, error: type[UserCodeError] = BenchmarkError):
    """The object at ``module:attribute`` (``what`` names the flag in errors)."""
    module, sep, attr = str(path).partition(":")
    if not sep or not module or not attr:
        raise error(f"{what} {path!r}: give a built-in name or an import path module:attribute (e.g. mypkg.agent:BENCHMARK)")
    if os.getcwd() not in sys.path:  # a module of the folder the command runs in, as `python -m` would find it
        sys.path.insert(0, os.getcwd())
    try:
        mod = importlib.import_module(module)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - any failure of the user's module is named, never a traceback
        raise error(f"{what} {path!r}: module {module!r} cannot be imported ({describe(exc)})") from None
    obj = mod
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise error(f"{what} {path!r}: module {module!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


def origin(fn) -> str:
    """Where a function of the user's comes from, for messages: ``module.qualname``."""
    return f"{getattr(fn, '__module__', None) or '?'}.{getattr(fn, '__qualname__', None) or getattr(fn, '__name__', None) or type(fn).__name__}"


def call_user(fn: Callable, what: str, *args, question: str | None = None):
    """``fn(*args)``, a function of the user's named ``what`` (``"the scorer of benchmark 'travel'"``); any exception
    it raises, ``SystemExit`` included, is a :class:`UserCodeError` naming ``what``, where ``fn`` is defined and the
    ``question`` (an id) it failed on."""
    try:
        return fn(*args)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's code, named
        on = f" on question {question!r}" if question is not None else ""
        raise UserCodeError(f"{what} ({origin(fn)}) failed{on}: {describe(exc)}") from None
