"""Which docs framework a docs folder belongs to, and what its config says, read as data.

The config is never executed: `mkdocs.yml`/`myst.yml` are YAML (unknown tags such as `!ENV` or
`!!python/name:` read as nothing), Sphinx's `conf.py` is parsed with `ast` and only literal
assignments are taken, a JS/TS config is searched for plain string literals. What cannot be read
that way (a template string, a computed value) is reported in `unreadable`, never guessed.
"""

from __future__ import annotations

import ast
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .beneath import read_beneath, realpath_or_none

# How far above the docs folder a config is looked for (Starlight keeps pages three levels below it).
LEVELS_UP = 3
MKDOCS = "MkDocs"
SPHINX = "Sphinx"
DOCUSAURUS = "Docusaurus"
VITEPRESS = "VitePress"
STARLIGHT = "Starlight"
MYST = "MyST"
MINTLIFY = "Mintlify"
_JS = (".ts", ".mts", ".js", ".mjs", ".cjs")


@dataclass
class Framework:
    """A detected docs framework; paths are absolute, `config` is the file it was found from."""

    name: str
    config: Path
    project_root: Path  # includes never resolve outside it
    site_name: str | None = None
    description: str | None = None
    site_url: str | None = None
    extensions: list[str] = field(default_factory=list)  # Markdown extensions / Sphinx extensions it enables
    source_suffixes: list[str] = field(default_factory=list)  # Sphinx: which files are pages
    include_bases: list[Path] = field(default_factory=list)  # where snippet includes are looked up
    unreadable: list[str] = field(default_factory=list)  # config keys it could not read as plain data

    def shown(self, docs_dir: Path) -> str:
        try:
            rel = os.path.relpath(self.config, docs_dir)
        except ValueError:
            rel = str(self.config)
        return f"{self.name} ({rel})"

    def key(self) -> str:
        """What in the framework changes how pages parse: part of the per-file reuse key."""
        return "\0".join([self.name, str(self.project_root), *self.extensions, *map(str, self.include_bases)])


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


class _Loader:
    """A yaml SafeLoader that reads unknown tags (`!ENV`, `!!python/name:…`) as None instead of failing."""

    @staticmethod
    def make() -> Any:
        import yaml

        class Loader(yaml.SafeLoader):
            pass

        def unknown(loader: Any, suffix: str, node: Any) -> None:
            return None

        Loader.add_multi_constructor("!", unknown)
        Loader.add_multi_constructor("tag:yaml.org,2002:python/", unknown)
        return Loader


def _read(path: Path) -> str:
    """A config file's text. Configs that are symlinks are skipped (detect_framework); one swapped in
    since is not followed out of the config's folder (corpus/beneath.py)."""
    return read_beneath(path.parent, path.name).decode("utf-8", errors="replace")


def _read_or_empty(path: Path) -> str:
    try:
        return _read(path)
    except OSError:
        return ""


def _read_yaml(path: Path) -> Any:
    import yaml

    try:
        return yaml.load(_read(path), Loader=_Loader.make())
    except (yaml.YAMLError, OSError, RecursionError):
        return None


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _mkdocs(config: Path) -> Framework:
    data = _read_yaml(config)
    data = data if isinstance(data, dict) else {}
    inherit = data.get("INHERIT")
    if isinstance(inherit, str):  # a base config the file extends: its keys apply unless overridden
        real = realpath_or_none(config.parent / inherit)
        base = _read_yaml(Path(real)) if real else None
        if isinstance(base, dict):
            data = {**base, **data, "markdown_extensions": _merge_ext(base, data)}
    root = config.parent
    fw = Framework(MKDOCS, config, root)
    fw.site_name, fw.description = _text(data.get("site_name")), _text(data.get("site_description"))
    fw.site_url = _text(data.get("site_url"))
    ext = data.get("markdown_extensions")
    names = list(ext) if isinstance(ext, dict) else [next(iter(e)) if isinstance(e, dict) else e for e in ext or []]
    fw.extensions = sorted(str(n) for n in names if n)
    fw.include_bases = [root]
    snippets = _ext_options(ext, "pymdownx.snippets")
    bases = snippets.get("base_path") if isinstance(snippets, dict) else None
    for base in [bases] if isinstance(bases, str) else bases or []:
        if isinstance(base, str) and (real := realpath_or_none(root / base)):
            fw.include_bases.append(Path(real))
    docs = data.get("docs_dir", "docs")
    if real := realpath_or_none(root / (docs if isinstance(docs, str) else "docs")):
        fw.include_bases.append(Path(real))
    return fw


def _merge_ext(base: dict[str, Any], data: dict[str, Any]) -> Any:
    a, b = base.get("markdown_extensions"), data.get("markdown_extensions")
    if isinstance(a, dict) and isinstance(b, dict):
        return {**a, **b}
    listed = [*(a if isinstance(a, list) else list(a or [])), *(b if isinstance(b, list) else list(b or []))]
    return listed


def _ext_options(ext: Any, name: str) -> Any:
    if isinstance(ext, dict):
        return ext.get(name)
    for item in ext or []:
        if isinstance(item, dict) and name in item:
            return item[name]
    return None


def _sphinx(config: Path) -> Framework:
    fw = Framework(SPHINX, config, config.parent, include_bases=[config.parent])
    try:
        tree = ast.parse(_read(config))
    except (SyntaxError, ValueError, OSError, RecursionError):
        fw.unreadable.append("conf.py (not valid Python)")
        return fw
    values: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            try:
                values[name] = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                values[name] = _Unreadable()
    for key in ("project", "html_title", "html_baseurl", "source_suffix", "extensions"):
        if isinstance(values.get(key), _Unreadable):
            fw.unreadable.append(key)
    title = values.get("html_title")
    fw.site_name = _text(values.get("project")) or _text(title)
    fw.site_url = _text(values.get("html_baseurl"))
    ext = values.get("extensions")
    fw.extensions = sorted(e for e in ext if isinstance(e, str)) if isinstance(ext, list | tuple) else []
    suffix = values.get("source_suffix", ".rst")
    if isinstance(suffix, str):
        fw.source_suffixes = [suffix]
    elif isinstance(suffix, dict | list | tuple):
        fw.source_suffixes = [s for s in suffix if isinstance(s, str)]
    return fw


class _Unreadable:
    """A conf.py value that is not a literal (computed, imported): reported, not evaluated."""


def _js_string(text: str, key: str) -> tuple[str | None, bool]:
    """The plain string literal of `key:` at the shallowest indentation in a JS/TS config, and whether
    such a key exists at all (present but not a plain literal: unreadable)."""
    found: list[tuple[int, str]] = []
    for m in re.finditer(rf"^([ \t]*){key}\s*:\s*(.*)$", text, re.MULTILINE):
        found.append((len(m.group(1).expandtabs(4)), m.group(2).strip()))
    if not found:
        return None, False
    depth = min(d for d, _ in found)
    value = next(v for d, v in found if d == depth)
    literal = re.match(r"""^(['"])((?:\\.|(?!\1).)*)\1\s*,?\s*(?://.*)?$""", value) or re.match(
        r"^(`)([^`$]*)`\s*,?\s*$", value
    )
    return (literal.group(2) if literal else None), True


def _js(fw: Framework, keys: dict[str, str]) -> Framework:
    try:
        text = _read(fw.config)
    except OSError:
        fw.unreadable.append(fw.config.name)
        return fw
    for attr, key in keys.items():
        value, present = _js_string(text, key)
        if present and value is None:
            fw.unreadable.append(key)
        if value:
            setattr(fw, attr, value.strip())
    return fw


def _docusaurus(config: Path) -> Framework:
    fw = _js(Framework(DOCUSAURUS, config, config.parent), {"site_name": "title", "description": "tagline"})
    url, _ = _js_string(_read_or_empty(config), "url")
    base, _ = _js_string(_read_or_empty(config), "baseUrl")
    if url:
        fw.site_url = url.rstrip("/") + "/" + (base or "").strip("/")
    fw.include_bases = [config.parent]
    return fw


def _vitepress(config: Path) -> Framework:
    root = config.parent.parent  # the folder holding .vitepress/ is the docs source root
    fw = _js(Framework(VITEPRESS, config, root), {"site_name": "title", "description": "description"})
    host, _ = _js_string(_read_or_empty(config), "hostname")
    fw.site_url = host
    fw.include_bases = [root]
    return fw


def _starlight(config: Path) -> Framework:
    fw = _js(Framework(STARLIGHT, config, config.parent), {"site_name": "title", "description": "description"})
    site, _ = _js_string(_read_or_empty(config), "site")
    fw.site_url = site
    fw.include_bases = [config.parent]
    return fw


def _myst(config: Path) -> Framework:
    data = _read_yaml(config)
    project = data.get("project") if isinstance(data, dict) else None
    project = project if isinstance(project, dict) else {}
    site = data.get("site") if isinstance(data, dict) else None
    title = _text(project.get("title")) or (_text(site.get("title")) if isinstance(site, dict) else None)
    return Framework(
        MYST,
        config,
        config.parent,
        site_name=title,
        description=_text(project.get("description")),
        include_bases=[config.parent],
    )


def _mintlify(config: Path) -> Framework:
    try:
        data = json.loads(_read(config))
    except (ValueError, OSError, RecursionError):
        data = None
    data = data if isinstance(data, dict) else {}
    return Framework(
        MINTLIFY,
        config,
        config.parent,
        site_name=_text(data.get("name")),
        description=_text(data.get("description")),
        include_bases=[config.parent],
    )


def _candidates(folder: Path) -> list[tuple[Path, Any]]:
    """Config files a framework would read in this folder, most specific first."""
    out: list[tuple[Path, Any]] = []
    for name in ("mkdocs.yml", "mkdocs.yaml"):
        out.append((folder / name, _mkdocs))
    out.append((folder / "conf.py", _sphinx))
    out.extend((folder / f"docusaurus.config{s}", _docusaurus) for s in _JS)
    out.extend((folder / ".vitepress" / f"config{s}", _vitepress) for s in _JS)
    out.extend((folder / f"astro.config{s}", _starlight) for s in _JS)
    out.append((folder / "myst.yml", _myst))
    out.extend((folder / name, _mintlify) for name in ("docs.json", "mint.json"))
    return out


def _covers(fw: Framework, docs: Path) -> bool:
    """Whether the config's site is made from this docs folder (a config above it may belong to another site)."""
    if fw.name == MKDOCS:
        return any(_inside(docs, base) for base in fw.include_bases[-1:])
    if fw.name == STARLIGHT:
        return _inside(docs, fw.project_root / "src" / "content" / "docs") or docs == fw.project_root
    if fw.name == SPHINX:
        return _inside(docs, fw.project_root)
    if fw.name == MINTLIFY:
        return docs == fw.project_root
    return _inside(docs, fw.project_root)


def detect_framework(docs_dir: Path) -> Framework | None:
    """The framework whose config covers `docs_dir`, from the folder itself up to LEVELS_UP above it,
    never above a git work tree's root."""
    docs = Path(os.path.realpath(docs_dir))
    folder = docs
    for _ in range(LEVELS_UP + 1):
        for path, read in _candidates(folder):
            if not path.is_file() or path.is_symlink() or (read is _starlight and not _is_starlight(path)):
                continue
            fw = read(path)
            if _covers(fw, docs):
                return fw
        if (folder / ".git").exists() or folder.parent == folder:
            break
        folder = folder.parent
    return None


def _is_starlight(path: Path) -> bool:
    try:
        return "starlight" in _read(path)
    except OSError:
        return False
