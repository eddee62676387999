"""read_beneath: every link on the way is resolved inside the docs folder, whatever it is when read."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from docs_mcp_core.corpus.beneath import LinkOutsideError, WriteRefusedError, read_beneath, replace_beneath
from tests.conftest import write


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    write(docs, "guide.md", "guide")
    write(docs, "sub/page.md", "page")
    write(tmp_path, "outside/secret.md", "secret")
    return docs


def test_links_inside_the_docs_folder_are_followed(tree: Path) -> None:
    (tree / "alias.md").symlink_to("guide.md")
    (tree / "sub" / "up.md").symlink_to("../guide.md")
    (tree / "chain.md").symlink_to("sub/up.md")
    (tree / "absolute.md").symlink_to(tree / "sub" / "page.md")
    (tree / "round.md").symlink_to(f"../{tree.name}/guide.md")  # leaves the folder by name and comes back
    (tree / "folder").symlink_to("sub", target_is_directory=True)
    for rel, text in [
        ("guide.md", "guide"),
        ("alias.md", "guide"),
        ("sub/up.md", "guide"),
        ("chain.md", "guide"),
        ("absolute.md", "page"),
        ("round.md", "guide"),
        ("folder/page.md", "page"),
        ("sub/../guide.md", "guide"),
    ]:
        assert read_beneath(tree, rel) == text.encode(), rel


def test_links_leading_outside_are_refused(tree: Path) -> None:
    outside = tree.parent / "outside"
    (tree / "rel.md").symlink_to("../outside/secret.md")
    (tree / "abs.md").symlink_to(outside / "secret.md")
    (tree / "passwd.md").symlink_to("/etc/passwd")
    (tree / "out").symlink_to(outside, target_is_directory=True)  # a folder on the way
    (tree / "sub" / "hop.md").symlink_to("../rel.md")  # a chain whose last link leads out
    for rel, target in [
        ("rel.md", "../outside/secret.md"),
        ("abs.md", str(outside / "secret.md")),
        ("passwd.md", "/etc/passwd"),
        ("out/secret.md", str(outside)),
        ("sub/hop.md", "../outside/secret.md"),
        ("../outside/secret.md", ""),  # a relpath that climbs out is refused as well
    ]:
        with pytest.raises(LinkOutsideError) as caught:
            read_beneath(tree, rel)
        assert caught.value.target == (target or os.path.normpath(tree.parent / "outside" / "secret.md")), rel


def test_what_is_not_a_regular_file_is_not_read(tree: Path) -> None:
    (tree / "loop.md").symlink_to("loop.md")
    os.mkfifo(tree / "pipe.md")  # opened without blocking, then refused
    (tree / "pipe-link.md").symlink_to("pipe.md")
    for rel, code, what in [
        ("loop.md", errno.ELOOP, "symlink loop"),
        ("pipe.md", errno.EINVAL, "a FIFO (named pipe)"),
        ("pipe-link.md", errno.EINVAL, "a FIFO (named pipe)"),
        ("sub", errno.EISDIR, "a folder"),
        ("guide.md/x.md", errno.ENOTDIR, "not a folder"),
        ("missing.md", errno.ENOENT, None),
    ]:
        with pytest.raises(OSError) as caught:
            read_beneath(tree, rel)
        assert not isinstance(caught.value, LinkOutsideError)
        assert caught.value.errno == code and (what is None or caught.value.strerror == what), rel


def test_replace_beneath_follows_no_link_on_the_way(tree: Path) -> None:
    outside = tree.parent / "outside"
    (tree / "out").symlink_to(outside, target_is_directory=True)
    with pytest.raises(WriteRefusedError, match=r"^out is not a plain folder \(a symlink, or a file\)$"):
        replace_beneath(tree, "out/.docs-mcp.json", b"{}")
    with pytest.raises(WriteRefusedError, match=r"^guide.md is not a plain folder"):
        replace_beneath(tree, "guide.md/.docs-mcp.json", b"{}")
    os.mkfifo(tree / "sub" / "pipe.json")
    with pytest.raises(WriteRefusedError, match=r"^it is a FIFO \(named pipe\)$"):
        replace_beneath(tree, "sub/pipe.json", b"{}")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.md"]
    replace_beneath(tree, "sub/.docs-mcp.json", b"{}")  # a new file, in a real folder
    assert (tree / "sub" / ".docs-mcp.json").read_bytes() == b"{}"
    assert sorted(p.name for p in (tree / "sub").iterdir()) == [".docs-mcp.json", "page.md", "pipe.json"]


def test_an_include_swapped_for_a_link_after_it_was_found_is_not_read(tree: Path) -> None:
    """What includes.find checked (a file inside the project root) can be a link leading out by the
    time it is read: the read resolves it inside the project root only."""
    from docs_mcp_core.corpus.includes import IncludeContext, _Reader

    root = os.path.realpath(tree)
    reader = _Reader(IncludeContext(root, root, (root,), "MkDocs"), "guide.md")
    snippet = os.path.join(root, "snippet.md")
    (tree / "snippet.md").symlink_to(tree.parent / "outside" / "secret.md")  # the swap, after find
    assert reader.read(snippet) == (None, "it is outside the project root, which includes never leave")
    (tree / "snippet.md").unlink()
    write(tree, "snippet.md", "snippet text")
    assert reader.read(snippet) == ("snippet text", "")


def test_the_readme_summary_never_reads_through_a_link_leading_out(tree: Path) -> None:
    """The corpus description quotes the README's first paragraph: read beneath the docs folder."""
    from docs_mcp_core.indexing.contract import FileRecord
    from docs_mcp_core.indexing.description import readme_summary

    write(tree.parent, "outside/readme.md", "# Secret\n\nThe wombatsecret paragraph that must stay outside.\n")
    (tree / "README.md").symlink_to(tree.parent / "outside" / "readme.md")  # swapped in after the walk
    record = FileRecord("README.md", "", 1, titles=["Docs"])
    assert readme_summary(tree, [record]) == ("Docs", None)
    (tree / "README.md").unlink()
    write(tree, "README.md", "# Docs\n\nThe first paragraph of these docs, long enough to quote.\n")
    assert readme_summary(tree, [record]) == ("Docs", "The first paragraph of these docs, long enough to quote.")
