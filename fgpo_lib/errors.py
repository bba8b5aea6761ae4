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


def install_terminate_handler():
    """In the main thread, turn SIGTERM and SIGHUP into :class:`Terminated` where they would kill the process (their
    default); returns SIGTERM's previous handler to restore, or None where nothing was installed."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None

    def raise_terminated(signum, frame):
        raise Terminated(signum)

    previous = signal.getsignal(signal.SIGTERM)
    if previous is not signal.SIG_DFL:
        return None
    signal.signal(signal.SIGTERM, raise_terminated)
    if signal.getsignal(signal.SIGHUP) is signal.SIG_DFL:
        signal.signal(signal.SIGHUP, raise_terminated)
    return previous
