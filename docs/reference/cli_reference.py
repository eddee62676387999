"""The CLI reference page's generated part, made from the click commands themselves.

cog runs it from docs/reference/cli.md: `cog -r -I docs/reference docs/reference/cli.md` rewrites the
page, `cog --check -I docs/reference docs/reference/cli.md` (in .ci/run) fails when it is out of date.
Every command, and every command another package adds through the `docs_mcp.commands` entry points,
is listed, so a new command or option needs no edit here.
"""

from __future__ import annotations

import inspect

import click

from docs_mcp_core.cli import main

PROG = "docs-mcp"
ENV_PREFIX = "DOCS_MCP"  # main's auto_envvar_prefix


def render() -> str:
    """Markdown for `docs-mcp` and every command under it, in name order."""
    ctx = click.Context(main, info_name=PROG, auto_envvar_prefix=ENV_PREFIX)
    parts = [_command(main, ctx, [PROG], level=2)]
    parts += _subcommands(main, ctx, [PROG], level=2)
    return "\n".join(parts)


def _subcommands(group: click.Command, ctx: click.Context, path: list[str], level: int) -> list[str]:
    if not isinstance(group, click.Group):
        return []
    parts = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        sub = click.Context(command, info_name=name, parent=ctx)
        parts.append(_command(command, sub, [*path, name], level))
        parts += _subcommands(command, sub, [*path, name], level + 1)
    return parts


def _command(command: click.Command, ctx: click.Context, path: list[str], level: int) -> str:
    name = " ".join(path)
    lines = [f"{'#' * level} `{name}`", ""]
    if command.help:
        paragraphs = inspect.cleandoc(command.help).replace("\b\n", "").split("\n\n")
        lines += [line for paragraph in paragraphs for line in (_escape(paragraph), "")]
    pieces = command.collect_usage_pieces(ctx)
    lines += ["```text", f"{name} {' '.join(pieces)}".rstrip(), "```", ""]
    if isinstance(command, click.Group):
        names = [n for n in command.list_commands(ctx) if (c := command.get_command(ctx, n)) and not c.hidden]
        lines += ["Commands: " + ", ".join(f"`{n}`" for n in names) + ".", ""]
    options = [p for p in command.get_params(ctx) if isinstance(p, click.Option) and not p.hidden]
    rows = [_option_row(p, ctx) for p in options if "--help" not in p.opts]
    arguments = [p for p in command.params if isinstance(p, click.Argument)]
    if arguments:
        lines += ["Arguments: " + ", ".join(f"`{a.make_metavar(ctx)}`" for a in arguments) + ".", ""]
    if rows:
        lines += ["| option | value | default | |", "|---|---|---|---|", *rows, ""]
    if ctx.auto_envvar_prefix and path != [PROG]:
        lines += [f"Each option also reads `{ctx.auto_envvar_prefix}_<OPTION>` from the environment.", ""]
    return "\n".join(lines)


def _option_row(option: click.Option, ctx: click.Context) -> str:
    names = ", ".join(f"`{n}`" for n in [*option.opts, *option.secondary_opts])
    return f"| {names} | {_value(option, ctx)} | {_default(option)} | {_escape(option.help or '')} |"


def _value(option: click.Option, ctx: click.Context) -> str:
    if option.is_flag:
        return "flag"
    kind = option.type
    if isinstance(kind, click.Choice):
        text = " \\| ".join(f"`{c}`" for c in kind.choices)
    elif isinstance(kind, (click.IntRange, click.FloatRange)):
        noun = "integer" if isinstance(kind, click.IntRange) else "number"
        low, high = kind.min, kind.max
        if low is not None and high is not None and not (kind.min_open or kind.max_open):
            text = f"{noun} {low}–{high}"
        elif low is not None or high is not None:  # an open end (min_open: 0 < x) is shown as a strict bound
            bounds = [f"{'>' if kind.min_open else '≥'} {low}"] if low is not None else []
            bounds += [f"{'<' if kind.max_open else '≤'} {high}"] if high is not None else []
            text = f"{noun} {', '.join(bounds)}"
        else:
            text = noun
    else:
        text = option.metavar or kind.name.upper()
    if option.multiple:
        text += ", repeatable"
    if option.required:
        text += ", required"
    return text


def _default(option: click.Option) -> str:
    default = option.default
    unset = type(default).__name__ == "Sentinel"  # click 8.3+ marks "no default" with its own sentinel
    if unset or option.is_flag or default is None or callable(default) or default in ((), False):
        return ""
    return f"`{default}`"


def _escape(text: str) -> str:
    """Help text inside a Markdown table: one line, pipes and angle brackets as text."""
    return " ".join(text.split()).replace("|", "\\|").replace("<", "&lt;")
