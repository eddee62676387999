"""Which indexed version answers for a project, given the version its lockfile pins.

The rule, in order:
1. the locked version itself, if indexed (`1.2`, `v1.2.0` and `1.2.0` are one version; so are
   `1.2.3` and `1.2.3+local`);
2. else the nearest lower indexed release of the same major.minor (locked `1.4.2`, indexed `1.4.0` and
   `1.4.5`: `1.4.0`, whose docs describe nothing the project cannot use);
3. else the corpus's default version (the newest unless docs-mcp.yaml names one): what an unpinned
   session gets.
Whenever the answer is not the locked version, a one-line notice says so; nothing is substituted silently.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.version import Version

from .ordering import default_label, newest_first, parse_version, same_line, serving_order


@dataclass(frozen=True)
class Pin:
    label: str | None  # the indexed version to answer from (None: the corpus has none)
    locked: str | None  # the version the project locks (None: nothing locked)
    exact: bool
    notice: str | None = None  # one line for the answer when `label` is not the locked version


def _public(version: Version) -> Version:
    return Version(version.public)


def indexed_span(labels: list[str]) -> str:
    """`0.0.14–0.0.24`, `1.2, 1.3` or `0.0.14–0.0.24, main`: what is indexed, in one phrase."""
    versions = newest_first(labels)
    others = [label for label in serving_order(labels) if label not in set(versions)]
    span = [f"{versions[-1]}–{versions[0]}"] if len(versions) > 2 else list(reversed(versions))
    return ", ".join(span + others) or "none"


def pin_version(package: str, locked: str | None, indexed: list[str], default: str | None = None) -> Pin:
    """The version to answer from for a project locking `package` at `locked` (see the module docstring)."""
    fallback = default_label(indexed, default)
    if locked is None or fallback is None:
        return Pin(fallback, locked, False)
    if locked in indexed:
        return Pin(locked, locked, True)
    want = parse_version(locked)
    if want is not None:
        order = serving_order(indexed)
        same = [label for label in order if (v := parse_version(label)) is not None and _public(v) == _public(want)]
        if same:
            return Pin(same[0], locked, True)
        lower = [
            label
            for label in newest_first(indexed)
            if (v := parse_version(label)) is not None and same_line(v, want) and v < want
        ]
        if lower:
            line = ".".join(str(n) for n in (want.release + (0, 0))[:2])
            why = f"the nearest lower release of {line}.x"
            return Pin(lower[0], locked, False, _notice(package, locked, indexed, lower[0], why))
    newest = newest_first(indexed)
    why = "the newest" if newest and fallback == newest[0] else "the default"
    return Pin(fallback, locked, False, _notice(package, locked, indexed, fallback, why))


def _notice(package: str, locked: str, indexed: list[str], served: str, why: str) -> str:
    return (
        f"{package} {locked} is locked; indexed versions are {indexed_span(indexed)}; answering from {served} ({why})"
    )
