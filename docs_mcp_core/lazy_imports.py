"""Keep `import lancedb` and the MCP SDK's server from paying for code docs-mcp never calls.

lancedb imports `lance_namespace` at module level, which imports model classes from the
generated REST client `lance_namespace_urllib3_client`. That package's `__init__` also imports
its ~370 API methods (decorated with pydantic's `validate_call`, whose validators pydantic builds
when the decorator runs), urllib3 and the client configuration: ~0.4 s of a ~0.9 s
`import lancedb` that every process opening an index paid (a build that writes, `serve`,
`search`, each test's subprocess), for namespace calls it never makes.

Two deferrals, for that one package only:
- its `__init__` runs on the first attribute the package itself is asked for, not when a
  submodule (`.models`, what lancedb needs) is imported through it;
- while that `__init__` runs, `validate_call` builds each validator on the method's first call.
The same code runs with the same checks, later or never; nothing changes if lancedb stops
importing the client. Upstream made the same trade for `import lance` (lance-format/lance#9273).

The MCP SDK's `mcp` and `mcp.server` packages are deferred the same way (the first deferral
only): their `__init__`s import the SDK's client, its HTTP client, FastMCP (`MCPServer`) and
their dependencies, none of which a stdio server uses, while `docs-mcp serve` imports only the
submodules it needs (`mcp.types`, `mcp.server.lowlevel`, `mcp.server.stdio`). `from mcp import
Client` and the like still work: a name the package has not got yet runs its `__init__`.

The SDK's per-version wire models (`mcp_types._v2025_11_25`, `_v2026_07_28`: some 300 pydantic
models, which `mcp_types.methods` maps each `(method, protocol version)` to) are created with
pydantic's `defer_build`: each builds its validator when it first validates, so a session builds
the few its protocol version and methods use (initialize, tools/list, tools/call …), not the
other era's nor sampling, elicitation or tasks. The models, their fields and their checks are
the same; only when their validators are built moves.
"""

from __future__ import annotations

import functools
import importlib.machinery
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

PACKAGE = "lance_namespace_urllib3_client"
# package -> whether its `__init__` runs with pydantic's validate_call deferred too
DEFERRED = {PACKAGE: True, "mcp": False, "mcp.server": False}
# modules whose pydantic models build their validators on first use
DEFERRED_BUILD = ("mcp_types._v2025_11_25", "mcp_types._v2026_07_28")
_build_lock = threading.Lock()
_building = 0  # deferred-build modules being executed (two threads may import one each)


def deferred_validate_call(real: Callable[..., Any]) -> Callable[..., Any]:
    """A drop-in for pydantic's `validate_call` that runs `real` on the first call, not at decoration."""

    def validate_call(func: Callable[..., Any] | None = None, /, **options: Any) -> Any:
        def decorate(target: Callable[..., Any]) -> Callable[..., Any]:
            validated: Callable[..., Any] | None = None

            @functools.wraps(target)
            def call(*args: Any, **kwargs: Any) -> Any:
                nonlocal validated
                if validated is None:  # two threads racing here both build the same validator
                    validated = real(**options)(target)
                return validated(*args, **kwargs)

            return call

        return decorate if func is None else decorate(func)

    return validate_call


class _DeferringLoader:
    """The package's own loader: its `__init__` (which imports every API module) runs on the first
    missing attribute, with `validate_call` deferred; until then the package is its `__path__`."""

    def __init__(self, inner: Loader, validators: bool) -> None:
        self.inner = inner
        self.validators = validators

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        lock = threading.Lock()

        def run_init(name: str) -> Any:
            with lock:  # the first caller runs it; others wait, then find the names
                if module.__dict__.get("__getattr__") is run_init:
                    del module.__dict__["__getattr__"]
                    self.run_deferred(module)
            return getattr(module, name)

        module.__dict__["__getattr__"] = run_init  # PEP 562: only for names not set yet

    def run_deferred(self, module: ModuleType) -> None:
        if not self.validators:
            self.inner.exec_module(module)
            return
        import pydantic

        real = pydantic.validate_call
        pydantic.validate_call = deferred_validate_call(real)
        try:
            self.inner.exec_module(module)
        finally:
            pydantic.validate_call = real

    def __getattr__(self, name: str) -> Any:  # resource readers and the like: the real loader's
        if name in ("inner", "validators"):  # not set yet (a copy being made): no endless lookup
            raise AttributeError(name)
        return getattr(self.inner, name)


class _DeferredBuildLoader:
    """The module's own loader, run while the SDK's wire-model base says `defer_build`: the classes
    the module defines inherit it (pydantic merges a model's config from its bases at class creation)."""

    def __init__(self, inner: Loader) -> None:
        self.inner = inner

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        global _building
        try:
            from mcp_types._wire_base import WireModel
        except ImportError:  # an SDK laid out otherwise: its models are built as it builds them
            self.inner.exec_module(module)
            return

        with _build_lock:
            _building += 1
            WireModel.model_config["defer_build"] = True
        try:
            self.inner.exec_module(module)
        finally:
            with _build_lock:
                _building -= 1
                if not _building:
                    WireModel.model_config.pop("defer_build", None)

    def __getattr__(self, name: str) -> Any:
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)


class _Finder:
    """A meta path finder (no importlib.abc base: importing it costs every process ~7 ms)."""

    def find_spec(
        self, name: str, path: Any = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if name not in DEFERRED and name not in DEFERRED_BUILD:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is not None and spec.loader is not None:
            # a Loader by duck typing: subclassing importlib.abc.Loader would import it in every process
            loader = (
                _DeferringLoader(spec.loader, DEFERRED[name]) if name in DEFERRED else _DeferredBuildLoader(spec.loader)
            )
            spec.loader = cast("Loader", loader)
        return spec


def install() -> None:
    """Idempotent, and cheap: nothing is imported until lancedb or the MCP SDK asks for a deferred module."""
    if not any(isinstance(finder, _Finder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
