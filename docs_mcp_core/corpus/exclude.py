"""Which files the walk leaves out on purpose: `exclude` globs and `.gitignore` files.

Three sources, all applied by corpus.list_tree so build, validate and staging agree:
- `exclude` in a `.docs-mcp.json`: globs relative to that manifest's folder (the glob rules
  of overrides, docs_mcp_core/corpus/globs.py). Every manifest on the way down applies, not only the
  nearest: leaving a file out is about the file set, not about how a file is chunked.
- `exclude` of a corpus in docs-mcp.yaml: the same globs, relative to the docs folder.
- `.gitignore` files inside the docs folder, with git's semantics (pathspec's GitIgnoreSpec):
  a deeper `.gitignore` can re-include (`!pattern`) what a shallower one ignored, but nothing
  inside an ignored folder comes back, as in git.
- what the docs framework's config leaves out of the site (MkDocs `exclude_docs`/`draft_docs`,
  VitePress `srcExclude`, Sphinx `exclude_patterns`), matched as the framework matches them, on the
  page's path under the site's page root.
A pattern that names a folder (`vendor`, `vendor/`) leaves out everything below it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .globs import GlobError, glob_match

if TYPE_CHECKING:
    import pathspec

GITIGNORE = ".gitignore"


@dataclass
class Rules:
    """The exclude rules in effect, keyed by the folder (relative to the docs root) that declares them."""

    config: list[str] = field(default_factory=list)  # from docs-mcp.yaml, relative to the root
    manifests: dict[str, tuple[str, list[str]]] = field(default_factory=dict)  # folder -> (manifest relpath, globs)
    gitignores: dict[str, tuple[str, pathspec.GitIgnoreSpec]] = field(default_factory=dict)  # folder -> (relpath, spec)
    # (where it is said, "gitignore" spec or glob list, the docs folder's path under the page root)
    framework: list[tuple[str, Any, str]] = field(default_factory=list)

    def add_manifest(self, folder: str, relpath: str, text: str) -> None:
        """Read `exclude` from a manifest's raw JSON; an invalid manifest is reported by validation, not here."""
        try:
            raw = json.loads(text)
        except (ValueError, RecursionError):
            return
        globs = raw.get("exclude") if isinstance(raw, dict) else None
        if isinstance(globs, list):
            valid = []
            for g in globs:
                if isinstance(g, str):
                    try:
                        glob_match(g, "")
                    except GlobError:
                        continue
                    valid.append(g)
            if valid:
                self.manifests[folder] = (relpath, valid)

    def add_gitignore(self, folder: str, relpath: str, text: str) -> None:
        import pathspec  # only for a tree with .gitignore files

        spec = pathspec.GitIgnoreSpec.from_lines(text.splitlines())
        if spec.patterns:
            self.gitignores[folder] = (relpath, spec)

    def add_framework(self, label: str, kind: str, patterns: list[str], prefix: str) -> None:
        """Patterns of the docs framework's config (`kind` "gitignore" or "glob"), relative to its page
        root, under which the docs folder is at `prefix` ("" or "guide/")."""
        if kind == "gitignore":
            import pathspec

            spec = pathspec.GitIgnoreSpec.from_lines(patterns)
            if spec.patterns:
                self.framework.append((label, spec, prefix))
        else:
            valid = []
            for pattern in patterns:
                try:
                    glob_match(pattern.removeprefix("./"), "")
                except GlobError:
                    continue
                valid.append(pattern)
            if valid:
                self.framework.append((label, valid, prefix))

    def why_excluded(self, relpath: str, is_dir: bool) -> str | None:
        """Why `relpath` is left out, naming the rule, or None if it is kept."""
        for pattern in self.config:
            if _glob_hit(pattern, relpath, is_dir):
                return f"excluded by docs-mcp.yaml exclude {pattern!r}"
        for label, rules, prefix in self.framework:
            path = prefix + relpath
            if isinstance(rules, list):
                hit = next((p for p in rules if _glob_hit(p, path, is_dir)), None)
            else:
                result = rules.check_file(path + "/" if is_dir else path)
                hit = rules.patterns[result.index].pattern if result.include and result.index is not None else None
            if hit is not None:
                return f"left out of the site by {label} {hit!r}"
        for folder, (manifest, globs) in sorted(self.manifests.items()):
            local = _under(relpath, folder)
            if local is None:
                continue
            for pattern in globs:
                if _glob_hit(pattern, local, is_dir):
                    return f"excluded by {manifest} exclude {pattern!r}"
        verdict: tuple[str, str] | None = None
        for folder, (source, spec) in sorted(self.gitignores.items(), key=lambda kv: kv[0].count("/") + bool(kv[0])):
            local = _under(relpath, folder)
            if local is None:
                continue
            result = spec.check_file(local + "/" if is_dir else local)
            if result.include is True:
                matched = spec.patterns[result.index].pattern if result.index is not None else "?"
                verdict = (source, str(matched))
            elif result.include is False:
                verdict = None
        if verdict:
            return f"ignored by {verdict[0]} pattern {verdict[1]!r}"
        return None


def _under(relpath: str, folder: str) -> str | None:
    if not folder:
        return relpath
    if relpath.startswith(folder + "/"):
        return relpath[len(folder) + 1 :]
    return None


def _glob_hit(pattern: str, local: str, is_dir: bool) -> bool:
    pattern = pattern.removeprefix("./")
    if is_dir:  # `vendor`, `vendor/` and `vendor/**` all leave out the whole folder
        folder = pattern.removesuffix("/**").rstrip("/")
        return glob_match(folder, local) if folder else False
    if pattern.endswith("/"):
        return False
    return glob_match(pattern, local)
