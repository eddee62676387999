"""search_docs and get_doc: schemas built from metadata.json, and argument checks with useful errors.

The low-level MCP server does not validate arguments, so this does, before the engine runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..output.metadata import PublishedMetadata, TaxonomyKey
from ..search import CONTEXT_CHARS, DEFAULT_LIMIT, MAX_CONTEXT, MAX_LIMIT, MAX_MAX_CHARS, MIN_MAX_CHARS, match_case

if TYPE_CHECKING:  # the server makes the validators (app.py), importing jsonschema then
    from jsonschema import Draft202012Validator

SEARCH = "search_docs"
GET_DOC = "get_doc"


def search_schema(
    taxonomy: dict[str, TaxonomyKey],
    corpora: list[tuple[str, str]] | None = None,
    by_corpus: dict[str, dict[str, list[str]]] | None = None,
) -> dict[str, Any]:
    """The search_docs input schema; with several corpora (name, description), a `corpus` enum
    and the union of their taxonomies, a key saying which corpora have which values when not all do."""
    properties: dict[str, Any] = {
        "query": {
            "type": "string",
            "minLength": 1,
            "description": "What to find: method or class names, error types, config keys, or a plain-language "
            "question (e.g. 'links.create', 'RateLimitError', 'how to paginate').",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_LIMIT,
            "default": DEFAULT_LIMIT,
            "description": f"Maximum number of results (1-{MAX_LIMIT}). Default {DEFAULT_LIMIT}.",
        },
        "cursor": {
            "type": "string",
            "description": "next_cursor from a previous search_docs result, with the same "
            "query and filters, to get the next page. Omit for the first page.",
        },
        "max_chars": {
            "type": "integer",
            "minimum": MIN_MAX_CHARS,
            "maximum": MAX_MAX_CHARS,
            "description": "Largest answer to return, in characters. Hits that do not fit are left out "
            "(the answer says how many) and next_cursor continues from the first of them. "
            "Omit for the whole page.",
        },
    }
    if corpora and len(corpora) > 1:
        described = "; ".join(f"'{name}': {description}" for name, description in corpora)
        properties["corpus"] = {
            "type": "string",
            "enum": [name for name, _ in corpora],
            "description": f"Search only this corpus. Omit to search all of them. {described}.",
        }
    for key, field in sorted(taxonomy.items()):
        description = field.description or f"Filter results by {key}."
        if by_corpus and key in by_corpus:
            where = "; ".join(f"{name}: {', '.join(values) or 'none'}" for name, values in by_corpus[key].items())
            description += f" Values by corpus ({where}); a filter searches only the corpora that have its value."
        properties[key] = {"type": "string", "enum": list(field.values), "description": description}
    return {"type": "object", "properties": properties, "required": ["query"], "additionalProperties": False}


def get_doc_schema(corpora: list[tuple[str, str]] | None = None) -> dict[str, Any]:
    example = "'guides/retries.md#backoff'"
    if corpora and len(corpora) > 1:
        example = (
            f"'{corpora[0][0]}:guides/retries.md#backoff' (several corpora are served: IDs start with the "
            "corpus name; a bare ID works when only one corpus has it)"
        )
    return {
        "type": "object",
        "properties": {
            "chunk_id": {
                "type": "string",
                "minLength": 1,
                "description": f"A chunk_id exactly as search_docs returned it, e.g. {example}.",
            },
            "context": {
                "type": "integer",
                "minimum": 0,
                "maximum": MAX_CONTEXT,
                "default": 0,
                "description": f"Neighbouring chunks of the same file to include on each side (0-{MAX_CONTEXT}). "
                "Chunks are self-contained: start with 0.",
            },
            "max_chars": {
                "type": "integer",
                "minimum": MIN_MAX_CHARS,
                "maximum": MAX_MAX_CHARS,
                "description": "Largest answer to return, in characters. The chunk is cut at a paragraph, "
                "list item or code block boundary and ends with a [trimmed: …] note giving "
                "the exact call that reads on. Without it the chunk is whole and context "
                f"neighbours share {CONTEXT_CHARS} characters.",
            },
            "offset": {
                "type": "integer",
                "minimum": 0,
                "default": 0,
                "description": "Character position in the chunk to read on from, as a [trimmed: …] note "
                "gives it. Default 0.",
            },
        },
        "required": ["chunk_id"],
        "additionalProperties": False,
    }


def search_description(metadata: PublishedMetadata, hybrid: bool) -> str:
    corpus = (metadata.corpus_description or "documentation").strip().rstrip(".").rstrip()  # no ". —"
    how = (
        "Use exact identifiers, method names, or describe what you want to do."
        if hybrid
        else "Use exact identifiers, method names and the words the docs would use."
    )
    keys = sorted(metadata.taxonomy)
    filters = f" Filter with {', '.join(keys)} to narrow results." if keys else ""
    return (
        f"Search the pre-indexed {corpus} — the authoritative reference for this documentation set, with API "
        f"docs, code examples and guides. {how}{filters} Returns chunk IDs, breadcrumbs, snippets and each "
        "chunk's size in characters (chars); read a chunk in full with get_doc."
    )


GET_DOC_DESCRIPTION = (
    "Read a documentation chunk in full by its chunk_id (from search_docs), as Markdown. Each chunk "
    "is self-contained: leave context at 0 first, and raise it (1-3) only if the chunk refers to "
    "neighbouring sections you need. Pass max_chars to cap the answer: a [trimmed: …] note at the end "
    "gives the exact call that reads on. A file path without '#' reads the file's first chunk and "
    "lists all its chunk IDs."
)


match_taxonomy_case = match_case  # one implementation with `docs-mcp search --filter` (search.filters)


def schema_of(validator: Draft202012Validator) -> dict[str, Any]:
    """The tool's input schema a validator was made from: an object (jsonschema's types also allow the
    boolean schemas, which no tool has)."""
    schema = validator.schema
    assert isinstance(schema, dict), schema
    return schema


def plainly_valid(schema: dict[str, Any], arguments: dict[str, Any]) -> bool:
    """True when the arguments certainly fit a tool schema made here (no extra argument, the required
    ones given, each a string within its enum and minLength or an int within its bounds); False
    when they may not, for the validator to decide. The validator costs about as much as the rest
    of a call's own handling, and nearly every call is one this answers."""
    properties = schema["properties"]
    if not all(name in arguments for name in schema.get("required", ())):
        return False
    for name, value in arguments.items():
        prop = properties.get(name)
        if prop is None or len(prop.keys() - _PLAIN_KEYWORDS) > 0:
            return False
        if prop.get("type") == "string":
            if type(value) is not str or len(value) < prop.get("minLength", 0):
                return False
            if "enum" in prop and value not in prop["enum"]:
                return False
        elif prop.get("type") == "integer":
            if type(value) is not int or not prop.get("minimum", value) <= value <= prop.get("maximum", value):
                return False
        else:
            return False
    return True


_PLAIN_KEYWORDS = {"type", "description", "default", "minLength", "enum", "minimum", "maximum"}


def check_arguments(tool: str, validator: Draft202012Validator, arguments: dict[str, Any] | None) -> str | None:
    """None if the arguments fit the validator's schema, else one sentence saying what to change."""
    schema = schema_of(validator)
    arguments = arguments or {}
    if schema.get("additionalProperties") is False and plainly_valid(schema, arguments):
        return None
    errors = sorted(validator.iter_errors(arguments), key=lambda e: list(e.path))
    if not errors:
        return None
    error = errors[0]
    name = str(error.path[0]) if error.path else ""
    allowed = ", ".join(schema["properties"])
    if error.validator == "additionalProperties":
        extra = sorted(set(arguments) - set(schema["properties"]))
        return f"Unexpected argument '{extra[0]}'. {tool} accepts: {allowed}."
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else "query"
        return f"'{missing}' is required. {tool} accepts: {allowed}."
    if error.validator == "enum":
        values = ", ".join(str(v) for v in error.validator_value)
        return f"Invalid taxonomy value for '{name}': '{error.instance}'. Allowed values: {values}"
    prop = schema["properties"].get(name, {})
    if prop.get("type") == "integer":
        if "maximum" not in prop:
            return f"{name} must be an integer of at least {prop.get('minimum', 0)}."
        return f"{name} must be an integer from {prop.get('minimum')} to {prop.get('maximum')}."
    if prop.get("type") == "string":
        return f"{name} must be a non-empty string."
    return f"{name or 'arguments'}: {error.message}"
