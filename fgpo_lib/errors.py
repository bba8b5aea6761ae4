"""Errors shared across layers: a reasoner (or the model file it needs) that cannot produce an answer."""


class ReasonerError(RuntimeError):
    """A reasoner could not produce an answer (timeout, HTTP error, broken model file, malformed response)."""


class PrecomputeError(RuntimeError):
    """Cells failed or are missing, a cache cannot be used, or a table would lose what a file holds; the message
    names them."""
