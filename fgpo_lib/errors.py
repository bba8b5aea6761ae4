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
    """A block that SIGINT, SIGTERM and SIGHUP do not interrupt (deferred, not lost): a signal that comes meanwhile is
    recorded and delivered again right after the block, to the handler there before. Only in the main thread
    (elsewhere: a no-op).

    Blocking the signals at the OS level alone is not enough: a signal that arrived just before the block has already
    set Python's flag, and Python runs its handler at the next bytecode, inside the block. So the block also puts a
    recorder in place of the handlers. A signal handled before the recorder is in place still raises, in
    ``__enter__``: a cleanup that must run to its end uses :func:`run_to_end`, which runs it again."""

    SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")

    def __enter__(self):
        import signal
        import threading

        self.blocked, self.saved, self.caught = None, {}, []
        if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
            return self
        sigs = [getattr(signal, n) for n in self.SIGNALS]
        self.blocked = signal.pthread_sigmask(signal.SIG_BLOCK, set(sigs))
        for sig in sigs:
            self.saved[sig] = signal.signal(sig, self._record)
        return self

    def _record(self, signum, frame) -> None:
        self.caught.append(signum)

    def __exit__(self, *exc) -> None:
        import signal

        for sig, handler in self.saved.items():
            signal.signal(sig, handler)
        if self.blocked is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, self.blocked)  # one blocked meanwhile reaches its handler now
        for signum in dict.fromkeys(self.caught):
            signal.raise_signal(signum)


def run_to_end(cleanup) -> None:
    """``cleanup()`` (which must be safe to run twice: removing a temporary) run to its end with signals deferred
    (:class:`signals_deferred`); a signal's exception that still interrupts it (one handled while the deferral was
    being set up) runs it again, and is raised once it has ended."""
    pending = None
    for _ in range(10):
        try:
            with signals_deferred():
                cleanup()
        except KeyboardInterrupt as exc:  # Ctrl-C, or Terminated
            pending = pending or exc
            continue
        break
    if pending is not None:
        raise pending
