"""Providers by name: ours, and those other packages add as `docs_mcp.providers` entry points, the way
`docs-mcp eval` joins the CLI through `docs_mcp.commands`. A package adds a provider with an entry
point naming its class (see docs/providers.md, "Adding a provider"); nothing here changes.

Our own are looked up without reading any package's metadata: a build or server with a built-in
provider never scans the installed packages. Another package's provider is found by its entry
point the first time a name that is not ours is asked for, or when every provider is listed.
"""

from __future__ import annotations

import functools
import importlib
import re
import types
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..errors import DocsMcpError
from . import hooks
from .base import EmbeddingProvider
from .settings import ProviderSettings, SettingsModel

GROUP = "docs_mcp.providers"
BUILT_IN = {
    "none": "docs_mcp_core.embedding.none:NoneProvider",
    "hash": "docs_mcp_core.embedding.hashing:HashProvider",
    "openai": "docs_mcp_core.embedding.openai_api:OpenAIProvider",
    "local": "docs_mcp_core.embedding.local:LocalProvider",
}
ALIASES: dict[str, tuple[str, dict[str, Any]]] = {"sentence-transformers": ("local", {"backend": "torch"})}
DEFAULT_NOTE = "Default: local with the bundled model when docs-mcp[semantic] is installed, else none."


def _load(target: str) -> Any:
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


@functools.cache
def plugins() -> dict[str, Any]:
    """Name -> entry point of the providers other installed packages declare (ours win a shared name)."""
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=GROUP) if ep.name not in BUILT_IN and ep.name not in ALIASES}


def provider_names(*, with_plugins: bool = True) -> list[str]:
    """What --embedding-provider accepts: ours, their aliases, then other packages' (with_plugins)."""
    return [*BUILT_IN, *ALIASES, *(sorted(plugins()) if with_plugins else [])]


def provider_class(name: str) -> Any:
    """The class registered under `name` (an EmbeddingProvider, or a class whose `create` makes one)."""
    if name in BUILT_IN:
        return _load(BUILT_IN[name])
    entry = plugins().get(name)
    if entry is None:
        raise DocsMcpError(f"unknown embedding provider {name!r}; choose one of: {', '.join(provider_names())}")
    try:
        cls = entry.load()
    except Exception as exc:  # noqa: BLE001 - another package's code: say which, in one line
        raise DocsMcpError(f"embedding provider {name!r} ({entry.value}) cannot be loaded: {exc}") from None
    settings = getattr(cls, "Settings", None)
    if getattr(cls, "name", None) != name or not (isinstance(settings, type) and issubclass(settings, SettingsModel)):
        raise DocsMcpError(
            f"embedding provider {name!r} ({entry.value}) is not a docs-mcp provider: its class must set "
            f"name = {name!r} and a Settings model (docs_mcp_core.embedding.SettingsModel)"
        )
    return cls


def make_provider(settings: ProviderSettings) -> EmbeddingProvider:
    """The provider `settings` name, made from its own settings model (values it has no setting for are left out)."""
    name, values = settings.provider, dict(settings.values)
    if name in ALIASES:
        name, preset = ALIASES[name]
        values = {**preset, **values}
    cls = provider_class(name)
    try:
        own = cls.Settings(**values)
    except Exception as exc:  # noqa: BLE001 - pydantic's ValidationError, said as the options that were given
        raise DocsMcpError(_invalid(name, exc)) from None
    return hooks.create(cls, own)


def _invalid(provider: str, exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return f"embedding provider {provider}: {exc}"
    problems = []
    for error in errors():
        setting = ".".join(str(part) for part in error.get("loc", ()))
        given = error.get("input")
        expected = (error.get("ctx") or {}).get("expected")
        if error.get("type") == "literal_error" and expected:
            choices = ", ".join(part.strip("' ") for part in re.split(r",| or ", expected) if part.strip("' "))
            problems.append(f"unknown embedding {setting} {given!r}; choose one of: {choices}")
        else:
            problems.append(f"--embedding-{setting.replace('_', '-')} {given!r}: {error.get('msg')}")
    return "; ".join(problems)


def settings_from_metadata(embedding: dict[str, Any] | None) -> ProviderSettings:
    """Recreate the provider a published index was built with (for query embedding): the settings its
    embedding block records, as its provider's settings model names them."""
    if not embedding:
        return ProviderSettings("none")
    name = str(embedding["provider"])
    fields = provider_class(name).Settings.model_fields
    values = {key: embedding[key] for key in fields if key in embedding}
    if name in ("local", "sentence-transformers") and values.get("backend") is None:
        values["backend"] = "torch"  # indexes from before the onnx backend
    return ProviderSettings(name, **values)


def default_provider() -> tuple[ProviderSettings, str]:
    """What a build uses when no provider is named: semantic (local, onnx, bundled model) where the
    semantic extra is installed, else text-only. Returns the settings and one line saying which and why."""
    from .local_models import DEFAULT_MODEL
    from .local_onnx import SEMANTIC_EXTRA, has_onnx_model, onnx_available

    if onnx_available() and has_onnx_model(None):
        return (
            ProviderSettings("local", backend="onnx"),
            f"embedding: local (onnx, {DEFAULT_MODEL}), the default; --embedding-provider none for text-only",
        )
    return (
        ProviderSettings("none"),
        f"embedding: none (text-only), the default without the semantic extra; {SEMANTIC_EXTRA} for semantic search",
    )


def resolve_settings(settings: ProviderSettings | None, provider: str | None) -> tuple[ProviderSettings, str | None]:
    """`settings` with `provider` filled in: as named, else local when a backend is named, else the default.
    The second value is the line to show when the default was taken (None otherwise)."""
    base = settings or ProviderSettings()
    if provider is not None:
        return base.replace(provider), None
    if base.get("backend") is not None:
        return base.replace("local"), None
    default, note = default_provider()
    return base.replace(default.provider, backend=default.get("backend")), note


@dataclass(frozen=True)
class SettingSpec:
    """One `--embedding-<name>` option (and docs-mcp.yaml key): the settings of that name, in every provider
    that has one."""

    name: str
    help: str
    kind: type  # int or str
    choices: tuple[str, ...] | None = None
    min: int | None = None
    max: int | None = None


def setting_specs(*, with_plugins: bool = True) -> list[SettingSpec]:
    """`provider`, then every provider's settings merged by name: in the order of the provider with the
    most settings, then of the next; each option's help names the providers that have it."""
    names = provider_names(with_plugins=with_plugins)
    classes = [(name, provider_class(name)) for name in names if name not in ALIASES]
    summaries = " ".join(f"{name}: {_summary(cls)}" for name, cls in classes)
    specs = [SettingSpec("provider", f"{DEFAULT_NOTE} {summaries}", str, tuple(names))]
    declared: dict[str, list[tuple[str, Any]]] = {}
    for _, cls in sorted(classes, key=lambda item: -len(item[1].Settings.model_fields)):
        for field_name in cls.Settings.model_fields:
            declared.setdefault(field_name, [])
    for name, cls in classes:
        for field_name, info in cls.Settings.model_fields.items():
            declared[field_name].append((name, info))
    for field_name, infos in declared.items():
        kinds = {_kind(info) for _, info in infos}
        choices = [_choices(info) for _, info in infos]
        mins = [_bound(info, "ge") for _, info in infos]
        maxes = [_bound(info, "le") for _, info in infos]
        specs.append(
            SettingSpec(
                field_name,
                " ".join(f"{name}: {_sentence(info.description or '')}".rstrip() for name, info in infos),
                int if kinds == {int} else str,
                tuple(sorted({c for group in choices for c in group})) if all(choices) else None,
                min(m for m in mins if m is not None) if kinds == {int} and None not in mins else None,
                max(m for m in maxes if m is not None) if kinds == {int} and None not in maxes else None,
            )
        )
    return specs


def _summary(cls: Any) -> str:
    return _sentence((cls.__doc__ or "").strip().split("\n\n")[0])


def _sentence(text: str) -> str:
    return " ".join(text.split())


def _args(info: Any) -> Iterable[Any]:
    """The types a field's annotation allows (`int | None` -> int, None)."""
    annotation = info.annotation
    return (
        typing.get_args(annotation)
        if typing.get_origin(annotation) in (typing.Union, types.UnionType)
        else [annotation]
    )


def _kind(info: Any) -> type:
    kinds = {arg for arg in _args(info) if arg is not type(None)}
    return int if kinds == {int} else str


def _choices(info: Any) -> tuple[str, ...]:
    return tuple(v for arg in _args(info) if typing.get_origin(arg) is typing.Literal for v in typing.get_args(arg))


def _bound(info: Any, name: str) -> int | None:
    """A field's `ge` or `le` bound, if it has one."""
    return next((int(getattr(m, name)) for m in info.metadata if getattr(m, name, None) is not None), None)
