"""What the commands of `docs-mcp` are made of, for this package's CLI and for the commands other
packages add through the `docs_mcp.commands` entry points (`docs-mcp eval`) and `docs-mcp pipeline`:
user errors as one line, the path parameters and `--index`, and the website and repository options."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from .errors import DocsMcpError

DOCS_DIR = click.Path(path_type=Path)  # checked by paths.check_docs_dir: `error: …` and exit 1, not click's exit 2


# Reading commands check the folder themselves: a path that is no index gets an `error:` line with
# the complete build command (not click's usage error), and nothing is created.
class _Location(click.ParamType):  # type: ignore[type-arg]  # generic from click 8.4; 8.1 cannot subscript it
    """A folder, or an s3://BUCKET/PREFIX URL (kept as a string: a Path would fold its `//`)."""

    name = "path"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        from .output.objectstore import location

        try:
            return location(value)
        except DocsMcpError as exc:  # an unsupported URL: the same `error:` line and exit 1 as a bad folder
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)


INDEX_DIR = _Location()


def index_option(
    command: str, help: str, *, dest: str = "index", alias: bool = True, **kwargs: Any
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """`--index`: an index folder (or s3:// location), one name in every command; `--out` is its alias
    (but in `skill`, whose --out is where SKILL.md goes).

    Set it from the environment with DOCS_MCP_<COMMAND>_INDEX (or DOCS_MCP_<COMMAND>_OUT).
    """
    env = f"DOCS_MCP_{command.upper().replace('-', '_')}"
    names = ["--index", "--out"] if alias else ["--index"]
    envvar = [f"{env}_INDEX", f"{env}_OUT"] if alias else [f"{env}_INDEX"]
    settings: dict[str, Any] = {"required": True, "type": INDEX_DIR, "metavar": "PATH"} | kwargs
    return click.option(*names, dest, envvar=envvar, help=help, **settings)


BUILDING = {"build"}  # the commands that publish an index


def fail_cleanly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """User errors become one clear message and exit code 1, never a traceback."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except DocsMcpError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)
        except OSError as exc:  # the environment refused a read or write: still one line, not a traceback
            where = f"{exc.filename}: " if exc.filename else ""
            click.echo(f"error: {where}{exc.strerror or exc}", err=True)
            sys.exit(1)
        except KeyboardInterrupt:  # only a build publishes an index: a search or validate has none to speak of
            after = "; the previously published index is untouched" if fn.__name__ in BUILDING else ""
            click.echo(f"interrupted{after}", err=True)
            sys.exit(130)

    wrapper.__name__ = fn.__name__
    wrapper.__doc__ = fn.__doc__
    return wrapper


def web_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--url and the crawl settings (docs-mcp.yaml's url source fields), shared by build and validate."""
    options = [
        click.option(
            "--url",
            default=None,
            metavar="URL",
            help="A docs website to index instead of --docs-dir: pages from its sitemap (or llms.txt, or "
            "links crawled from URL), fetched again only when changed (conditional requests).",
        ),
        click.option(
            "--path-prefix",
            default=None,
            metavar="PATH",
            help="With --url: only pages under this path (default: the start URL's folder).",
        ),
        click.option(
            "--max-pages",
            type=click.IntRange(min=1),
            default=500,
            show_default=True,
            help="With --url: at most this many pages.",
        ),
        click.option(
            "--llms-txt",
            type=click.Choice(["off", "txt", "full"]),
            default="off",
            show_default=True,
            help="With --url: index the pages llms.txt links (txt) or llms-full.txt as one page (full) "
            "instead of the sitemap.",
        ),
        click.option(
            "--concurrency",
            type=click.IntRange(1, 32),
            default=4,
            show_default=True,
            help="With --url: requests in flight at once (at most 2 to one host).",
        ),
        click.option(
            "--retries",
            type=click.IntRange(0, 10),
            default=3,
            show_default=True,
            help="With --url: further attempts after a 429, a 5xx or a network error (with backoff).",
        ),
        click.option(
            "--timeout",
            type=click.FloatRange(0, 600, min_open=True),
            default=30.0,
            show_default=True,
            metavar="SECONDS",
            help="With --url: each request, from connecting to its last byte (redirects included), must "
            "finish within this; a page that does not is a failed page.",
        ),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def git_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """--git, --ref and --subdir (docs-mcp.yaml's git source fields), shared by build and validate."""
    options = [
        click.option(
            "--git",
            "git_repo",
            default=None,
            metavar="REPO",
            help="A git repository (URL or local path) to index instead of --docs-dir: the Markdown of one "
            "commit, staged as the pipeline stages a git corpus.",
        ),
        click.option("--ref", default=None, metavar="REF", help="With --git: a branch, tag or commit [default: HEAD]."),
        click.option("--subdir", default=None, metavar="DIR", help="With --git: only this folder of the repository."),
    ]
    for option in reversed(options):
        fn = option(fn)
    return fn


def git_source(kwargs: dict[str, Any]) -> tuple[str, str, str | None] | None:
    """(repository, ref, subdir) from --git, --ref and --subdir (popped from kwargs), or None without --git."""
    repo, ref, subdir = kwargs.pop("git_repo"), kwargs.pop("ref"), kwargs.pop("subdir")
    if repo is None:
        if ref is not None or subdir is not None:
            raise DocsMcpError("--ref and --subdir go with --git REPO (a git repository)")
        return None
    from .sources.git import is_url

    # a local repository by its absolute path, as docs-mcp.yaml resolves it
    return (repo if is_url(repo) else os.path.abspath(repo)), ref or "HEAD", subdir


def one_source(docs_dir: Path | None, kwargs: dict[str, Any]) -> tuple[Any, tuple[str, str, str | None] | None]:
    """The website (--url) or repository (--git) to stage, popped from kwargs; (None, None) for --docs-dir."""
    given = [
        name
        for name, value in (("--docs-dir", docs_dir), ("--url", kwargs["url"]), ("--git", kwargs["git_repo"]))
        if value
    ]
    if len(given) != 1:
        raise DocsMcpError(
            "give exactly one of --docs-dir (a folder of Markdown), --url (a docs website) or --git (a repository)"
            + (f"; got {' and '.join(given)}" if given else "")
        )
    repo = git_source(kwargs)
    return _website(kwargs), repo


def stage_repo(repo: tuple[str, str, str | None], dest: Path, reporter: Any) -> Any:
    """Stage one commit of a repository into `dest` exactly as the pipeline's staged_docs does, and say which."""
    from .sources.git import stage_git, staged_line

    source, ref, subdir = repo
    staged = stage_git(source, ref, subdir, dest)
    for line in staged.warnings:
        reporter.warn(line)
    reporter.info(staged_line(staged, source, ref, subdir))
    return staged


def web_source(kwargs: dict[str, Any], docs_dir: Path | None) -> Any:
    """The website --url names with its crawl settings (popped from kwargs), or None for --docs-dir."""
    if (kwargs["url"] is None) == (docs_dir is None):
        raise DocsMcpError("give exactly one of --docs-dir (a folder of Markdown) or --url (a docs website)")
    return _website(kwargs)


def _website(kwargs: dict[str, Any]) -> Any:
    """The website --url names with its crawl settings (popped from kwargs), or None without --url."""
    url = kwargs.pop("url")
    settings = {k: kwargs.pop(k) for k in ("path_prefix", "max_pages", "llms_txt", "concurrency", "retries", "timeout")}
    if url is None:
        return None
    from .sources.web import require_web_extra

    require_web_extra()
    from .sources.web.fetch import Politeness
    from .sources.web.stage import WebSource
    from .sources.web.urls import check_start_url

    politeness = Politeness(
        concurrency=settings["concurrency"], retries=settings["retries"], timeout=settings["timeout"]
    )
    return WebSource(
        check_start_url(url), settings["path_prefix"], settings["max_pages"], settings["llms_txt"], politeness
    )
