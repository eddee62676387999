"""Choosing the versions a tag pattern names: matching tags, read as versions, the newest `keep` of them."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass, field

from packaging.version import Version

from .ordering import parse_version
from .spec import GLOB_CHARS, LABEL


@dataclass(frozen=True)
class TaggedVersion:
    label: str  # the tag, or the part after the pattern's fixed prefix when the tag is no version
    tag: str
    version: Version


@dataclass
class TagSelection:
    chosen: list[TaggedVersion]  # newest first
    not_versions: list[str] = field(default_factory=list)  # matched the pattern but read as no version
    older: list[str] = field(default_factory=list)  # matched, but beyond `keep`
    prereleases: list[str] = field(default_factory=list)  # matched, left out (prereleases: false)

    def notes(self, pattern: str, keep: int) -> list[str]:
        """What was left out and why, one line each (empty when nothing surprising happened)."""
        out = []
        if self.not_versions:
            out.append(
                f"{len(self.not_versions)} tag(s) matching {pattern!r} do not read as versions and were left out: "
                + _few(self.not_versions)
            )
        if self.prereleases:
            out.append(
                f"{len(self.prereleases)} pre-release tag(s) left out (set prereleases: true to index them): "
                + _few(self.prereleases)
            )
        if self.older:
            out.append(f"keeping the {keep} newest; {len(self.older)} older tag(s) left out: " + _few(self.older))
        return out


def fixed_prefix(pattern: str) -> str:
    """The literal text before the first wildcard: `sqlmodel-v*` → `sqlmodel-v`."""
    cut = min((i for i, ch in enumerate(pattern) if ch in GLOB_CHARS), default=len(pattern))
    return pattern[:cut]


def _read(tag: str, prefix: str) -> tuple[str, Version] | None:
    """(label, version) of a tag: the tag itself when it reads as a version (`v1.2.3`), else what follows
    the pattern's fixed prefix (`sqlmodel-v*`: `sqlmodel-v0.0.24` is `0.0.24`; `pkg@*`: `pkg@1.2` is `1.2`)."""
    for text in (tag, tag[len(prefix) :] if prefix and tag.startswith(prefix) else None):
        version = parse_version(text) if text else None
        if text and version is not None and LABEL.match(text):
            return text, version
    return None


def select_tags(tags: Iterable[str], pattern: str, keep: int, prereleases: bool = False) -> TagSelection:
    """The newest `keep` tags matching `pattern` (fnmatch, case-sensitive), by version order.

    Two tags reading as one version (`v1.2` and `1.2.0`) count once: the first by name wins.
    """
    prefix = fixed_prefix(pattern)
    selection = TagSelection(chosen=[])
    found: list[TaggedVersion] = []
    for tag in sorted(set(tags)):
        if not fnmatch.fnmatchcase(tag, pattern):
            continue
        read = _read(tag, prefix)
        if read is None:
            selection.not_versions.append(tag)
            continue
        label, version = read
        if version.is_prerelease and not prereleases:
            selection.prereleases.append(tag)
            continue
        found.append(TaggedVersion(label, tag, version))
    seen: set[Version] = set()
    labels: set[str] = set()
    ordered = []
    # Newest first; among tags of one version, the first by name (the sort is stable under reverse).
    for tv in sorted(sorted(found, key=lambda t: t.tag), key=lambda t: t.version, reverse=True):
        if tv.version in seen or tv.label in labels:
            continue
        seen.add(tv.version)
        labels.add(tv.label)
        ordered.append(tv)
    selection.chosen = ordered[:keep]
    selection.older = [t.tag for t in ordered[keep:]]
    return selection


def _few(items: list[str], shown: int = 5) -> str:
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more
