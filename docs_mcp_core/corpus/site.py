"""Where a page is published and how it sits in the site's navigation, from its docs framework's config.

Each page's `source_url` is the framework's URL for it (MkDocs `site_url` and `use_directory_urls`,
Docusaurus `url` + `baseUrl` with `routeBasePath`, `slug` and `id` frontmatter, VitePress sitemap
`hostname` + `base` and `cleanUrls`, Starlight `site` + `base`, Sphinx `html_baseurl` and `.html`),
and each heading's fragment is the id the framework gives it: an explicit `{ #id }`, else its slug by
the framework's own rules (Python-Markdown's toc, github-slugger, VitePress's slugify, docutils'
make_id), duplicates numbered as the framework numbers them. mkdocs.yml `nav` gives titles and the
sections above each page, for breadcrumbs.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ..paths import read_bytes
from .framework import DOCUSAURUS, MKDOCS, SPHINX, STARLIGHT, UNTITLED, VITEPRESS, Framework

_NUMBER_PREFIX = re.compile(r"^\d+[-_.]")  # Docusaurus drops "01-" from file and folder names
_INDEX_NAMES = ("index", "readme")


@dataclass(frozen=True)
class SiteContext:
    """What parsing a page needs to know of its site (sent to parser processes, so plain data)."""

    framework: str
    site_url: str | None  # scheme, host and base path, ending in "/"
    prefix: str  # the docs folder's path under the site's page root ("" or "guide/")
    url_style: str = "directory"
    route_prefix: str = ""
    file_suffix: str = ".html"
    # docs-relative page -> (nav title or None, titles of the sections above it), from mkdocs.yml nav
    nav: dict[str, tuple[str | None, tuple[str, ...]]] = field(default_factory=dict)


def site_context(fw: Framework | None, docs_root: str, titles: dict[str, str] | None = None) -> SiteContext | None:
    """The site context of a docs folder (None without a framework). `titles`: docs-relative page ->
    its title, to name the untitled nav sections after their index pages."""
    if fw is None:
        return None
    prefix = fw.prefix_of(docs_root)
    site_url = fw.site_url.rstrip("/") + "/" if fw.site_url and prefix is not None else None
    return SiteContext(
        fw.name,
        site_url,
        prefix or "",
        fw.url_style,
        fw.route_prefix,
        fw.file_suffix,
        _nav(fw, prefix, titles or {}) if prefix is not None else {},
    )


def _nav(fw: Framework, prefix: str, titles: dict[str, str]) -> dict[str, tuple[str | None, tuple[str, ...]]]:
    """Nav entries under the docs folder, keyed docs-relative; an untitled section is named after its
    first page when that is an index page (Material's navigation.indexes), and left out otherwise."""
    out: dict[str, tuple[str | None, tuple[str, ...]]] = {}
    index_titles: dict[tuple[str, ...], str] = {}  # section position -> title of its index page
    for page in fw.nav_order:
        title, trail = fw.nav[page]
        if PurePosixPath(page).stem.lower() in _INDEX_NAMES and page.startswith(prefix):
            index_titles.setdefault(trail, title or titles.get(page[len(prefix) :], ""))
    for page, (title, trail) in fw.nav.items():
        if not page.startswith(prefix):
            continue
        named = []
        for depth in range(1, len(trail) + 1):
            name = trail[depth - 1]
            name = index_titles.get(trail[:depth], "") if name.startswith(UNTITLED) else name
            if name:
                named.append(name)
        rel = page[len(prefix) :]
        if PurePosixPath(page).stem.lower() in _INDEX_NAMES and named and named[-1] == (title or titles.get(rel)):
            named.pop()  # a section's index page: the section is the page itself
        out[rel] = (title, tuple(named))
    return out


def page_url(site: SiteContext, relpath: str, meta: dict[str, Any] | None = None) -> str | None:
    """The published URL of a docs-relative page, or None when the site's URL is unknown."""
    if not site.site_url:
        return None
    meta = meta or {}
    path = PurePosixPath(site.prefix + relpath)
    parts = [*path.parent.parts, path.stem] if str(path.parent) != "." else [path.stem]
    if site.framework == DOCUSAURUS:
        parts = [_NUMBER_PREFIX.sub("", p) for p in parts]
        if isinstance(meta.get("id"), str) and meta["id"].strip():
            parts[-1] = meta["id"].strip()
        slug = meta.get("slug")
        if isinstance(slug, str) and slug.strip():
            slug = slug.strip()
            joined = slug.lstrip("/") if slug.startswith("/") else "/".join([*parts[:-1], slug])
            return site.site_url + _route(site, joined.strip("/"), index=not joined.strip("/"))
    elif site.framework == STARLIGHT:
        slug = meta.get("slug")
        if isinstance(slug, str):
            return site.site_url + _route(site, slug.strip("/"), index=not slug.strip("/"))
        parts = [_github_slug(p) or p.lower() for p in parts]
    index = parts[-1].lower() in _INDEX_NAMES
    if index:
        parts = parts[:-1]
    return site.site_url + _route(site, "/".join(parts), index=index)


def _route(site: SiteContext, path: str, *, index: bool) -> str:
    path = site.route_prefix + path if path else site.route_prefix.rstrip("/")
    if site.framework == SPHINX:
        return (path + "/" if path and index else path) + ("index" if index else "") + site.file_suffix
    if not path:
        return ""
    if index:
        return path + "/"
    if site.url_style == "html":
        return path + site.file_suffix
    return path + "/" if site.url_style == "directory" else path


def heading_ids(site: SiteContext, headings: list[tuple[str, str | None]]) -> list[str]:
    """The fragment of each of a page's headings, in page order, from (heading text, explicit `{ #id }`):
    the explicit id, else the framework's slug, made unique as the framework makes it."""
    slug = _SLUGGERS.get(site.framework, _github_slug)
    seen: dict[str, int] = {}
    used: set[str] = set()
    out: list[str] = []
    for text, explicit in headings:
        anchor = explicit or _unique(site.framework, slug(text), seen, used)
        used.add(anchor)
        out.append(anchor)
    return out


def _unique(framework: str, anchor: str, seen: dict[str, int], used: set[str]) -> str:
    """A repeated slug numbered as the framework numbers it: `slug_1` (Python-Markdown), else `slug-1`."""
    base = anchor or ("section" if framework == SPHINX else "")
    candidate = base
    while candidate in used or not candidate:
        seen[base] = seen.get(base, 0) + 1
        candidate = f"{base}_{seen[base]}" if framework == MKDOCS else f"{base}-{seen[base]}"
    return candidate


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def _toc_slug(text: str) -> str:
    """Python-Markdown's toc.slugify (MkDocs' default)."""
    value = re.sub(r"[^\w\s-]", "", _ascii(text)).strip().lower()
    return re.sub(r"[-\s]+", "-", value)


def _github_slug(text: str) -> str:
    """github-slugger (Docusaurus, Starlight): lowercase, punctuation dropped, each space a hyphen."""
    return re.sub(r" ", "-", re.sub(r"[^\w\- ]", "", text.strip().lower()))


def _vitepress_slug(text: str) -> str:
    """@mdit-vue/shared slugify (VitePress)."""
    value = re.sub(r"[\u0300-\u036f]", "", unicodedata.normalize("NFKD", text))
    value = re.sub(r"[\u0000-\u001f]", "", value)
    value = re.sub(r"[\s~`!@#$%^&*()\-_+=\[\]{}|\\;:\"'“”‘’<>,.?/]+", "-", value)
    value = re.sub(r"-{2,}", "-", value).strip("-")
    return re.sub(r"^(\d)", r"_\1", value).lower()


def _docutils_id(text: str) -> str:
    """docutils.nodes.make_id (Sphinx section ids)."""
    value = _ascii(text.lower())
    value = re.sub(r"[^a-z0-9]+", "-", " ".join(value.split()))
    return re.sub(r"^[-0-9]+|-+$", "", value)


_SLUGGERS = {
    MKDOCS: _toc_slug,
    DOCUSAURUS: _github_slug,
    STARLIGHT: _github_slug,
    VITEPRESS: _vitepress_slug,
    SPHINX: _docutils_id,
}


def pages_site_name(root: Path, relpaths: list[str]) -> str | None:
    """The name a website's staged pages give their site (`site_name` in their frontmatter: og:site_name,
    else the site part of their <title>), the most common one; None for pages that name none. Only
    the first page's head is read unless it names one (pages staged from a website all carry the key)."""
    import yaml

    def named(rel: str) -> str | None:
        try:
            head = read_bytes(root / rel)[:4096].decode("utf-8", errors="replace")
        except OSError:
            return None
        front = head.split("\n---", 1)[0] if head.startswith("---\n") else ""
        for line in front.split("\n"):
            if line.startswith("site_name:") and line.split(":", 1)[1].strip():
                try:
                    value = yaml.safe_load(line.split(":", 1)[1])
                except yaml.YAMLError:
                    return None
                return value.strip() if isinstance(value, str) and value.strip() else None
        return None

    if not relpaths or named(relpaths[0]) is None:
        return None
    names = Counter(n for rel in relpaths if (n := named(rel)))
    return sorted(names.items(), key=lambda kv: (-kv[1], kv[0]))[0][0] if names else None
