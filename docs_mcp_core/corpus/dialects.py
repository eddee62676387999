"""The Markdown dialects docs are written in, as markdown-it-py rules: what is markup, what is text.

One parser reads them all (their markers do not collide and none is plain prose):
- Python-Markdown/Material admonitions `!!! note "Title"`, collapsibles `???`/`???+`, and Material content
  tabs `=== "Label"`: written here (`indented_blocks`), as Python-Markdown reads them;
- containers `::: tip Title` (VitePress), `:::note[Title]` (Docusaurus, Starlight), `:::{note}` (MyST),
  `::: code-group`: mdit-py-plugins `container`, any name;
- pymdownx blocks `/// tip | Title` … `///`, tabs `//// tab | Label`: written here (`pymdownx_blocks`), as
  they close at a run of exactly as many slashes;
- GitHub alerts `> [!WARNING]`: markdown-it-py's own `alerts` option;
- MyST roles {role}`text`: mdit-py-plugins `myst_role`;
- heading attribute lists `## Title { #id }`: written here (`heading_attrs`), as no plugin reads them.

MDX files get a variant without indented code (MDX has none, so indented JSX children stay Markdown) whose
fences may be indented any amount, as in MDX.
Every container's opening token carries `meta["label"]`: the text it stands for ("Tip: Title", a tab's label).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_block import StateBlock
    from markdown_it.rules_core import StateCore
    from markdown_it.token import Token

CONTAINER_OPEN = ("admonition_open", "container_container_open", "container_block_open", "content_tab_open")
_HEADING_ATTRS = re.compile(r"[ \t]*\{:?[ \t]*(?:[#.][^{}]*|[\w-]+=[^{}]*)\}[ \t]*$")
_ID = re.compile(r"#([\w:.-]+)")
_ADMON = re.compile(r"""^(!!!|\?\?\?\+?)[ \t]+([\w -]*?)[ \t]*(?:"([^"]*)")?[ \t]*$""")
_TAB = re.compile(r"""^===(\+?)[ \t]+(?:"([^"]*)"|'([^']*)')[ \t]*$""")
_NAMED = re.compile(r"^\{?([\w-]+)\}?(?:\[(.*)\])?[ \t]*(.*)$")
_INLINE_MARKUP = re.compile(r"[`*]+|\\(?=[^\w\s])")
_NO_LABEL = {"code-group", "div", "html", "md-in-html"}


def _words(kind: str) -> str:
    return kind.replace("-", " ").replace("_", " ").strip().capitalize()


def label_for(kind: str, title: str) -> str:
    """`Tip: Title` for an admonition, just the title for tabs and details, nothing for code groups."""
    kind, title = kind.strip().lower(), _INLINE_MARKUP.sub("", title).strip().strip("\"'").strip()
    if kind in _NO_LABEL:
        return title
    if kind in ("tab", "details", "summary"):
        return title or _words(kind)
    if not title or title.lower() == kind:
        return _words(kind)
    return f"{_words(kind)}: {title}"


def _container_label(info: str, marker: str) -> str:
    info = info.strip()
    if marker == "/":  # pymdownx blocks: `tip | Title`
        kind, _, title = info.partition("|")
        return label_for(kind, title)
    m = _NAMED.match(info)
    if not m:
        return info
    kind, bracket, rest = m.group(1), m.group(2), m.group(3)
    return label_for(kind, bracket if bracket is not None else rest)


def indented_blocks(md: MarkdownIt) -> None:
    """Python-Markdown admonitions (`!!! note "Title"`, Material's collapsible `???`/`???+`) and Material
    content tabs (`=== "Label"`): a body indented four spaces, which, as Python-Markdown reads it, goes
    on across blank lines until a line indented less (mdit-py-plugins' `admon` ends it at two blank
    lines, which cut real pages' tabs and notes in half)."""

    def rule(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        if state.sCount[start] - state.blkIndent >= 4:
            return False
        pos = state.bMarks[start] + state.tShift[start]
        line = state.src[pos : state.eMarks[start]]
        tab = _TAB.match(line)
        admon = None if tab else _ADMON.match(line)
        if not tab and not admon:
            return False
        if silent:
            return True
        old_parent, old_max, old_indent = state.parentType, state.lineMax, state.blkIndent
        state.parentType = "indented_block"
        state.blkIndent += 4
        nxt = start + 1
        while nxt < end and (state.isEmpty(nxt) or state.sCount[nxt] >= state.blkIndent):
            nxt += 1
        while nxt > start + 1 and state.isEmpty(nxt - 1):
            nxt -= 1
        state.lineMax = nxt
        if tab:
            kind, label, markup = "content_tab", tab.group(2) if tab.group(2) is not None else tab.group(3) or "", "==="
            meta = {"label": label}
        else:
            assert admon is not None  # one of the two matched (checked above)
            markup, classes, title = admon.group(1), admon.group(2).split(), admon.group(3)
            kind = "admonition"
            tag = classes[0].lower() if classes else "note"
            label = label_for(tag, title if title is not None else "")
            meta = {"tag": tag, "label": label if title != "" else ""}
        token = state.push(f"{kind}_open", "div", 1)
        token.markup, token.info, token.block, token.map, token.meta = markup, line, True, [start, nxt], meta
        state.md.block.tokenize(state, start + 1, nxt)
        token = state.push(f"{kind}_close", "div", -1)
        token.markup, token.block = markup, True
        state.parentType, state.lineMax, state.blkIndent = old_parent, old_max, old_indent
        state.line = nxt
        return True

    md.block.ruler.before("fence", "indented_block", rule, {"alt": ["paragraph", "reference", "blockquote", "list"]})


_BLOCK_OPEN = re.compile(r"^(/{3,})[ \t]+(\S.*)$")


def pymdownx_blocks(md: MarkdownIt) -> None:
    """pymdownx blocks: `/// tip | Title` … `///`; a block ends at a line of exactly as many slashes, so a
    `//// tab` nested in a `/// details` closes at its own `////` (mdit-py-plugins' `container` would end
    the outer block there: it closes at any run at least as long)."""

    def rule(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        if state.sCount[start] - state.blkIndent >= 4:
            return False
        pos = state.bMarks[start] + state.tShift[start]
        m = _BLOCK_OPEN.match(state.src[pos : state.eMarks[start]])
        if not m:
            return False
        if silent:
            return True
        markup = m.group(1)
        nxt = start + 1
        closed = False
        while nxt < end:
            if state.sCount[nxt] < state.blkIndent and not state.isEmpty(nxt):
                break
            line = state.src[state.bMarks[nxt] + state.tShift[nxt] : state.eMarks[nxt]].strip()
            if line == markup:
                closed = True
                break
            nxt += 1
        old_parent, old_max = state.parentType, state.lineMax
        state.parentType = "pymdownx_block"
        state.lineMax = nxt
        token = state.push("container_block_open", "div", 1)
        token.markup, token.info, token.block, token.map = markup, " " + m.group(2), True, [start, nxt + closed]
        state.md.block.tokenize(state, start + 1, nxt)
        token = state.push("container_block_close", "div", -1)
        token.markup, token.block = markup, True
        state.parentType, state.lineMax = old_parent, old_max
        state.line = nxt + closed
        return True

    md.block.ruler.before("fence", "pymdownx_block", rule, {"alt": ["paragraph", "reference", "blockquote", "list"]})


def heading_attrs(md: MarkdownIt) -> None:
    """`## Title { #custom-id .class }` (attr_list): the list leaves the heading text; `#id` becomes its `id`."""

    def rule(state: StateCore) -> None:
        tokens = state.tokens
        for i, tok in enumerate(tokens):
            if tok.type != "heading_open" or i + 1 >= len(tokens):
                continue
            inline = tokens[i + 1]
            m = _HEADING_ATTRS.search(inline.content)
            if not m or not inline.content[: m.start()].strip():
                continue
            found = _ID.search(m.group(0))
            if found:
                tok.attrSet("id", found.group(1))
            inline.content = inline.content[: m.start()]
            children = inline.children or []
            if children and children[-1].type == "text":
                tail = _HEADING_ATTRS.search(children[-1].content)
                if tail:
                    children[-1].content = children[-1].content[: tail.start()].rstrip()
                    if not children[-1].content and len(children) > 1:
                        children.pop()

    md.core.ruler.push("heading_attrs", rule)


_STUB = re.compile(r"^:::[ \t]+([A-Za-z_][\w]*(?:\.[\w]+)*)[ \t]*$")


def api_stubs(md: MarkdownIt) -> None:
    """mkdocstrings `::: package.module` (with its indented YAML options): a stub whose text comes from
    the code at site build time, so it carries none here. A dotted name, or one followed by indented
    options, is a stub; a single word alone (`::: tip`) stays a container."""

    def rule(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        if state.sCount[start] - state.blkIndent >= 4:
            return False
        pos = state.bMarks[start] + state.tShift[start]
        m = _STUB.match(state.src[pos : state.eMarks[start]])
        if not m:
            return False
        nxt = start + 1
        while nxt < end and (state.isEmpty(nxt) or state.sCount[nxt] > state.blkIndent):
            nxt += 1
        while nxt > start + 1 and state.isEmpty(nxt - 1):
            nxt -= 1
        if "." not in m.group(1) and nxt == start + 1:
            return False
        if silent:
            return True
        token = state.push("api_stub", "", 0)
        token.content, token.map, token.block = m.group(1), [start, nxt], True
        state.line = nxt
        return True

    md.block.ruler.before("fence", "api_stub", rule, {"alt": ["paragraph", "reference", "blockquote", "list"]})


def _labels(state: StateCore) -> None:
    for tok in state.tokens:
        if tok.type == "container_container_open":
            tok.meta = {**(tok.meta or {}), "label": _container_label(tok.info, ":")}
        elif tok.type == "container_block_open":
            tok.meta = {**(tok.meta or {}), "label": _container_label(tok.info, "/")}


def _indented_fences(md: MarkdownIt) -> None:
    """MDX: a fence may be indented any amount (it reads no indented code)."""
    fence = md.block.ruler.__rules__[md.block.ruler.__find__("fence")].fn

    def rule(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        if state.sCount[start] - state.blkIndent < 4:
            return False
        old = state.blkIndent
        state.blkIndent = state.sCount[start]
        try:
            return bool(fence(state, start, end, silent))
        finally:
            state.blkIndent = old

    md.block.ruler.before("fence", "mdx_fence", rule, {"alt": ["paragraph", "reference", "blockquote", "list"]})


def build_parser(*, mdx: bool = False) -> MarkdownIt:
    from markdown_it import MarkdownIt
    from mdit_py_plugins.container import container_plugin
    from mdit_py_plugins.myst_role import myst_role_plugin

    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    md.options["alerts"] = True
    md.use(api_stubs)
    md.use(indented_blocks)
    md.use(container_plugin, name="container", marker=":", validate=lambda params, *_: bool(params.strip()))
    md.use(pymdownx_blocks)
    md.use(myst_role_plugin)
    md.use(heading_attrs)
    md.core.ruler.push("container_labels", _labels)
    if mdx:
        md.disable("code")
        _indented_fences(md)
    return md


# What a construct became: read as text, left as text (markup a reader would see), or dropped.
UNDERSTOOD, AS_TEXT, DROPPED = "understood", "kept as text", "dropped"
_JSX_TAG = re.compile(r"<([A-Z][\w.]*)\b")
_TEMPLATE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}")


def syntax_constructs(tokens: list[Token], mdx: bool = False) -> list[tuple[str, int]]:
    """(construct, 0-based body line) of every dialect construct the parser understood in these tokens,
    and of markup it could only keep as text (templating, components)."""
    found: list[tuple[str, int]] = []

    def line(tok: Token) -> int:
        return tok.map[0] if tok.map else 0

    for tok in tokens:
        kind = tok.type
        if kind == "admonition_open":
            found.append((f"admonition {tok.markup}", line(tok)))
        elif kind == "container_container_open":
            name = _NAMED.match(tok.info.strip())
            found.append((f"container ::: {name.group(1) if name else tok.info.strip()}", line(tok)))
        elif kind == "container_block_open":
            block = tok.info.split("|")[0].strip()
            found.append((f"block {tok.markup} {block}", line(tok)))
        elif kind == "content_tab_open":
            found.append(("content tab ===", line(tok)))
        elif kind.startswith("alert") and tok.nesting == 1 and "title" not in kind:
            found.append(("GitHub alert > [!…]", line(tok)))
        elif kind == "api_stub":
            found.append(("API stub ::: (mkdocstrings)", line(tok)))
        elif kind == "heading_open" and tok.attrGet("id"):
            found.append(("heading attribute list { #id }", line(tok)))
        elif kind == "fence" and "[" in tok.info:
            found.append(("fence title [label]", line(tok)))
        elif kind == "fence" and re.match(r"^\{[\w-]+\}", tok.info.strip()):
            found.append((f"MyST directive {tok.info.split()[0]}", line(tok)))
        elif kind == "fence" and tok.info.strip().startswith("{"):
            found.append(("fence attribute list { .lang }", line(tok)))
        elif kind == "html_block" and mdx or kind == "html_block" and _JSX_TAG.search(tok.content):
            for name in dict.fromkeys(_JSX_TAG.findall(tok.content)):
                found.append((f"component <{name}>", line(tok)))
        elif kind == "inline":
            for child in tok.children or []:
                if child.type == "myst_role":
                    found.append(("MyST role {role}`…`", line(tok)))
                elif child.type == "html_inline" and (jsx := _JSX_TAG.match(child.content)):
                    found.append((f"component <{jsx.group(1)}>", line(tok)))
            if _TEMPLATE.search(tok.content):
                found.append(("template {{ }} / {% %}", line(tok)))
    return found


def construct_status(construct: str) -> str:
    if construct.startswith("template"):
        return AS_TEXT
    if (
        construct.startswith(("API stub", "autodoc", "Sphinx directive auto", "draft page"))
        or construct.startswith("Sphinx directive ")
        and construct.split()[-1]
        in (
            "toctree",
            "module",
            "currentmodule",
            "index",
            "highlight",
        )
    ):
        return DROPPED
    return UNDERSTOOD


# Tab labels that name the language of the code under them (a tab labelled "Python 3.10+", a TabItem with
# value="py"): a fence with no language of its own there gets it, so the language facet sees it.
TAB_LANGUAGES = {
    "python", "py", "python3", "javascript", "js", "node", "node.js", "nodejs", "typescript", "ts", "go",
    "golang", "java", "kotlin", "kt", "ruby", "rb", "rust", "rs", "swift", "php", "c#", "csharp", "c++", "cpp",
    "c", "scala", "elixir", "dart", "r", "lua", "perl", "haskell", "clojure", "julia", "bash", "sh", "shell",
    "zsh", "fish", "powershell", "pwsh", "sql", "html", "css", "scss", "json", "yaml", "yml", "toml", "xml",
    "markdown", "md", "mdx", "jsx", "tsx", "vue", "svelte", "graphql", "dockerfile", "hcl", "terraform",
}  # fmt: skip
_TAB_TAG = re.compile(r"<(/?)(TabItem|Tab)\b([^>]*?)(/?)>")
_PROP = re.compile(r"""\b(label|value|title)=(?:"([^"]*)"|'([^']*)')""")
_FENCE_LINE = re.compile(r"^([ \t>]*)(`{3,}|~{3,})[ \t]*$")


def label_language(label: str) -> str | None:
    """The language a tab label names ("Python 3.10+" -> python, "Node.js" -> node), or None."""
    words = re.split(r"[\s/,(]+", label.strip().lower())
    first = words[0].rstrip("+:") if words and words[0] else ""
    return first if first in TAB_LANGUAGES else None


def tab_languages(tokens: list[Token], lines: list[str]) -> list[int]:
    """Give a fence with no language the language its tab's label names (Material `=== "Python"`, pymdownx
    `//// tab | Python 3.10+`, JSX `<TabItem label="Python">`/`<Tab title="Go">`), in the tokens and in the
    body's lines (so `content` and the language facet, which reads fences, see it). Returns their lines."""
    labels: list[str | None] = []
    filled: list[int] = []
    for tok in tokens:
        if tok.type in ("content_tab_open", "container_block_open"):  # a pymdownx block is a tab or not
            tab = tok.type == "content_tab_open" or tok.info.strip().split("|")[0].strip() == "tab"
            labels.append((tok.meta or {}).get("label") if tab else None)
        elif tok.type in ("content_tab_close", "container_block_close"):
            if labels:
                labels.pop()
        elif tok.type in ("html_block", "html_inline"):
            for m in _TAB_TAG.finditer(tok.content):  # in document order: `</TabItem>`, then the next `<TabItem>`
                if m.group(1):
                    if labels:
                        labels.pop()
                elif not m.group(4):  # a self-closing tab has no children
                    props = {
                        p.group(1): p.group(2) if p.group(2) is not None else p.group(3)
                        for p in _PROP.finditer(m.group(3))
                    }
                    language_label = (
                        props[k] for k in ("label", "title", "value") if label_language(props.get(k) or "")
                    )
                    labels.append(next(language_label, None))
        elif tok.type == "fence" and not tok.info.strip() and tok.map is not None:
            language = next(
                (label_language(label) for label in reversed(labels) if label and label_language(label)), None
            )
            fence_line = _FENCE_LINE.match(lines[tok.map[0]]) if tok.map[0] < len(lines) else None
            if language and fence_line:
                tok.info = language
                lines[tok.map[0]] = fence_line.group(1) + fence_line.group(2) + language
                filled.append(tok.map[0])
    return filled
