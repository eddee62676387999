"""reStructuredText pages, parsed with docutils and written out as Markdown for the chunker.

Sections become headings (levels in the order the file's adornment styles first appear, as
docutils reads them), so chunk IDs follow the same rules as Markdown's. Code blocks keep their
language, admonitions become text ("Note: …"), roles their text, `toctree`, comments and targets
vanish. Sphinx directives and roles that docutils does not know are registered as generic ones (their
content is read as reST), never by importing Sphinx; autodoc directives are API stubs: they carry no
text, so they are counted, not indexed. docutils' own file insertion is off: `include` and
`literalinclude` resolve through corpus/includes.py, inside the project root only.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..diagnostics import Diagnostic, warning
from .includes import IncludeContext, _pick_lines, _Reader, language_of

if TYPE_CHECKING:
    from docutils import nodes

AUTODOC = {
    "automodule",
    "autoclass",
    "autofunction",
    "automethod",
    "autoexception",
    "autoattribute",
    "autodata",
    "autodecorator",
    "autoproperty",
    "autosummary",
    "autoapimodule",
    "autoapiclass",
    "autoapifunction",
}
DROPPED = {"toctree", "module", "currentmodule", "highlight", "index", "tabularcolumns", "meta", "default-role"}
CODE_ROLES = {"class", "func", "meth", "attr", "exc", "data", "obj", "mod", "const", "option", "envvar", "program"}
VERSION_NOTES = {
    "versionadded": "New in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
}
SPHINX_SUBSTITUTIONS = {"version", "release", "today"}
# Directives whose content is code (sphinx-tabs code-tab, sphinx-prompt, doctest's), and its language when
# the directive names none.
CODE_DIRECTIVES = {
    "code-block": "",
    "sourcecode": "python",
    "code": "python",
    "code-tab": "",
    "prompt": "",
    "doctest": "pycon",
    "testcode": "python",
    "testsetup": "python",
    "testcleanup": "python",
    "testoutput": "",
    "jupyter-execute": "python",
    "ipython": "ipython",
}
_DIRECTIVE = re.compile(r"^\s*\.\.\s+([\w:.-]+)::", re.MULTILINE)
_ROLE = re.compile(r":([\w:.-]+):`")


@dataclass
class RstResult:
    markdown: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    constructs: list[tuple[str, int]] = field(default_factory=list)
    included: dict[str, str] = field(default_factory=dict)


_STATE: dict[
    str, Any
] = {}  # the file being parsed: the directives below report into it (one parse at a time per process)


def _directive_classes() -> dict[str, Any]:
    """Directive classes, made once per process (docutils is imported only to parse reST)."""
    made: dict[str, Any] | None = _STATE.get("classes")
    if made is not None:
        return made
    from docutils import nodes
    from docutils.parsers.rst import Directive, directives

    class AnyOption(dict[str, Any]):
        def __missing__(self, key: str) -> Any:
            return directives.unchanged

    class Generic(Directive):
        """A directive docutils does not know: its content is read as reST, its arguments kept as a label."""

        has_content = True
        optional_arguments = 1
        final_argument_whitespace = True
        option_spec = AnyOption()

        def run(self) -> list[Any]:
            _count(f"Sphinx directive {self.name}", self.lineno)
            name = self.name.split(":")[-1]
            if name in DROPPED:
                return []
            if name in AUTODOC:
                return [api_stub(name=" ".join(self.arguments))]
            box = nodes.container()
            title = " ".join(self.arguments)
            if name in VERSION_NOTES:
                box += nodes.paragraph(text=f"{VERSION_NOTES[name]} {title}".strip() + ":")
            elif name in ("seealso", "todo", "hint", "important", "tip", "caution", "attention", "danger", "error"):
                box += nodes.paragraph(text=name.replace("seealso", "See also").capitalize() + ":")
            elif name in CODE_DIRECTIVES:
                code = nodes.literal_block("\n".join(self.content), "\n".join(self.content))
                code["language"] = title.split()[0] if title else CODE_DIRECTIVES[name]
                return [code]
            elif title and name not in ("only", "ifconfig", "container", "rst-class", "cssclass"):
                box += nodes.paragraph(text=title)
            if self.content:
                self.state.nested_parse(self.content, self.content_offset, box)
            return [box]

    class CodeBlock(Directive):
        has_content = True
        optional_arguments = 1
        option_spec = AnyOption()

        def run(self) -> list[Any]:
            text = "\n".join(self.content)
            code = nodes.literal_block(text, text)
            code["language"] = self.arguments[0] if self.arguments else ""
            _count("code-block", self.lineno)
            return [code]

    class LiteralInclude(Directive):
        required_arguments = 1
        final_argument_whitespace = True
        option_spec = AnyOption()

        def run(self) -> list[Any]:
            text = _include(self.arguments[0], self.lineno, "literalinclude")
            _count("literalinclude" if text is not None else "literalinclude (unresolved)", self.lineno)
            if text is None:
                return []
            lines = text.split("\n")
            if "lines" in self.options:
                spans = []
                for part in str(self.options["lines"]).split(","):
                    a, _, b = part.strip().partition("-")
                    if a.isdigit() or b.isdigit():
                        spans.append((int(a or 1), int(b) if b.isdigit() else (None if _ else int(a))))
                lines = _pick_lines(lines, spans) or lines
            for key in ("start-after", "end-before"):
                marker = self.options.get(key)
                if marker:
                    at = next((i for i, ln in enumerate(lines) if marker in ln), None)
                    if at is not None:
                        lines = lines[at + 1 :] if key == "start-after" else lines[:at]
            body = "\n".join(lines).strip("\n")
            code = nodes.literal_block(body, body)
            code["language"] = self.options.get("language") or language_of(self.arguments[0])
            return [code]

    class Include(Directive):
        required_arguments = 1
        final_argument_whitespace = True
        option_spec = AnyOption()

        def run(self) -> list[Any]:
            text = _include(self.arguments[0], self.lineno, "include")
            _count("include" if text is not None else "include (unresolved)", self.lineno)
            if text is None:
                return []
            if "literal" in self.options or "code" in self.options:
                code = nodes.literal_block(text, text)
                code["language"] = self.options.get("code") or ""
                return [code]
            self.state_machine.insert_input(text.split("\n"), self.arguments[0])
            return []

    class api_stub(nodes.Element):  # noqa: N801 - docutils node classes are named in lower case
        pass

    classes: dict[str, Any] = {
        "generic": Generic,
        "code-block": CodeBlock,
        "literalinclude": LiteralInclude,
        "include": Include,
    }
    _STATE["classes"] = classes
    _STATE["api_stub"] = api_stub
    return classes


def _count(construct: str, line: int) -> None:
    result: RstResult | None = _STATE.get("result")
    if result is not None:
        result.constructs.append((construct, line))


def _include(target: str, line: int, what: str) -> str | None:
    reader: _Reader | None = _STATE.get("reader")
    here: str = _STATE.get("here", "")
    result: RstResult = _STATE["result"]
    if reader is None:
        result.diagnostics.append(
            warning(
                _STATE["relpath"],
                line,
                f"{what} '{target}' not resolved: no docs folder to resolve it in",
                "include-unresolved",
            )
        )
        return None
    real, why = reader.find(target, here, prefer_root=False)
    text = None
    if real is not None:
        text, why = reader.read(real)
    if text is None:
        reader.warn(line, what, target, why)
    return text


def _register(text: str) -> None:
    from docutils.parsers.rst import directives, roles

    classes = _directive_classes()
    for name in ("code-block", "sourcecode", "literalinclude", "include"):
        directives.register_directive(name, classes.get(name, classes["code-block"]))
    for name in set(_DIRECTIVE.findall(text)) | AUTODOC | DROPPED:
        # the registries are private (no public way to ask whether a name is known): types-docutils omits them
        known = name in directives._directives or name in directives._directive_registry  # type: ignore[attr-defined]
        if not known or name in DROPPED:
            directives.register_directive(name, classes["generic"])
    for name in set(_ROLE.findall(text)):
        if name not in roles._roles and name not in roles._role_registry:  # type: ignore[attr-defined]  # as above
            roles.register_local_role(name, _generic_role)


def _generic_role(
    name: str, rawtext: str, text: str, lineno: int, inliner: Any, options: Any = None, content: Any = None
) -> Any:
    from docutils import nodes, utils

    from .markdown import role_text

    shown = role_text(utils.unescape(text))
    kind = name.split(":")[-1]
    _count(f"Sphinx role :{kind}:", lineno)
    node = nodes.literal(rawtext, shown) if kind in CODE_ROLES else nodes.Text(shown)
    return [node], []


_SETTINGS = {
    "report_level": 5,
    "halt_level": 5,
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "doctitle_xform": False,
    "sectsubtitle_xform": False,
    "input_encoding": "unicode",
    "_disable_config": True,
    "line_length_limit": 100_000,
}


def _components() -> tuple[Any, Any]:
    """docutils' reST parser and its settings, made once per process: making the settings runs optparse
    over every option of every component, which costs more than parsing a page."""
    if "components" not in _STATE:
        from docutils.frontend import get_default_settings
        from docutils.parsers.rst import Parser
        from docutils.readers.standalone import Reader
        from docutils.writers.null import Writer

        parser = Parser()
        settings = get_default_settings(Parser, Reader, Writer)
        for key, value in _SETTINGS.items():
            setattr(settings, key, value)
        _reuse_list_machines()
        _STATE["components"] = (parser, settings)
    components: tuple[Any, Any] = _STATE["components"]
    return components


def _transforms() -> list[Any]:
    """The transforms whose result the Markdown shows: substitutions, footnotes and the URLs of named
    and anonymous hyperlinks (the standalone reader's others add ids, validate, or report references
    that only resolve across a Sphinx project)."""
    from docutils.transforms import references

    return [
        references.Substitutions,
        references.PropagateTargets,
        references.AnonymousHyperlinks,
        references.IndirectHyperlinks,
        references.Footnotes,
        references.ExternalTargets,
    ]


def _reuse_list_machines() -> None:
    """Lists, definition lists, field lists and line blocks each get a new nested state machine in
    docutils, whose fifteen states compile their transitions on creation: most of the time of parsing
    a page. `nested_parse` already reuses its machines (RSTState.nested_sm_cache); this does the same
    for `nested_list_parse`, one pool per initial state. A machine is taken out of its pool while it
    runs (lists nest) and goes back only after a run that did not raise; a reused machine's states
    start without the `blank_finish` a previous list left on them, as new ones do. The doctree is the
    same either way (tests/core/test_rst_speed.py)."""
    from docutils.parsers.rst import states

    if getattr(states.RSTState.nested_list_parse, "_docs_mcp_pooled", False):
        return
    original = states.RSTState.nested_list_parse
    pools: dict[tuple[Any, str], list[Any]] = {}

    def nested_list_parse(
        self: Any,
        block: Any,
        input_offset: int,
        node: Any,
        initial_state: str,
        blank_finish: bool,
        blank_finish_state: str | None = None,
        extra_settings: dict[str, Any] | None = None,
        match_titles: bool = False,
        state_machine_class: Any = None,
        state_machine_kwargs: Any = None,
    ) -> Any:
        if state_machine_class is not None or state_machine_kwargs is not None or match_titles:
            return original(
                self,
                block,
                input_offset,
                node,
                initial_state,
                blank_finish,
                blank_finish_state,
                extra_settings or {},
                match_titles,
                state_machine_class,
                state_machine_kwargs,
            )
        pool = pools.setdefault((self.nested_sm, initial_state), [])
        if pool:
            machine = pool.pop()
            machine.parent_state_machine = self.state_machine
            for state in machine.states.values():
                state.__dict__.pop("blank_finish", None)
        else:
            kwargs = {**self.nested_sm_kwargs, "initial_state": initial_state}
            machine = self.nested_sm(debug=self.debug, parent_state_machine=self.state_machine, **kwargs)
        finish_state = blank_finish_state or initial_state
        machine.states[finish_state].blank_finish = blank_finish
        for key, value in (extra_settings or {}).items():
            setattr(machine.states[initial_state], key, value)
        machine.run(block, input_offset, memo=self.memo, node=node, match_titles=False)
        blank_finish = machine.states[finish_state].blank_finish
        offset = machine.abs_line_offset()
        machine.parent_state_machine = None
        pool.append(machine)
        return offset, blank_finish

    # A patch of docutils: marks on a function and a method replaced on its class, which the types forbid.
    nested_list_parse._docs_mcp_pooled = True  # type: ignore[attr-defined]
    nested_list_parse.__wrapped__ = original  # type: ignore[attr-defined]
    states.RSTState.nested_list_parse = nested_list_parse  # type: ignore[method-assign]


def rst_to_markdown(text: str, relpath: str, ctx: IncludeContext | None) -> RstResult:
    """One reST file as Markdown (see the module docstring); a syntax error is a warning with its line."""
    import copy
    import os

    from docutils import nodes
    from docutils.utils import SystemMessage, new_document

    result = RstResult("")
    reader = _Reader(ctx, relpath) if ctx is not None else None
    here = os.path.dirname(os.path.join(ctx.docs_root, *relpath.split("/"))) if ctx is not None else ""
    _STATE.update(result=result, reader=reader, here=here, relpath=relpath)
    try:
        _register(text)
        parser, defaults = _components()
        settings = copy.copy(defaults)
        settings.warning_stream = io.StringIO()
        try:
            doctree = new_document(relpath, settings)
            parser.parse(text, doctree)
            doctree.transformer.add_transforms(_transforms())
            doctree.transformer.apply_transforms()
        except (
            SystemMessage,
            RecursionError,
            IndexError,
            ValueError,
            AttributeError,
            TypeError,
            AssertionError,
        ) as exc:
            result.diagnostics.append(
                warning(
                    relpath,
                    1,
                    f"reStructuredText could not be parsed ({type(exc).__name__}: {exc}); nothing from it is indexed",
                    "rst-invalid",
                )
            )
            return result
        for msg in doctree.findall(nodes.system_message):
            if msg["level"] >= 3:
                body = msg.astext().split("\n")[0]
                if not any(f"|{s}|" in body for s in SPHINX_SUBSTITUTIONS):
                    result.diagnostics.append(
                        warning(relpath, msg.get("line") or 1, f"reStructuredText: {body}", "rst-syntax")
                    )
        if reader is not None:
            result.diagnostics.extend(reader.out.diagnostics)
            result.included.update(reader.out.included)
        result.markdown = _Writer().document(doctree)
        return result
    finally:
        _STATE.pop("result", None)
        _STATE.pop("reader", None)


class _Writer:
    """A docutils doctree as Markdown: enough of it for chunking, reading and full-text search."""

    def __init__(self) -> None:
        from docutils import nodes

        self.nodes = nodes

    def document(self, doc: nodes.document) -> str:
        return "\n\n".join(b for b in self.blocks(doc.children, 0) if b.strip()) + "\n"

    def blocks(self, children: Any, depth: int) -> list[str]:
        out: list[str] = []
        for child in children:
            out.extend(self.block(child, depth))
        return out

    def block(self, node: Any, depth: int) -> list[str]:
        n = self.nodes
        name = type(node).__name__
        if isinstance(node, n.section):
            title = next((c for c in node.children if isinstance(c, n.title)), None)
            head = "#" * min(depth + 1, 6) + " " + (self.inline(title) if title is not None else "section")
            return [head, *self.blocks([c for c in node.children if c is not title], depth + 1)]
        if isinstance(node, n.paragraph):
            return [self.inline(node)]
        if isinstance(node, n.literal_block | n.doctest_block):
            text = node.astext()
            language = node.get("language") or next((c for c in node.get("classes", []) if c != "code"), "")
            if not language and text.lstrip().startswith(">>>"):
                language = "pycon"
            ticks = "`" * max(3, max((len(m) for m in re.findall(r"`{3,}", text)), default=2) + 1)
            return [f"{ticks}{language}\n{text}\n{ticks}"]
        if isinstance(node, n.bullet_list | n.enumerated_list):
            items = []
            for k, item in enumerate(node.children, start=1):
                marker = f"{k}." if isinstance(node, n.enumerated_list) else "-"
                body = "\n\n".join(self.blocks(item.children, depth))
                pad = " " * (len(marker) + 1)
                items.append(marker + " " + body.replace("\n", "\n" + pad))
            return ["\n".join(items)]
        if isinstance(node, n.definition_list):
            out = []
            for item in node.children:
                term = next((c for c in item.children if isinstance(c, n.term)), None)
                definition = next((c for c in item.children if isinstance(c, n.definition)), None)
                out.append("**" + (self.inline(term) if term is not None else "") + "**")
                if definition is not None:
                    out.extend(self.blocks(definition.children, depth))
            return out
        if isinstance(node, n.field_list):
            return [
                f"**{self.inline(f.children[0])}**: " + " ".join(self.blocks(f.children[1].children, depth))
                for f in node.children
                if len(f.children) == 2
            ]
        if isinstance(node, n.Admonition):
            title = next((c for c in node.children if isinstance(c, n.title)), None)
            label = self.inline(title) if title is not None else name.replace("_", " ").capitalize()
            blocks = self.blocks([c for c in node.children if c is not title], depth)
            lines = [f"**{label}:**", *blocks]
            return ["\n".join("> " + ln if ln else ">" for ln in "\n\n".join(lines).split("\n"))]
        if isinstance(node, n.block_quote):
            inner = "\n\n".join(self.blocks(node.children, depth))
            return ["\n".join("> " + ln if ln else ">" for ln in inner.split("\n"))]
        if isinstance(node, n.table):
            return [self.table(node)]
        if isinstance(node, n.line_block):
            return ["  \n".join(self.inline(ln) for ln in node.findall(n.line))]
        if isinstance(node, n.rubric | n.title):
            return [f"**{self.inline(node)}**"]
        if isinstance(node, n.image):
            return []
        if isinstance(node, n.comment | n.target | n.substitution_definition | n.system_message | n.raw | n.pending):
            return []
        if isinstance(node, n.transition):
            return []
        if name == "api_stub":
            return []
        if isinstance(node, n.Element):
            return self.blocks(node.children, depth)
        return [node.astext()] if node.astext().strip() else []

    def table(self, node: Any) -> str:
        n = self.nodes
        rows = []
        for row in node.findall(n.row):
            rows.append(
                [
                    " ".join(self.inline(p) for p in entry.findall(n.paragraph)).replace("|", "\\|")
                    for entry in row.children
                ]
            )
        if not rows:
            return ""
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
        lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        return "\n".join(lines)

    def inline(self, node: Any) -> str:
        n = self.nodes
        out: list[str] = []
        for child in node.children:
            if isinstance(child, n.Text):
                out.append(str(child).replace("\n", " "))
            elif isinstance(child, n.literal):
                text = child.astext()
                tick = "``" if "`" in text else "`"
                out.append(f"{tick}{text}{tick}")
            elif isinstance(child, n.emphasis):
                out.append(f"*{self.inline(child)}*")
            elif isinstance(child, n.strong):
                out.append(f"**{self.inline(child)}**")
            elif isinstance(child, n.reference):
                text = self.inline(child)
                uri = child.get("refuri")
                out.append(f"[{text}]({uri})" if uri and text and " " not in uri else text)
            elif isinstance(child, n.target | n.footnote_reference | n.citation_reference | n.system_message | n.image):
                continue
            elif isinstance(child, n.problematic):
                out.append(child.astext())
            elif isinstance(child, n.Element):
                out.append(self.inline(child))
        return "".join(out).strip()
