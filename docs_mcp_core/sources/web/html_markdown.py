"""HTML page -> Markdown that keeps what agents need, via markdownify over BeautifulSoup.

Main content only (the first match of MAIN_SELECTORS, then site chrome removed), ATX headings,
fenced code blocks with their language (from `language-x`/`highlight-x`/`lang-x` classes),
GFM tables, and admonitions as block quotes that start with their title. Each heading's HTML
id is kept, so a chunk can cite the page with its heading anchor.

markdownify converts recursively (about three Python frames per element level), so markup nested
deeper than MAX_DEPTH below the main content is kept as its plain text: a page nested 400 levels
deep converts, with a note, instead of raising RecursionError.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bs4 import BeautifulSoup, Tag
from markdownify import MarkdownConverter

from ...chunking.source_urls import heading_key
from ...trust.views import hides

# Where the documentation text lives, most specific first (MkDocs Material, Sphinx, Docusaurus,
# VitePress, generic); the whole <body> when none matches.
MAIN_SELECTORS = (
    "article.md-content__inner",
    "div.theme-doc-markdown",
    "div.vp-doc",
    "div[role=main] div.document",
    "div.rst-content div[role=main]",
    "div[itemprop=articleBody]",
    "main article",
    "article",
    "[role=main]",
    "main",
    "div.document",
    "div#content",
    "div.content",
    "body",
)
# Chrome inside the main content: navigation, search, tables of contents, "edit this page",
# permalink markers, copy buttons, line numbers.
DROP_SELECTORS = (
    "script",
    "style",
    "noscript",
    "template",
    "iframe",
    "svg",
    "form",
    "button",
    "input",
    "nav",
    "footer",
    "aside:not(.admonition)",
    "a.headerlink",
    "a.anchor",
    "a.hash-link",
    "a.anchor-link",
    ".headerlink",
    "a.md-content__button",
    ".md-source-file",
    ".md-feedback",
    ".toc",
    "#toc",
    ".table-of-contents",
    ".theme-edit-this-page",
    ".edit-this-page",
    ".linenos",
    ".md-clipboard",
    ".sr-only",
    "[hidden]",
    ".breadcrumbs",
    ".wy-breadcrumbs",
    ".pagination-nav",
    ".md-footer",
)
ADMONITIONS = "div.admonition, aside.admonition, div.theme-admonition, div.callout, div.alert, details"
_LANG_CLASS = re.compile(r"^(?:language|lang|highlight|sourceCode)-([A-Za-z0-9_+#.-]+)$")
_EDIT_LINK = re.compile(r"^\s*(edit|view source|improve) (this|on|the)\b", re.IGNORECASE)
_NOT_A_LANGUAGE = {"default", "none", "text", "plain", "plaintext", "nohighlight", "source"}
_BLANKS = re.compile(r"\n{3,}")
_SPACES = re.compile(r"\s+")
MAX_DEPTH = 100  # element levels below the main content converted as markup; deeper ones become their text
_BOMS = (b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")


@dataclass
class Page:
    markdown: str
    title: str | None
    anchors: list[tuple[str, str]] = field(default_factory=list)  # (heading text, HTML id) in page order
    links: list[str] = field(default_factory=list)  # hrefs as written, for same-site crawling
    site_name: str | None = None  # og:site_name, else the site part of <title> ("Page - Site")
    flattened: int = 0  # elements nested deeper than MAX_DEPTH, kept as their plain text


def code_language(el: Tag) -> str:
    """The language of a <pre>, from its classes, its <code>'s, or up to two enclosing elements'."""
    candidates: list[Tag] = [el]
    code = el.find("code")
    if isinstance(code, Tag):
        candidates.insert(0, code)
    parent = el.parent
    for _ in range(3):
        if not isinstance(parent, Tag):
            break
        candidates.append(parent)
        parent = parent.parent
    for node in candidates:
        lang = node.get("data-lang") or node.get("data-language")
        if isinstance(lang, str) and lang.strip().lower() not in _NOT_A_LANGUAGE:
            return lang.strip().lower()
        for cls in node.get("class") or []:
            m = _LANG_CLASS.match(cls)
            if m and m.group(1).lower() not in _NOT_A_LANGUAGE:
                return m.group(1).lower()
    prompt = el.select_one("span.gp")  # Pygments marks console prompts; `>>>` is an interactive Python session
    if prompt is not None and prompt.get_text().strip() == ">>>":
        return "pycon"
    return ""


class _Converter(MarkdownConverter):
    """markdownify with fenced code (language kept) and no images' binary noise."""

    def convert_img(self, el: Tag, text: str, parent_tags: set[str]) -> str:
        alt = str(el.get("alt") or "").strip()
        return f"[image: {alt}]" if alt else ""


def _main(soup: BeautifulSoup) -> Tag:
    """The main content: one pass over the page finds every candidate, then the first selector wins."""
    candidates = soup.select(", ".join(MAIN_SELECTORS))
    for selector in MAIN_SELECTORS:
        for found in candidates:
            if found.css.match(selector) and found.get_text(strip=True):
                return found
    return soup


def _clean(main: Tag) -> None:
    for el in main.select(", ".join(DROP_SELECTORS)):  # one pass: pages with highlighted code have many tags
        if not el.decomposed:
            el.decompose()
    for el in main.find_all(style=True):  # hidden by its style: converted, it would become visible text
        if not el.decomposed and hides(str(el.get("style"))):
            el.decompose()
    for el in main.find_all("header"):
        if el.find(["h1", "h2", "h3", "h4", "h5", "h6"]) is None:
            el.decompose()
    for a in main.find_all("a"):
        if _EDIT_LINK.match(a.get_text(" ", strip=True)) and len(a.get_text(strip=True)) < 40:
            a.decompose()
    for table in main.select("table.highlighttable"):  # Pygments line-number tables: keep only the code
        pre = table.find("pre")
        if pre is not None:
            table.replace_with(pre)
    for el in main.select(ADMONITIONS):
        _admonition(el)


def _admonition(el: Tag) -> None:
    """A note/warning box becomes a block quote whose first line is its title in bold."""
    title_el = el.select_one(
        ".admonition-title, summary, .admonitionHeading_Gvgb, .alert-heading, "
        ".callout-title, [class*=admonitionHeading]"
    )
    kinds = [c for c in el.get("class") or [] if c not in ("admonition", "theme-admonition", "callout", "alert")]
    title = title_el.get_text(" ", strip=True) if title_el is not None else ""
    if title_el is not None:
        title_el.decompose()
    if not title:
        title = next((k for k in kinds if k.isalpha()), "note").capitalize()
    quote = BeautifulSoup("", "html.parser").new_tag("blockquote")
    head = BeautifulSoup(f"<p><strong>{_escape(title.rstrip(':'))}:</strong></p>", "html.parser").p
    if head is not None:
        quote.append(head)
    for child in list(el.children):
        quote.append(child.extract())
    el.replace_with(quote)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _anchors(main: Tag) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for h in main.find_all(["h1", "h2", "h3", "h4", "h5", "h6"]):
        anchor = h.get("id")
        if not anchor:
            inner = h.find(id=True)
            anchor = inner.get("id") if isinstance(inner, Tag) else None
        if not anchor:
            prev = h.find_previous_sibling()
            if (
                isinstance(prev, Tag)
                and prev.name == "a"
                and (prev.get("id") or prev.get("name"))
                and not prev.get_text(strip=True)
            ):
                anchor = prev.get("id") or prev.get("name")
        if isinstance(anchor, str) and anchor:
            out.append((heading_key(h.get_text(" ", strip=True)), anchor))
    return out


def _flatten_deep(main: Tag, limit: int) -> int:
    """Replace the content of every element `limit` levels below `main` by its plain text (level by level,
    without recursion); returns how many elements were cut that way."""
    level = [main]
    for _ in range(limit):
        level = [child for el in level for child in el.children if isinstance(child, Tag)]
        if not level:
            return 0
    for el in level:
        text = _SPACES.sub(" ", el.get_text(" ")).strip()
        for child in list(el.contents):
            if isinstance(child, Tag):
                child.decompose()  # iterative in BeautifulSoup, and it breaks the tree's reference cycles
            else:
                child.extract()
        el.append(text)
    return len(level)


def decoded(body: bytes, charset: str | None) -> str | bytes:
    """The page as text in the charset its Content-Type names; as bytes (the parser reads a BOM or a
    <meta charset>) when it names none or the page starts with a byte order mark, which wins."""
    if charset and not body.startswith(_BOMS):
        return body.decode(charset, errors="replace")
    return body


def html_to_markdown(html: str | bytes, charset: str | None = None) -> Page:
    """The page's main content as Markdown, its title, heading anchors and links."""
    soup = BeautifulSoup(decoded(html, charset) if isinstance(html, bytes) else html, "html.parser")
    title_tag = soup.find("title")
    links = [href for a in soup.find_all("a", href=True) if isinstance(href := a.get("href"), str)]
    main = _main(soup)
    flattened = _flatten_deep(main, MAX_DEPTH)
    _clean(main)
    anchors = _anchors(main)
    h1 = main.find("h1")
    title = (h1.get_text(" ", strip=True) if h1 is not None else None) or (
        title_tag.get_text(" ", strip=True) if title_tag is not None else None
    )
    converter = _Converter(
        heading_style="ATX",
        bullets="-",
        code_language_callback=code_language,
        escape_underscores=False,
        escape_asterisks=False,
    )
    markdown = converter.convert_soup(main)
    markdown = "\n".join(line.rstrip() for line in markdown.strip().splitlines())
    markdown = _BLANKS.sub("\n\n", markdown).strip() + "\n"
    if h1 is None and title:  # a page without an h1 still gets a title heading
        markdown = f"# {title}\n\n{markdown}"
    return Page(markdown, title or None, anchors, links, _site_name(soup, title_tag), flattened)


_TITLE_PARTS = re.compile(r"\s+[-|\u2014\u2013\u00b7:]\s+")


def _site_name(soup: BeautifulSoup, title_tag: Tag | None) -> str | None:
    """What the site calls itself: its og:site_name, else the last part of a "Page - Site" <title>."""
    meta = soup.find("meta", attrs={"property": "og:site_name"}) or soup.find(
        "meta", attrs={"name": "application-name"}
    )
    content = meta.get("content") if meta is not None else None
    if isinstance(content, str) and content.strip():
        return content.strip()
    if title_tag is None:
        return None
    parts = _TITLE_PARTS.split(title_tag.get_text(" ", strip=True))
    return parts[-1].strip() if len(parts) > 1 and parts[-1].strip() else None
