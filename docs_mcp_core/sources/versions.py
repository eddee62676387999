"""A versioned corpus's versions, resolved against its source: tags read from the repository, refs to
commits, version URLs and folders to where they are. A version that cannot be found is one line and is
left out; the other versions still build."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin

from ..errors import DocsMcpError
from ..versions.ordering import default_label, parse_version, serving_order
from ..versions.tags import select_tags
from .config import Config
from .git import git, is_url, remote_commit

_SHA = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class CorpusVersion:
    """One version of a corpus and where its docs come from (exactly one of ref, url, path)."""

    label: str
    ref: str | None = None  # git: the tag, branch or commit to stage
    commit: str | None = None  # git: the commit `ref` points at now
    url: str | None = None
    path: Path | None = None

    @property
    def version(self) -> str | None:
        """The label read as a version (`v1.2` → `1.2`), or None for `main`."""
        parsed = parse_version(self.label)
        return str(parsed) if parsed is not None else None


@dataclass
class ResolvedVersions:
    corpus: str
    versions: list[CorpusVersion]  # newest first; labels that are no version after, in config order
    default: str | None  # served when nothing pins a version
    notes: list[str] = field(default_factory=list)  # one line each: what was left out and why

    @property
    def labels(self) -> list[str]:
        return [v.label for v in self.versions]

    def get(self, label: str) -> CorpusVersion:
        for v in self.versions:
            if v.label == label:
                return v
        raise DocsMcpError(
            f"corpus {self.corpus!r} has no version {label!r}; it has: {', '.join(self.labels) or 'none'}"
        )


def ref_commits(repo: str) -> dict[str, str]:
    """{ref name: commit} of every branch and tag of a repository (a URL or a local path), annotated tags
    peeled to their commit; `main` and `refs/heads/main` both name a branch. One `git ls-remote`."""
    out = str(git("ls-remote", repo))
    found: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, ref = line.partition("\t")
        peeled = ref.endswith("^{}")
        ref = ref.removesuffix("^{}")
        if (ref == "HEAD" or ref.startswith(("refs/heads/", "refs/tags/"))) and (peeled or ref not in found):
            found[ref] = sha
    return found


def tag_commits(repo: str) -> dict[str, str]:
    """{tag: commit} of a repository (a URL or a local path), annotated tags peeled to their commit."""
    return {
        ref.removeprefix("refs/tags/"): sha for ref, sha in ref_commits(repo).items() if ref.startswith("refs/tags/")
    }


def _commit_of(repo: str, ref: str, refs: dict[str, str]) -> str:
    """The commit `ref` names: a branch, a tag, a full commit ID, or (a local repository) any revision git reads."""
    for name in (f"refs/tags/{ref}", f"refs/heads/{ref}", ref):
        if name in refs:
            return refs[name]
    if _SHA.match(ref):
        return ref
    if not is_url(repo):
        try:
            return remote_commit(repo, ref)
        except DocsMcpError:
            pass
    heads = sum(r.startswith("refs/heads/") for r in refs)
    tags = sum(r.startswith("refs/tags/") for r in refs)
    raise DocsMcpError(f"ref {ref!r} was not found in {repo} ({heads} branch(es), {tags} tag(s))")


def resolve_versions(config: Config, name: str) -> ResolvedVersions | None:
    """The versions of corpus `name` as its source has them now; None for an unversioned corpus."""
    corpus = config.get(name)
    spec = corpus.versions
    if spec is None:
        return None
    where = f"{config.path}: corpus {name!r}"
    found: list[CorpusVersion] = []
    notes: list[str] = []
    repo = config.git_source(name)
    if spec.tags is not None:
        assert repo is not None
        commits = tag_commits(repo)
        selection = select_tags(commits, spec.tags, spec.keep, spec.prereleases)
        if not selection.chosen:
            notes.append(f"{where}: no tag of {repo} matching {spec.tags!r} reads as a release ({len(commits)} tags)")
        notes += [f"{where}: {line}" for line in selection.notes(spec.tags, spec.keep)]
        found = [CorpusVersion(t.label, ref=t.tag, commit=commits[t.tag]) for t in selection.chosen]
    elif spec.refs is not None:
        assert repo is not None
        refs = ref_commits(repo)
        for label, ref in spec.locations().items():
            try:
                found.append(CorpusVersion(label, ref=ref, commit=_commit_of(repo, ref, refs)))
            except DocsMcpError as exc:
                notes.append(f"{where}: version {label!r} left out: {exc}")
    elif spec.urls is not None:
        base = corpus.source.url or ""
        for label, value in spec.urls.items():
            url = urljoin(base, value)
            if not url.startswith(("http://", "https://")):
                notes.append(f"{where}: version {label!r} left out: {value!r} is no http(s) URL")
                continue
            found.append(CorpusVersion(label, url=url))
    else:
        root = config.source_path(name)
        for label, value in (spec.paths or {}).items():
            folder = (root / Path(value).expanduser()).resolve()
            if not folder.is_dir():
                notes.append(f"{where}: version {label!r} left out: {folder} is not a folder")
                continue
            found.append(CorpusVersion(label, path=folder))
    by_label = {v.label: v for v in found}
    ordered = [by_label[label] for label in serving_order(by_label)]
    default = default_label(by_label, spec.default)
    if spec.default is not None and default != spec.default:
        notes.append(f"{where}: default version {spec.default!r} is not among those found; serving {default!r}")
    return ResolvedVersions(name, ordered, default, notes)
