"""The version a project locks, read from real lockfile formats (tests/fixtures/lockfiles); a file that
cannot be read is one note and the next file answers."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from docs_mcp_core.versions.lockfiles import LOCKFILES, find_locked

from ..conftest import FIXTURES

LOCKS = FIXTURES / "lockfiles"


@pytest.mark.parametrize(
    "project, package, ecosystem, version, where",
    [
        ("uv", "sqlmodel", "pypi", "0.0.22", "uv.lock:54"),
        ("poetry", "sqlmodel", "pypi", "0.0.18", "poetry.lock:22"),  # written SQLModel: PEP 503 names match
        ("requirements", "sqlmodel", "pypi", "0.0.22", "base.txt:4"),  # through -r, hashes on continuation lines
        ("requirements", "uvicorn", "pypi", "0.34.0", "requirements.txt:14"),  # extras and a marker
        ("pipfile", "SQLModel", "pypi", "0.0.14", "Pipfile.lock"),
        ("pylock", "sqlmodel", "pypi", "0.0.24", "pylock.toml:13"),
        ("npm", "zod", "npm", "3.24.1", "package-lock.json:64"),  # the top-level copy, not form-schema's newer own
        ("npm", "@tanstack/react-query", "npm", "5.62.8", "package-lock.json:27"),
        ("npm-v1", "zod", "npm", "3.21.4", "package-lock.json"),
        ("pnpm", "@tanstack/react-query", "npm", "5.59.20", "pnpm-lock.yaml"),  # peer suffix dropped
        ("yarn-v1", "lodash", "npm", "4.17.21", "yarn.lock:18"),  # the copy package.json's range asks for
        ("yarn-v1", "@docusaurus/core", "npm", "3.6.3", "yarn.lock:6"),
        ("yarn-berry", "zod", "npm", "3.23.8", "yarn.lock:19"),
        ("go", "github.com/gin-gonic/gin", "go", "v1.10.0", "go.mod:8"),
        ("go", "github.com/jackc/pgx", "go", "v5.7.2", "go.mod:15"),  # /v5 suffix; replaced by a newer version
        ("cargo", "serde", "cargo", "1.0.216", "Cargo.lock:20"),
        ("cargo", "serde-json", "cargo", "1.0.133", "Cargo.lock:29"),  # crates: - and _ alike
    ],
)
def test_each_format_gives_the_locked_version(
    project: str, package: str, ecosystem: str, version: str, where: str
) -> None:
    lookup = find_locked(LOCKS / project, package, ecosystem)
    assert lookup.locked is not None, lookup.notes
    assert (lookup.locked.version, lookup.locked.where) == (version, where)
    assert lookup.notes == []


def test_a_package_locked_twice_takes_the_newest_and_says_so() -> None:
    lookup = find_locked(LOCKS / "uv-forked", "sqlmodel", "pypi")
    assert lookup.locked is not None and lookup.locked.version == "0.0.24"
    assert lookup.notes == ["uv.lock locks sqlmodel at 2 versions (0.0.21, 0.0.24); using the newest, 0.0.24"]


@pytest.mark.parametrize(
    "project, package, ecosystem, version, note",
    [
        (
            "broken-uv",
            "sqlmodel",
            "pypi",
            "0.0.21",
            "broken-uv/uv.lock: invalid TOML (Unclosed inline table (at line 20",
        ),
        ("broken-npm", "zod", "npm", "3.22.4", "broken-npm/package-lock.json:24: invalid JSON (Unterminated string"),
    ],
)
def test_a_broken_lockfile_is_one_note_and_the_next_file_answers(
    project: str, package: str, ecosystem: str, version: str, note: str
) -> None:
    lookup = find_locked(LOCKS / project, package, ecosystem)
    assert lookup.locked is not None and lookup.locked.version == version
    assert len(lookup.notes) == 1 and note in lookup.notes[0] and lookup.notes[0].endswith("; skipped")


def test_a_broken_line_is_one_note_and_the_rest_of_the_file_counts() -> None:
    lookup = find_locked(LOCKS / "broken-requirements", "sqlmodel", "pypi")
    assert lookup.locked is not None and (lookup.locked.version, lookup.locked.where) == (
        "0.0.20",
        "requirements.txt:4",
    )
    assert len(lookup.notes) == 2
    assert (
        "requirements.txt:1: included file " in lookup.notes[0] and "missing-base.txt does not exist" in lookup.notes[0]
    )
    assert "requirements.txt:3: cannot read 'this is not a requirement ==' (" in lookup.notes[1]
    go = find_locked(LOCKS / "broken-go", "github.com/gin-gonic/gin", "go")
    assert go.locked is None
    assert go.notes == [
        f"{LOCKS / 'broken-go' / 'go.mod'}:6: cannot read the require line 'github.com/gin-gonic/gin'; skipped"
    ]


def test_nothing_locked_says_why() -> None:
    unpinned = find_locked(LOCKS / "unpinned", "sqlmodel", "pypi")
    assert unpinned.locked is None
    assert unpinned.notes == [
        "sqlmodel is required but not pinned to one version (requirements.txt:2: sqlmodel>=0.0.14,<0.1)"
    ]
    assert find_locked(LOCKS / "uv", "django", "pypi").notes == []  # not a dependency: nothing to say
    assert find_locked(LOCKS / "missing", "x", "pypi").notes == [f"{LOCKS / 'missing'}: not a folder; no lockfile read"]


def test_the_first_lockfile_that_locks_the_package_answers(tmp_path: Path) -> None:
    shutil.copy(LOCKS / "uv" / "uv.lock", tmp_path / "uv.lock")
    shutil.copy(LOCKS / "poetry" / "poetry.lock", tmp_path / "poetry.lock")
    (tmp_path / "requirements.txt").write_text("sqlmodel==0.0.11\n")
    assert [p for p, _ in LOCKFILES["pypi"]][:2] == ["uv.lock", "poetry.lock"]
    lookup = find_locked(tmp_path, "sqlmodel", "pypi")
    assert lookup.locked is not None and (lookup.locked.version, lookup.locked.file.name) == ("0.0.22", "uv.lock")
    (tmp_path / "uv.lock").write_text('[[package]]\nname = "fastapi"\nversion = "0.115.0"\n')
    assert find_locked(tmp_path, "sqlmodel", "pypi").locked.file.name == "poetry.lock"  # type: ignore[union-attr]


def test_includes_cannot_loop_and_options_are_not_requirements(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text(
        "-r other.txt\n-e ./local-package\n--extra-index-url https://example.com/simple\n"
        "https://example.com/wheels/thing-1.0-py3-none-any.whl\n./vendor/sqlmodel-0.0.8.tar.gz\n"
        "sqlmodel @ https://example.com/sqlmodel-0.0.9.tar.gz\n"
    )
    (tmp_path / "other.txt").write_text("-r requirements.txt  # a loop\nsqlmodel===0.0.13 ; python_version >= '3.8'\n")
    lookup = find_locked(tmp_path, "sqlmodel", "pypi")
    assert lookup.locked is not None and (lookup.locked.version, lookup.locked.where) == ("0.0.13", "other.txt:2")
    assert lookup.notes == []


def test_a_lockfile_is_read_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    (tmp_path / "poetry.lock").write_text(
        f"[[package]]\nname = \"sqlmodel\"\nversion = \"__import__('os').system('touch {marker}')\"\n"
    )
    (tmp_path / "pnpm-lock.yaml").write_text("lockfileVersion: !!python/object/apply:os.system ['touch ran']\n")
    lookup = find_locked(tmp_path, "sqlmodel", "pypi")
    assert lookup.locked is not None and lookup.locked.version.startswith("__import__")  # a string, nothing more
    npm = find_locked(tmp_path, "zod", "npm")
    assert npm.locked is None and "invalid YAML" in npm.notes[0]
    assert not marker.exists() and not (tmp_path / "ran").exists()
