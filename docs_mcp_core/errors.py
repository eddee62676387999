"""Errors a user can act on. The CLI prints their message without a traceback."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Protocol


class DocsMcpError(Exception):
    """An error caused by input or environment, with a message that says what to do."""


class _Diagnostic(Protocol):
    """What ValidationFailed reads of a diagnostics.Diagnostic (errors sits beside diagnostics, not over it)."""

    @property
    def severity(self) -> str: ...

    def format(self) -> str: ...


class ValidationFailed(DocsMcpError):  # noqa: N818 - names the outcome a caller catches, not a fault
    """The corpus has validation errors; nothing was written."""

    def __init__(self, diagnostics: Sequence[_Diagnostic], docs_dir: str = "DIR") -> None:
        """`docs_dir`: the folder the diagnostics' paths are relative to, named so that a build of one of
        several corpora says which folder the files are in."""
        self.diagnostics = diagnostics
        errors = [d for d in diagnostics if d.severity == "error"]
        lines = [d.format() for d in errors[:20]]
        more = f"\n... and {len(errors) - 20} more" if len(errors) > 20 else ""
        super().__init__(
            f"validation failed with {len(errors)} error(s) in {docs_dir}; nothing was written:\n"
            + "\n".join(lines)
            + more
            + f"\nfix these (run `docs-mcp validate --docs-dir {shlex.quote(docs_dir)}` for the full list) and "
            "build again"
        )


class SearchError(DocsMcpError):
    """A search or get_doc request that cannot be answered, with what to do instead."""


def internal_error_text(what: str, exc: BaseException, reason: str) -> str:
    """The one wording of an error that is not the index's (a bug, a process limit): said as what it is, with
    where its trace went, never as damage to rebuild."""
    return (
        f"{what} with an internal error ({type(exc).__name__}: {reason}), not a damaged index; try again, "
        "and if it persists report it to the docs-mcp maintainers with the trace in the server log"
    )
