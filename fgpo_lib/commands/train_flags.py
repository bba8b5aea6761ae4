"""The training flags of ``fgpo train``, ``compare`` and ``frontier``: one flag per field of
:class:`~fgpo_lib.train.TrainConfig`, and per field of each method's settings, grouped by method in ``--help``.

Every flag maps one-to-one onto a config field: ``--entropy-coef``, ``--kl-coef`` and ``--subsets-per-update`` onto
``TrainConfig.fgpo``, the GRPO flags onto ``.grpo``, ``--dpo-*`` onto ``.dpo``, and for a method whose settings have
no field there, ``--<method>-<setting>`` onto ``.settings`` (``--tpo-eta``, ``--reference-alphas``). A flag's help
is its field's docstring; a value out of its range is reported with the flag's name.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import fields

from ..algos.registry import METHODS as REGISTRY
from ..train_config import METHOD_NAMES, TrainConfig
from ..validation import field_docs

#: TrainConfig's per-method fields (the method registry's ``field``) -> their settings class
GROUPS = {m.field: m.settings for m in REGISTRY.values() if m.field}
#: methods whose settings live in ``TrainConfig.settings``: their flags are prefixed with the method's name
OWN = {name: m.settings for name, m in REGISTRY.items() if m.settings and not m.field}
TOP = [f for f in fields(TrainConfig) if f.name not in ("method", "seed", "settings", *GROUPS)]
SUB = [(g, f) for g, cls in GROUPS.items() for f in fields(cls)]
OWN_FLAGS = [(m, f) for m, cls in OWN.items() for f in fields(cls)]
#: the methods each group of settings belongs to (its help heading)
_GROUP_METHODS = {g: [n for n, m in REGISTRY.items() if m.field == g or (g == "grpo" and m.family == "grpo")] for g in GROUPS}


def method_help() -> str:
    """``--method``'s help: one line per method of the registry, its summary."""
    return "the method (one of the registry's):\n" + "\n".join(f"  {name}: {m.summary}" for name, m in REGISTRY.items())


def _dest(group: str, name: str) -> str:
    """The flag name of a per-method setting: FGPO's and GRPO's keep their own names (``--entropy-coef``,
    ``--beta``); DPO's are prefixed (``--dpo-beta``), since GRPO has a ``beta`` too."""
    return getattr(GROUPS[group], "FLAG_PREFIX", "") + name


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _help(doc: str, field: str) -> str:
    """A config field's ``--help``: its docstring (``%`` escaped for argparse), its field and its default."""
    return f"{doc.replace('%', '%%')} [{field}; default %(default)s]".lstrip()


def float_tuple(text: str) -> tuple[float, ...]:
    """argparse type of a tuple setting: comma-separated numbers (``0.1,1,10``)."""
    try:
        return tuple(float(t) for t in text.split(",") if t.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def json_object(text: str) -> dict:
    """argparse type of a JSON-object setting (``--prior '{"a+b": 0.5}'``)."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"expected a JSON object such as '{{\"a+b\": 0.5}}', got {text!r} ({exc})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"expected a JSON object such as '{{\"a+b\": 0.5}}', got a {type(value).__name__}: {text!r}")
    return value


def add_subsets_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--subsets", choices=("observed",), help="a long .csv/.parquet table whose rows cover only some subsets: 'observed' makes its "
                   "subset space exactly the subsets in the file, a candidate set (every question needs each of them); default: every subset of the sizes found")
    p.add_argument("--tool-names", help="a long .csv/.parquet table's tools in their canonical order, comma-separated (default: the names found, sorted)")


#: the training settings ``--help`` shows; the others (and every method's own) only under ``--help-all``
SHORT_HELP = ("steps", "lr", "reward", "batch_questions", "group_size")


class _HelpAll(argparse.Action):
    """``--help-all``: the help with every method's settings (``--help`` shows the common ones)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        for action in parser._actions:
            if hasattr(action, "full_help"):
                action.help = action.full_help
        parser.print_help()
        parser.exit()


def add_train_args(p: argparse.ArgumentParser) -> None:
    """The table flags and every training flag (module doc), grouped: the shared ones, then each method's. ``--help``
    shows :data:`SHORT_HELP` and the common flags; ``--help-all`` every flag, each method's grouped under it."""
    p.add_argument("--help-all", action=_HelpAll, help="show every training setting of every method, grouped by method, and exit")
    p.add_argument("--table", required=True, help="reward table: .npz (RewardTable.save) or long .csv/.parquet (question_id,tools,reward[,question,task,split])")
    add_subsets_arg(p)
    defaults = TrainConfig()
    shared = p.add_argument_group("training settings (every method)")
    docs = {cls: field_docs(cls) for cls in (TrainConfig, *GROUPS.values())}

    def add(group, name: str, short: bool, **kw):
        action = group.add_argument(name, **kw)
        action.full_help = action.help
        if not short:
            action.help = argparse.SUPPRESS

    for f in TOP:
        default = getattr(defaults, f.name)
        kind = json_object if default is None else type(default)  # None-default fields (prior) take a JSON object
        add(shared, flag(f.name), f.name in SHORT_HELP, type=kind, default=default, help=_help(docs[TrainConfig].get(f.name, ""), f"TrainConfig.{f.name}"))
    for group, cls in GROUPS.items():
        g = p.add_argument_group(f"{group} settings (methods {', '.join(_GROUP_METHODS[group]) or group}; --help-all lists them)")
        for gname, f in SUB:
            if gname == group:
                add(g, flag(_dest(group, f.name)), False, type=type(getattr(getattr(defaults, group), f.name)), default=getattr(getattr(defaults, group), f.name),
                    help=_help(docs[cls].get(f.name, ""), f"{cls.__name__}.{f.name}"))
    for method, cls in OWN.items():
        g = p.add_argument_group(f"{method} settings (--help-all lists them)")
        for m, f in OWN_FLAGS:
            if m == method:
                default = getattr(cls(), f.name)
                kind = float_tuple if isinstance(default, tuple) else type(default)
                add(g, flag(f"{method}_{f.name}"), False, type=kind, default=default, help=_help(field_docs(cls).get(f.name, ""), f"{cls.__name__}.{f.name}"))
    p.add_argument("--progress", action="store_true", help="show a progress bar")


def build_config(args: argparse.Namespace, method: str, seed: int) -> TrainConfig:
    """The run's config from the flags; a value out of its range is reported with the flag's name."""
    try:
        return _build(args, method, seed)
    except (ValueError, TypeError) as exc:
        field = str(exc).split(" ", 1)[0]
        flags = {f.name: flag(f.name) for f in TOP} | {_dest(g, f.name): flag(_dest(g, f.name)) for g, f in SUB} | {f.name: flag(f"{m}_{f.name}") for m, f in OWN_FLAGS}
        raise ValueError(f"{flags[field]}: {exc}" if field in flags else str(exc)) from None


def _build(args: argparse.Namespace, method: str, seed: int) -> TrainConfig:
    return TrainConfig(
        method=method,
        seed=seed,
        **{f.name: getattr(args, f.name) for f in TOP},
        **{g: cls(**{f.name: getattr(args, _dest(g, f.name)) for g2, f in SUB if g2 == g}) for g, cls in GROUPS.items()},
        settings={f.name: getattr(args, flag(f"{m}_{f.name}")[2:].replace("-", "_")) for m, f in OWN_FLAGS if m == method},
    )


def load_table(args: argparse.Namespace):
    """``--table`` with ``--subsets`` and ``--tool-names``; either flag on a ``.npz`` table (whose space is stored) is
    a named error, not ignored."""
    from pathlib import Path

    from ..table import RewardTable

    tool_names = None if getattr(args, "tool_names", None) is None else [t.strip() for t in args.tool_names.split(",") if t.strip()]
    if Path(args.table).suffix.lower() == ".npz" and (args.subsets is not None or tool_names is not None):
        raise ValueError(f"--table {args.table}: --subsets and --tool-names apply to a long .csv/.parquet table; an .npz table stores its own subsets and tools")
    return RewardTable.load(args.table, subsets=args.subsets, tool_names=tool_names)


def calls_meaning(method: str) -> str:
    """What a run's reasoner-call count counts, by method (its family)."""
    return {"samples": "the cells its sampled groups asked for", "nothing": "none: it reads no reward",
            "table": "every cell of the table, which it reads whole, however many steps it trains"}[REGISTRY[method].reads]


__all__ = ["METHOD_NAMES", "add_subsets_arg", "add_train_args", "build_config", "calls_meaning", "load_table", "method_help"]
