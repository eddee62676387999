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
from collections.abc import Callable
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
    # How pages map to published URLs (site_url + the page's path under page_root, see site.py)
    page_root: Path | None = None  # the folder page URLs are computed from (docs_dir, srcDir, src/content/docs…)
    url_style: str = "directory"  # "directory" (a/b/), "clean" (a/b) or "html" (a/b.html)
    route_prefix: str = ""  # Docusaurus: the docs plugin's routeBasePath ("docs/")
    file_suffix: str = ".html"  # of the "html" style (Sphinx html_file_suffix)
    # Pages the site leaves out: (where it is said, "gitignore" or "glob", patterns relative to page_root)
    excludes: list[tuple[str, str, list[str]]] = field(default_factory=list)
    # mkdocs.yml nav: page (relative to page_root) -> (its nav title or None, the titles of the sections above it)
    nav: dict[str, tuple[str | None, tuple[str, ...]]] = field(default_factory=dict)
    nav_order: list[str] = field(default_factory=list)  # pages in navigation order
    read: list[Path] = field(default_factory=list)  # config files read besides `config` (mkdocs.yml INHERIT)

    def shown(self, docs_dir: Path) -> str:
        try:
            rel = os.path.relpath(self.config, docs_dir)
        except ValueError:
            rel = str(self.config)
        return f"{self.name} ({rel})"

    def prefix_of(self, docs_dir: str | Path) -> str | None:
        """The docs folder's path under the site's page root ("" or "guide/"), None if it is not under it."""
        if self.page_root is None:
            return None
        root, docs = os.path.realpath(self.page_root), os.path.realpath(docs_dir)
        if docs != root and not docs.startswith(root.rstrip(os.sep) + os.sep):
            return None
        rel = os.path.relpath(docs, root).replace(os.sep, "/")
        return "" if rel == "." else rel + "/"

    @property
    def rst_suffixes(self) -> tuple[str, ...]:
        """File suffixes read as reStructuredText: `.rst`, and what Sphinx's source_suffix adds (`.txt`)."""
        extra = [s for s in self.source_suffixes if s.startswith(".") and s not in (".md", ".markdown", ".mdx")]
        return tuple(dict.fromkeys([".rst", *extra]))

    def key(self) -> str:
        """What in the framework changes how pages parse: part of the per-file reuse key."""
        return "\0".join(
            [self.name, str(self.project_root), *self.extensions, *map(str, self.include_bases), *self.rst_suffixes]
        )


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
    read = []
    if isinstance(inherit, str):  # a base config the file extends: its keys apply unless overridden
        real = realpath_or_none(config.parent / inherit)
        base = _read_yaml(Path(real)) if real else None
        read.append(config.parent / inherit)
        if isinstance(base, dict):
            data = {**base, **data, "markdown_extensions": _merge_ext(base, data)}
    root = config.parent
    fw = Framework(MKDOCS, config, root, read=read)
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
        fw.page_root = Path(real)
    fw.url_style = "html" if data.get("use_directory_urls") is False else "directory"
    for key in ("exclude_docs", "draft_docs"):
        patterns = data.get(key)
        if isinstance(patterns, str) and patterns.strip():
            fw.excludes.append((f"{config.name} {key}", "gitignore", patterns.splitlines()))
    _mkdocs_nav(fw, data.get("nav"))
    return fw


def _mkdocs_nav(fw: Framework, nav: Any) -> None:
    """Page titles and section trails from mkdocs.yml `nav`. An untitled section (Material's
    navigation.indexes names it after its index page) is `UNTITLED` and its position in the trail."""
    sections = 0

    def walk(items: Any, trail: tuple[str, ...]) -> None:
        nonlocal sections
        for item in items if isinstance(items, list) else []:
            title, target = (None, item) if not isinstance(item, dict) or len(item) != 1 else next(iter(item.items()))
            title = str(title).strip() if isinstance(title, str | int | float) and str(title).strip() else None
            if isinstance(target, list):
                sections += 1
                walk(target, (*trail, title or f"{UNTITLED}{sections}"))
            elif isinstance(target, str) and not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                page = target.lstrip("/")
                fw.nav.setdefault(page, (title, trail))
                fw.nav_order.append(page)

    walk(nav, ())


UNTITLED = "\0"  # marks an untitled nav section in a trail


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
    elif isinstance(suffix, dict):  # {".rst": "restructuredtext", ".txt": "restructuredtext", ".md": "markdown"}
        fw.source_suffixes = [s for s, kind in suffix.items() if isinstance(s, str) and kind != "markdown"]
    elif isinstance(suffix, list | tuple):
        fw.source_suffixes = [s for s in suffix if isinstance(s, str)]
    fw.page_root, fw.url_style = config.parent, "html"
    file_suffix = values.get("html_file_suffix")
    if isinstance(file_suffix, str) and file_suffix.startswith("."):
        fw.file_suffix = file_suffix
    patterns = values.get("exclude_patterns")
    if isinstance(patterns, list | tuple) and any(isinstance(p, str) for p in patterns):
        fw.excludes.append(("conf.py exclude_patterns", "glob", [p for p in patterns if isinstance(p, str)]))
    return fw


class _Unreadable:
    """A conf.py value that is not a literal (computed, imported): reported, not evaluated."""


_JS_TOKEN = re.compile(
    r"""//[^\n]*|/\*.*?\*/|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\.|[^`\\])*`|[{}\[\]()]|[A-Za-z_$][\w$]*\s*:""",
    re.DOTALL,
)
_JS_LITERAL = re.compile(r"""\s*(?:'((?:\\.|[^'\\\n])*)'|"((?:\\.|[^"\\\n])*)"|`([^`$\\]*)`|(true|false)\b|(\[))""")


_JS_PLAIN = re.compile(r"'([^'\\\\]*)'|\"([^\"\\\\]*)\"")


def _js_keys(text: str, key: str) -> list[tuple[int, int]]:
    """(nesting depth, offset after the colon) of every `key:` property in a JS/TS config, outside strings
    and comments; the shallowest is the config's own (deeper ones belong to nested objects)."""
    found: list[tuple[int, int]] = []
    depth = 0
    for m in _JS_TOKEN.finditer(text):
        token = m.group(0)
        if token in "{[(":
            depth += 1
        elif token in "}])":
            depth -= 1
        elif token.endswith(":") and token[:-1].strip() == key:
            found.append((depth, m.end()))
    return found


def _js_value(text: str, key: str) -> tuple[Any, bool]:
    """The plain literal (string, boolean, array of strings) of the shallowest `key:`, and whether the key is
    there at all: a key that is there with another value (a variable, a template with ${}) is unreadable."""
    found = _js_keys(text, key)
    if not found:
        return None, False
    depth = min(d for d, _ in found)
    at = next(offset for d, offset in found if d == depth)
    m = _JS_LITERAL.match(text, at)
    if not m:
        return None, True
    if m.group(4):
        return m.group(4) == "true", True
    if m.group(5):  # an array: plain strings only
        close = text.find("]", m.end())
        items = [i.strip() for i in text[m.end() : close].split(",") if i.strip()] if close > 0 else ["?"]
        values = [_JS_PLAIN.fullmatch(i) for i in items]
        strings = [v.group(1) if v.group(1) is not None else v.group(2) for v in values if v]
        return (strings if all(values) else None), True
    value = next(g for g in m.groups()[:3] if g is not None)
    return value, True


def _js_string(text: str, key: str) -> tuple[str | None, bool]:
    value, present = _js_value(text, key)
    return (value if isinstance(value, str) else None), present


def _js_bool(text: str, key: str) -> bool | None:
    value, _ = _js_value(text, key)
    return value if isinstance(value, bool) else None


def _js_strings(text: str, key: str) -> list[str] | None:
    value, _ = _js_value(text, key)
    return value if isinstance(value, list) else None


def _js_shorthand(text: str, key: str) -> bool:
    """Whether `key` appears as a shorthand property (`site,`): a variable, not a plain value."""
    return re.search(rf"(?:^|[{{,])[ \t]*{key}[ \t]*(?:,|\n|}})", text, re.MULTILINE) is not None


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
    text = _read_or_empty(config)
    url, _ = _js_string(text, "url")
    base, _ = _js_string(text, "baseUrl")
    if url:
        fw.site_url = url.rstrip("/") + "/" + (base or "").strip("/")
    fw.include_bases = [config.parent]
    route, present = _js_string(text, "routeBasePath")
    fw.route_prefix = "docs/" if not present else (route or "").strip("/") + "/" if (route or "").strip("/") else ""
    if present and route is None:
        fw.unreadable.append("routeBasePath")
    fw.page_root, fw.url_style = config.parent / "docs", "clean"
    if _js_bool(text, "trailingSlash"):
        fw.url_style = "directory"
    return fw


def _vitepress(config: Path) -> Framework:
    root = config.parent.parent  # the folder holding .vitepress/ is the docs source root
    fw = _js(Framework(VITEPRESS, config, root), {"site_name": "title", "description": "description"})
    text = _read_or_empty(config)
    host, _ = _js_string(text, "hostname")
    base, _ = _js_string(text, "base")
    if host:
        fw.site_url = host.rstrip("/") + "/" + (base or "").strip("/")
    fw.include_bases = [root]
    src, _ = _js_string(text, "srcDir")
    fw.page_root = (root / src).resolve() if src else root
    fw.url_style = "clean" if _js_bool(text, "cleanUrls") else "html"
    excluded = _js_strings(text, "srcExclude")
    if excluded:
        fw.excludes.append((f"{config.name} srcExclude", "glob", excluded))
    elif re.search(r"^[ \t]*srcExclude\s*:", text, re.MULTILINE):
        fw.unreadable.append("srcExclude")
    return fw


def _starlight(config: Path) -> Framework:
    fw = _js(Framework(STARLIGHT, config, config.parent), {"site_name": "title", "description": "description"})
    text = _read_or_empty(config)
    site, present = _js_string(text, "site")
    base, _ = _js_string(text, "base")
    if site:
        fw.site_url = site.rstrip("/") + "/" + (base or "").strip("/")
    elif (present or _js_shorthand(text, "site")) and "site" not in fw.unreadable:
        fw.unreadable.append("site")
    fw.include_bases = [config.parent]
    fw.page_root = config.parent / "src" / "content" / "docs"
    fw.url_style = "clean" if _js_string(text, "trailingSlash")[0] == "never" else "directory"
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


def config_names() -> list[str]:
    """The file names (relative to a folder) a docs framework's config may have."""
    return [str(path) for path, _ in _candidates(Path("."))]


def _candidates(folder: Path) -> list[tuple[Path, Callable[[Path], Framework]]]:
    """Config files a framework would read in this folder, most specific first."""
    out: list[tuple[Path, Callable[[Path], Framework]]] = []
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


def detect_framework(docs_dir: Path, boundary: Path | None = None) -> Framework | None:
    """The framework whose config covers `docs_dir`, from the folder itself up to LEVELS_UP above it,
    never above a git work tree's root, a staged copy's root (the folder beside which staging keeps its
    listing) or `boundary`."""
    from ..output.layout import STAGED_LISTING

    docs = Path(os.path.realpath(docs_dir))
    stop = Path(os.path.realpath(boundary)) if boundary is not None else None
    folder = docs
    for _ in range(LEVELS_UP + 1):
        for path, read in _candidates(folder):
            if not path.is_file() or path.is_symlink() or (read is _starlight and not _is_starlight(path)):
                continue
            fw = read(path)
            if _covers(fw, docs):
                return fw
        if (folder / ".git").exists() or folder.parent == folder or folder == stop:
            break
        if (folder.parent / STAGED_LISTING).is_file():
            break
        folder = folder.parent
    return None


def _is_starlight(path: Path) -> bool:
    try:
        return "starlight" in _read(path)
    except OSError:
        return False
