"""Provider settings: each provider's own pydantic model, and the request that names a provider with values.

A setting shows outside Python as `--embedding-<name>` (and its environment variable) and as a key of
docs-mcp.yaml's `embedding:` block; settings of the same name in several providers share one option
(registry.setting_specs). What metadata.json records of them is the provider's `describe`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class SettingsModel(BaseModel):
    """A provider's settings: one field per setting, made with `setting` (its help, default and bounds).

    Values for settings a provider does not have are ignored, as one set of `--embedding-*` options
    serves every provider.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)


def setting(default: Any = None, *, help: str, **bounds: Any) -> Any:
    """A settings field: `help` is its option's help text; `bounds` are pydantic's (`ge=1`)."""
    return Field(default, description=help, **bounds)


class ProviderSettings:
    """A provider by name, with the values given for its settings (unset ones left out): what the CLI's
    options, docs-mcp.yaml's `embedding:` block and metadata.json's embedding block become, and what
    registry.make_provider takes. `ProviderSettings("hash", dimensions=64)`."""

    __slots__ = ("provider", "values")

    def __init__(self, provider: str = "none", **values: Any) -> None:
        self.provider = provider
        self.values: Mapping[str, Any] = MappingProxyType({k: v for k, v in values.items() if v is not None})

    def get(self, name: str) -> Any:
        return self.values.get(name)

    def replace(self, provider: str | None = None, **values: Any) -> ProviderSettings:
        """These settings with another provider and some values changed (None removes one)."""
        return ProviderSettings(provider or self.provider, **{**self.values, **values})

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ProviderSettings):
            return NotImplemented
        return (self.provider, dict(self.values)) == (other.provider, dict(other.values))

    def __hash__(self) -> int:
        return hash((self.provider, tuple(sorted(self.values.items()))))

    def __repr__(self) -> str:
        values = "".join(f", {k}={v!r}" for k, v in self.values.items())
        return f"ProviderSettings({self.provider!r}{values})"
