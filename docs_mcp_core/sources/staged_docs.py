"""The `staged_docs` asset: a corpus's source (a folder, one commit of a git repository, or a docs website
fetched with conditional requests) copied into a deterministic folder that the chunks step reads."""

from __future__ import annotations

from pathlib import Path

from ..errors import DocsMcpError
from ..progress import Reporter
from .config import Config
from .git import stage_git
from .local import StagedDocs, stage_local


def stage_corpus(
    config: Config, name: str, dest: Path, *, commit: str | None = None, reporter: Reporter | None = None
) -> StagedDocs:
    """Stage corpus `name` of `config` into `dest`; a git corpus at `commit` when given (else its ref's tip).

    Call with the output's build lock held. A website's per-page lines go to `reporter` as they happen.
    """
    corpus = config.get(name)
    web = config.web_source(name)
    if web is not None:
        from .web.stage import stage_url  # the web extra is imported only for website corpora

        return stage_url(web, dest, reporter)
    repo = config.git_source(name)
    if repo:
        return stage_git(repo, corpus.source.ref, corpus.source.subdir, dest, commit=commit, exclude=corpus.exclude)
    folder = config.source_path(name)
    if not folder.is_dir():
        what = "is not a folder" if folder.exists() else "does not exist"
        raise DocsMcpError(
            f"{config.path}: corpora[{config.names.index(name)}].source.path: {folder} {what} (a path is relative "
            f"to {config.base}); point it at the folder that holds your Markdown files"
        )
    return stage_local(folder, dest, exclude=corpus.exclude)
