"""A module imported on its first use: ``from .._lazy import torch`` in a module that needs torch only inside its
functions, so that importing the module (for a settings dataclass, a registry's names, a command's ``--help``) costs
nothing, and torch (about a second) loads when a function first touches it."""

from __future__ import annotations

import importlib
import types


class LazyModule(types.ModuleType):
    """Stands for the module ``name`` until an attribute is read; then imports it and becomes a view of it."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.__dict__["_lazy_target"] = name

    def __getattr__(self, attr: str):
        module = importlib.import_module(self.__dict__["_lazy_target"])
        self.__dict__.update({k: v for k, v in module.__dict__.items() if k not in ("__name__", "__spec__", "__loader__")})
        return getattr(module, attr)


torch = LazyModule("torch")
