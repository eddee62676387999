"""A package version a project's lockfile pins, and how lockfiles of each ecosystem spell package names."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import Version

from ..errors import DocsMcpError
from .ordering import parse_version


class LockfileError(DocsMcpError):
    """A lockfile that cannot be read: `file:line: what`; the lookup notes it and reads the next file."""


@dataclass(frozen=True)
class Locked:
    name: str  # as the lockfile writes it
    version: str
    file: Path
    line: int | None = None

    @property
    def where(self) -> str:
        return f"{self.file.name}:{self.line}" if self.line else self.file.name


@dataclass
class LockLookup:
    """What a project locks for one package: the version (None if nothing pins it) and one line per
    lockfile that could not be read, or per choice made (several versions locked, a range not a pin)."""

    package: str
    ecosystem: str
    locked: Locked | None = None
    notes: list[str] = field(default_factory=list)


def name_matcher(name: str, ecosystem: str) -> Callable[[str], bool]:
    """Whether a name in a lockfile is the package: PEP 503 names for PyPI (`SQLModel`, `sqlmodel`), `-`
    and `_` alike for crates, a Go module with or without its major-version suffix (`/v2`), npm exact."""
    if ecosystem == "pypi":
        pypi = canonicalize_name(name)
        return lambda seen: canonicalize_name(seen) == pypi
    if ecosystem == "cargo":
        crate = name.lower().replace("_", "-")
        return lambda seen: seen.lower().replace("_", "-") == crate
    if ecosystem == "go":
        base = re.sub(r"/v\d+$", "", name)
        return lambda seen: seen == name or re.sub(r"/v\d+$", "", seen) == base
    return lambda seen: seen == name


def newest(found: list[Locked]) -> Locked:
    """The highest version of several (a lockfile may lock one package more than once); ties: the first."""

    def key(item: tuple[int, Locked]) -> tuple[bool, Version, int]:
        at, lk = item
        version = parse_version(lk.version)
        return (version is not None, version or Version("0"), -at)

    return max(enumerate(found), key=key)[1]
