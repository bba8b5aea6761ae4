"""The ``fgpo`` command line: a table of subcommands, each a module with ``add_arguments(parser)`` and ``run(args)``.

:data:`COMMANDS` is the table; ``fgpo --help`` reads only its help lines, and a subcommand's module (with torch,
pandas and the rest) is imported only when that subcommand runs. This module holds no command logic: it parses,
dispatches, and turns every error a user can cause into one ``fgpo <command>: error: ...`` line and exit status 2
(a bug into exit status 3; an interrupt into 130), never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from dataclasses import dataclass

from .outputs import Output


@dataclass(frozen=True)
class Command:
    """One subcommand: the module that implements it, its one-line help, the names of its two functions, and the files
    it writes and reads (checked before it runs: :func:`fgpo_lib.outputs.claim_outputs`)."""

    module: str
    help: str
    add: str = "add_arguments"
    run: str = "run"
    outputs: tuple[Output, ...] = ()
    """Every output flag, with the kind of file it writes; a command with outputs gets ``--force``."""
    inputs: tuple[str, ...] = ()
    """The flags (or positionals) naming files it reads, which no output may be."""


#: the subcommands, in the order ``fgpo --help`` lists them
COMMANDS: dict[str, Command] = {
    "train": Command("fgpo_lib.commands.train", "train one method on one seed; --save-selector keeps the trained selector",
                     outputs=(Output("out", "record"), Output("save_selector", "selector")), inputs=("--table",)),
    "compare": Command("fgpo_lib.commands.compare", "several methods x seeds, with confidence intervals", outputs=(Output("out", "record"),), inputs=("--table",)),
    "frontier": Command("fgpo_lib.commands.frontier", "the cost-accuracy frontier: FGPO over a sweep of the parsimony weight, with the reference points",
                        outputs=(Output("plot", "figure"), Output("save_selector", "selector")), inputs=("--table",)),
    "select": Command("fgpo_lib.commands.select", "pick tools for new questions with a saved selector (one JSON line per question)",
                      outputs=(Output("out", "jsonl"),), inputs=("selector", "--questions")),
    "calibrate": Command("fgpo_lib.commands.calibrate", "pick a selector's fallback threshold on held-out questions for a target average of tools or accuracy",
                         outputs=(Output("out", "record"),), inputs=("selector", "--table")),
    "example-table": Command("fgpo_lib.commands.examples", "write the illustrative 4-tool protein-structure table", outputs=(Output("out", "table"),)),
    "precompute": Command("fgpo_lib.precompute.command", "evaluate every (question, subset) cell with a frozen reasoner into a reward table",
                          outputs=(Output("out", "table"),), inputs=("--cache",)),  # --out may be --resume-from: a table extended in place
    "table-info": Command("fgpo_lib.commands.table_info", "summary statistics of a reward table; of several, one markdown row each"),
    "verify-table": Command("fgpo_lib.commands.verify", "re-evaluate random cells of a precomputed table live"),
    "cross-build": Command("fgpo_lib.commands.crossbuild", "measure how a committed LLM table's cells re-derive under this machine's llama.cpp build (one record per table)",
                           outputs=(Output("out_dir", "folder"),)),
    "plan": Command("fgpo_lib.commands.plan", "what a tool library costs: subsets, table memory, precompute time, the GRPO budget"),
    "questions": Command("fgpo_lib.commands.questions", "print a benchmark's questions as JSONL (qid, task, split, exact text): the keys fgpo score takes"),
    "score": Command("fgpo_lib.commands.score", "score free-text predictions on a built-in benchmark, per task"),
    "coverage": Command("fgpo_lib.commands.coverage", "per task: share of questions answerable from some tool subset's outputs", outputs=(Output("markdown", "markdown"),)),
    "scaling": Command("fgpo_lib.commands.scaling", "the scaling chapter's runs: tables of 8 to 20 tools from a reader, every estimator on each (records/scaling/)",
                       outputs=(Output("out_dir", "folder"),)),
    "ondemand": Command("fgpo_lib.commands.ondemand", "the sampled estimators with every cell an on-demand LLM call, on 12-20 tools (records/scaling_llm/)",
                        outputs=(Output("out_dir", "folder"),)),
    "lm-train": Command("fgpo_lib.commands.lm_policy", "train the language-model policy (LoRA) with one arm on a 4-tool table; writes a run record and its adapter",
                        "add_train_arguments", "run_train", outputs=(Output("out", "record"), Output("save_selector", "selector")), inputs=("--table", "--init-adapter")),
    "lm-eval": Command("fgpo_lib.commands.lm_policy", "score a language-model run record's test choices on other reasoners' tables (the transfer design)",
                       "add_eval_arguments", "run_eval", outputs=(Output("out", "record"),), inputs=("record", "--table")),
    "pipeline": Command("fgpo_lib.pipeline", "every stage in order: precompute (resuming committed tables), scaling, on-demand, the language-model policy, study; --dry-run prints the plan"),
    "study": Command("fgpo_lib.commands.study", "run every setting's notebook, the summary notebooks, then build the book (what make book does)",
                     outputs=(Output("book_dir", "folder"),)),
}


class Parser(argparse.ArgumentParser):
    """argparse, except that ``--flag=--`` is an error (Python 3.11's argparse drops the ``--`` and hands the flag an
    empty list, which no numeric check ever sees), and that no flag is abbreviated: ``--subsets`` must never be taken
    for ``--subsets-per-update``. Subcommands' parsers are of this class too."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def _get_values(self, action, arg_strings):
        if action.option_strings and action.nargs is None and arg_strings == ["--"]:
            self.error(f"argument {'/'.join(action.option_strings)}: expected one argument")
        return super()._get_values(action, arg_strings)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser: every subcommand with its help line, and the flags of ``command`` alone (its module is imported;
    ``None``: no module, which is all ``fgpo --help`` needs)."""
    parser = Parser(prog="fgpo", description="fgpo: exact tool-subset policy optimization (FGPO) against GRPO over reward tables, and the study that compares them.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, cmd in COMMANDS.items():
        p = sub.add_parser(name, help=cmd.help, description=cmd.help)
        if name == command:
            module = importlib.import_module(cmd.module)
            getattr(module, cmd.add)(p)
            if cmd.outputs and not any(a.dest == "force" for a in p._actions):
                p.add_argument("--force", action="store_true", help="replace an output file that another command (or no fgpo command) wrote")
            p.set_defaults(func=getattr(module, cmd.run))
    return parser


def _warning_line(command: str):
    """Python warnings as one ``fgpo <command>: warning: ...`` line each (no file and line of the library); the
    deprecation notices of the libraries underneath (transformers' FutureWarnings) are theirs, not the user's, and
    are left out."""
    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, (DeprecationWarning, PendingDeprecationWarning, FutureWarning)) and "fgpo_lib" not in str(filename):
            return
        print(f"fgpo {command}: warning: {message}", file=sys.stderr)
    return show


def _interrupted(label: str, exc: BaseException | None = None) -> int:
    """One line for an interrupt (Ctrl-C, or SIGTERM as :class:`~fgpo_lib.errors.Terminated`), with what the command
    says it kept (the exception's ``kept``) where it says so; exit 130, or 128 + the signal's number."""
    from .errors import Terminated

    kept = getattr(exc, "kept", None)
    what = "terminated" if isinstance(exc, Terminated) else "interrupted"
    print(f"fgpo {label}: {what}" + (f"; {kept}" if kept else "; no output was replaced by a partial one"), file=sys.stderr)
    return 128 + exc.signum if isinstance(exc, Terminated) else 130


def _caused_by_interrupt(exc: BaseException) -> bool:
    """Whether ``exc`` was raised while handling a Ctrl-C (its cause or context chain holds a KeyboardInterrupt)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _importing(frame) -> bool:
    """Whether ``frame`` runs inside an import (a frame of :mod:`importlib`'s bootstrap is on its stack)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def _quiet_after_ctrl_c(unraisable) -> None:
    """``sys.unraisablehook`` once a Ctrl-C has come: errors of objects the interrupt left half built, as they are
    collected or at exit, print nothing (the command has said it was interrupted)."""


class _CtrlC:
    """Ctrl-C while a command runs: a KeyboardInterrupt, as Python's own handler raises it, and a note that it came.
    Never inside an import (:func:`_importing`): there it comes again once the import is over.
    A library may turn an interrupt into an error of its own and drop the KeyboardInterrupt from the chain (NumPy
    interrupted while it imports raises ``ImportError: Error importing numpy ...``); the note still says it was a
    Ctrl-C. Installed only where Ctrl-C would raise KeyboardInterrupt anyway (not where it is ignored or a caller set
    its own handler), and the previous handler is put back when the command returns."""

    def __init__(self) -> None:
        self.came = False
        self.deferred = False  # a Ctrl-C that came inside an import and has not been raised yet

    def __call__(self, signum, frame):
        self.came = True
        if _importing(frame):
            self.deferred = True
            # a KeyboardInterrupt inside an import can leave a C extension half-initialised: NumPy's, interrupted
            # 80 ms in, printed "ImportError: _multiarray_umath failed to import" and the interpreter then crashed
            # (SIGSEGV). So the Ctrl-C comes again once the import is over, every 50 ms until it is.
            again = threading.Timer(0.05, lambda: signal.getsignal(signal.SIGINT) is self and os.kill(os.getpid(), signal.SIGINT))
            again.daemon = True
            again.start()
            return
        # what the KeyboardInterrupt leaves half built (a tqdm bar interrupted in its __init__) fails again when it is
        # collected or at exit, and Python prints that as "Exception ignored ... Traceback": after a Ctrl-C, noise
        sys.unraisablehook = _quiet_after_ctrl_c
        self.deferred = False
        raise KeyboardInterrupt

    def __enter__(self) -> "_CtrlC":
        from .errors import install_terminate_handler

        self.previous_term = install_terminate_handler()
        self.previous = signal.getsignal(signal.SIGINT)
        starting = getattr(self.previous, "fgpo_starting", False)  # fgpo_lib/__init__.py's start-up handler
        in_main = threading.current_thread() is threading.main_thread()  # only the main thread sets a handler
        self.installed = in_main and (starting or self.previous is signal.default_int_handler)
        if self.installed:
            signal.signal(signal.SIGINT, self)
            if starting:  # the command line's start is over: Python's handler is the one to restore
                self.previous = signal.default_int_handler
        return self

    def __exit__(self, *exc) -> None:
        if self.installed:
            signal.signal(signal.SIGINT, self.previous)
        for sig, handler in self.previous_term.items():
            signal.signal(sig, handler)


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand. Bad flags end in argparse's usage line; bad input (a malformed table, a broken model file,
    a failed reasoner, an unwritable path) in one ``fgpo <command>: error: ...`` line and exit status 2."""
    argv = sys.argv[1:] if argv is None else argv
    command = next((a for a in argv if not a.startswith("-")), None)
    label = command if command in COMMANDS else "fgpo"
    with _CtrlC() as ctrl_c:
        try:
            args = build_parser(command if command in COMMANDS else None).parse_args(argv)
            import warnings

            warnings.showwarning = _warning_line(args.command)
            from .outputs import claim_outputs

            cmd = COMMANDS[args.command]
            claim_outputs(args.command, args, cmd.outputs, cmd.inputs)
            if sys.stdout is None and not any(getattr(args, o.dest, None) for o in cmd.outputs):  # started with >&-
                raise OSError("standard output is closed, so the command's result would be lost" + ("; give " + " or ".join(o.flag for o in cmd.outputs) if cmd.outputs else ""))
            from .markers import mark as _mark_ready

            _mark_ready("running")
            status = args.func(args)
            if ctrl_c.deferred:  # a Ctrl-C that came during an import the command ended before raising: still an interrupt
                return _interrupted(label)
            return status
        except KeyboardInterrupt as exc:
            return _interrupted(label, exc)
        except (ValueError, RuntimeError, OSError, KeyError) as exc:  # RewardTableError, PrecomputeError, OutputError, ...
            if ctrl_c.came or _caused_by_interrupt(exc):
                return _interrupted(label)
            print(f"fgpo {label}: error: {exc}", file=sys.stderr)
            return 2
        except Exception as exc:  # a bug, not bad input: one line, and the traceback only when asked for
            if ctrl_c.came or _caused_by_interrupt(exc):  # a library that turns an interrupt into its own error (NumPy)
                return _interrupted(label)
            if os.environ.get("FGPO_DEBUG"):
                raise
            print(f"fgpo {label}: internal error: {type(exc).__name__}: {exc} (please report it; FGPO_DEBUG=1 shows the traceback)", file=sys.stderr)
            return 3


if __name__ == "__main__":
    sys.exit(main())
