"""The markup of every dialect corpus in tests/fixtures stays out of what is searched and embedded.

benchmarks/dialect_leaks.py lists the lines of each page outside fenced code that are dialect markup
(`!!!`, `///`, `:::`, `--8<--`, `{* *}`, `{! !}`, `<<<`, MDX import/export, JSX tags, `{ #id }`,
reST directives) and the ones that reach a chunk's breadcrumb or its text outside code.
"""

import importlib.util
import sys

import pytest

from ..conftest import REPO


def leak_module():
    spec = importlib.util.spec_from_file_location("docs_mcp_dialect_leaks", REPO / "benchmarks" / "dialect_leaks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(spec.name, None)
    return module


@pytest.mark.slow
@pytest.mark.parametrize(
    "corpus",
    ["sqlmodel-docs/docs", "uv-docs", "vite-docs/docs", "starlight-docs/docs/src/content/docs", "requests-docs/docs"],
)
def test_no_markup_line_reaches_the_index(corpus: str) -> None:
    leaks = leak_module()
    total, leaked = leaks.check(leaks.FIXTURES / corpus)
    assert total > 50  # the corpus has markup to leak
    assert leaked == [], leaked
