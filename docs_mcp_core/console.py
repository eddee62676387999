"""The `docs-mcp` console script: a shared stdio session's launcher starts without importing the CLI.

`docs-mcp serve … --shared` hands its session to a resident server (shared_session.py) and must
start in a few tens of milliseconds, so it is recognised here, before click and the command
modules are imported; every other command goes to cli.entry.
"""

from __future__ import annotations

import sys


def entry() -> None:
    argv = sys.argv[1:]
    if argv[:1] == ["serve"] and "--shared" in argv and not {"-h", "--help"} & set(argv):
        from .shared_session import main

        main(argv)
    from .cli import entry as cli_entry

    cli_entry()


if __name__ == "__main__":
    entry()
