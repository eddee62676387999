"""`--embedding-<setting>` options: one per provider setting (registry.setting_specs), each also read from
DOCS_MCP_<COMMAND>_EMBEDDING_<SETTING>.

Our providers' options are made when the command is first used (so `serve` and `search` never import
the providers' settings models). Those of providers other packages add join when the command line or
the environment names one of them (or a provider that is not ours), or when help is shown: finding
them reads every installed package's metadata, which a build with one of our providers does not pay for.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import click

PREFIX = "--embedding-"


def _option(spec: Any) -> click.Option:
    kind: Any = None
    if spec.choices is not None:
        kind = click.Choice(list(spec.choices))
    elif spec.kind is int:
        kind = click.IntRange(min=spec.min, max=spec.max) if spec.min is not None else click.INT
    # Unset options stay None: the provider's own defaults apply, and resolve_settings picks the provider.
    return click.Option([PREFIX + spec.name.replace("_", "-")], type=kind, default=None, help=spec.help)


def embedding_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Where the command's embedding options go among its others; its class (ProviderCommand) makes them
    when the command is first used, so other commands never import the providers' settings models."""
    fn.__embedding_options_below__ = len(getattr(fn, "__click_params__", []))  # type: ignore[attr-defined]
    return fn


class ProviderCommand(click.Command):
    """A command with embedding options: our providers' when it is used, other packages' when asked for."""

    _ours = False
    _theirs = False

    def get_params(self, ctx: click.Context) -> list[click.Parameter]:
        self._add_ours()
        return super().get_params(ctx)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        self._add_ours()
        if not self._theirs and self._names_other_providers(ctx, args):
            self.add_plugin_options()
        return super().parse_args(ctx, args)

    def get_help(self, ctx: click.Context) -> str:
        self.add_plugin_options()
        return super().get_help(ctx)

    def _add_ours(self) -> None:
        if self._ours:
            return
        self._ours = True
        from .embedding import setting_specs

        at = len(self.params) - getattr(self.callback, "__embedding_options_below__", 0)
        self.params[at:at] = [_option(spec) for spec in setting_specs(with_plugins=False)]

    def _names_other_providers(self, ctx: click.Context, args: list[str]) -> bool:
        from .embedding import provider_names

        ours = set(provider_names(with_plugins=False))
        known = {opt for param in self.params for opt in getattr(param, "opts", [])}
        given: list[tuple[str, str | None]] = []  # (option, value) from the command line, then the environment
        for i, arg in enumerate(args):
            if arg.startswith(PREFIX):
                name, sep, value = arg.partition("=")
                given.append((name, value if sep else (args[i + 1] if i + 1 < len(args) else None)))
        env = f"{ctx.auto_envvar_prefix}_EMBEDDING_" if ctx.auto_envvar_prefix else None
        for key, value in os.environ.items() if env else []:
            if key.startswith(env):  # type: ignore[arg-type]
                given.append((PREFIX + key[len(env) :].lower().replace("_", "-"), value))  # type: ignore[arg-type]
        return any(
            name not in known or (name == PREFIX + "provider" and value is not None and value not in ours)
            for name, value in given
        )

    def add_plugin_options(self) -> None:
        """Every provider's options: the provider choice and its help include other packages' providers."""
        self._add_ours()
        if self._theirs:
            return
        self._theirs = True
        from .embedding import setting_specs

        ours = [p for p in self.params if any(o.startswith(PREFIX) for o in getattr(p, "opts", []))]
        at = self.params.index(ours[-1]) + 1 if ours else len(self.params)
        by_opt = {o: p for p in ours for o in p.opts}
        added = []
        for spec in setting_specs(with_plugins=True):
            option = _option(spec)
            if option.opts[0] in by_opt:  # ours: its choices and help now name every provider
                by_opt[option.opts[0]].type, by_opt[option.opts[0]].help = option.type, option.help
            else:
                added.append(option)
        self.params[at:at] = added


def provider_settings(kwargs: dict[str, Any], reporter: Any = None) -> Any:
    """The provider the options name (popped from kwargs); without --embedding-provider, the default
    (said on `reporter`)."""
    from .embedding import ProviderSettings, resolve_settings

    values = {key.removeprefix("embedding_"): kwargs.pop(key) for key in list(kwargs) if key.startswith("embedding_")}
    provider = values.pop("provider", None)
    settings, note = resolve_settings(ProviderSettings(**values), provider)
    if note and reporter is not None:
        reporter.info(note)
    return settings
