"""The mustache subset prompt templates use: {{var}}, {{{var}}}, {{#section}}, {{^inverted}}, {{! comment}}.

Values are inserted as written (no HTML escaping): prompts are plain text for a model.
"""

from __future__ import annotations

import re

_TAG = re.compile(r"\{\{(\{?)\s*([#^/!&]?)\s*([^}]*?)\s*\}?\}\}")


class TemplateError(ValueError):
    pass


def _truthy(value: object) -> bool:
    return value not in (None, False, "", [], 0)


def render(template: str, values: dict[str, object]) -> str:
    return _render(template, values, 0, None)[0]


def _render(template: str, values: dict[str, object], pos: int, section: str | None) -> tuple[str, int]:
    out: list[str] = []
    while True:
        match = _TAG.search(template, pos)
        if match is None:
            if section is not None:
                raise TemplateError(f"section '{section}' is never closed")
            out.append(template[pos:])
            return "".join(out), len(template)
        out.append(template[pos : match.start()])
        kind, name = match.group(2), match.group(3)
        pos = match.end()
        if kind == "!":
            continue
        if kind == "/":
            if name != section:
                raise TemplateError(f"'{{{{/{name}}}}}' closes a section that is not open")
            return "".join(out), match.start()
        if kind in ("#", "^"):
            inner, inner_end = _render(template, values, pos, name)
            closing = _TAG.match(template, inner_end)
            assert closing is not None
            pos = closing.end()
            if _truthy(values.get(name)) == (kind == "#"):
                out.append(inner)
            continue
        value = values.get(name)
        out.append("" if value is None else str(value))
