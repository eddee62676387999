"""Search fields derived from a chunk at index time: identifier sub-words, code languages, a content digest.

They are columns of the chunks table (see indexing/table.py), not chunk fields: chunks.json and the
embedding input stay as they are, and an index written before these columns existed still serves.
"""

from __future__ import annotations

import hashlib
import re

# Identifiers with an inner case change: linksCreate, CreateLinkRequestBody, HTTPClient, WithMaxRetries.
# Digits stay attached (v2, sha256, hex strings are not split); an acronym plural (SDKs, IDs) is one word.
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL_PART = re.compile(r"[A-Z]+s(?![a-z])|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z][A-Z0-9]*")
_FENCE = re.compile(r"^[ \t>]*(?:`{3,}|~{3,})[ \t]*\{?[ \t]*\.?([A-Za-z0-9_+#.-]+)", re.MULTILINE)
_SPACE = re.compile(r"\s+")

# Fence info strings → one name per language, so `language` filters match any spelling.
LANGUAGE_ALIASES = {
    "py": "python", "python3": "python", "py3": "python", "pycon": "python",
    "ts": "typescript", "tsx": "typescript", "mts": "typescript", "cts": "typescript",
    "js": "javascript", "jsx": "javascript", "mjs": "javascript", "cjs": "javascript", "node": "javascript",
    "golang": "go", "rs": "rust", "rb": "ruby", "kt": "kotlin", "kts": "kotlin", "cs": "csharp", "c#": "csharp",
    "dotnet": "csharp", "fs": "fsharp", "c++": "cpp", "cxx": "cpp", "hpp": "cpp", "h": "c",
    "sh": "shell", "bash": "shell", "zsh": "shell", "console": "shell", "shell-session": "shell",
    "shellsession": "shell", "terminal": "shell", "ps1": "powershell", "pwsh": "powershell",
    "yml": "yaml", "jsonc": "json", "json5": "json", "md": "markdown", "htm": "html", "proto": "protobuf",
}


def camel_parts(word: str) -> list[str]:
    """Sub-words of one camelCase/PascalCase identifier, or [] when it has no inner boundary."""
    parts = _CAMEL_PART.findall(word)
    if len(parts) < 2:
        return []
    parts = [p for p in parts if len(p) > 1]
    return parts if len(parts) > 1 else []


def subwords(text: str) -> str:
    """The sub-words of every camel/Pascal-case identifier in the text, space separated.

    snake_case, dotted and kebab names need nothing: the FTS tokenizer already splits on
    punctuation. Only the split parts are kept, so this field scores "create link" against
    `linksCreate` without diluting the plain-text field.
    """
    out: list[str] = []
    for word in _IDENT.findall(text):
        out.extend(camel_parts(word))
    return " ".join(out)


def normalize_language(name: str) -> str:
    name = name.strip().lower()
    return LANGUAGE_ALIASES.get(name, name)


def code_languages(markdown: str) -> list[str]:
    """Normalized languages of the fenced code blocks in a chunk's markdown, sorted, no duplicates."""
    return sorted({normalize_language(m) for m in _FENCE.findall(markdown)} - {"", "text", "txt", "plain", "plaintext"})


def content_digest(text: str) -> str:
    """Equal for chunks whose text differs only in whitespace or case: duplicated pages collapse on it."""
    return hashlib.sha256(_SPACE.sub(" ", text).strip().lower().encode("utf-8")).hexdigest()[:32]
