"""Errors shared across layers: a reasoner (or the model file it needs) that cannot produce an answer."""


class ReasonerError(RuntimeError):
    """A reasoner could not produce an answer (timeout, HTTP error, broken model file, malformed response)."""


class PrecomputeError(RuntimeError):
    """Cells failed or are missing, a cache cannot be used, or a table would lose what a file holds; the message
    names them."""


class Terminated(KeyboardInterrupt):
    """SIGTERM (or SIGHUP) while a command runs, raised like Ctrl-C's KeyboardInterrupt so that every ``finally`` runs
    (a temporary file is removed, a worker pool is stopped); the command line exits 128 + :attr:`signum`."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum


def install_terminate_handler() -> dict:
    """In the main thread, turn SIGTERM and SIGHUP into :class:`Terminated` where they would kill the process (their
    default); returns ``{signal: previous handler}`` of those it replaced, for the caller to put back."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return {}

    def raise_terminated(signum, frame):
        raise Terminated(signum)

    replaced = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            replaced[sig] = signal.signal(sig, raise_terminated)
    return replaced


class signals_deferred:
    """A block that SIGINT, SIGTERM and SIGHUP do not interrupt (blocked, not lost): a cleanup in a ``finally`` runs to
    its end, and a signal that came meanwhile is handled right after. Only in the main thread (elsewhere: a no-op)."""

    SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")

    def __enter__(self):
        import signal
        import threading

        self.blocked = None
        if threading.current_thread() is threading.main_thread() and hasattr(signal, "pthread_sigmask"):
            self.blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {getattr(signal, n) for n in self.SIGNALS})
        return self

    def __exit__(self, *exc) -> None:
        import signal

        if self.blocked is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, self.blocked)
