"""A frozen reasoner that is a Python function of yours: ``--reasoner mypkg.agent:answer``.

The function takes ``(question text, tool outputs)``, the outputs a list of texts in the library's order (empty when
no tool is called), and returns the answer as text. It must be deterministic, since its answers are cached. Its
fingerprint (what a cell's cache key says about the reasoner) is the sha256 of the function's source code, so
editing the function invalidates its cells; a function whose source cannot be read is keyed by its import path alone
(the fingerprint says so).
"""

from __future__ import annotations

import hashlib
import inspect

from .base import Reasoner, ReasonerError


class CallableReasoner(Reasoner):
    """Args: target, the ``module:function`` import path."""

    def __init__(self, target: str) -> None:
        from ..user_code import UserCodeError, import_object

        fn = import_object(target, "--reasoner", UserCodeError)
        if not callable(fn):
            raise ValueError(f"--reasoner {target!r} is a {type(fn).__name__}, not a function (question, tool_outputs) -> answer")
        self.fn, self.target, self.name = fn, target, target
        try:
            self.source_sha256 = hashlib.sha256(inspect.getsource(fn).encode()).hexdigest()
        except (OSError, TypeError):
            self.source_sha256 = "source-unavailable"

    def answer(self, question: str, tool_outputs: list[str]) -> str:
        from ..user_code import describe

        try:
            out = self.fn(question, list(tool_outputs))
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - a failed cell, named (SystemExit too: never the command's exit)
            raise ReasonerError(f"reasoner {self.target!r} failed on question {question[:80]!r}: {describe(exc)}") from None
        if not isinstance(out, str):
            raise ReasonerError(f"reasoner {self.target!r} returned {type(out).__name__}, not text")
        return out

    def fingerprint(self) -> dict:
        return {"reasoner": self.target, "model_sha256": f"callable:{self.target}", "prompt_sha256": self.source_sha256, "reasoner_version": "callable-v1"}
