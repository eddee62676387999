"""A package's public names, imported on first use (PEP 562): callers import from the package, and a
command that needs one light name does not pay for the package's heavy modules."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy(package: str, homes: dict[str, str]) -> Callable[[str], Any]:
    """The package's `__getattr__`: each name in `homes` (name -> module, relative to `package`) is
    imported from its module the first time it is asked for, then kept in the package."""

    def __getattr__(name: str) -> Any:  # noqa: N807 - it is the module's __getattr__
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home, package), name)
        setattr(importlib.import_module(package), name, value)
        return value

    return __getattr__
