"""Reading version strings and putting them in order.

PEP 440 (`packaging`) reads every PyPI version and the semver strings projects tag with (`v1.2.3`,
`1.2.3-rc.1`, `2.0.0-beta.2`, `1.2.3+build`); the few semver or Go forms it refuses (`1.0.0-alpha.beta`,
Go pseudo-versions `v0.0.0-20230101-abcdef`) are read here as a pre-release of their numeric release, so
they sort before it. A string with no leading number (`main`, `latest`) is not a version: it has no order.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

_SEMVER_ISH = re.compile(r"^[vV]?(\d+(?:\.\d+)*)(?:[-+~._].*)?$")


@dataclass(frozen=True, order=True)
class Ordered:
    """A label with the version it reads as: sorts by version, then by label (equal versions, `v1.2` and `1.2.0`)."""

    version: Version
    label: str


def parse_version(text: str) -> Version | None:
    """The version a label, tag or locked version string stands for, or None if it is not one."""
    text = text.strip()
    try:
        return Version(text)
    except InvalidVersion:
        pass
    m = _SEMVER_ISH.match(text)
    if m is None:
        return None
    base = Version(m.group(1))
    rest = text[m.end(1) :]
    if rest.startswith("+"):
        return base
    return Version(f"{base.base_version}.dev0")  # a pre-release PEP 440 cannot spell: before its release


def newest_first(labels: Iterable[str]) -> list[str]:
    """Labels that read as versions, newest first (ties: by label); labels that do not are left out."""
    ordered = [Ordered(v, label) for label in labels if (v := parse_version(label)) is not None]
    return [o.label for o in sorted(ordered, key=lambda o: (o.version, o.label), reverse=True)]


def same_line(a: Version, b: Version) -> bool:
    """Same major.minor: `0.0.9` and `0.0.24` are, `1.4.2` and `1.5.0` are not."""
    return (a.release + (0, 0))[:2] == (b.release + (0, 0))[:2]


def serving_order(labels: Iterable[str]) -> list[str]:
    """Versions newest first, then labels that are no version (`main`, `dev`) in the order given."""
    labels = list(dict.fromkeys(labels))
    versions = newest_first(labels)
    return versions + [label for label in labels if label not in set(versions)]


def default_label(labels: Iterable[str], configured: str | None = None) -> str | None:
    """The version served when nothing pins one: the configured default if indexed, else the newest."""
    order = serving_order(labels)
    if configured is not None and configured in order:
        return configured
    return order[0] if order else None
