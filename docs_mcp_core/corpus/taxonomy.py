"""Taxonomy: the filterable metadata keys, their values, and the limits that keep tool schemas sane."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..diagnostics import Diagnostic, error, warning
from .manifest import MAX_TAXONOMY_KEYS, MAX_TAXONOMY_VALUES, LoadedManifest


def check_taxonomy_limits(files: list[tuple[str, dict[str, str]]]) -> list[Diagnostic]:
    """Report the file (relpath, metadata) that first pushes a key or value count over the limit."""
    diags: list[Diagnostic] = []
    values: dict[str, set[str]] = {}
    over_keys = False
    for relpath, metadata in files:
        for key, value in sorted(metadata.items()):
            if key not in values:
                if len(values) >= MAX_TAXONOMY_KEYS:
                    if not over_keys:
                        diags.append(
                            error(
                                relpath,
                                1,
                                f"metadata key '{key}' is key number {len(values) + 1}: "
                                f"a corpus may have at most {MAX_TAXONOMY_KEYS} taxonomy keys",
                                "taxonomy-too-many-keys",
                            )
                        )
                        over_keys = True
                    continue
                values[key] = set()
            seen = values[key]
            if value not in seen and len(seen) >= MAX_TAXONOMY_VALUES:
                if len(seen) == MAX_TAXONOMY_VALUES:
                    diags.append(
                        error(
                            relpath,
                            1,
                            f"taxonomy key '{key}' gets value '{value}', over the limit of "
                            f"{MAX_TAXONOMY_VALUES} distinct values; use fewer values for this key",
                            "taxonomy-too-many-values",
                        )
                    )
                    seen.add("\0over")
                continue
            seen.add(value)
    return diags


def collapse_keys(manifests: dict[str, LoadedManifest]) -> set[str]:
    return {k for m in manifests.values() for k, cfg in m.manifest.taxonomy.items() if cfg.vector_collapse}


def build_taxonomy(
    metadatas: Iterable[dict[str, str]], manifests: dict[str, LoadedManifest]
) -> tuple[dict[str, Any], list[Diagnostic]]:
    """metadata.json's taxonomy: indexed values (sorted), descriptions and vector_collapse from manifests.

    `metadatas`: the metadata of every indexed file with chunks (its chunks all carry it).
    """
    values: dict[str, set[str]] = {}
    for metadata in metadatas:
        for key, value in metadata.items():
            values.setdefault(key, set()).add(value)
    descriptions: dict[str, tuple[str, str]] = {}
    diags: list[Diagnostic] = []
    for m in sorted(manifests.values(), key=lambda m: (m.folder.count("/") if m.folder else -1, m.folder)):
        for key, cfg in m.manifest.taxonomy.items():
            if cfg.description is None:
                continue
            if key in descriptions and descriptions[key][1] != cfg.description:
                diags.append(
                    warning(
                        m.relpath,
                        m.lines.get(("taxonomy", key), 1),
                        f"taxonomy '{key}' description differs from the one in {descriptions[key][0]}, which is used",
                        "taxonomy-description-conflict",
                    )
                )
                continue
            descriptions.setdefault(key, (m.relpath, cfg.description))
            if key not in values:
                diags.append(
                    warning(
                        m.relpath,
                        m.lines.get(("taxonomy", key), 1),
                        f"taxonomy key '{key}' is described but no file has a value for it",
                        "taxonomy-unused",
                    )
                )
    collapse = collapse_keys(manifests)
    taxonomy: dict[str, Any] = {}
    for key in sorted(values):
        entry: dict[str, Any] = {}
        if key in descriptions:
            entry["description"] = descriptions[key][1]
        entry["values"] = sorted(values[key])
        if key in collapse:
            entry["vector_collapse"] = True
        taxonomy[key] = entry
    return taxonomy, diags


def server_instructions(manifests: dict[str, LoadedManifest]) -> tuple[str | None, list[Diagnostic]]:
    """The shallowest manifest's mcpServerInstructions; a second, different one is reported."""
    chosen: tuple[str, str] | None = None
    diags: list[Diagnostic] = []
    for m in sorted(manifests.values(), key=lambda m: (m.folder.count("/") if m.folder else -1, m.folder)):
        text = m.manifest.mcpServerInstructions
        if not text:
            continue
        if chosen is None:
            chosen = (m.relpath, text.strip())
        elif text.strip() != chosen[1]:
            diags.append(
                warning(
                    m.relpath,
                    m.lines.get(("mcpServerInstructions",), 1),
                    f"mcpServerInstructions ignored: {chosen[0]} (closer to the root) sets them",
                    "instructions-ignored",
                )
            )
    return (chosen[1] if chosen else None), diags
