"""The true diff of a docs repository between two tags, section by section, read from git alone (no code of
docs-mcp): the oracle what_changed is checked against.

A section is what `chunk_by: h2` makes a section: the text from an h1 or h2 heading (outside code fences)
to the next. Two versions of a section are the same when a reader sees the same text: the comparison
leaves out what is markup, not content — front matter, code fence lines, include directives (their
files are not in the repository), HTML tags, link targets, block and tab markers, emphasis, code and list
markup, and spacing. Sections are keyed by file and heading text (with git's file renames followed), so
a section that changed file or heading is one removed and one added.
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from pathlib import Path

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
HEADING = re.compile(r"^ {0,3}(#{1,2})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$")
WORD = re.compile(r"[^\W_]+")
INCLUDE = re.compile(r"\{!.*?!\}|\{\*.*?\*\}|^\s*--8<--.*$")
HTML_TAG = re.compile(r"<[^>\n]+>")
LINK = re.compile(r"!?\[([^\]\n]*)\]\([^)\n]*\)")
BLOCK = re.compile(r"^\s*(?:/{3,}|!{3}|\?{3}\+?|={3})\s*(.*)$")
ATTRS = re.compile(r"\{\s*[#.][^}]*\}\s*$")
MARKUP = re.compile(r"^\s*(?:#{1,6}(?:\s|$)|>\s?|[-*+]\s|\d+\.\s)+|[*`_|]")
FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)

Key = tuple[str, tuple[str, ...], int]  # (file under docs/, heading words, occurrence of that heading)


def words(text: str) -> tuple[str, ...]:
    return tuple(WORD.findall(text.lower()))


def visible(lines: list[str]) -> str:
    out: list[str] = []
    for line in lines:
        if FENCE.match(line):
            continue
        block = BLOCK.match(line)
        if block:  # `/// details | Title`, `//// tab | Python 3.10+`, `!!! tip "Title"`: the title shows
            line = re.sub(r"\b(tab|details)\b", " ", block.group(1)).replace("|", " ").replace('"', " ")
        line = INCLUDE.sub(" ", line)
        line = LINK.sub(r"\1", line)
        line = HTML_TAG.sub(" ", line)
        line = MARKUP.sub(" ", line)
        out.extend(line.lower().split())
    return "".join(out)


def raw_sections(text: str) -> dict[tuple[tuple[str, ...], int], str]:
    found: list[tuple[tuple[str, ...], list[str]]] = []
    heading: tuple[str, ...] = ()
    body: list[str] = []
    fence: str | None = None
    for line in FRONT_MATTER.sub("", text).splitlines():
        marker = FENCE.match(line)
        if fence is None and marker:
            fence = marker.group(1)[0]
        elif fence is not None and marker and marker.group(1)[0] == fence:
            fence = None
        elif fence is None and (h := HEADING.match(line)):
            if heading or any(words(x) for x in body):
                found.append((heading, body))
            heading, body = words(ATTRS.sub("", h.group(2))), [line]
            continue
        body.append(line)
    found.append((heading, body))
    seen: Counter[tuple[str, ...]] = Counter()
    out = {}
    for heading, body in found:
        out[(heading, seen[heading])] = visible(body)
        seen[heading] += 1
    return out


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def true_diff(repo: Path, old: str, new: str, docs: str = "docs") -> tuple[dict[Key, str], dict[str, str]]:
    """({section key: changed | added | removed | same}, {old file: new file} for files git sees renamed)."""
    renamed = {}
    for line in _git(repo, "diff", "-M", "--name-status", old, new, "--", docs).splitlines():
        parts = line.split("\t")
        if parts[0].startswith("R"):
            renamed[parts[1].removeprefix(f"{docs}/")] = parts[2].removeprefix(f"{docs}/")

    def sections(tag: str, follow: dict[str, str]) -> dict[Key, str]:
        out = {}
        for path in _git(repo, "ls-tree", "-r", "--name-only", tag, docs).splitlines():
            if path.endswith(".md"):
                rel = path.removeprefix(f"{docs}/")
                for (heading, n), text in raw_sections(_git(repo, "show", f"{tag}:{path}")).items():
                    out[(follow.get(rel, rel), heading, n)] = text
        return out

    before, after = sections(old, renamed), sections(new, {})
    truth = {}
    for key in before.keys() | after.keys():
        if key not in after:
            truth[key] = "removed"
        elif key not in before:
            truth[key] = "added"
        else:
            truth[key] = "same" if before[key] == after[key] else "changed"
    return truth, renamed
