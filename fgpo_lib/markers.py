"""A child process's own "ready" markers, for the tests that signal it at a known stage instead of after a delay.

:func:`mark` appends a stage's name to the file ``FGPO_READY_FILE`` names, when that variable is set (the tests set
it; nothing happens otherwise): ``starting`` (the package has loaded), ``running`` (a command's work begins),
``first question cached`` (precompute's first question is in the cache).
"""

import os


def mark(stage: str) -> None:
    """Append ``stage`` to ``$FGPO_READY_FILE`` (module doc), if set."""
    path = os.environ.get("FGPO_READY_FILE")
    if path:
        with open(path, "a") as fh:
            fh.write(stage + "\n")
