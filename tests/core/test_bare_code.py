"""Code with no words, under a heading many sections share, ranks below a section that explains itself."""

from pathlib import Path

import pytest

from docs_mcp_core.errors import SearchError
from docs_mcp_core.output.derived_fields import bare_code
from docs_mcp_core.search import Weights, run_search

from .test_ranking import _build, _drop_columns, _ids, _same_on_two_builds, _write_docs

AUTHENTICATION = """# Acme SDK

## Authentication

To authenticate, pass your API key as the `token` option when you create the client; every request
then sends it in the Authorization header. For example:

```typescript
const acme = new Acme({ token: "ACME_API_KEY" });
```
"""

TYPES = ["Shipment", "Parcel", "Address", "Rate", "Label", "Webhook"]


def _type_page(name: str) -> str:
    """A generated type reference: a description, then its example as code alone under "Example Usage"."""
    return f"""# {name}

The {name.lower()} object as the API returns it, with every field it can hold.

## Example Usage

```typescript
import {{ {name} }} from "acme/models";
import {{ Acme }} from "acme";

const acme = new Acme({{ token: "ACME_API_KEY" }});
let value: {name} = await acme.{name.lower()}s.get({{ id: "<id>", key: "<key>", apiKey: "ACME_API_KEY" }});
```
"""


VERIFY = """# Webhooks

## Verify a webhook signature

```typescript
const event = acme.webhooks.verify(body, signature, { secret: "WEBHOOK_SECRET" });
```
"""


@pytest.fixture
def sdk_reference(tmp_path: Path) -> Path:
    pages = {f"models/{name.lower()}.md": _type_page(name) for name in TYPES}
    return _write_docs(tmp_path / "docs", {"README.md": AUTHENTICATION, "webhooks.md": VERIFY, **pages})


def test_bare_code_means_code_and_next_to_no_words() -> None:
    assert bare_code(_type_page("Shipment").split("## Example Usage")[1])
    assert bare_code("<!-- Start SDK Example Usage -->\n```ts\nrun();\n```\n<!-- End -->")  # comments are not words
    assert bare_code("## Install\n\nFor example:\n\n```sh\npip install acme\n```")  # under 20 characters of words
    assert not bare_code(AUTHENTICATION)
    assert not bare_code("## Example Usage\n\nNo code here, only a sentence that says what it is about.")
    assert not bare_code("```ts\n\n```")  # an empty block is no code


def test_bare_code_under_a_generic_heading_ranks_below_the_section_that_explains(
    sdk_reference: Path, tmp_path: Path
) -> None:
    out = _build(sdk_reference, tmp_path / "out")
    query = "where do I put my API key"
    # six "Example Usage" blocks say API and key more often than the prose does: BM25 alone puts them first
    assert _ids(out, query, weights=Weights(bare_code=0.0))[0].endswith("/example-usage")
    ranked = _ids(out, query)
    assert ranked[0] == "README.md#acme-sdk/authentication", ranked
    assert any(i.endswith("/example-usage") for i in ranked[1:])  # lower, still found


def test_a_heading_that_names_the_subject_or_the_question_keeps_its_rank(sdk_reference: Path, tmp_path: Path) -> None:
    out = _build(sdk_reference, tmp_path / "out")

    def scores(query: str, weights: Weights) -> dict[str, float]:
        return {h["chunk_id"]: h["score"] for h in run_search(out, query, limit=20, hybrid=False, weights=weights).hits}

    # bare code under a heading no other section has, found by its code alone: unchanged
    assert "webhooks.md#webhooks/verify-a-webhook-signature" in scores("secret body", Weights())
    assert scores("secret body", Weights()) == scores("secret body", Weights(bare_code=0.0))
    # the question names the generic heading ("example usage"): the examples are what it asks for
    query = "example usage with the API key"
    assert scores(query, Weights()) == scores(query, Weights(bare_code=0.0))
    assert _ids(out, query)[0].endswith("/example-usage")


def test_the_bare_code_prior_is_deterministic(sdk_reference: Path, tmp_path: Path) -> None:
    _same_on_two_builds(sdk_reference, tmp_path / "a", tmp_path / "b", "where do I put my API key", "example usage")


def test_a_table_without_the_bare_code_column_is_refused_naming_the_rebuild(
    sdk_reference: Path, tmp_path: Path
) -> None:
    out = _build(sdk_reference, tmp_path / "out")
    _drop_columns(out, ["bare_code"])
    with pytest.raises(SearchError, match=f"cannot be read .*`docs-mcp build --docs-dir DOCS --index {out}`"):
        _ids(out, "where do I put my API key")
